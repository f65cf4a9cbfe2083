package main

import (
	"bytes"
	"context"
	"strings"
	"testing"
)

// TestCheckWithoutDefaultFileSaysSo: `weir check` without -c, outside the
// checkout, fails on configs/weir.yaml, the default it looked for; the
// error says that this is the default and where it was looked for, so
// the user knows to give -c (it said only "open configs/weir.yaml: no
// such file or directory", a file the user never named).
func TestCheckWithoutDefaultFileSaysSo(t *testing.T) {
	dir := t.TempDir()
	t.Chdir(dir) // restored after the test, which may not run in parallel
	var stdout, stderr bytes.Buffer
	err := dispatch(context.Background(), []string{"check"}, strings.NewReader(""), &stdout, &stderr)
	if err == nil || exitCode(err) != 1 || !strings.Contains(err.Error(), "without -c") || !strings.Contains(err.Error(), dir) {
		t.Fatalf("weir check in an empty directory: %v (exit %d); want the default named as such, with the directory", err, exitCode(err))
	}
	// A file named with -c that is missing is reported as before.
	err = dispatch(context.Background(), []string{"check", "-c", "mine.yaml"}, strings.NewReader(""), &stdout, &stderr)
	if err == nil || strings.Contains(err.Error(), "without -c") {
		t.Fatalf("weir check -c mine.yaml: %v", err)
	}
}

// TestCheckNoConfig: `weir check -c ”` checks what `weir run -c ”` runs
// with, weir's defaults (it failed on opening a file named "").
func TestCheckNoConfig(t *testing.T) {
	t.Chdir(t.TempDir()) // the default data_dir, ./data, is made here
	var stdout, stderr bytes.Buffer
	if err := dispatch(context.Background(), []string{"check", "-c", ""}, strings.NewReader(""), &stdout, &stderr); err != nil {
		t.Fatalf("weir check -c '': %v\n%s", err, stderr.String())
	}
	if out := stdout.String(); !strings.HasPrefix(out, "(no config, weir's defaults): ok") {
		t.Errorf("weir check -c '' printed %q", out)
	}
}
