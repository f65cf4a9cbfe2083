package main

import (
	"maps"
	"testing"
)

// TestConfigFlagsKafkaForm: --config takes kafka-configs.sh's
// --add-config form, several settings separated by commas, as well as one
// setting a flag; a list value keeps its commas.
func TestConfigFlagsKafkaForm(t *testing.T) {
	for _, c := range []struct {
		kvs  []string
		want map[string]string
	}{
		{[]string{"retention.ms=1000,segment.bytes=1048576"}, map[string]string{"retention.ms": "1000", "segment.bytes": "1048576"}},
		{[]string{"retention.ms=1000", "segment.ms=60000"}, map[string]string{"retention.ms": "1000", "segment.ms": "60000"}},
		{[]string{"cleanup.policy=compact,delete,retention.ms=5"}, map[string]string{"cleanup.policy": "compact,delete", "retention.ms": "5"}},
	} {
		got, err := configFlags("", "", c.kvs)
		if err != nil {
			t.Errorf("%q: %v", c.kvs, err)
			continue
		}
		flat := map[string]string{}
		for k, v := range got {
			flat[k] = *v
		}
		if !maps.Equal(flat, c.want) {
			t.Errorf("%q: %v, want %v", c.kvs, flat, c.want)
		}
	}
	for _, bad := range [][]string{{"retention.ms"}, {"=5"}, {"retention.ms=1,retention.ms=2"}} {
		if _, err := configFlags("", "", bad); err == nil || exitCode(err) != 2 {
			t.Errorf("%q: %v, want a usage error", bad, err)
		}
	}
}

// TestConfigReading: how topics describe reads a config's value.
func TestConfigReading(t *testing.T) {
	for _, c := range []struct{ key, value, want string }{
		{"retention.ms", "604800000", "7d"},
		{"retention.ms", "-1", "for ever"},
		{"retention.ms", "9223372036854775807", "for ever"}, // Long.MAX_VALUE, as Kafka tools set it
		{"segment.ms", "9223372036854775807", "for ever"},
		{"segment.ms", "90000", "90s"},
		{"retention.bytes", "-1", "no bound"},
		{"segment.bytes", "1073741824", "1.0GiB"},
	} {
		if got := configReading(c.key, c.value); got != c.want {
			t.Errorf("%s=%s reads %q, want %q", c.key, c.value, got, c.want)
		}
	}
}
