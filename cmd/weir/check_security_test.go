package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestCheckWarnsOfWeakenedTLS: insecure_skip_verify and a password sent in
// the clear pass the check (a lab may want them) but are printed as
// warnings, not left to be found in a packet capture.
func TestCheckWarnsOfWeakenedTLS(t *testing.T) {
	cfg := filepath.Join(t.TempDir(), "weir.yaml")
	y := "sinks:\n  - {type: webhook, name: hook, url: \"https://h/x\", topics: [events], tls: {insecure_skip_verify: true}}\n" +
		"gnmi:\n  targets:\n    - {name: g1, address: \"h:1\", insecure: true, username: u, password: p, subscriptions: [{path: /a}]}\n"
	if err := os.WriteFile(cfg, []byte(y), 0o600); err != nil {
		t.Fatal(err)
	}
	var stdout, stderr bytes.Buffer
	if err := dispatch(context.Background(), []string{"check", "-c", cfg}, strings.NewReader(""), &stdout, &stderr); err != nil {
		t.Fatalf("check: %v\n%s", err, stderr.String())
	}
	for _, want := range []string{
		`warning: sink "hook": tls.insecure_skip_verify: the server's certificate is not checked`,
		`warning: gnmi target "g1": insecure: true sends the password in the clear`,
	} {
		if !strings.Contains(stderr.String(), want) {
			t.Errorf("check's stderr lacks %q:\n%s", want, stderr.String())
		}
	}
}
