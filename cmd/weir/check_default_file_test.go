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
