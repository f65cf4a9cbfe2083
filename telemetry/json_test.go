package telemetry

import (
	"bytes"
	"encoding/json"
	"slices"
	"testing"
	"time"
)

func stdJSON(t testing.TB, v any) []byte {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		t.Fatal(err)
	}
	return bytes.TrimSuffix(b.Bytes(), []byte("\n"))
}

func TestLogAppendJSONMatchesEncodingJSON(t *testing.T) {
	devTime := time.Date(2026, 11, 29, 14, 2, 11, 123000000, time.UTC)
	for _, l := range []Log{
		{V: 1, Device: "edge1", Format: "rfc5424", Facility: 23, Severity: 3, Time: &devTime,
			Hostname: "edge1", AppName: "bgpd", ProcID: "42", MsgID: "ADJ",
			StructuredData: map[string]map[string]string{"meta@1": {"b": "2", "a": "1"}, "x@2": {}},
			Message:        "neighbor \"10.0.0.2\" down\t<tab> & \u2028 \x01", Raw: "<187>1 ...", SourceAddr: "192.0.2.1:514",
			Listener: "udp://0.0.0.0:514", ReceivedAt: time.Date(2026, 11, 29, 14, 2, 11, 0, time.FixedZone("x", 3600))},
		{V: 1, Device: "10.0.0.9", Format: "unknown", Facility: -1, Severity: -1, Message: "garbage \xff\xfe bytes",
			Raw: "garbage \xff\xfe bytes", RawBytes: []byte("garbage \xff\xfe bytes"), ParseError: "no PRI", SourceAddr: "10.0.0.9:5000", Listener: "tcp://:601"},
	} {
		got := l.AppendJSON(nil)
		want := stdJSON(t, &l)
		if !bytes.Equal(got, want) {
			t.Errorf("AppendJSON\n got %s\nwant %s", got, want)
		}
		var back Log
		if err := json.Unmarshal(got, &back); err != nil {
			t.Fatal(err)
		}
	}
}

func TestAppendStringEscapes(t *testing.T) {
	for _, s := range []string{"", "plain", `q"b\`, "\x00\x1f\x7f", "é中文", "\xc3\x28", "a\u2029b"} {
		if got, want := AppendString(nil, s), stdJSON(t, s); !bytes.Equal(got, want) {
			t.Errorf("%q: got %s want %s", s, got, want)
		}
	}
}

func FuzzAppendString(f *testing.F) {
	f.Add("hello \"world\"\n")
	f.Add("\xff\u2028")
	f.Add("eight ok<a href='x'>&amp; sixteen bytes</a>")
	f.Fuzz(func(t *testing.T, s string) {
		if got, want := AppendString(nil, s), stdJSON(t, s); !bytes.Equal(got, want) {
			t.Fatalf("%q: got %s want %s", s, got, want)
		}
		// With HTML escaping, as json.Marshal does.
		want, _ := json.Marshal(s)
		if got := AppendMarshalString(nil, s); !bytes.Equal(got, want) {
			t.Fatalf("%q: AppendMarshalString %s, json.Marshal %s", s, got, want)
		}
	})
}

func BenchmarkLogAppendJSON(b *testing.B) {
	l := Log{V: 1, Device: "edge1", Format: "cisco", Facility: 23, Severity: 5, Sequence: "45",
		Message:    "%LINEPROTO-5-UPDOWN: Line protocol on Interface GigabitEthernet0/1, changed state to down",
		Raw:        "<189>45: Nov 29 14:02:11.123: %LINEPROTO-5-UPDOWN: Line protocol on Interface GigabitEthernet0/1, changed state to down",
		SourceAddr: "192.0.2.1:514", Listener: "udp://0.0.0.0:514", ReceivedAt: time.Now()}
	var buf []byte
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		buf = l.AppendJSON(buf[:0])
	}
}

func TestEnrichedLogAppendJSONMatchesEncodingJSON(t *testing.T) {
	sev := 5
	for _, e := range []EnrichedLog{
		{Log: Log{V: 1, Device: "edge1", Format: "cisco", Facility: 23, Severity: 5, Hostname: "edge1", Relay: "relay1", Message: "%BGP-5-ADJCHANGE: x", Raw: "<189>...", SourceAddr: "192.0.2.1:514", Listener: "udp://:514"},
			Vendor: "cisco_ios", SeverityName: "notice", FacilityName: "local7", MnemonicFacility: "BGP", MnemonicSeverity: &sev, Mnemonic: "ADJCHANGE",
			Fields: map[string]string{"neighbor": "10.0.0.2", "asn": "65001", "vrf": "a\"b"}, Event: "bgp_peer_up", Tags: map[string]string{"site": "ams1", "role": "edge"}},
		{Log: Log{V: 1, Facility: -1, Severity: -1, Format: "malformed"}, Vendor: "generic", Tags: map[string]string{"unknown": "true"}},
	} {
		if got, want := e.AppendJSON(nil), stdJSON(t, &e); !bytes.Equal(got, want) {
			t.Errorf("EnrichedLog.AppendJSON\n got %s\nwant %s", got, want)
		}
	}
}

// TestDecodeLogMatchesEncodingJSON decodes with the fast path and with
// encoding/json and compares.
func TestDecodeLogMatchesEncodingJSON(t *testing.T) {
	devTime := time.Date(2026, 11, 29, 14, 2, 11, 123000000, time.UTC)
	for _, l := range []Log{
		{V: 1, Device: "edge1", Format: "cisco", Facility: 23, Severity: 5, Time: &devTime, Hostname: "edge1", Relay: "relay1", Sequence: "45",
			Message: "quote \" tab \t nl \n uni é \u2028 ctl \x01", Raw: "<189>45: x", SourceAddr: "192.0.2.1:514", Listener: "udp://:514",
			ReceivedAt: time.Date(2026, 11, 29, 14, 2, 11, 5, time.FixedZone("x", 3600))},
		{V: 1, Format: "malformed", Facility: -1, Severity: -1, Raw: "bad \xff", RawBytes: []byte("bad \xff"), ParseError: "no PRI"},
		{V: 1, Format: "rfc5424", StructuredData: map[string]map[string]string{"a@1": {"x": "y"}}},
		{V: 1, Format: "rfc5424", StructuredData: map[string]map[string]string{
			"origin": {"ip": "10.0.0.5", "software": "s\"w"}, "junos@2636.1.1.1.2.57": {}, "e@1": {"k": "é\n"}}},
	} {
		data := l.AppendJSON(nil)
		var fast, std Log
		if err := DecodeLog(data, &fast); err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal(data, &std); err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(fast.AppendJSON(nil), std.AppendJSON(nil)) {
			t.Errorf("fast decode differs:\n fast %s\n std  %s", fast.AppendJSON(nil), std.AppendJSON(nil))
		}
	}
}

// FuzzDecodeLog: on any input the fast decoder agrees with encoding/json
// (both fail, or both give the same Log).
func FuzzDecodeLog(f *testing.F) {
	f.Add([]byte(`{"v":1,"device":"a\u00e9\ud83d\ude00","format":"cisco","facility":1,"severity":2,"message":"m","raw":"r","source_addr":"s","listener":"l","received_at":"2026-11-29T14:02:11Z"}`))
	f.Add([]byte(`{"v":1,"raw":"\ud800"}`))
	f.Add([]byte(`{"v":1,"hostname":"edge1","relay":"relay1","relay":"r2","message":"m"}`))
	f.Add([]byte(`{"device":"d","structured_data":{"a@1":{"x":"y","x":"z"},"b":{},"a@1":{"q":"\u00e9"}},"message":"m"}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		var fast Log
		std := unknownPRI() // as DecodeLog's encoding/json path starts
		ferr := DecodeLog(data, &fast)
		serr := json.Unmarshal(data, &std)
		if (ferr == nil) != (serr == nil) {
			t.Fatalf("fast %v, encoding/json %v", ferr, serr)
		}
		if ferr == nil && !bytes.Equal(fast.AppendJSON(nil), std.AppendJSON(nil)) {
			t.Fatalf("differ:\n fast %s\n std  %s", fast.AppendJSON(nil), std.AppendJSON(nil))
		}
		var shared Log
		var slot time.Time
		in := slices.Clone(data)
		buf := []byte(`{"v":1,"raw":"\"stale\""}`) // a previous decode's, emptied
		for range 2 {                              // the second into the bytes the first wrote
			if _, err := DecodeLogLayoutShared(in, &shared, &slot, &buf); (err == nil) != (ferr == nil) ||
				err == nil && !bytes.Equal(shared.AppendJSON(nil), fast.AppendJSON(nil)) {
				t.Fatalf("decoded in place: %v, %s; copied: %v, %s", err, shared.AppendJSON(nil), ferr, fast.AppendJSON(nil))
			}
		}
		if !bytes.Equal(in, data) {
			t.Fatalf("decoding in place changed the input")
		}
		checkAppendJSONFrom(t, data)
	})
}

// checkAppendJSONFrom: a record re-encoded from its copied bytes, with the
// device swapped and enrichment added, decodes to what AppendJSON gives.
func checkAppendJSONFrom(t *testing.T, data []byte) {
	t.Helper()
	var e EnrichedLog
	lay, err := DecodeLogLayout(data, &e.Log)
	if err != nil {
		return
	}
	e.Device, e.Vendor, e.Event = "edge\"1", "cisco_ios", "interface_down"
	e.Tags = map[string]string{"site": "lon1"}
	copied := e.AppendJSONFrom(nil, data, lay)
	var got, want EnrichedLog
	if err := json.Unmarshal(copied, &got); err != nil {
		t.Fatalf("copied record does not decode: %v\n%s", err, copied)
	}
	if err := json.Unmarshal(e.AppendJSON(nil), &want); err != nil {
		t.Fatal(err)
	}
	if g, w := got.AppendJSON(nil), want.AppendJSON(nil); !bytes.Equal(g, w) {
		t.Fatalf("copied differs:\n got  %s\n want %s", g, w)
	}
}

func TestAppendJSONFrom(t *testing.T) {
	devTime := time.Date(2026, 11, 29, 14, 2, 11, 0, time.UTC)
	for _, data := range [][]byte{
		(&Log{V: 1, Device: "10.0.0.1", Format: "cisco", Time: &devTime, Message: "m \" x", Raw: "r"}).AppendJSON(nil),
		(&Log{V: 1, Format: "rfc5424", StructuredData: map[string]map[string]string{"a@1": {"x": "y"}}}).AppendJSON(nil),
		[]byte(`{"message":"no device key"}`),
		[]byte(` { "device" : "spaced" , "raw":"\u0041" } `),
		[]byte(`{"device":"a","device":"b"}`),
		[]byte(`{}`),
	} {
		checkAppendJSONFrom(t, data)
	}
	var l Log
	if lay, _ := DecodeLogLayout([]byte(`{"device":"a","device":"b"}`), &l); lay.Copyable {
		t.Error("a record with a repeated key is copyable")
	}
	if lay, _ := DecodeLogLayout((&Log{Device: "x"}).AppendJSON(nil), &l); !lay.Copyable || lay.DeviceStart < 0 {
		t.Errorf("weir's own encoding is not copyable: %+v", lay)
	}
}
