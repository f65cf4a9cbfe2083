package tlsconf_test

import (
	"crypto/tls"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/weirnet/weir/internal/tlsconf"
	"github.com/weirnet/weir/internal/tlsconf/tlstest"
)

// servedBy dials a listener serving srv and returns the common name of
// the certificate it showed, or the client's handshake error.
func servedBy(t *testing.T, srv, cli *tls.Config) (string, error) {
	t.Helper()
	ln, err := tls.Listen("tcp", "127.0.0.1:0", srv)
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		c, err := ln.Accept()
		if err != nil {
			return
		}
		defer c.Close()
		b := make([]byte, 1)
		if _, err := c.Read(b); err == nil {
			_, _ = c.Write(b) // echoed: the client knows it was served
		}
	}()
	c, err := tls.Dial("tcp", ln.Addr().String(), cli)
	if err != nil {
		return "", err
	}
	defer c.Close()
	// With TLS 1.3 a refused client certificate shows on the first read.
	if _, err := c.Write([]byte("x")); err != nil {
		return "", err
	}
	_ = c.SetReadDeadline(time.Now().Add(5 * time.Second))
	if _, err := c.Read(make([]byte, 1)); err != nil {
		return "", err
	}
	return c.ConnectionState().PeerCertificates[0].Subject.CommonName, nil
}

// TestServerReloading: a certificate renewed on disk is served from the
// next handshake, without a restart; a half-written renewal (the new
// certificate beside the old key) is reported once and the last good pair
// served meanwhile; a CA added to client_ca_file admits its clients.
func TestServerReloading(t *testing.T) {
	ca := tlstest.NewCA(t, "weir test CA")
	dir := t.TempDir()
	certFile, keyFile := filepath.Join(dir, "server.pem"), filepath.Join(dir, "server.key")
	write := func(path string, data []byte) {
		t.Helper()
		// As a renewal tool does: a new file renamed over the old one.
		if err := os.WriteFile(path+".new", data, 0o600); err != nil {
			t.Fatal(err)
		}
		if err := os.Rename(path+".new", path); err != nil {
			t.Fatal(err)
		}
	}
	cert, key := ca.Leaf(t, "server")
	write(certFile, cert)
	write(keyFile, key)
	var mu sync.Mutex
	var errs []error
	srv, err := tlsconf.ServerReloading(certFile, keyFile, "", func(err error) { mu.Lock(); errs = append(errs, err); mu.Unlock() })
	if err != nil {
		t.Fatal(err)
	}
	cli := &tls.Config{RootCAs: ca.Pool(), ServerName: "localhost"}
	expect := func(want string, wantErrs int) {
		t.Helper()
		got, err := servedBy(t, srv, cli)
		if err != nil || got != want {
			t.Fatalf("served %q (%v), want %q", got, err, want)
		}
		mu.Lock()
		defer mu.Unlock()
		if len(errs) != wantErrs {
			t.Fatalf("%d reload errors reported (%v), want %d", len(errs), errs, wantErrs)
		}
	}
	expect("server", 0)
	renewed, renewedKey := ca.Leaf(t, "renewed")
	write(certFile, renewed)
	expect("server", 1) // the old key beside the new certificate
	expect("server", 1) // reported once
	write(keyFile, renewedKey)
	expect("renewed", 1)
	if err := os.Remove(keyFile); err != nil {
		t.Fatal(err)
	}
	expect("renewed", 2)

	// client_ca_file: a client of a second CA is refused, then admitted
	// once its CA is added to the file.
	other := tlstest.NewCA(t, "second CA")
	caFile := filepath.Join(dir, "clients.pem")
	write(caFile, ca.PEM)
	write(keyFile, renewedKey)
	mutual, err := tlsconf.ServerReloading(certFile, keyFile, caFile, nil)
	if err != nil {
		t.Fatal(err)
	}
	client := other.TLSCert(t, "client")
	cli = &tls.Config{RootCAs: ca.Pool(), ServerName: "localhost", Certificates: []tls.Certificate{client}}
	if _, err := servedBy(t, mutual, cli); err == nil {
		t.Fatal("a client of a CA not in client_ca_file was admitted")
	}
	write(caFile, append(append([]byte{}, ca.PEM...), other.PEM...))
	if _, err := servedBy(t, mutual, cli); err != nil {
		t.Fatalf("a client of a CA added to client_ca_file: %v", err)
	}
}
