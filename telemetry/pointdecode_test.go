package telemetry

import (
	"encoding/json"
	"fmt"
	"math"
	"reflect"
	"strings"
	"testing"
	"time"
)

var metricSeeds = []string{
	`{"v":1,"measurement":"interface","device":"r1","tags":{"ifName":"Ethernet1","site":"ams1"},"fields":{"ifHCInOctets":18446744073709551615,"ifInErrors":-3,"util":12.5,"speed":1000,"status":"up","ok":true,"bad":false,"x":null},"counters":["ifHCInOctets","ifInErrors"],"time":"2026-11-29T12:00:00.123456789Z","received_at":"2026-11-29T12:00:00+01:00","uptime":4294967295,"source":"snmp"}`,
	`{"v":1,"measurement":"m","device":"d","fields":{},"time":"0001-01-01T00:00:00Z","received_at":"0001-01-01T00:00:00Z","source":""}`,
	` { "v" : 1 , "tags" : null , "fields" : { "a" : 1e3 , "b" : -0.5E-2 } , "counters" : null } `,
	`{"v":1,"measurement":"snmp_interface","device":"r1","fields":{"ifHCInOctets":5,"ifInOctets":7,"zz":1},"counters":["ifHCInOctets","ifInOctets"],"counters64":["ifHCInOctets","zz","missing"],"time":"2026-11-29T12:00:00Z","received_at":"2026-11-29T12:00:00Z","source":"snmp"}`,
	`{"fields":{"a":1},"counters64":[]}`, `{"fields":{"a":1},"counters64":null}`, `{"fields":{"a":1},"counters64":["a"],"counters64":["a"]}`,
	`{"measurement":"caf\u00e9","fields":{"a":1}}`,
	`{"measurement":"café","fields":{"a":1}}`,
	`{"measurement":"m","fields":{"a":{"nested":1}}}`,
	`{"measurement":"m","unknown":1}`,
	`{"fields":{"c":9223372036854775808},"counters":["c"]}`,
	`{"fields":{"c":1.5,"d":-0,"e":-0.0,"f":123456789012345678,"g":1234567890123456789},"counters":["c","d","g"]}`,
	`{"fields":{"a":1},"counters":[],"tags":{}}`,
	`{"fields":{"c":1000.0,"d":1e3,"e":-0.0,"f":9007199254740993.0,"g":1.8446744073709552e19,"h":18446744073709551615.0,"i":1.5e3,"j":-1.0,"k":0.5},"counters":["c","d","e","f","g","h","i","j","k"]}`,
	`{"tags":{"a\"b":"x\\y\n\u003c\u2028","b":"\ud83d\ude00"},"fields":{"s":"\/"}}`,
	`{"tags":{"a":"x","a":"y"}}`, `{"fields":{"a":1,"a":2}}`, `{"v":1,"v":2}`, `{"Device":"d"}`,
	`{"time":"2026-11-29T1:00:00Z"}`, `{"time":"2026-11-29T12:00:00,5Z"}`, `{"time":"2026-11-29T12:00:00+24:00"}`,
	`{"time":null,"fields":{"a":1e999}}`,
	`{"fields":{"a":1},"uptime":"x"}`, `{"uptime":-1}`, `{"uptime":1.5}`, `{"uptime":1.2e3}`, `{"uptime":4294967296}`, `{"uptime":-0}`,
	`{"uptime":true}`, `{"uptime":null}`, `{"uptime":{"a":1}}`, `{"uptime":[1]}`, `{"Uptime":"x"}`, `{"uptime":"\u0031"}`, `{"uptime":1,"uptime":"x"}`, `{"uptime":-"x"}`, `{"uptime":-true}`,
	`{}`, `[]`, `null`, `{"v":1,}`, `{"fields":{"a":01}}`, `{"fields":{"a":-}}`, `{"fields":{"a":1}}x`,
}

// FuzzDecodePoint: whenever the fast Decoder takes a metric, it agrees
// with encoding/json, as a Point and as a Metric.
func FuzzDecodePoint(f *testing.F) {
	for _, s := range metricSeeds {
		f.Add([]byte(s))
	}
	var d Decoder
	f.Fuzz(func(t *testing.T, b []byte) {
		var fast Point
		if !d.decodePoint(b, &fast) {
			return
		}
		slow, uptimeInvalid, err := decodeMetricJSON(b)
		if err != nil {
			t.Fatalf("fast accepted what encoding/json refuses (%v): %q", err, b)
		}
		if got := fast.Metric(); !reflect.DeepEqual(got, slow) {
			t.Fatalf("%q:\nfast %#v\nslow %#v", b, got, slow)
		}
		want := PointOf(slow)
		want.uptimeInvalid = uptimeInvalid
		if !reflect.DeepEqual(emptyAsNil(fast), emptyAsNil(*want)) {
			t.Fatalf("%q:\nfast %#v\nslow %#v", b, &fast, want)
		}
	})
}

var eventSeeds = []string{
	`{"v":1,"type":"interface_down","device":"r1","object":"Ethernet1","severity":"error","message":"Interface Ethernet1, changed state to down","tags":{"site":"ams1"},"time":"2026-11-29T12:00:00Z","cause":{"topic":"enriched.syslog","partition":1,"offset":42}}`,
	`{"v":1,"type":"bgp_peer_flapping","device":"r1","object":"10.0.0.1","message":"say \"hi\" \u003cb\u003e \u0026 \\o/ \u00e9\ud83d\ude00","count":5,"time":"2026-11-29T12:00:00.5+01:00","cause":{}}`,
	`{"v":1,"type":"t","device":"d","tags":{},"time":"0001-01-01T00:00:00Z","cause":{"topic":"x","partition":2147483648,"offset":1}}`,
	`{"v":1,"type":"t","tags":null,"count":1.0}`, `{"Type":"t"}`, `{"type":"a","type":"b"}`, `{"tags":{"a":"1","a":"2"}}`,
	`{"message":"\ud800"}`, `{"message":"caf` + "\xff" + `"}`, `{"cause":{"offset":1,"offset":2}}`,
	`{}`, `null`, `[]`, `{"v":1}x`, `{"time":"2026-11-29T12:00:00,5Z"}`,
}

// FuzzDecodeEvent: whenever the fast Decoder takes an event, it agrees
// with json.Unmarshal.
func FuzzDecodeEvent(f *testing.F) {
	for _, s := range eventSeeds {
		f.Add([]byte(s))
	}
	var d Decoder
	f.Fuzz(func(t *testing.T, b []byte) {
		var fast Event
		if !d.decodeEvent(b, &fast) {
			return
		}
		var slow Event
		if err := json.Unmarshal(b, &slow); err != nil {
			t.Fatalf("fast accepted what encoding/json refuses (%v): %q", err, b)
		}
		if !reflect.DeepEqual(fast, slow) {
			t.Fatalf("%q:\nfast %#v\nslow %#v", b, fast, slow)
		}
	})
}

// TestFastPathsTakeWeirValues: what weir writes never needs encoding/json.
func TestFastPathsTakeWeirValues(t *testing.T) {
	var d Decoder
	m := Metric{V: 1, Measurement: "interface", Device: "r1", Tags: map[string]string{"ifName": "Gi0/1", "site": "ams1", "alias": `to "core" <1>`},
		Fields: map[string]any{"in": uint64(1 << 62), "util": 0.5, "status": "up"}, Counters: []string{"in"},
		Time: time.Now(), ReceivedAt: time.Now().UTC(), Uptime: 123, Source: "snmp"}
	b, _ := json.Marshal(m)
	var fast Point
	if !d.decodePoint(b, &fast) {
		t.Fatalf("fast path refused %s", b)
	}
	slow, _ := decodeMetricSlow(b)
	if !reflect.DeepEqual(fast.Metric(), slow) {
		t.Fatalf("fast %#v\nslow %#v", fast.Metric(), slow)
	}
	if f := fast.Fields[0]; f.Key != "in" || f.Kind != FieldInt || f.Int() != 1<<62 || !f.Counter {
		t.Errorf("counter field %+v", f)
	}
	if v, ok := fast.Tag("alias"); !ok || v != `to "core" <1>` {
		t.Errorf("tag alias = %q", v)
	}

	e := Event{V: 1, Type: "interface_down", Device: "r1", Object: "Gi0/1", ObjectID: "Gi0/1", Severity: "error",
		Message: `Interface "Gi0/1" <down> & out`, Tags: map[string]string{"site": "ams1"}, Count: 3, Time: time.Now(),
		Cause: Cause{Topic: "enriched.syslog", Partition: 2, Offset: 1 << 40}}
	b, _ = json.Marshal(e)
	var ev Event
	if !d.decodeEvent(b, &ev) {
		t.Fatalf("fast path refused %s", b)
	}
	var want Event
	json.Unmarshal(b, &want)
	if !reflect.DeepEqual(ev, want) {
		t.Fatalf("fast %#v\nslow %#v", ev, want)
	}
}

// TestDecoderInternsAndReuses: a second record allocates nothing for the
// strings it shares with the first, and a reused Point keeps its storage.
func TestDecoderInternsAndReuses(t *testing.T) {
	var d Decoder
	var p Point
	v := []byte(metricSeeds[0])
	d.decodePoint(v, &p)
	allocs := testing.AllocsPerRun(100, func() {
		if !d.decodePoint(v, &p) {
			t.Fatal("refused")
		}
	})
	if allocs != 0 {
		t.Errorf("%v allocations per decode of a known metric, want 0", allocs)
	}
	// The cache is bounded.
	for i := range internMax + 10 {
		d.str(fmt.Appendf(nil, "s%d", i))
	}
	if len(d.strs) > internMax {
		t.Errorf("string cache holds %d", len(d.strs))
	}
}

func BenchmarkDecodePoint(b *testing.B) {
	v := []byte(metricSeeds[0])
	b.Run("point", func(b *testing.B) {
		var d Decoder
		var p Point
		for b.Loop() {
			d.decodePoint(v, &p)
		}
	})
	b.Run("metric", func(b *testing.B) {
		var d Decoder
		var p Point
		for b.Loop() {
			d.decodePoint(v, &p)
			p.Metric()
		}
	})
	b.Run("encoding-json", func(b *testing.B) {
		for b.Loop() {
			decodeMetricSlow(v)
		}
	})
}

func BenchmarkDecodeEvent(b *testing.B) {
	v := []byte(eventSeeds[0])
	b.Run("fast", func(b *testing.B) {
		var d Decoder
		for b.Loop() {
			var e Event
			d.decodeEvent(v, &e)
		}
	})
	b.Run("encoding-json", func(b *testing.B) {
		for b.Loop() {
			var e Event
			json.Unmarshal(v, &e)
		}
	})
}

// BenchmarkPointAppendJSON encodes a decoded metric row, as enrichment
// writes every enriched one.
func BenchmarkPointAppendJSON(b *testing.B) {
	var d Decoder
	var p Point
	d.decodePoint([]byte(metricSeeds[0]), &p)
	buf := make([]byte, 0, 4096)
	for b.Loop() {
		buf, _ = p.AppendJSON(buf[:0])
	}
}

// TestDecodePointRefusesTrailingData: a value with more after the metric
// (two metrics in one record, as a Kafka client batching JSON lines
// writes) is refused, as json.Unmarshal refuses it, so a sink
// dead-letters the record rather than delivering its first metric and
// dropping the rest unseen.
func TestDecodePointRefusesTrailingData(t *testing.T) {
	one := `{"v":1,"measurement":"m","device":"d","tags":{"t":"a b"},"fields":{"x":1},"time":"2026-11-29T12:00:00Z","source":"snmp"}`
	for _, v := range []string{one + "\n" + one, one + " x", one + "{}", `{"fields":{"a":1}} {"fields":{"b":2}}`} {
		var d Decoder
		var p Point
		if err := d.DecodePoint([]byte(v), &p); err == nil {
			t.Errorf("%q: decoded as %+v, want an error", v, p)
		}
		if _, err := decodeMetricSlow([]byte(v)); err == nil {
			t.Errorf("%q: decodeMetricSlow took it", v)
		}
	}
	var d Decoder
	var p Point
	if err := d.DecodePoint([]byte(" "+one+" \n"), &p); err != nil {
		t.Errorf("white space around a metric: %v", err)
	}
}

// TestCounterWrittenAsWholeFloatIsInteger: a counter that a producer
// other than weir's collectors writes as a float whose value is a whole
// number (Python's json.dumps writes 1000.0, JavaScript 1e+21) is that
// integer, judged from its text, not from the float64 nearest it: typed
// as weir's own 1000 is (a sink sees an integer field every time, not a
// float one time and an integer the next, which InfluxDB refuses), exact
// past 2^53. A fraction, a negative number and one past 2^64-1 stay
// floats (no counter value: enrichment unlists them); -0.0 is 0, as -0
// is. Every path (token by token, shaped, encoding/json) agrees.
func TestCounterWrittenAsWholeFloatIsInteger(t *testing.T) {
	for _, tc := range []struct {
		text string
		kind FieldKind
		want uint64  // FieldInt or FieldUint
		f    float64 // FieldFloat
	}{
		{"1000.0", FieldInt, 1000, 0},
		{"1e3", FieldInt, 1000, 0},
		{"1E+3", FieldInt, 1000, 0},
		{"1.5e3", FieldInt, 1500, 0},
		{"10e-1", FieldInt, 1, 0},
		{"1.23456789e8", FieldInt, 123456789, 0},
		{"100000000000000000000e-2", FieldInt, 1e18, 0},
		{"0.0", FieldInt, 0, 0},
		{"0e0", FieldInt, 0, 0},
		{"-0.0", FieldInt, 0, 0},
		{"-0e-7", FieldInt, 0, 0},
		{"0.000e99999999999999999999", FieldInt, 0, 0},
		{"9007199254740993.0", FieldInt, 9007199254740993, 0},
		{"9223372036854775807.000", FieldInt, math.MaxInt64, 0},
		{"9223372036854775808.0", FieldUint, 1 << 63, 0},
		{"18446744073709551615.0", FieldUint, math.MaxUint64, 0},
		{"1.8446744073709551615e19", FieldUint, math.MaxUint64, 0},
		// Not whole, negative, or past 2^64-1: floats, as before.
		{"1000.5", FieldFloat, 0, 1000.5},
		{"1e-1", FieldFloat, 0, 0.1},
		{"123456789e-3", FieldFloat, 0, 123456.789},
		{"-1.0", FieldFloat, 0, -1},
		{"-1e3", FieldFloat, 0, -1000},
		{"1.8446744073709552e19", FieldFloat, 0, 1.8446744073709552e19},
		{"18446744073709551616.0", FieldFloat, 0, 1 << 64},
		{"1e20", FieldFloat, 0, 1e20},
		{"1e-99999999999999999999", FieldFloat, 0, 0},
	} {
		row := func(v string) []byte {
			return []byte(`{"v":1,"measurement":"snmp_interface","device":"r1","tags":{"ifName":"Gi0/1"},"fields":{"g":` + v +
				`,"ifHCInOctets":` + v + `},"counters":["ifHCInOctets"],"counters64":["ifHCInOctets"],"time":"2026-11-29T12:00:00Z","received_at":"2026-11-29T12:00:00Z","uptime":123,"source":"py"}`)
		}
		v := row(tc.text)
		var tokens, shaped Decoder
		var got [3]Point
		if !tokens.decodeTokens(v, &got[0]) {
			t.Errorf("%s: refused token by token", tc.text)
			continue
		}
		shaped.decodePoint(row("1"), &got[1])
		if !shaped.decodeShaped(v, &got[1]) {
			t.Errorf("%s: not shaped", tc.text)
			continue
		}
		slow, err := decodeMetricSlow(v)
		if err != nil {
			t.Errorf("%s: encoding/json: %v", tc.text, err)
			continue
		}
		pointOf(slow, &got[2])
		for i, p := range got {
			path := [...]string{"tokens", "shaped", "encoding/json"}[i]
			f, _ := p.Field("ifHCInOctets")
			switch {
			case f.Kind != tc.kind:
				t.Errorf("%s (%s): counter of kind %v (%v), want %v", tc.text, path, f.Kind, f.Value(), tc.kind)
			case tc.kind == FieldFloat && f.Float() != tc.f:
				t.Errorf("%s (%s): %v, want %v", tc.text, path, f.Float(), tc.f)
			case tc.kind != FieldFloat && f.bits != tc.want:
				t.Errorf("%s (%s): %v, want %d", tc.text, path, f.Value(), tc.want)
			}
			if g, _ := p.Field("g"); g.Kind != FieldFloat {
				t.Errorf("%s (%s): a gauge of kind %v, want a float as ever", tc.text, path, g.Kind)
			}
		}
		if tc.kind == FieldFloat {
			continue
		}
		// Written as the integer: what weir's own counter would be.
		out, err := got[0].AppendJSON(nil)
		if want := fmt.Sprintf(`"ifHCInOctets":%d`, tc.want); err != nil || !strings.Contains(string(out), want) {
			t.Errorf("%s: encoded as %s (%v), want %s", tc.text, out, err, want)
		}
	}
}

// TestUptimeThatIsNoTimeTicksDecodesAsNone: a metric whose uptime is no
// sysUpTime (a TimeTicks: a whole number from 0 to 2^32-1), as a producer
// other than weir's collectors may write it, decodes with no uptime (0,
// unknown) and the rest of the metric as ever, and the Point says so
// (the whole record was refused before, its counters and fields lost).
// null is no uptime, as a missing one is (not a bad one); 1.2e3 is 1200.
func TestUptimeThatIsNoTimeTicksDecodesAsNone(t *testing.T) {
	row := func(uptime string) []byte {
		return []byte(`{"v":1,"measurement":"snmp_interface","device":"r1","tags":{"ifName":"Gi0/1"},"fields":{"ifHCInOctets":5},"counters":["ifHCInOctets"],"time":"2026-11-29T12:00:00Z","received_at":"2026-11-29T12:00:00Z","uptime":` +
			uptime + `,"source":"py"}`)
	}
	for _, tc := range []struct {
		text    string
		want    uint32
		invalid bool
	}{
		{"123", 123, false},
		{"4294967295", math.MaxUint32, false},
		{"1.2e3", 1200, false},
		{"100.0", 100, false},
		{"0", 0, false},
		{"-0", 0, false},
		{"null", 0, false},
		{"-1", 0, true},
		{"1.5", 0, true},
		{"4294967296", 0, true},
		{"1e10", 0, true},
		{"18446744073709551616", 0, true},
		{`"x"`, 0, true},
		{`"123"`, 0, true},
		{`"\u0031"`, 0, true},
		{"true", 0, true},
		{"false", 0, true},
		{`{"a":1}`, 0, true},
		{"[1]", 0, true},
	} {
		v := row(tc.text)
		var d, shaped Decoder
		var p, ps Point
		if err := d.DecodePoint(v, &p); err != nil {
			t.Errorf("uptime %s: %v", tc.text, err)
			continue
		}
		shaped.decodePoint(row("7"), &ps)
		if !shaped.decodeShaped(v, &ps) && tc.text[0] != '{' && tc.text[0] != '[' {
			t.Errorf("uptime %s: not shaped", tc.text)
		} else if !reflect.DeepEqual(ps, p) && tc.text[0] != '{' && tc.text[0] != '[' {
			t.Errorf("uptime %s: shaped %+v, want %+v", tc.text, ps, p)
		}
		f, ok := p.Field("ifHCInOctets")
		if p.Uptime != tc.want || p.UptimeInvalid() != tc.invalid || !ok || f.Int() != 5 || p.Device != "r1" {
			t.Errorf("uptime %s: decoded uptime %d, invalid %v, field %+v, device %q; want uptime %d, invalid %v, the rest as ever",
				tc.text, p.Uptime, p.UptimeInvalid(), f, p.Device, tc.want, tc.invalid)
		}
		m, invalid, err := decodeMetricJSON(v)
		if err != nil || m.Uptime != tc.want || invalid != tc.invalid {
			t.Errorf("uptime %s: encoding/json: uptime %v, invalid %v, %v", tc.text, m, invalid, err)
		}
	}
}
