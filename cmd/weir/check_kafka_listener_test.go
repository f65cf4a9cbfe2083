package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/weirnet/weir/internal/tlsconf/tlstest"
)

// TestCheckKafkaListenerTLSFiles: weir check reads broker.kafka_tls's
// files as it reads a syslog TLS listener's, and warns of a listener
// other hosts reach without authentication: neither SASL nor client
// certificates (client_ca_file).
func TestCheckKafkaListenerTLSFiles(t *testing.T) {
	ca := tlstest.NewCA(t, "ca")
	cert, key := ca.LeafFiles(t, "weir")
	dir := t.TempDir()
	check := func(y string) (string, error) {
		cfg := filepath.Join(dir, "weir.yaml")
		if err := os.WriteFile(cfg, []byte(y), 0o600); err != nil {
			t.Fatal(err)
		}
		var stdout, stderr bytes.Buffer
		err := dispatch(context.Background(), []string{"check", "-c", cfg}, strings.NewReader(""), &stdout, &stderr)
		return stderr.String(), err
	}
	out, err := check("broker:\n  kafka_listen: 0.0.0.0:34092\n  kafka_tls: {cert_file: " + cert + ", key_file: " + key + ", client_ca_file: " + ca.File + "}\n")
	if err != nil {
		t.Fatalf("check with good files: %v\n%s", err, out)
	}
	const unauthenticated = "warning: broker.kafka_listen 0.0.0.0:34092 is reachable from other hosts without authentication"
	if strings.Contains(out, unauthenticated) {
		t.Errorf("a listener that requires client certificates is warned of as without authentication:\n%s", out)
	}
	out, err = check("broker:\n  kafka_listen: 0.0.0.0:34092\n  kafka_tls: {cert_file: " + cert + ", key_file: " + key + "}\n")
	if err != nil {
		t.Fatalf("check with good files: %v\n%s", err, out)
	}
	if !strings.Contains(out, unauthenticated) {
		t.Errorf("no warning of a listener without authentication:\n%s", out)
	}
	missing := filepath.Join(dir, "missing.pem")
	out, err = check("broker:\n  kafka_tls: {cert_file: " + missing + ", key_file: " + key + "}\n")
	if err == nil || !strings.Contains(err.Error()+out, "broker.kafka_tls: tls cert_file "+missing) {
		t.Fatalf("check with a missing cert_file: %v\n%s", err, out)
	}
	out, err = check("broker:\n  kafka_tls: {cert_file: " + cert + ", key_file: " + key + ", client_ca_file: " + key + "}\n")
	if err == nil || !strings.Contains(err.Error()+out, "broker.kafka_tls: tls client_ca_file") {
		t.Fatalf("check with a key as client_ca_file: %v\n%s", err, out)
	}
}
