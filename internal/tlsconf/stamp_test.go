package tlsconf

import (
	"crypto/tls"
	"os"
	"path/filepath"
	"testing"

	"github.com/weirnet/weir/internal/tlsconf/tlstest"
)

// TestReloadAfterPermissionsFixed: a renewal tool writes the new pair
// readable by root only, and weir, running as its own user, cannot read
// it: the failure is logged and the files' stamps kept, so that it is not
// tried again at each handshake. The operator then fixes the files' mode
// (chmod) or owner (chown), which changes neither their size nor their
// modification time: the stamps matched the failed ones and the renewed
// pair was never read, the old (expiring) one served until a restart.
func TestReloadAfterPermissionsFixed(t *testing.T) {
	ca := tlstest.NewCA(t, "weir test CA")
	dir := t.TempDir()
	certFile, keyFile := filepath.Join(dir, "server.pem"), filepath.Join(dir, "server.key")
	write := func(path string, data []byte, mode os.FileMode) {
		t.Helper()
		if err := os.WriteFile(path+".new", data, mode); err != nil {
			t.Fatal(err)
		}
		if err := os.Chmod(path+".new", mode); err != nil { // past the umask
			t.Fatal(err)
		}
		if err := os.Rename(path+".new", path); err != nil {
			t.Fatal(err)
		}
	}
	cert, key := ca.Leaf(t, "server")
	write(certFile, cert, 0o644)
	write(keyFile, key, 0o600)
	var errs []error
	r, err := newReloader(certFile, keyFile, "", func(err error) { errs = append(errs, err) })
	if err != nil {
		t.Fatal(err)
	}
	served := func() string {
		t.Helper()
		cfg, err := r.config(&tls.ClientHelloInfo{})
		if err != nil {
			t.Fatal(err)
		}
		return cfg.Certificates[0].Leaf.Subject.CommonName
	}
	if got := served(); got != "server" {
		t.Fatalf("served %q", got)
	}

	renewed, renewedKey := ca.Leaf(t, "renewed")
	write(certFile, renewed, 0o644)
	write(keyFile, renewedKey, 0o000)
	if os.Geteuid() == 0 {
		// Root reads the key all the same: make the read fail as it
		// does for weir's own user, with the files as they are.
		r.mu.Lock()
		r.failed = r.stat()
		r.mu.Unlock()
	} else if got := served(); got != "server" || len(errs) != 1 {
		t.Fatalf("served %q with %d errors, want the previous pair and the error", got, len(errs))
	}
	if err := os.Chmod(keyFile, 0o600); err != nil {
		t.Fatal(err)
	}
	if got := served(); got != "renewed" {
		t.Fatalf("served %q after the key's mode was fixed, want the renewed pair", got)
	}
}
