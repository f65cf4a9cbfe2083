package influxdb

import (
	"bytes"
	"compress/gzip"
	"context"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/influxdata/line-protocol/v2/lineprotocol"

	"github.com/weirnet/weir/configs"
	"github.com/weirnet/weir/sinks"
	"github.com/weirnet/weir/telemetry"
)

// oldEncode is the encoder as it was, over telemetry.Metric's maps, to
// check the Point encoder against.
func oldEncode(enc *lineprotocol.Encoder, m *telemetry.Metric) error {
	if len(m.Fields) == 0 {
		return nil
	}
	enc.StartLine(m.Measurement)
	// Trailing backslashes are trimmed from tag values but the device's
	// (which the encoder then refuses), and a tag left empty is left out.
	tagValue := func(k, v string) string {
		if k == "device" {
			return v
		}
		return strings.TrimRight(v, `\`)
	}
	var keys []string
	for k, v := range m.Tags {
		if tagValue(k, v) != "" {
			keys = append(keys, k)
		}
	}
	if _, ok := m.Tags["device"]; !ok && m.Device != "" {
		keys = append(keys, "device")
	}
	slices.Sort(keys)
	for _, k := range keys {
		v, ok := m.Tags[k]
		if !ok {
			v = m.Device
		}
		v = tagValue(k, v)
		// Control characters in tag values become spaces (a tab in an
		// interface description cost the whole point).
		enc.AddTag(k, strings.Map(func(r rune) rune {
			if r < 0x20 || r == 0x7f {
				return ' '
			}
			return r
		}, strings.ToValidUTF8(v, "\uFFFD")))
	}
	keys = keys[:0]
	for k := range m.Fields {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	added := 0
	for _, k := range keys {
		if u, ok := m.Fields[k].(uint64); ok && u > math.MaxInt64 {
			continue // left out: InfluxDB 1.x has no unsigned type
		}
		var v lineprotocol.Value
		ok := false
		switch x := m.Fields[k].(type) {
		case string:
			v, ok = lineprotocol.StringValue(strings.ToValidUTF8(x, "\uFFFD"))
		case float64:
			v, ok = lineprotocol.FloatValue(x)
		default:
			v, ok = lineprotocol.NewValue(x)
		}
		if !ok {
			enc.ClearErr()
			return fmt.Errorf("field %q has no line-protocol type", k)
		}
		enc.AddField(k, v)
		added++
	}
	if added == 0 {
		// No line, but a bad name or tag is still refused.
		err := enc.Err()
		enc.ClearErr()
		enc.Reset()
		return err
	}
	t := m.Time
	if t.IsZero() {
		t = m.ReceivedAt
	}
	enc.EndLine(t)
	if err := enc.Err(); err != nil {
		enc.ClearErr()
		return err
	}
	return nil
}

// influxStrings turns line-protocol/v2's \n, \r and \t escapes (which it
// writes only in string fields) into the characters, as InfluxDB reads
// them: it unescapes only \\ and \" there.
var influxStrings = strings.NewReplacer(`\\`, `\\`, `\n`, "\n", `\r`, "\r", `\t`, "\t")

// TestEncodeMatchesOldEncoder: random metrics, odd names included, give
// the lines (and the refusals) the map-based encoder gave.
func TestEncodeMatchesOldEncoder(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	odd := []string{"", "a", "device", "site", "b c", "x,y", "k=v", `q"uote`, "tail\\", "nl\n", "caf\xe9", "é", "zz"}
	pick := func() string { return odd[rng.IntN(len(odd))] }
	values := []any{1.5, math.NaN(), math.Inf(1), int64(-3), uint64(1 << 63), true, false, "up", "caf\xe9", nil,
		"a\"b\\c\nd\te\r, =", 1e21, 1e-7, math.Copysign(0, -1), float64(1 << 53), int64(math.MinInt64)}
	var got []byte
	var ref lineprotocol.Encoder
	ref.SetPrecision(lineprotocol.Nanosecond)
	lines, refused := 0, 0
	for range 3000 {
		m := &telemetry.Metric{Measurement: pick(), Device: pick(), Time: time.Unix(0, rng.Int64N(1e18))}
		switch rng.IntN(8) {
		case 0:
			m.Time = time.Time{}
		case 1:
			m.Time, m.ReceivedAt = time.Time{}, time.Unix(1e9, 5)
		case 2:
			m.Time = time.Date(2300, 1, 1, 0, 0, 0, 0, time.UTC) // past what nanoseconds hold
		}
		if rng.IntN(5) == 0 {
			m.Measurement = "interface"
		}
		if rng.IntN(3) > 0 {
			m.Tags = map[string]string{}
			for range rng.IntN(4) {
				m.Tags[pick()] = pick()
			}
		}
		m.Fields = map[string]any{}
		for range rng.IntN(4) {
			k := pick()
			if k == "" {
				k = "f"
			}
			m.Fields[k] = values[rng.IntN(len(values))]
		}
		ref.Reset()
		var err error
		got, err = appendLine(got[:0], telemetry.PointOf(m))
		refErr := oldEncode(&ref, m)
		if (err == nil) != (refErr == nil) {
			t.Fatalf("%+v: err %v, old encoder %v", m, err, refErr)
		}
		if want := influxStrings.Replace(string(ref.Bytes())); err == nil && string(got) != want {
			t.Fatalf("%+v:\ngot  %q\nwant %q", m, got, want)
		}
		if err != nil {
			refused++
			if len(got) > 0 {
				t.Fatalf("%+v: refused, yet %q", m, got)
			}
		} else if len(got) > 0 {
			lines++
		}
	}
	if lines < 300 || refused < 300 {
		t.Fatalf("%d lines, %d refused: the test does not test much", lines, refused)
	}
}

// TestParallelGzip: a batch encoded and compressed in chunks on several
// cores is one gzip stream the standard library reads back as the lines
// of every metric in order, whatever the chunks hold (empty ones too).
func TestParallelGzip(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(4))
	var got []byte
	var gotErr error
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		zr, err := gzip.NewReader(r.Body)
		if err == nil {
			zr.Multistream(false)
			got, err = io.ReadAll(zr)
			if err == nil {
				// One member: nothing after it.
				if rest, _ := io.ReadAll(r.Body); len(rest) > 0 {
					err = fmt.Errorf("%d bytes after the gzip member", len(rest))
				}
			}
		}
		gotErr = err
		w.WriteHeader(204)
	}))
	defer hs.Close()
	for _, gz := range []bool{true, false} {
		d, err := New(configs.Sink{URL: hs.URL, Database: "db", Gzip: &gz}, sinks.Env{})
		if err != nil {
			t.Fatal(err)
		}
		s := d.(*Sink)
		for _, n := range []int{1, 511, 1024, 1500, 2047, 2048, 5000} {
			for _, emptyFrom := range []int{-1, 0, n / 3} {
				items := make([]sinks.Item, n)
				var want bytes.Buffer
				for i := range items {
					m := &telemetry.Metric{Measurement: "interface", Device: fmt.Sprintf("r%d", i%100),
						Tags: map[string]string{"ifName": fmt.Sprintf("Ethernet%d", i)}, Time: time.Unix(0, int64(i)),
						Fields: map[string]any{"in": float64(i) * 1.5, "n": int64(i)}}
					if emptyFrom >= 0 && i >= emptyFrom && i < emptyFrom+n/2 {
						m.Fields = nil // no line
					}
					items[i].Point = telemetry.PointOf(m)
					line, err := appendLine(nil, items[i].Point)
					if err != nil {
						t.Fatal(err)
					}
					want.Write(line)
				}
				got, gotErr = nil, nil
				if err := s.Write(context.Background(), items); err != nil {
					t.Fatal(err)
				}
				if !gz {
					continue // the server reads gzip only; checked below
				}
				if gotErr != nil {
					t.Fatalf("n=%d emptyFrom=%d: %v", n, emptyFrom, gotErr)
				}
				if !bytes.Equal(got, want.Bytes()) {
					t.Fatalf("n=%d emptyFrom=%d: %d bytes back, want %d", n, emptyFrom, len(got), want.Len())
				}
			}
		}
		if !gz && !bytes.Contains(s.body, []byte("interface,device=r1,ifName=Ethernet1 in=1.5,n=1i 1\n")) {
			t.Fatalf("plain body: %.200q", s.body)
		}
	}
}

// TestCommentMeasurementRefused: InfluxDB takes a line starting with # as
// a comment and stores nothing, answering 204: such a metric is refused
// (dead-lettered), not counted as delivered.
func TestCommentMeasurementRefused(t *testing.T) {
	m := &telemetry.Metric{Measurement: "#cpu", Device: "r1", Fields: map[string]any{"v": 1.0}, Time: time.Unix(1, 0)}
	if got, err := appendLine(nil, telemetry.PointOf(m)); err == nil {
		t.Fatalf("encoded %q", got)
	}
	m.Measurement = "cpu#1"
	if _, err := appendLine(nil, telemetry.PointOf(m)); err != nil {
		t.Fatalf("cpu#1: %v", err)
	}
}

// lateReader is a RoundTripper that answers at once and reads the body
// afterwards, as net/http may (RoundTrip's contract allows it): it checks
// the bytes it reads late are those the request had when it was sent.
type lateReader struct {
	mismatch atomic.Int32
	done     sync.WaitGroup
}

func (l *lateReader) RoundTrip(req *http.Request) (*http.Response, error) {
	copyBody, err := req.GetBody()
	if err != nil {
		return nil, err
	}
	sent, _ := io.ReadAll(copyBody) // the bytes as sent
	copyBody.Close()
	l.done.Add(1)
	go func() {
		defer l.done.Done()
		defer req.Body.Close()
		time.Sleep(5 * time.Millisecond) // the sink has gone on to its next batch
		if late, _ := io.ReadAll(req.Body); !bytes.Equal(late, sent) {
			l.mismatch.Add(1)
		}
	}()
	return &http.Response{StatusCode: http.StatusUnauthorized, Body: io.NopCloser(strings.NewReader("no token")),
		Header: http.Header{}, Request: req}, nil
}

// TestEarlyAnswerBodyNotReused: the transport may still read a request's
// body after Do returns (a server that answers 401 before reading it all);
// the next batch must not be encoded into those bytes meanwhile.
func TestEarlyAnswerBodyNotReused(t *testing.T) {
	gz := false
	d, err := New(configs.Sink{URL: "http://127.0.0.1:1/", Database: "db", Gzip: &gz}, sinks.Env{})
	if err != nil {
		t.Fatal(err)
	}
	s := d.(*Sink)
	lr := &lateReader{}
	s.client.Transport = lr
	batch := func(round int) []sinks.Item {
		items := make([]sinks.Item, 1000)
		for i := range items {
			m := &telemetry.Metric{Measurement: "interface", Device: fmt.Sprintf("r%d", i), Time: time.Unix(0, 1),
				Fields: map[string]any{"in": float64(i)}}
			if round%2 == 1 {
				m.Measurement, m.Time = "x", time.Unix(0, 22) // other bytes everywhere
			}
			items[i].Point = telemetry.PointOf(m)
		}
		return items
	}
	for round := range 10 {
		if round%2 == 0 {
			if err := s.Write(context.Background(), batch(round)); err == nil {
				t.Fatal("a 401 was taken as written")
			}
		} else {
			s.Write(context.Background(), batch(round))
		}
	}
	lr.done.Wait()
	if n := lr.mismatch.Load(); n != 0 {
		t.Fatalf("%d of 10 bodies changed while the transport was still reading them", n)
	}
}

// TestControlCharacterInTagValue: a tab in an interface description (the
// device's text, in a tag) is written as a space; the whole point went to
// dead.letter, every poll. A control character in a key still refuses it.
func TestControlCharacterInTagValue(t *testing.T) {
	m := &telemetry.Metric{Measurement: "interface", Device: "edge1", Tags: map[string]string{"description": "uplink\tto\r\nspine"},
		Fields: map[string]any{"in_octets_rate": 1.5}, Time: time.Unix(1, 0)}
	got, err := appendLine(nil, telemetry.PointOf(m))
	if err != nil || !strings.Contains(string(got), `description=uplink\ to\ \ spine,`) {
		t.Fatalf("%q, %v", got, err)
	}
	m.Tags = map[string]string{"a\tb": "x"}
	if _, err := appendLine(nil, telemetry.PointOf(m)); err == nil {
		t.Fatal("a tag key with a tab was written")
	}
}

// TestNonFiniteStringLeftOut: the strings weir writes for a float NaN or
// infinity are left out of the line, the other fields kept; a point with
// nothing else writes no line.
func TestNonFiniteStringLeftOut(t *testing.T) {
	m := &telemetry.Metric{Measurement: "optics", Device: "spine1",
		Fields: map[string]any{"a": "-Inf", "instant": "NaN", "min": -40.0, "state": "up", "z": "+Inf"}, Time: time.Unix(1, 0)}
	got, err := appendLine(nil, telemetry.PointOf(m))
	if want := "optics,device=spine1 min=-40,state=\"up\" 1000000000\n"; err != nil || string(got) != want {
		t.Fatalf("%q, %v; want %q", got, err, want)
	}
	m.Fields = map[string]any{"instant": "-Inf"}
	if got, err := appendLine([]byte("x\n"), telemetry.PointOf(m)); err != nil || string(got) != "x\n" {
		t.Fatalf("%q, %v", got, err)
	}
}

// TestDeviceEndingInBackslashRefused: a tag value's trailing backslashes
// are trimmed (a Windows drive's "C:\" is "C:"), but not the device's: a
// device of backslashes alone would be written as a point of no device,
// and "sw1\" as one of device sw1, into another device's series. Such a
// point is refused (a dead letter), as every tag value ending in a
// backslash was before; whether the device is the metric's or a tag's.
func TestDeviceEndingInBackslashRefused(t *testing.T) {
	for _, m := range []*telemetry.Metric{
		{Measurement: "storage", Device: `\`, Tags: map[string]string{"descr": "C:"}},
		{Measurement: "storage", Device: `\\`},
		{Measurement: "storage", Device: `sw1\`},
		{Measurement: "storage", Device: "r1", Tags: map[string]string{"device": `sw1\`}},
		{Measurement: "storage", Device: "r1", Tags: map[string]string{"device": `\`}},
	} {
		m.Fields, m.Time = map[string]any{"used_pct": 41.5}, time.Unix(1, 0)
		if got, err := appendLine(nil, telemetry.PointOf(m)); err == nil {
			t.Errorf("device %q, tags %q: written %q", m.Device, m.Tags, got)
		}
	}
	m := &telemetry.Metric{Measurement: "storage", Device: "win1", Tags: map[string]string{"descr": `C:\`, "path": `\\`},
		Fields: map[string]any{"used_pct": 41.5}, Time: time.Unix(1, 0)}
	if got, err := appendLine(nil, telemetry.PointOf(m)); err != nil || string(got) != "storage,descr=C:,device=win1 used_pct=41.5 1000000000\n" {
		t.Errorf("other tags: %q, %v", got, err)
	}
}
