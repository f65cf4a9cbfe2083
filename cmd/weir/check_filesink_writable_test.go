package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestCheckWarnsOfFileSinkPathNotWritable: a file sink whose directory
// cannot be made (here under /proc, where not even root can make one; a
// directory of another user's or a read-only volume are the same to weir
// run) passed weir check, and weir run retried it for ever. Check warns:
// it may run as another user than weir, so a warning, not an error. A
// directory that can be made is not warned of, and the check leaves
// nothing behind in it.
func TestCheckWarnsOfFileSinkPathNotWritable(t *testing.T) {
	if fi, err := os.Stat("/proc/self"); err != nil || !fi.IsDir() {
		t.Skip("no /proc")
	}
	dir := t.TempDir()
	cfg := filepath.Join(dir, "weir.yaml")
	check := func(path string) (stderr string, err error) {
		t.Helper()
		y := "http: {listen: off}\ndata_dir: " + filepath.Join(dir, "data") + "\nsinks:\n  - {type: file, name: f, path: " + path + ", topics: [events]}\n"
		if err := os.WriteFile(cfg, []byte(y), 0o600); err != nil {
			t.Fatal(err)
		}
		var out, errw bytes.Buffer
		err = dispatch(context.Background(), []string{"check", "-c", cfg}, strings.NewReader(""), &out, &errw)
		return errw.String(), err
	}
	stderr, err := check("/proc/weir-no-such-dir/events.jsonl")
	if err != nil {
		t.Fatalf("check: %v", err)
	}
	if want := `warning: sink "f": path /proc/weir-no-such-dir/events.jsonl: cannot be written`; !strings.Contains(stderr, want) {
		t.Errorf("check printed %q, want %q", stderr, want)
	}
	out := filepath.Join(dir, "out")
	if stderr, err := check(filepath.Join(out, "sub", "events.jsonl")); err != nil || strings.Contains(stderr, "warning") {
		t.Errorf("a directory that can be made: %v %q", err, stderr)
	}
	if err := os.MkdirAll(out, 0o755); err != nil {
		t.Fatal(err)
	}
	if stderr, err := check(filepath.Join(out, "events.jsonl")); err != nil || strings.Contains(stderr, "warning") {
		t.Errorf("a directory that exists: %v %q", err, stderr)
	}
	if left, _ := os.ReadDir(out); len(left) != 0 {
		t.Errorf("check left %v in the sink's directory", left)
	}
	if _, err := os.Stat(filepath.Join(dir, "out", "sub")); err == nil {
		t.Error("check made the sink's directory")
	}
	// --skip-files: the config may be meant for another machine.
	var o, e bytes.Buffer
	os.WriteFile(cfg, []byte("http: {listen: off}\nsinks:\n  - {type: file, name: f, path: /proc/weir-no-such-dir/x.jsonl, topics: [events]}\n"), 0o600)
	if err := dispatch(context.Background(), []string{"check", "--skip-files", "-c", cfg}, strings.NewReader(""), &o, &e); err != nil || strings.Contains(e.String(), "cannot be written") {
		t.Errorf("--skip-files: %v %q", err, e.String())
	}
}
