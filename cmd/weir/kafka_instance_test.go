package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestInstanceID: the id is kept in the data directory, the same after a
// restart, different for another data directory.
func TestInstanceID(t *testing.T) {
	a, b := t.TempDir(), filepath.Join(t.TempDir(), "not-yet")
	first, err := instanceID(a)
	if err != nil {
		t.Fatal(err)
	}
	again, _ := instanceID(a)
	other, err := instanceID(b)
	if err != nil {
		t.Fatal(err)
	}
	if first != again || first == other {
		t.Fatalf("ids %q, %q (same dir), %q (other dir)", first, again, other)
	}
	host, _ := os.Hostname()
	if !strings.HasPrefix(first, host+"-") {
		t.Fatalf("id %q does not start with the host name", first)
	}
}
