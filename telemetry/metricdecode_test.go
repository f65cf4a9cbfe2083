package telemetry

import (
	"bytes"
	"encoding/json"
	"math"
	"reflect"
	"testing"
	"time"
)

func slowDecodeMetric(data []byte, m *Metric) error {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	return dec.Decode(m)
}

func checkDecodeMetric(t *testing.T, data []byte) {
	t.Helper()
	var fast, slow Metric
	ferr := DecodeMetric(data, &fast)
	serr := slowDecodeMetric(data, &slow)
	if (ferr == nil) != (serr == nil) {
		t.Fatalf("%s: fast %v, encoding/json %v", data, ferr, serr)
	}
	if ferr != nil {
		return
	}
	if !fast.Time.Equal(slow.Time) || !fast.ReceivedAt.Equal(slow.ReceivedAt) {
		t.Fatalf("%s: times differ: %v %v, %v %v", data, fast.Time, slow.Time, fast.ReceivedAt, slow.ReceivedAt)
	}
	fast.Time, slow.Time, fast.ReceivedAt, slow.ReceivedAt = time.Time{}, time.Time{}, time.Time{}, time.Time{}
	if !reflect.DeepEqual(fast, slow) {
		t.Fatalf("%s:\n fast %#v\n slow %#v", data, fast, slow)
	}
}

func TestDecodeMetricMatchesEncodingJSON(t *testing.T) {
	m := Metric{V: 1, Measurement: "snmp_interface", Device: "leaf1",
		Tags:     map[string]string{"ifName": "Et1", "agent": "10.0.0.1"},
		Fields:   map[string]any{"ifHCInOctets": uint64(18446744073709551615), "ifOperStatus": int64(1), "temp": 41.5, "up": true, "mac": "00:1c"},
		Counters: []string{"ifHCInOctets"}, Time: time.Date(2026, 11, 29, 14, 0, 0, 123, time.UTC),
		ReceivedAt: time.Date(2026, 11, 29, 14, 0, 1, 0, time.FixedZone("", 3600)), Uptime: 4294967295, Source: "snmp"}
	data, _, err := m.AppendJSON(nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	var fast Metric
	if !fastDecodeMetric(string(data), &fast) {
		t.Fatalf("weir's own encoding takes the slow path: %s", data)
	}
	if fast.Fields["ifHCInOctets"] != json.Number("18446744073709551615") {
		t.Errorf("counter %#v", fast.Fields["ifHCInOctets"])
	}
	for _, d := range [][]byte{data,
		[]byte(`{"v":1,"fields":{"a":1,"a":2}}`), []byte(`{"v":1,"fields":null,"tags":null,"counters":null}`),
		[]byte(`{"v":1,"fields":{"x":{"y":1}}}`), []byte(`{"v":1,"uptime":-1}`), []byte(`{"v":1,"uptime":4294967296}`),
		[]byte(`{"v":1,"fields":{"n":-0.5e+3,"m":01}}`), []byte(`{"v":1,"counters":[]} trailing`), []byte(`{"Device":"x"}`),
		[]byte(`{"time":"2026-11-29T14:00:00.1234567891Z"}`), []byte(`{"time":"2026-11-29T24:00:00Z"}`), []byte(`{}`),
	} {
		checkDecodeMetric(t, d)
	}
}

func FuzzDecodeMetric(f *testing.F) {
	f.Add([]byte(`{"v":1,"measurement":"m","device":"d","tags":{"a":"b"},"fields":{"x":1,"y":"s","z":true,"n":null,"f":1.5e3},"counters":["x"],"time":"2026-11-29T14:00:00Z","received_at":"2026-11-29T14:00:00.5+01:00","uptime":7,"source":"snmp"}`))
	f.Add([]byte(`{"fields":{"a":-0,"b":1E-2},"uptime":0}`))
	f.Fuzz(func(t *testing.T, data []byte) { checkDecodeMetric(t, data) })
}

func BenchmarkDecodeMetric(b *testing.B) {
	m := Metric{V: 1, Measurement: "snmp_interface", Device: "leaf1", Tags: map[string]string{"ifName": "Et1", "ifIndex": "1", "agent": "10.0.0.1"},
		Fields: map[string]any{}, Time: time.Now(), ReceivedAt: time.Now(), Source: "snmp"}
	for _, c := range []string{"ifInOctets", "ifOutOctets", "ifHCInOctets", "ifHCOutOctets", "ifInErrors", "ifOutErrors", "ifInDiscards", "ifOutDiscards"} {
		m.Fields[c] = uint64(123456789012)
		m.Counters = append(m.Counters, c)
	}
	data, _, _ := m.AppendJSON(nil, nil)
	b.Run("fast", func(b *testing.B) {
		b.ReportAllocs()
		for i := 0; i < b.N; i++ {
			var m Metric
			DecodeMetric(data, &m)
		}
	})
	b.Run("encoding_json", func(b *testing.B) {
		b.ReportAllocs()
		for i := 0; i < b.N; i++ {
			var m Metric
			slowDecodeMetric(data, &m)
		}
	})
}

// FuzzMetricAppendJSON: Metric.AppendJSON writes float and json.Number
// fields exactly as json.Marshal does, errors included.
func FuzzMetricAppendJSON(f *testing.F) {
	for _, v := range []float64{0, math.Copysign(0, -1), 1, 0.1, 1e-7, 123456789e15, 1e21, 1e-6, -2.5e-300, 5e-324} {
		f.Add(v, "12")
	}
	f.Add(1.5, "-0.5e+3")
	f.Add(1.5, "01")
	f.Add(1.5, "")
	f.Add(math.Inf(-1), "1")
	f.Add(math.NaN(), "1")
	f.Fuzz(func(t *testing.T, x float64, n string) {
		m := Metric{V: 1, Fields: map[string]any{"f": x, "n": json.Number(n)}}
		got, _, gerr := m.AppendJSON(nil, nil)
		want, werr := json.Marshal(&m)
		if (gerr == nil) != (werr == nil) || gerr == nil && !bytes.Equal(got, want) {
			t.Fatalf("AppendJSON %s (%v), json.Marshal %s (%v)", got, gerr, want, werr)
		}
	})
}
