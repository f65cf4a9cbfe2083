package file

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestUnwritableNamesTheDirectory: weir check's warning for a path no
// file can be made at names the directory it tried, not the name of the
// probe it made there; a path that can be made is no warning, and the
// probe is gone.
func TestUnwritableNamesTheDirectory(t *testing.T) {
	if _, err := os.Stat("/proc/self"); err != nil {
		t.Skip("no /proc")
	}
	err := Unwritable("/proc/weir-test/events.jsonl")
	if err == nil || !strings.Contains(err.Error(), "cannot make a directory in /proc") || strings.Contains(err.Error(), ".weir-check") {
		t.Errorf("under /proc: %v, want it to say it cannot make a directory in /proc", err)
	}
	dir := t.TempDir()
	for _, p := range []string{filepath.Join(dir, "events.jsonl"), filepath.Join(dir, "sub", "events.jsonl")} {
		if err := Unwritable(p); err != nil {
			t.Errorf("%s: %v", p, err)
		}
	}
	if left, _ := os.ReadDir(dir); len(left) != 0 {
		t.Errorf("left behind: %v", left)
	}
}
