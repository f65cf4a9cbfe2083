package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestRunRefusesMissingFilesBeforeStarting: weir run with an inventory or
// a certificate the config names missing fails as weir check does,
// naming the setting and its line, before anything starts: it opened the
// log (making data_dir) and bound its listeners first, only to stop them.
func TestRunRefusesMissingFilesBeforeStarting(t *testing.T) {
	dir := t.TempDir()
	data := filepath.Join(dir, "data")
	for _, c := range []struct {
		name, yaml string
		want       []string
	}{
		{"inventory", "enrich:\n  inventory: " + filepath.Join(dir, "nope.yaml") + "\n",
			[]string{"weir.yaml:5: enrich.inventory: stat ", "nope.yaml: no such file"}},
		{"kafka_tls", "broker:\n  kafka_listen: 127.0.0.1:0\n  kafka_tls: {cert_file: " + filepath.Join(dir, "c.pem") + ", key_file: " + filepath.Join(dir, "k.pem") + "}\n",
			[]string{"weir.yaml: broker.kafka_tls: ", "c.pem"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			cfg := filepath.Join(dir, "weir.yaml")
			head := "data_dir: " + data + "\nhttp:\n  listen: 127.0.0.1:0\n"
			if err := os.WriteFile(cfg, []byte(head+c.yaml), 0o644); err != nil {
				t.Fatal(err)
			}
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			var stdout, stderr bytes.Buffer
			err := dispatch(ctx, []string{"run", "-c", cfg, "--syslog-listen", "off", "--trap-listen", "off"}, strings.NewReader(""), &stdout, &stderr)
			if err == nil || exitCode(err) != 1 {
				t.Fatalf("weir run: %v (exit %d), want exit 1; stderr:\n%s", err, exitCode(err), stderr.String())
			}
			for _, w := range c.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q lacks %q", err, w)
				}
			}
			if _, serr := os.Stat(data); serr == nil {
				t.Errorf("data_dir %s was made: the log was opened before the files were read (log:\n%s)", data, stderr.String())
			}
		})
	}
}
