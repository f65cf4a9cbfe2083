package sinks

import (
	"encoding/json"
	"reflect"
	"testing"
	"time"

	"github.com/weirnet/weir/telemetry"
)

var metricSeeds = []string{
	`{"v":1,"measurement":"interface","device":"r1","tags":{"ifName":"Ethernet1","site":"ams1"},"fields":{"ifHCInOctets":18446744073709551615,"ifInErrors":-3,"util":12.5,"speed":1000,"status":"up","ok":true,"bad":false,"x":null},"counters":["ifHCInOctets","ifInErrors"],"time":"2026-11-29T12:00:00.123456789Z","received_at":"2026-11-29T12:00:00+01:00","uptime":4294967295,"source":"snmp"}`,
	`{"v":1,"measurement":"m","device":"d","fields":{},"time":"0001-01-01T00:00:00Z","received_at":"0001-01-01T00:00:00Z","source":""}`,
	` { "v" : 1 , "tags" : null , "fields" : { "a" : 1e3 , "b" : -0.5E-2 } , "counters" : null } `,
	`{"measurement":"caf\u00e9","fields":{"a":1}}`,
	`{"measurement":"café","fields":{"a":1}}`,
	`{"measurement":"m","fields":{"a":{"nested":1}}}`,
	`{"measurement":"m","unknown":1}`,
	`{"fields":{"c":9223372036854775808},"counters":["c"]}`,
	`{"fields":{"c":1.5},"counters":["c"]}`,
	`{}`, `[]`, `{"v":1,}`, `{"fields":{"a":01}}`, `{"fields":{"a":-}}`, `{"fields":{"a":1}}x`,
}

// FuzzDecodeMetricFast: whenever the fast decoder succeeds, it agrees with
// encoding/json.
func FuzzDecodeMetricFast(f *testing.F) {
	for _, s := range metricSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		fast, err := decodeMetricFast(b)
		if err != nil {
			return
		}
		slow, err := decodeMetricSlow(b)
		if err != nil {
			t.Fatalf("fast accepted what encoding/json refuses (%v): %q", err, b)
		}
		if !reflect.DeepEqual(fast, slow) {
			t.Fatalf("%q:\nfast %#v\nslow %#v", b, fast, slow)
		}
	})
}

func TestDecodeMetricFastTakesWeirMetrics(t *testing.T) {
	m := telemetry.Metric{V: 1, Measurement: "interface", Device: "r1", Tags: map[string]string{"ifName": "Gi0/1", "site": "ams1"},
		Fields: map[string]any{"in": uint64(1 << 62), "util": 0.5, "status": "up"}, Counters: []string{"in"},
		Time: time.Now(), ReceivedAt: time.Now().UTC(), Uptime: 123, Source: "snmp"}
	b, _ := json.Marshal(m)
	fast, err := decodeMetricFast(b)
	if err != nil {
		t.Fatalf("fast path refused %s", b)
	}
	slow, _ := decodeMetricSlow(b)
	if !reflect.DeepEqual(fast, slow) {
		t.Fatalf("fast %#v\nslow %#v", fast, slow)
	}
}

func BenchmarkDecodeMetric(b *testing.B) {
	v := []byte(metricSeeds[0])
	b.Run("fast", func(b *testing.B) {
		for b.Loop() {
			decodeMetricFast(v)
		}
	})
	b.Run("encoding-json", func(b *testing.B) {
		for b.Loop() {
			decodeMetricSlow(v)
		}
	})
}
