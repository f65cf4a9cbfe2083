package prometheus

import (
	"bytes"
	"context"
	"encoding/binary"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"google.golang.org/protobuf/encoding/protowire"

	"github.com/weirnet/weir/configs"
	"github.com/weirnet/weir/sinks"
	"github.com/weirnet/weir/telemetry"
)

// oldAppendMetric is the remote-write encoder as it was (a buffer per
// label and per sample, maps), with fields in key order, to check the
// in-place encoder against.
func oldAppendMetric(body []byte, namespace string, m *telemetry.Metric) []byte {
	label := func(b []byte, name, value string) []byte {
		var l []byte
		l = protowire.AppendTag(l, 1, protowire.BytesType)
		l = protowire.AppendString(l, name)
		l = protowire.AppendTag(l, 2, protowire.BytesType)
		l = protowire.AppendString(l, value)
		b = protowire.AppendTag(b, 1, protowire.BytesType)
		return protowire.AppendBytes(b, l)
	}
	t := m.Time
	if t.IsZero() {
		t = m.ReceivedAt
	}
	ms := t.UnixMilli()
	lv := map[string]string{}
	for k, v := range m.Tags {
		if v != "" {
			lv[LabelName(k)] = strings.ToValidUTF8(v, "\uFFFD")
		}
	}
	if _, ok := lv["device"]; !ok && m.Device != "" {
		lv["device"] = strings.ToValidUTF8(m.Device, "\uFFFD")
	}
	var keys, fields []string
	for k := range lv {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for f := range m.Fields {
		fields = append(fields, f)
	}
	slices.Sort(fields)
	for _, field := range fields {
		var x float64
		switch v := m.Fields[field].(type) {
		case float64:
			x = v
		case int64:
			x = float64(v)
		case uint64:
			x = float64(v)
		case bool:
			if v {
				x = 1
			}
		default:
			continue
		}
		name := MetricName(namespace, m.Measurement, field, slices.Contains(m.Counters, field))
		var ts []byte
		named := false
		for _, k := range keys {
			if !named && k > "__name__" {
				ts = label(ts, "__name__", name)
				named = true
			}
			ts = label(ts, k, lv[k])
		}
		if !named {
			ts = label(ts, "__name__", name)
		}
		var sample []byte
		sample = protowire.AppendTag(sample, 1, protowire.Fixed64Type)
		sample = protowire.AppendFixed64(sample, math.Float64bits(x))
		sample = protowire.AppendTag(sample, 2, protowire.VarintType)
		sample = protowire.AppendVarint(sample, uint64(ms))
		ts = protowire.AppendTag(ts, 2, protowire.BytesType)
		ts = protowire.AppendBytes(ts, sample)
		body = protowire.AppendTag(body, 1, protowire.BytesType)
		body = protowire.AppendBytes(body, ts)
	}
	return body
}

// TestRemoteWriteMatchesOldEncoder: random metrics give the bytes the
// old encoder gave.
func TestRemoteWriteMatchesOldEncoder(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	// Tag keys that sanitise to distinct label names (the old encoder
	// kept one of colliding names at random).
	keys := []string{"1x", "site", "ifName", "device", "a b", "Zeta", "__x"}
	vals := []string{"", "ams1", "caf\xe9", strings.Repeat("long", 40), `"q"`, "é"}
	values := []any{1.5, math.NaN(), int64(-3), uint64(1 << 63), true, false, "up", nil}
	r := newRWWorker("ns", labeler{})
	for i := range 2000 {
		m := &telemetry.Metric{Measurement: []string{"interface", "cpu", "if Stats"}[i%3], Device: vals[rng.IntN(len(vals))],
			Time: time.UnixMilli(rng.Int64N(1 << 42)), Tags: map[string]string{}, Fields: map[string]any{}}
		for range rng.IntN(5) {
			m.Tags[keys[rng.IntN(len(keys))]] = vals[rng.IntN(len(vals))]
		}
		for range rng.IntN(5) {
			k := []string{"in", "out", "util", "ifHCInOctets", "x_total"}[rng.IntN(5)]
			m.Fields[k] = values[rng.IntN(len(values))]
			if rng.IntN(2) == 0 {
				m.Counters = append(m.Counters, k)
			}
		}
		r.body = r.body[:0]
		r.appendPoint(telemetry.PointOf(m), nil)
		if want := oldAppendMetric(nil, "ns", m); !bytes.Equal(r.body, want) {
			t.Fatalf("%+v:\ngot  %x\nwant %x", m, r.body, want)
		}
	}
}

// snappyDecode decodes a snappy block strictly by the format's
// description (literals and copies with 1, 2 and 4 byte offsets, no s2
// extensions), to check what Prometheus' decoder will read.
func snappyDecode(t *testing.T, src []byte) []byte {
	t.Helper()
	n, k := binary.Uvarint(src)
	if k <= 0 {
		t.Fatal("snappy: bad length")
	}
	src = src[k:]
	var dst []byte
	for len(src) > 0 {
		tag := src[0]
		var length, offset int
		switch tag & 3 {
		case 0:
			length = int(tag>>2) + 1
			src = src[1:]
			if length > 60 {
				nb := length - 60
				length = 0
				for i := range nb {
					length |= int(src[i]) << (8 * i)
				}
				length++
				src = src[nb:]
			}
			dst = append(dst, src[:length]...)
			src = src[length:]
			continue
		case 1:
			length = 4 + int(tag>>2)&7
			offset = int(tag&0xe0)<<3 | int(src[1])
			src = src[2:]
		case 2:
			length = 1 + int(tag>>2)
			offset = int(binary.LittleEndian.Uint16(src[1:]))
			src = src[3:]
		case 3:
			length = 1 + int(tag>>2)
			offset = int(binary.LittleEndian.Uint32(src[1:]))
			src = src[5:]
		}
		if offset <= 0 || offset > len(dst) {
			t.Fatalf("snappy: copy offset %d with %d bytes out", offset, len(dst))
		}
		for range length {
			dst = append(dst, dst[len(dst)-offset]) // byte by byte: a copy may overlap itself
		}
	}
	if uint64(len(dst)) != n {
		t.Fatalf("snappy: %d bytes, header says %d", len(dst), n)
	}
	return dst
}

// TestRemoteWriteParallelSnappy: a batch encoded and compressed in chunks
// on several cores is one snappy block holding every time series in
// order.
func TestRemoteWriteParallelSnappy(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(4))
	var got []byte
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got, _ = io.ReadAll(r.Body)
		w.WriteHeader(204)
	}))
	defer hs.Close()
	d, _ := NewRemoteWrite(configs.Sink{URL: hs.URL}, sinks.Env{})
	for _, n := range []int{1, 600, 1024, 1500, 3000, 5000} {
		items := make([]sinks.Item, n)
		var want []byte
		for i := range items {
			m := &telemetry.Metric{Measurement: "interface", Device: fmt.Sprintf("r%d", i%100), Time: time.UnixMilli(int64(i)),
				Tags: map[string]string{"ifName": fmt.Sprintf("Ethernet%d", i%48), "site": "ams1"}, Fields: map[string]any{"in": float64(i), "out": 1.0}}
			if i%700 < 350 {
				m.Fields = map[string]any{"s": "no sample"}
			}
			items[i].Point = telemetry.PointOf(m)
			want = oldAppendMetric(want, "", m)
		}
		got = nil
		if err := d.Write(context.Background(), items); err != nil {
			t.Fatal(err)
		}
		if len(want) == 0 {
			if got != nil {
				t.Fatalf("n=%d: a request without samples", n)
			}
			continue
		}
		if back := snappyDecode(t, got); !bytes.Equal(back, want) {
			t.Fatalf("n=%d: %d bytes back, want %d", n, len(back), len(want))
		}
	}
}
