//go:build unix

package enrich

import (
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// TestInventoryNotARegularFile: an inventory path that names no regular
// file (a device such as /dev/zero, which a read never ends, or a named
// pipe, whose open waits for a writer) is refused at start and by a
// reload, before it is opened: reading one at SIGHUP grew weir's memory
// without bound and held the reload (and every later SIGHUP) for good.
// The devices loaded stay.
func TestInventoryNotARegularFile(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "inventory.fifo")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Skipf("no named pipe here: %v", err)
	}
	for _, path := range []string{os.DevNull, fifo} {
		if _, err := LoadInventory(path, slog.New(slog.DiscardHandler)); err == nil || !strings.Contains(err.Error(), "not a regular file") {
			t.Fatalf("LoadInventory(%s): %v, want refused as not a regular file", path, err)
		}
	}

	good := filepath.Join(dir, "inventory.yaml")
	inv := loadAms1(t, good)
	// The file replaced by a symlink to a device, or by a pipe.
	for _, target := range []string{os.DevNull, fifo} {
		if err := os.Remove(good); err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink(target, good); err != nil {
			t.Fatal(err)
		}
		if err := inv.Reload(); err == nil || !strings.Contains(err.Error(), "not a regular file") {
			t.Fatalf("Reload of a symlink to %s: %v, want refused as not a regular file", target, err)
		}
		if got := siteOf(inv, "edge1"); got != "ams1" {
			t.Fatalf("after the refused reload: edge1 site %q, want ams1 (the devices loaded stay)", got)
		}
	}
}

// TestSyslogRulesNotARegularFile: a syslog rules path that names no
// regular file is refused before it is opened, as the inventory's is.
func TestSyslogRulesNotARegularFile(t *testing.T) {
	fifo := filepath.Join(t.TempDir(), "rules.fifo")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Skipf("no named pipe here: %v", err)
	}
	for _, path := range []string{os.DevNull, fifo} {
		if _, err := ReadSyslogRules(path); err == nil || !strings.Contains(err.Error(), "not a regular file") {
			t.Fatalf("ReadSyslogRules(%s): %v, want refused as not a regular file", path, err)
		}
	}
}
