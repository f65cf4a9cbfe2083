package configs

import (
	"os"
	"path/filepath"
	"testing"
)

// TestAddressNotAScalar: an address given as a list or a map (`listen:
// ["0.0.0.0:162"]`, a plausible slip) is refused. Read as "" it was the
// default for snmp.traps.listen: `weir check` said ok and weir listened
// on 127.0.0.1:5162, not where the file said.
func TestAddressNotAScalar(t *testing.T) {
	for _, y := range []string{
		"snmp:\n  traps:\n    listen: [\"127.0.0.1:25170\"]\n",
		"snmp:\n  traps:\n    listen: {host: 127.0.0.1, port: 25170}\n",
		"http:\n  listen: [\"127.0.0.1:8081\"]\n",
	} {
		path := filepath.Join(t.TempDir(), "cfg.yaml")
		os.WriteFile(path, []byte(y), 0o644)
		cfg, err := Load(path)
		if err == nil {
			t.Errorf("%q: no error; snmp.traps.listen %q, http.listen %q", y, cfg.SNMP.Traps.Listen, cfg.HTTP.Listen)
		} else {
			t.Logf("%q: %v", y, err)
		}
	}
}
