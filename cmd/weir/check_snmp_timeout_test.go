package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestCheckRefusesShortSNMPTimeout: a timeout of 5ms was taken, and the
// poller reported every healthy agent down; weir check refuses it, naming
// the file, the line and the floor.
func TestCheckRefusesShortSNMPTimeout(t *testing.T) {
	cfg := filepath.Join(t.TempDir(), "weir.yaml")
	y := "http: {listen: off}\nsnmp:\n  targets:\n    - name: r1\n      address: 127.0.0.1\n      timeout: 5ms\n"
	if err := os.WriteFile(cfg, []byte(y), 0o600); err != nil {
		t.Fatal(err)
	}
	var stdout, stderr bytes.Buffer
	err := dispatch(context.Background(), []string{"check", "-c", cfg}, strings.NewReader(""), &stdout, &stderr)
	if want := cfg + ":6: snmp.targets[r1].timeout: must be at least 100ms, not 5ms"; err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("check: %v; want %q", err, want)
	}
}
