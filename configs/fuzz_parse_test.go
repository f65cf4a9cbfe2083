package configs

import (
	"os"
	"path/filepath"
	"reflect"
	"testing"
)

// FuzzParse reads arbitrary bytes as a config file: no panic, a refusal
// is an error with something to say and no config, and what is accepted
// is accepted again the same (a SIGHUP re-reading an unchanged file must
// not change what runs).
func FuzzParse(f *testing.F) {
	for _, p := range []string{"weir.yaml", "../deploy/weir.yaml", "../examples/one-poll-three-systems/weir.yaml",
		"../examples/gnmi-and-snmp/weir.yaml", "../examples/syslog-events/weir.yaml", "../examples/kafka-cluster/kafka.yaml"} {
		if b, err := os.ReadFile(filepath.FromSlash(p)); err == nil {
			f.Add(b)
		}
	}
	f.Add([]byte("broker:\n  retention:\n    time: 200000d\n"))
	f.Add([]byte("syslog:\n  listen_udp: 127.0.0.1:5514\nsinks:\n  - {type: file, name: f, topics: [logs], path: /tmp/x}\n"))
	f.Add([]byte("sinks: [{type: webhook, name: a, topics: [events], url: 'http://x', format: alertmanager}]\n"))
	f.Add([]byte("snmp:\n  targets:\n    - {name: a, address: '127.0.0.1:161', community: public, profiles: [if-mib]}\n"))
	f.Add([]byte("{}"))
	f.Add([]byte("sinks: ~\n"))
	f.Add([]byte("broker: {data_dir: ${HOME}/x}\n"))
	f.Add([]byte("x-a: &a {community: c}\nsnmp:\n  targets:\n    - {<<: *a, name: a, address: 192.0.2.1}\n"))
	f.Fuzz(checkParse)
}

// checkParse fails t if Parse panics, refuses data with a config or an
// empty error, or reads it differently a second time.
func checkParse(t *testing.T, data []byte) {
	cfg, err := Parse(data)
	if err != nil {
		if cfg != nil {
			t.Fatalf("refused (%v) with a config", err)
		}
		if err.Error() == "" {
			t.Fatal("refused with an empty error")
		}
		return
	}
	again, err := Parse(data)
	if err != nil {
		t.Fatalf("accepted once, then refused: %v", err)
	}
	if !reflect.DeepEqual(cfg, again) {
		t.Fatalf("the same file read twice differs:\n%+v\n%+v", cfg, again)
	}
}
