package enrich

import (
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/weirnet/weir/internal/wholefile"
)

// TestFilesPastTheBoundRefused: an inventory or syslog rules file past
// wholefile.MaxBytes (a log file named by mistake) is refused with its size,
// rather than read whole into memory at start and at each change; a
// reload of one leaves the devices loaded. The file is sparse: it takes
// no disk.
func TestFilesPastTheBoundRefused(t *testing.T) {
	dir := t.TempDir()
	big := filepath.Join(dir, "big.log")
	f, err := os.Create(big)
	if err != nil {
		t.Fatal(err)
	}
	if err := f.Truncate(wholefile.MaxBytes + 1); err != nil {
		t.Fatal(err)
	}
	f.Close()
	const want = "bytes, more than the 67108864 weir reads (the wrong file?)"
	if _, err := LoadInventory(big, slog.New(slog.DiscardHandler)); err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("LoadInventory of %d bytes: %v, want %q", wholefile.MaxBytes+1, err, want)
	}
	if _, err := ReadSyslogRules(big); err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("ReadSyslogRules of %d bytes: %v, want %q", wholefile.MaxBytes+1, err, want)
	}

	good := filepath.Join(dir, "inventory.yaml")
	inv := loadAms1(t, good)
	if err := os.Rename(big, good); err != nil {
		t.Fatal(err)
	}
	if err := inv.Reload(); err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("Reload of the big file: %v, want %q", err, want)
	}
	if got := siteOf(inv, "edge1"); got != "ams1" {
		t.Errorf("after the refused reload: edge1 site %q, want ams1 (the devices loaded stay)", got)
	}
}

// loadAms1 writes an inventory of edge1 at site ams1 to path and loads it.
func loadAms1(t *testing.T, path string) *Inventory {
	t.Helper()
	if err := os.WriteFile(path, []byte("devices:\n  - {name: edge1, site: ams1}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	inv, err := LoadInventory(path, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	return inv
}
