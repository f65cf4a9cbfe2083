package main

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestRunListenErrorNamesTheKey: weir run's "address already in use"
// names the setting the address comes from (key and line, or the flag),
// as weir check's errors do, for a listener run binds itself and for one
// a component binds.
func TestRunListenErrorNamesTheKey(t *testing.T) {
	held, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer held.Close()
	heldUDP, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer heldUDP.Close()
	dir := t.TempDir()
	cfg := filepath.Join(dir, "weir.yaml")
	for _, c := range []struct {
		name, yaml string
		args       []string
		want       string
	}{
		{"http", "data_dir: %s\nbroker: {kafka_listen: off}\nhttp:\n  listen: %s\nsyslog: {enabled: false}\n", nil, "(http.listen at " + cfg + ":4)"},
		{"http flag", "data_dir: %s\nbroker: {kafka_listen: off}\nhttp: {listen: \"127.0.0.1:0\"}\nsyslog: {enabled: false}\n# %s\n", []string{"--http-listen", held.Addr().String()}, "(--http-listen)"},
		{"kafka", "data_dir: %s\nhttp: {listen: off}\nbroker:\n  kafka_listen: %s\nsyslog: {enabled: false}\n", nil, "(broker.kafka_listen at " + cfg + ":4)"},
		{"trap", "data_dir: %s\nhttp: {listen: off}\nbroker: {kafka_listen: off}\nsyslog: {enabled: false}\nsnmp:\n  traps:\n    listen: %s\n", nil, "(snmp.traps.listen at " + cfg + ":7)"},
		{"syslog", "data_dir: %s\nhttp: {listen: off}\nbroker: {kafka_listen: off}\nsyslog:\n  listeners:\n    - {protocol: tcp, address: \"127.0.0.1:0\"}\n    - {protocol: udp, address: %s}\n", nil, "(syslog.listeners[1] at " + cfg + ":7)"},
	} {
		t.Run(c.name, func(t *testing.T) {
			addr := held.Addr().String()
			if c.name == "trap" || c.name == "syslog" {
				addr = heldUDP.LocalAddr().String()
			}
			if err := os.WriteFile(cfg, fmt.Appendf(nil, c.yaml, filepath.Join(dir, "data-"+c.name), addr), 0o600); err != nil {
				t.Fatal(err)
			}
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			defer cancel()
			var stdout, stderr bytes.Buffer
			err := dispatch(ctx, append([]string{"run", "-c", cfg}, c.args...), strings.NewReader(""), &stdout, &stderr)
			if err == nil || !strings.Contains(err.Error(), "address already in use") || !strings.Contains(err.Error(), c.want) {
				t.Errorf("run: %v; want it to name %s", err, c.want)
			}
		})
	}
}
