package tlsconf_test

import (
	"crypto/tls"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/weirnet/weir/internal/tlsconf"
	"github.com/weirnet/weir/internal/tlsconf/tlstest"
)

// handshake serves one TLS connection with srv and dials it with cli;
// it returns the client's handshake error.
func handshake(t *testing.T, srv, cli *tls.Config) error {
	t.Helper()
	_, err := servedBy(t, srv, cli)
	return err
}

func TestClientAndServer(t *testing.T) {
	ca := tlstest.NewCA(t, "weir test CA")
	other := tlstest.NewCA(t, "another CA")
	srvCert, srvKey := ca.LeafFiles(t, "server")
	cliCert, cliKey := ca.LeafFiles(t, "client")
	rogueCert, rogueKey := other.LeafFiles(t, "rogue")

	plain, err := tlsconf.Server(srvCert, srvKey, "")
	if err != nil {
		t.Fatal(err)
	}
	mutual, err := tlsconf.Server(srvCert, srvKey, ca.File)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		srv  *tls.Config
		cli  tlsconf.Client
		ok   bool
	}{
		{"ca_file verifies the server", plain, tlsconf.Client{CAFile: ca.File}, true},
		{"system roots do not", plain, tlsconf.Client{}, false},
		{"another CA does not", plain, tlsconf.Client{CAFile: other.File}, false},
		{"insecure_skip_verify accepts it", plain, tlsconf.Client{InsecureSkipVerify: true}, true},
		{"server_name checked", plain, tlsconf.Client{CAFile: ca.File, ServerName: "elsewhere"}, false},
		{"server_name accepted", plain, tlsconf.Client{CAFile: ca.File, ServerName: "server"}, true},
		{"mutual TLS with a client certificate", mutual, tlsconf.Client{CAFile: ca.File, CertFile: cliCert, KeyFile: cliKey}, true},
		{"mutual TLS without one", mutual, tlsconf.Client{CAFile: ca.File}, false},
		{"mutual TLS with another CA's", mutual, tlsconf.Client{CAFile: ca.File, CertFile: rogueCert, KeyFile: rogueKey}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cli, err := tc.cli.Config()
			if err != nil {
				t.Fatal(err)
			}
			if cli.ServerName == "" {
				cli.ServerName = "localhost"
			}
			err = handshake(t, tc.srv, cli)
			if (err == nil) != tc.ok {
				t.Fatalf("handshake error %v, want success %v", err, tc.ok)
			}
		})
	}
}

func TestFileErrors(t *testing.T) {
	ca := tlstest.NewCA(t, "weir test CA")
	cert, key := ca.LeafFiles(t, "x")
	dir := t.TempDir()
	notPEM := filepath.Join(dir, "not.pem")
	if err := os.WriteFile(notPEM, []byte("hello\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	missing := filepath.Join(dir, "missing.pem")
	for _, tc := range []struct {
		name string
		err  func() error
		want string
	}{
		{"missing CA", func() error { _, err := tlsconf.Client{CAFile: missing}.Config(); return err }, "tls ca_file: open " + missing},
		{"CA without certificates", func() error { _, err := tlsconf.Client{CAFile: notPEM}.Config(); return err }, "no PEM certificate"},
		{"cert without key", func() error { _, err := tlsconf.Client{CertFile: cert}.Config(); return err }, "go together"},
		{"key that is not the cert's", func() error { _, err := tlsconf.Client{CertFile: cert, KeyFile: notPEM}.Config(); return err }, "key_file " + notPEM},
		{"server without key", func() error { _, err := tlsconf.Server(cert, "", ""); return err }, "go together"},
		{"server missing cert", func() error { _, err := tlsconf.Server(missing, key, ""); return err }, "cert_file " + missing},
		{"server client CA without certificates", func() error { _, err := tlsconf.Server(cert, key, notPEM); return err }, "client_ca_file"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.err()
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %v, want one containing %q", err, tc.want)
			}
		})
	}
	if !(tlsconf.Client{}).IsZero() || (tlsconf.Client{ServerName: "x"}).IsZero() {
		t.Fatal("IsZero")
	}
}
