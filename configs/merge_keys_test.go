package configs

import (
	"strings"
	"testing"
	"time"
)

// YAML merge keys (<<: *anchor) are how operators share settings between
// list entries; the sections that check their own keys must take them as
// the decoder does, not as an unknown key "<<".
func TestMergeKeysInSections(t *testing.T) {
	cfg, err := Parse([]byte(`
snmp:
  defaults: &snmpdef
    community: lab
    interval: 30s
  targets:
    - <<: *snmpdef
      name: a
      address: 192.0.2.1
      interval: 20s
    - &b {name: b, address: 192.0.2.2, community: other}
    - <<: [*b]
      name: c
      address: 192.0.2.3
gnmi:
  targets:
    - &g
      name: g1
      address: 127.0.0.1:57400
      insecure: true
      subscriptions: [counters]
    - <<: *g
      name: g2
  subscriptions:
    counters: {path: /interfaces/interface/state/counters, mode: stream, stream_mode: sample, sample_interval: 10s}
sinks:
  - &file
    type: file
    name: f1
    topics: [events]
    path: /tmp/f1.jsonl
  - <<: *file
    name: f2
    path: /tmp/f2.jsonl
`))
	if err != nil {
		t.Fatal(err)
	}
	if got := cfg.SNMP.Targets[0]; got.Community != "lab" || got.Interval != 20*time.Second {
		t.Errorf("snmp target a: community %q interval %v", got.Community, got.Interval)
	}
	if got := cfg.SNMP.Targets[2]; got.Community != "other" || got.Name != "c" {
		t.Errorf("snmp target c: %q community %q", got.Name, got.Community)
	}
	if len(cfg.GNMI.Targets) != 2 || cfg.GNMI.Targets[1].Address != "127.0.0.1:57400" {
		t.Errorf("gnmi targets: %+v", cfg.GNMI.Targets)
	}
	if len(cfg.Sinks) != 2 || cfg.Sinks[1].Type != "file" || cfg.Sinks[1].Path != "/tmp/f2.jsonl" {
		t.Errorf("sinks: %+v", cfg.Sinks)
	}
}

// A key misspelt in the merged mapping is still an unknown key.
func TestMergeKeysStillCheckKeys(t *testing.T) {
	for _, tc := range []struct{ yaml, want string }{
		{"snmp:\n  targets:\n    - &a {name: a, address: 192.0.2.1, comunity: x}\n    - <<: *a\n      name: b\n", "field comunity: unknown key"},
		{"sinks:\n  - &f {type: file, name: a, topics: [x], path: /tmp/a, pth: /tmp/b}\n  - <<: *f\n    name: b\n", "field pth: unknown key"},
		{"gnmi:\n  targets:\n    - &g {name: a, address: \"127.0.0.1:1\", insecure: true, subscriptions: [c], encodng: proto}\n    - <<: *g\n      name: b\n  subscriptions:\n    c: {path: /x}\n", "field encodng: unknown key"},
	} {
		_, err := Parse([]byte(tc.yaml))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%q: got %v, want %q", tc.yaml, err, tc.want)
		}
		if err != nil && strings.Contains(err.Error(), "field <<") {
			t.Errorf("%q: merge key reported as unknown: %v", tc.yaml, err)
		}
	}
}

// TestMergeCycleRefused: a merge of a mapping that holds the merge (or of
// the list it is in) made weir check overflow its stack; it is refused.
func TestMergeCycleRefused(t *testing.T) {
	for _, y := range []string{
		"snmp:\n  targets: &s\n    - {<<: *s, name: a}\n",
		"snmp:\n  targets:\n    - &a {<<: *a, name: a}\n",
		"sinks: &s\n  - {<<: *s, type: file}\n",
	} {
		if _, err := Parse([]byte(y)); err == nil || !strings.Contains(err.Error(), "refers to a node that holds it") {
			t.Errorf("%q: %v", y, err)
		}
	}
}
