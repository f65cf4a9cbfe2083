package telemetry

import (
	"testing"
	"time"
)

// TestDecodeLogWithoutPRIKeys: a record without "facility" or "severity"
// (a Kafka client's, which weir's receiver never writes: it writes -1
// for a line without a PRI) decodes them as unknown, -1, not as 0: a
// severity of 0 is emergency, and enrichment gave such a record's events
// that severity. Both decoders, the fast path and encoding/json's (taken
// for an unknown key), agree; keys present keep their values, 0 included.
func TestDecodeLogWithoutPRIKeys(t *testing.T) {
	for _, tc := range []struct {
		value              string
		facility, severity int
	}{
		{`{"v":1,"device":"a","message":"m"}`, -1, -1},
		{`{"v":1,"device":"a","message":"m","x-other":1}`, -1, -1}, // encoding/json's path
		{`{"v":1,"device":"a","severity":0,"message":"m"}`, -1, 0},
		{`{"v":1,"device":"a","facility":0,"message":"m","x-other":1}`, 0, -1},
		{`{"v":1,"device":"a","facility":23,"severity":5,"message":"m"}`, 23, 5},
	} {
		for name, decode := range map[string]func([]byte, *Log) (LogLayout, error){
			"DecodeLogLayout": DecodeLogLayout,
			"DecodeLogLayoutShared": func(data []byte, l *Log) (LogLayout, error) {
				var slot time.Time
				var buf []byte
				return DecodeLogLayoutShared(data, l, &slot, &buf)
			},
		} {
			var l Log
			if _, err := decode([]byte(tc.value), &l); err != nil {
				t.Fatalf("%s(%s): %v", name, tc.value, err)
			}
			if l.Facility != tc.facility || l.Severity != tc.severity {
				t.Errorf("%s(%s): facility %d, severity %d; want %d, %d", name, tc.value, l.Facility, l.Severity, tc.facility, tc.severity)
			}
		}
		var l Log
		if err := DecodeLog([]byte(tc.value), &l); err != nil || l.Severity != tc.severity {
			t.Errorf("DecodeLog(%s): severity %d, %v; want %d", tc.value, l.Severity, err, tc.severity)
		}
	}
}

// TestCopyableNeedsPRIKeys: a record without facility or severity is not
// copied as it is (AppendJSONFrom): its bytes lack the -1 the decoded Log
// has, which encoding it again writes.
func TestCopyableNeedsPRIKeys(t *testing.T) {
	var l Log
	lay, err := DecodeLogLayout([]byte(`{"device":"a","facility":1,"severity":2}`), &l)
	if err != nil || !lay.Copyable {
		t.Errorf("a record with both PRI keys: copyable %v, %v", lay.Copyable, err)
	}
	for _, v := range []string{`{"device":"a","facility":1}`, `{"device":"a","severity":2}`, `{"device":"a"}`} {
		if lay, err := DecodeLogLayout([]byte(v), &l); err != nil || lay.Copyable {
			t.Errorf("%s: copyable %v, %v; want it encoded again", v, lay.Copyable, err)
		}
	}
}

// TestDecodeSharedUnescapesIntoBuf: a record's strings with escapes, in
// its message, raw line and structured data, are unescaped into the
// buffer given, which a next record reuses: decoding allocates nothing
// once it has grown.
func TestDecodeSharedUnescapesIntoBuf(t *testing.T) {
	data := []byte(`{"v":1,"device":"fw1","facility":23,"severity":5,"message":"devname=\"fw1\" user=\"admin\" caf\u00e9",` +
		`"raw":"<189>devname=\"fw1\" user=\"admin\" caf\u00e9\n"}`)
	var l Log
	var slot time.Time
	var buf []byte
	decode := func() {
		if _, err := DecodeLogLayoutShared(data, &l, &slot, &buf); err != nil {
			t.Fatal(err)
		}
	}
	decode()
	if l.Message != `devname="fw1" user="admin" café` || l.Raw != "<189>"+l.Message+"\n" {
		t.Fatalf("message %q, raw %q", l.Message, l.Raw)
	}
	if allocs := testing.AllocsPerRun(100, decode); allocs != 0 {
		t.Errorf("%v allocations a record", allocs)
	}
}
