package gnmi

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/weirnet/weir/collectors/gnmi/sim"
	"github.com/weirnet/weir/configs"
)

// selfSigned is a self-signed certificate for DNS names only (no IP SAN,
// as most devices' are), and the file holding it, to trust it with.
func selfSigned(t *testing.T, names ...string) (tls.Certificate, string) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: names[0]}, DNSNames: names,
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(24 * time.Hour),
		KeyUsage: x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		IsCA: true, BasicConstraintsValid: true,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(t.TempDir(), "target.pem")
	if err := os.WriteFile(file, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o600); err != nil {
		t.Fatal(err)
	}
	return tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key}, file
}

// TestNoIPSANSaysServerName: a target dialled by its address whose
// certificate names no IP address fails with crypto/tls's "doesn't
// contain any IP SANs", which names no setting: the error says to set
// tls.server_name; and one whose tls.server_name the certificate does not
// name says that setting is wrong.
func TestNoIPSANSaysServerName(t *testing.T) {
	cert, file := selfSigned(t, "leaf1.lab")
	_, addr, _ := startSim(t, "127.0.0.1:0", sim.Config{TLS: &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12}})
	tc := simTarget("nosan", addr, sub(countersPath, "stream", "sample", time.Second))
	tc.Insecure = false
	tc.TLS = &configs.GNMITLS{CAFile: file}
	wrong := tc
	wrong.Name = "wrongname"
	wrong.TLS = &configs.GNMITLS{CAFile: file, ServerName: "leaf2.lab"}
	r := startCollector(t, configs.GNMI{Targets: []configs.GNMITarget{tc, wrong}})
	want := map[string][]string{
		"nosan":     {"doesn't contain any IP SANs", "set tls.server_name"},
		"wrongname": {"certificate is valid for leaf1.lab, not leaf2.lab", "tls.server_name (leaf2.lab) is not a name"},
	}
	waitFor(t, 20*time.Second, "the errors with their hints", func() bool {
		ok := 0
		for _, st := range r.c.Status() {
			if st.LastError != nil && strings.Contains(st.LastError.Error(), want[st.Name][0]) && strings.Contains(st.LastError.Error(), want[st.Name][1]) {
				ok++
			}
		}
		return ok == 2
	})
}

// TestCapabilitiesTimeoutSaysTimeout: a target whose port accepts and
// never answers fails Capabilities with gRPC's "context deadline
// exceeded", which names no setting: the error names timeout.
func TestCapabilitiesTimeoutSaysTimeout(t *testing.T) {
	hole, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	held := make(chan net.Conn, 100)
	go func() {
		for {
			c, err := hole.Accept()
			if err != nil {
				return
			}
			held <- c
		}
	}()
	t.Cleanup(func() {
		hole.Close()
		for {
			select {
			case c := <-held:
				c.Close()
			default:
				return
			}
		}
	})
	r := startCollector(t, configs.GNMI{Targets: []configs.GNMITarget{{
		Name: "hole", Address: hole.Addr().String(), Insecure: true, Timeout: configs.Duration(300 * time.Millisecond),
		Subscriptions: []configs.GNMISubscription{sub("/a", "stream", "on_change", 0)},
	}}})
	waitFor(t, 20*time.Second, "the error with its hint", func() bool {
		err := r.c.Status()[0].LastError
		return err != nil && strings.Contains(err.Error(), "deadline exceeded") && strings.Contains(err.Error(), "timeout (300ms)")
	})
}
