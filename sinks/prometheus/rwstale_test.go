package prometheus

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	gpb "github.com/openconfig/gnmi/proto/gnmi"
	"github.com/prometheus/client_golang/prometheus"
	"google.golang.org/protobuf/encoding/protowire"

	"github.com/weirnet/weir/broker"
	gnmic "github.com/weirnet/weir/collectors/gnmi"
	"github.com/weirnet/weir/configs"
	"github.com/weirnet/weir/sinks"
	"github.com/weirnet/weir/telemetry"
)

// rwSample is one TimeSeries of a WriteRequest with its one sample.
type rwSample struct {
	series string // name{labels}, labels sorted
	bits   uint64
	ms     int64
}

// decodeWriteRequest reads the TimeSeries of a snappy WriteRequest.
func decodeWriteRequest(t *testing.T, body []byte) []rwSample {
	t.Helper()
	b := snappyDecode(t, body)
	next := func(b []byte) (protowire.Number, []byte, uint64, []byte) {
		num, typ, n := protowire.ConsumeTag(b)
		if n < 0 {
			t.Fatalf("bad tag: %v", protowire.ParseError(n))
		}
		b = b[n:]
		switch typ {
		case protowire.BytesType:
			v, n := protowire.ConsumeBytes(b)
			if n < 0 {
				t.Fatal("bad bytes")
			}
			return num, v, 0, b[n:]
		case protowire.Fixed64Type:
			v, n := protowire.ConsumeFixed64(b)
			return num, nil, v, b[n:]
		case protowire.VarintType:
			v, n := protowire.ConsumeVarint(b)
			return num, nil, v, b[n:]
		}
		t.Fatalf("wire type %v", typ)
		return 0, nil, 0, nil
	}
	var out []rwSample
	for len(b) > 0 {
		num, ts, _, rest := next(b)
		b = rest
		if num != 1 {
			t.Fatalf("WriteRequest field %d", num)
		}
		var s rwSample
		var name string
		var labels []string
		samples := 0
		for len(ts) > 0 {
			num, v, _, rest := next(ts)
			ts = rest
			switch num {
			case 1:
				var ln, lv string
				for len(v) > 0 {
					f, x, _, rest := next(v)
					v = rest
					if f == 1 {
						ln = string(x)
					} else {
						lv = string(x)
					}
				}
				if ln == "__name__" {
					name = lv
				} else {
					labels = append(labels, ln+"="+lv)
				}
			case 2:
				samples++
				for len(v) > 0 {
					f, _, x, rest := next(v)
					v = rest
					if f == 1 {
						s.bits = x
					} else {
						s.ms = int64(x)
					}
				}
			}
		}
		if samples != 1 {
			t.Fatalf("%s: %d samples", name, samples)
		}
		s.series = name + "{" + strings.Join(labels, ",") + "}"
		out = append(out, s)
	}
	return out
}

// rwReceiver is an httptest remote write endpoint keeping what it got.
type rwReceiver struct {
	*httptest.Server
	mu   sync.Mutex
	reqs [][]byte
}

func newRWReceiver(t *testing.T) *rwReceiver {
	r := &rwReceiver{}
	r.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		b, _ := io.ReadAll(req.Body)
		r.mu.Lock()
		r.reqs = append(r.reqs, b)
		r.mu.Unlock()
		w.WriteHeader(204)
	}))
	t.Cleanup(r.Close)
	return r
}

// take returns the samples of the requests received since the last take.
func (r *rwReceiver) take(t *testing.T) []rwSample {
	t.Helper()
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []rwSample
	for _, b := range r.reqs {
		out = append(out, decodeWriteRequest(t, b)...)
	}
	r.reqs = nil
	return out
}

// markers are the series of samples with the StaleNaN bits, at ms, and
// fails on a marker at another time. A delete's markers go 1 ms before its
// time (RemoteWrite.endSeries).
func markers(t *testing.T, got []rwSample, ms int64) []string {
	t.Helper()
	var out []string
	for _, s := range got {
		if s.bits != staleNaN {
			continue
		}
		if s.ms != ms {
			t.Errorf("%s: marker at %v, want %v", s.series, time.UnixMilli(s.ms), time.UnixMilli(ms))
		}
		out = append(out, s.series)
	}
	slices.Sort(out)
	return out
}

// itemizer makes batch items of metrics, with records of increasing
// offsets in one partition, as the sink hands them.
type itemizer struct{ offset int64 }

func (z *itemizer) items(ms ...telemetry.Metric) []sinks.Item {
	out := make([]sinks.Item, len(ms))
	for i := range ms {
		out[i].Record = broker.Record{Topic: "enriched.metrics", Partition: 0, Offset: z.offset}
		out[i].Point = telemetry.PointOf(&ms[i])
		z.offset++
	}
	return out
}

func ifacePath(name string, elems ...string) *gpb.Path {
	p := &gpb.Path{Elem: []*gpb.PathElem{{Name: "interfaces"}, {Name: "interface", Key: map[string]string{"name": name}}}}
	for _, e := range elems {
		p.Elem = append(p.Elem, &gpb.PathElem{Name: e})
	}
	return p
}

// gnmiUpdates is a target's counters of two interfaces and enrich's
// source-independent "interface" records of them, at t.
func gnmiUpdates(t time.Time) []telemetry.Metric {
	var out []telemetry.Metric
	for _, name := range []string{"Ethernet8", "Ethernet9"} {
		n := &gpb.Notification{Timestamp: t.UnixNano(), Update: []*gpb.Update{
			{Path: ifacePath(name, "state", "counters", "in-octets"), Val: &gpb.TypedValue{Value: &gpb.TypedValue_UintVal{UintVal: 5}}},
			{Path: ifacePath(name, "state", "counters", "out-octets"), Val: &gpb.TypedValue{Value: &gpb.TypedValue_UintVal{UintVal: 6}}}}}
		out = append(out, gnmic.Flatten("spine1", n, t)...)
		out = append(out, enrichView(name, "interface", t, map[string]any{"oper_up": true, "in_octets_rate": 1.5}))
	}
	return out
}

// enrichView is a record of enrich's source-independent interface view.
func enrichView(iface, measurement string, t time.Time, fields map[string]any) telemetry.Metric {
	return telemetry.Metric{V: 1, Measurement: measurement, Device: "spine1", Tags: map[string]string{"interface": iface, "role": "leaf"},
		Fields: fields, Time: t, ReceivedAt: t, Source: "enrich"}
}

func gnmiDelete(t time.Time, p *gpb.Path) []telemetry.Metric {
	return gnmic.Flatten("spine1", &gpb.Notification{Timestamp: t.UnixNano(), Delete: []*gpb.Path{p}}, t)
}

// TestRemoteWriteDeleteSendsStaleMarkers: a gNMI delete (and enrich's of
// what it derived) ends the series it covers with a staleness marker at
// (1 ms before) the delete's time, as a scrape's vanished series are ended: left out,
// Prometheus went on returning them for its 5-minute lookback. An
// interface's delete covers all its series; a leaf's, that field's.
func TestRemoteWriteDeleteSendsStaleMarkers(t *testing.T) {
	t0 := time.Now().Add(-time.Minute).Truncate(time.Millisecond)
	t1 := t0.Add(10 * time.Second)
	del := map[string]any{"deleted": true}
	for _, tc := range []struct {
		name    string
		deletes []telemetry.Metric
		want    []string
	}{
		{"interface", append(gnmiDelete(t1, ifacePath("Ethernet9")), enrichView("Ethernet9", "interface", t1, del)), []string{
			`interface_in_octets_rate{device=spine1,interface=Ethernet9,role=leaf}`,
			`interface_oper_up{device=spine1,interface=Ethernet9,role=leaf}`,
			`interfaces_interface_state_counters_in_octets_total{device=spine1,name=Ethernet9,path=/interfaces/interface[name=Ethernet9]/state/counters}`,
			`interfaces_interface_state_counters_out_octets_total{device=spine1,name=Ethernet9,path=/interfaces/interface[name=Ethernet9]/state/counters}`,
		}},
		{"leaf", append(gnmiDelete(t1, ifacePath("Ethernet9", "state", "counters", "in-octets")), enrichView("Ethernet9", "interface_in_octets_rate", t1, del)), []string{
			`interface_in_octets_rate{device=spine1,interface=Ethernet9,role=leaf}`,
			`interfaces_interface_state_counters_in_octets_total{device=spine1,name=Ethernet9,path=/interfaces/interface[name=Ethernet9]/state/counters}`,
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rcv := newRWReceiver(t)
			d, err := NewRemoteWrite(configs.Sink{URL: rcv.URL}, sinks.Env{})
			if err != nil {
				t.Fatal(err)
			}
			var z itemizer
			if err := d.Write(context.Background(), z.items(gnmiUpdates(t0)...)); err != nil {
				t.Fatal(err)
			}
			if got := markers(t, rcv.take(t), 0); len(got) != 0 {
				t.Fatalf("markers before any delete: %q", got)
			}
			batch := z.items(tc.deletes...)
			if err := d.Write(context.Background(), batch); err != nil {
				t.Fatal(err)
			}
			if got := markers(t, rcv.take(t), t1.UnixMilli()-1); !slices.Equal(got, tc.want) {
				t.Errorf("after the delete, markers for\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(tc.want, "\n"))
			}
			// The same batch again (a retry after a 5xx) sends them
			// again: the first request may never have arrived.
			if err := d.Write(context.Background(), batch); err != nil {
				t.Fatal(err)
			}
			if got := markers(t, rcv.take(t), t1.UnixMilli()-1); !slices.Equal(got, tc.want) {
				t.Errorf("the batch retried: markers for\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(tc.want, "\n"))
			}
			// A delete of what is gone already ends nothing.
			d.Write(context.Background(), z.items(tc.deletes...))
			if got := markers(t, rcv.take(t), t1.UnixMilli()-1); len(got) != 0 {
				t.Errorf("a second delete: markers for %q", got)
			}
		})
	}
}

// TestRemoteWriteMarkerInItsPlace: an interface's last values, its delete
// and its return in one batch are sent in that order, so each series'
// samples go forward in time (Prometheus refuses the whole request for
// one out-of-order sample).
func TestRemoteWriteMarkerInItsPlace(t *testing.T) {
	t0 := time.Now().Add(-time.Minute).Truncate(time.Millisecond)
	t1, t2 := t0.Add(time.Second), t0.Add(2*time.Second)
	rcv := newRWReceiver(t)
	d, err := NewRemoteWrite(configs.Sink{URL: rcv.URL}, sinks.Env{})
	if err != nil {
		t.Fatal(err)
	}
	var z itemizer
	ms := append(gnmiUpdates(t0), gnmiDelete(t1, ifacePath("Ethernet9"))...)
	ms = append(ms, gnmiUpdates(t2)...)
	if err := d.Write(context.Background(), z.items(ms...)); err != nil {
		t.Fatal(err)
	}
	last := map[string]rwSample{}
	n := 0
	for _, s := range rcv.take(t) {
		if !strings.Contains(s.series, "path=") {
			continue
		}
		if l, ok := last[s.series]; ok && s.ms <= l.ms {
			t.Errorf("%s: sample at %d after one at %d", s.series, s.ms, l.ms)
		}
		last[s.series] = s
		if s.bits == staleNaN {
			n++
			if s.ms != t1.UnixMilli()-1 || !strings.Contains(s.series, "Ethernet9") {
				t.Errorf("marker %s at %d, want Ethernet9's at %d", s.series, s.ms, t1.UnixMilli()-1)
			}
		}
	}
	if n != 2 {
		t.Errorf("%d markers, want Ethernet9's 2 counters'", n)
	}
}

// TestRemoteWriteSeriesBound: the series remembered for deletes are
// bounded by max_series; past it new series are sent but not remembered
// (a delete sends no marker for them), and counted.
func TestRemoteWriteSeriesBound(t *testing.T) {
	rcv := newRWReceiver(t)
	reg := prometheus.NewRegistry()
	dst, err := NewRemoteWrite(configs.Sink{Name: "rw", URL: rcv.URL, MaxSeries: 3}, sinks.Env{Registerer: reg})
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now().Truncate(time.Millisecond)
	m := func(device string, fields map[string]any) telemetry.Metric {
		at := now
		if fields["deleted"] == true {
			at = now.Add(time.Second)
		}
		return telemetry.Metric{V: 1, Measurement: "m", Device: device, Fields: fields, Time: at, ReceivedAt: at, Source: "enrich"}
	}
	var z itemizer
	dst.Write(context.Background(), z.items(m("d1", map[string]any{"a": 1.0, "b": 1.0}), m("d2", map[string]any{"a": 1.0, "b": 1.0})))
	if got := rcv.take(t); len(got) != 4 {
		t.Fatalf("%d samples sent, want 4: the bound is not on what is sent", len(got))
	}
	del := map[string]any{"deleted": true}
	dst.Write(context.Background(), z.items(m("d1", del), m("d2", del)))
	got := markers(t, rcv.take(t), now.Add(time.Second).UnixMilli()-1)
	if want := []string{"m_a{device=d1}", "m_a{device=d2}", "m_b{device=d1}"}; !slices.Equal(got, want) {
		t.Errorf("markers for %q, want %q", got, want)
	}
	var total float64
	mfs, _ := reg.Gather()
	for _, mf := range mfs {
		if mf.GetName() == "weir_prometheus_remote_write_untracked_total" {
			total = mf.GetMetric()[0].GetCounter().GetValue()
		}
	}
	if total != 1 {
		t.Errorf("weir_prometheus_remote_write_untracked_total = %v, want 1", total)
	}
}

// TestRemoteWriteForgetsSeriesNotSent: a series not sent for staleness
// is forgotten (memory follows the live network), and a delete then
// sends no marker for it.
func TestRemoteWriteForgetsSeriesNotSent(t *testing.T) {
	rcv := newRWReceiver(t)
	dst, err := NewRemoteWrite(configs.Sink{URL: rcv.URL, Staleness: configs.Duration(time.Minute)}, sinks.Env{})
	if err != nil {
		t.Fatal(err)
	}
	r := dst.(*RemoteWrite)
	now := time.Now().Truncate(time.Millisecond)
	r.sent.now = func() time.Time { return now }
	m := func(device string, fields map[string]any) telemetry.Metric {
		return telemetry.Metric{V: 1, Measurement: "m", Device: device, Fields: fields, Time: now, ReceivedAt: now, Source: "enrich"}
	}
	var z itemizer
	r.Write(context.Background(), z.items(m("d1", map[string]any{"a": 1.0, "b": 1.0})))
	now = now.Add(2 * time.Minute)
	r.Write(context.Background(), z.items(m("d2", map[string]any{"a": 1.0})))
	if r.sent.live != 1 {
		t.Errorf("%d series tracked, want d2's 1: d1's not sent for staleness", r.sent.live)
	}
	rcv.take(t)
	del := map[string]any{"deleted": true}
	r.Write(context.Background(), z.items(m("d1", del), m("d2", del)))
	if got := markers(t, rcv.take(t), now.UnixMilli()+1); !slices.Equal(got, []string{"m_a{device=d2}"}) {
		t.Errorf("markers for %q, want d2's alone", got)
	}
}
