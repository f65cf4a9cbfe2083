package gnmi

import (
	"crypto/tls"
	"strings"
	"testing"
	"time"

	"github.com/weirnet/weir/collectors/gnmi/sim"
	"github.com/weirnet/weir/configs"
	"github.com/weirnet/weir/internal/tlsconf/tlstest"
)

// TestTLSErrorsSayWhatToSet: a target that requires a client certificate
// weir does not send, and a target whose certificate tls.ca_file did not
// sign, fail with crypto/tls's words and what to set.
func TestTLSErrorsSayWhatToSet(t *testing.T) {
	ca := tlstest.NewCA(t, "weir test CA")
	other := tlstest.NewCA(t, "another CA")
	_, addr, _ := startSim(t, "127.0.0.1:0", sim.Config{TLS: &tls.Config{
		Certificates: []tls.Certificate{ca.TLSCert(t, "sim.lab")}, ClientCAs: ca.Pool(), ClientAuth: tls.RequireAndVerifyClientCert, MinVersion: tls.VersionTLS12,
	}})
	nocert := simTarget("nocert", addr, sub(countersPath, "stream", "sample", time.Second))
	nocert.Insecure = false
	nocert.TLS = &configs.GNMITLS{CAFile: ca.File, ServerName: "sim.lab"}
	wrongCA := nocert
	wrongCA.Name = "wrongca"
	wrongCA.TLS = &configs.GNMITLS{CAFile: other.File, ServerName: "sim.lab"}
	r := startCollector(t, configs.GNMI{Targets: []configs.GNMITarget{nocert, wrongCA}})
	want := map[string]string{
		"nocert":  "requires a client certificate: set tls.cert_file and tls.key_file",
		"wrongca": "not signed by tls.ca_file (" + other.File + ")",
	}
	waitFor(t, 10*time.Second, "both errors with their hints", func() bool {
		ok := 0
		for _, st := range r.c.Status() {
			if st.LastError != nil && strings.Contains(st.LastError.Error(), want[st.Name]) {
				ok++
			}
		}
		return ok == 2
	})
}
