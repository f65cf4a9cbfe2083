package configs

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/weirnet/weir/internal/wholefile"
)

// TestLoadRefusesAFilePastTheBound: a config past wholefile.MaxBytes (a log file
// named by mistake, /dev/zero) is refused with its size rather than read
// whole into memory, checked from its size and again as it is read.
func TestLoadRefusesAFilePastTheBound(t *testing.T) {
	file := filepath.Join(t.TempDir(), "weir.yaml")
	f, err := os.Create(file)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteString("log: {level: info}\n")
	if err := f.Truncate(wholefile.MaxBytes + 1); err != nil { // sparse: no disk used
		t.Fatal(err)
	}
	f.Close()
	if _, err := Load(file); err == nil || !strings.Contains(err.Error(), "more than the") {
		t.Errorf("Load of a %d-byte file: %v, want it refused by size", wholefile.MaxBytes+1, err)
	}
	// A device has no size: the read itself stops at the bound.
	if _, err := Load("/dev/zero"); err == nil || !strings.Contains(err.Error(), "more than the") {
		t.Errorf("Load(/dev/zero): %v, want it refused by size", err)
	}
}

// TestLoadReadsAPipe: a config given as a pipe (weir run -c <(envsubst <
// weir.yaml)) is read at start as a file is.
func TestLoadReadsAPipe(t *testing.T) {
	fifo := filepath.Join(t.TempDir(), "weir.yaml")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Skip("no named pipes here:", err)
	}
	go func() {
		w, err := os.OpenFile(fifo, os.O_WRONLY, 0)
		if err != nil {
			return
		}
		w.WriteString("log: {level: debug}\n")
		w.Close()
	}()
	cfg, err := Load(fifo)
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Log.Level != "debug" {
		t.Errorf("log level %q, want the pipe's debug", cfg.Log.Level)
	}
}
