package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestCheckRefusesDataDirThatIsAFile: weir run refuses a data_dir that is
// a regular file (not a directory); weir check said ok. It now refuses it
// too, naming the key and its line.
func TestCheckRefusesDataDirThatIsAFile(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "data")
	if err := os.WriteFile(file, []byte("x"), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg := filepath.Join(dir, "weir.yaml")
	if err := os.WriteFile(cfg, []byte("http: {listen: off}\ndata_dir: "+file+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	var stdout, stderr bytes.Buffer
	err := dispatch(context.Background(), []string{"check", "-c", cfg}, strings.NewReader(""), &stdout, &stderr)
	if want := cfg + ":2: data_dir: " + file + " is not a directory"; err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("check: %v; want %q", err, want)
	}
	// A path through a file cannot be made either.
	if err := os.WriteFile(cfg, []byte("http: {listen: off}\ndata_dir: "+file+"/sub\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	err = dispatch(context.Background(), []string{"check", "-c", cfg}, strings.NewReader(""), &stdout, &stderr)
	if want := cfg + ":2: data_dir: stat " + file + "/sub: not a directory"; err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("check: %v; want %q", err, want)
	}
	// --skip-files: the config may be meant for another machine.
	stdout.Reset()
	if err := dispatch(context.Background(), []string{"check", "--skip-files", "-c", cfg}, strings.NewReader(""), &stdout, &stderr); err != nil {
		t.Errorf("check --skip-files: %v", err)
	}
	// A directory, or one not made yet (weir run makes it), is fine.
	for _, d := range []string{dir, filepath.Join(dir, "new")} {
		if err := os.WriteFile(cfg, []byte("http: {listen: off}\ndata_dir: "+d+"\n"), 0o600); err != nil {
			t.Fatal(err)
		}
		if err := dispatch(context.Background(), []string{"check", "-c", cfg}, strings.NewReader(""), &stdout, &stderr); err != nil {
			t.Errorf("check with data_dir %s: %v", d, err)
		}
	}
}
