// Package tlstest makes throwaway certificate authorities and
// certificates for tests of TLS clients and servers.
package tlstest

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
	"testing"
	"time"
)

// CA is a certificate authority valid for a day.
type CA struct {
	Cert *x509.Certificate
	Key  *ecdsa.PrivateKey
	PEM  []byte // Cert, PEM-encoded
	// File holds PEM, in a temporary directory of the test.
	File string
}

// NewCA makes a CA named cn.
func NewCA(t testing.TB, cn string) *CA {
	t.Helper()
	cert, key := makeCert(t, nil, nil, cn, true, nil)
	ca := &CA{Cert: cert, Key: key, PEM: pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: cert.Raw})}
	ca.File = writeFile(t, t.TempDir(), "ca.pem", ca.PEM)
	return ca
}

// Pool is a pool of the CA's certificate alone.
func (ca *CA) Pool() *x509.CertPool {
	p := x509.NewCertPool()
	p.AddCert(ca.Cert)
	return p
}

// Leaf signs a certificate for name, good for both server and client
// authentication; as a server's it also holds 127.0.0.1 and localhost.
// It returns the certificate and its key, PEM-encoded.
func (ca *CA) Leaf(t testing.TB, name string) (certPEM, keyPEM []byte) {
	t.Helper()
	cert, key := makeCert(t, ca.Cert, ca.Key, name, false, nil)
	der, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: cert.Raw}),
		pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: der})
}

// LeafFiles is Leaf written to files in a temporary directory.
func (ca *CA) LeafFiles(t testing.TB, name string) (certFile, keyFile string) {
	t.Helper()
	c, k := ca.Leaf(t, name)
	dir := t.TempDir()
	return writeFile(t, dir, name+".pem", c), writeFile(t, dir, name+".key", k)
}

// TLSCert is Leaf as a tls.Certificate.
func (ca *CA) TLSCert(t testing.TB, name string) tls.Certificate {
	t.Helper()
	c, k := ca.Leaf(t, name)
	cert, err := tls.X509KeyPair(c, k)
	if err != nil {
		t.Fatal(err)
	}
	return cert
}

// TLSCertNamed is a server certificate the CA signs for the DNS names
// alone, as most devices' are: no IP address (a client dialling one is
// refused), no localhost.
func (ca *CA) TLSCertNamed(t testing.TB, names ...string) tls.Certificate {
	t.Helper()
	cert, key := makeCert(t, ca.Cert, ca.Key, names[0], false, names)
	return tls.Certificate{Certificate: [][]byte{cert.Raw}, PrivateKey: key}
}

// makeCert makes a certificate for cn, signed by parent (nil: itself); a
// leaf holds dnsNames, or with none cn, localhost and 127.0.0.1.
func makeCert(t testing.TB, parent *x509.Certificate, parentKey *ecdsa.PrivateKey, cn string, isCA bool, dnsNames []string) (*x509.Certificate, *ecdsa.PrivateKey) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	serial, err := rand.Int(rand.Reader, big.NewInt(1<<62))
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: serial,
		Subject:      pkix.Name{CommonName: cn},
		NotBefore:    time.Now().Add(-time.Hour),
		NotAfter:     time.Now().Add(24 * time.Hour),
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth, x509.ExtKeyUsageClientAuth},
	}
	if isCA {
		tmpl.IsCA, tmpl.BasicConstraintsValid = true, true
		tmpl.KeyUsage |= x509.KeyUsageCertSign
		tmpl.ExtKeyUsage = nil
	} else if dnsNames != nil {
		tmpl.DNSNames = dnsNames
	} else {
		tmpl.IPAddresses = []net.IP{net.ParseIP("127.0.0.1")}
		tmpl.DNSNames = []string{cn, "localhost"}
	}
	if parent == nil {
		parent, parentKey = tmpl, key
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, parent, &key.PublicKey, parentKey)
	if err != nil {
		t.Fatal(err)
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		t.Fatal(err)
	}
	return cert, key
}

func writeFile(t testing.TB, dir, name string, data []byte) string {
	t.Helper()
	path := filepath.Join(dir, name)
	if err := os.WriteFile(path, data, 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}
