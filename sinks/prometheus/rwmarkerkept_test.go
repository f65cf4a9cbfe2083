package prometheus

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	gpb "github.com/openconfig/gnmi/proto/gnmi"

	gnmic "github.com/weirnet/weir/collectors/gnmi"
	"github.com/weirnet/weir/configs"
	"github.com/weirnet/weir/internal/peers"
	"github.com/weirnet/weir/sinks"
	"github.com/weirnet/weir/telemetry"
)

// inOctets is a target's in-octets of Ethernet9 at t.
func inOctets(t time.Time, v uint64) []telemetry.Metric {
	return gnmic.Flatten("spine1", &gpb.Notification{Timestamp: t.UnixNano(), Update: []*gpb.Update{
		{Path: ifacePath("Ethernet9", "state", "counters", "in-octets"), Val: &gpb.TypedValue{Value: &gpb.TypedValue_UintVal{UintVal: v}}}}}, t)
}

// TestRemoteWriteMarkerTimeKept: a series a delete ended has a sample
// (its staleness marker) at the marker's time in Prometheus, which
// refuses a later request's sample before it ("out of order sample", 400,
// the whole request). The marker's time was kept only while the ended
// series stayed in its set: a delete of the set's path dropped the set, a
// delete of a family's last series the family (the next sample made a
// new series), and the minute's sweep every ended series; a sample older
// than the marker (an SNMP row stamped with its poll's start, published
// after the delete) then went out.
func TestRemoteWriteMarkerTimeKept(t *testing.T) {
	t0 := time.Now().Add(-time.Minute).Truncate(time.Millisecond)
	t1 := t0.Add(10 * time.Second)
	del := map[string]any{"deleted": true}
	m := func(device string, at time.Time, fields map[string]any) telemetry.Metric {
		return telemetry.Metric{V: 1, Measurement: "m", Device: device, Fields: fields, Time: at, ReceivedAt: at, Source: "enrich"}
	}
	for _, tc := range []struct {
		name         string
		first, after []telemetry.Metric
		del          telemetry.Metric
		sweep        bool
	}{
		{name: "set deleted by path", first: gnmiUpdates(t0), del: gnmiDelete(t1, ifacePath("Ethernet9"))[0],
			after: inOctets(t0.Add(5*time.Second), 7)},
		{name: "family's last series", first: []telemetry.Metric{m("d1", t0, map[string]any{"a": 1.0})},
			del: m("d1", t1, del), after: []telemetry.Metric{m("d1", t0.Add(5*time.Second), map[string]any{"a": 2.0})}},
		{name: "swept", first: []telemetry.Metric{m("d1", t0, map[string]any{"a": 1.0}), m("d2", t0, map[string]any{"a": 1.0})},
			del: m("d1", t1, del), sweep: true, after: []telemetry.Metric{m("d1", t0.Add(5*time.Second), map[string]any{"a": 2.0})}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rcv := newRWReceiver(t)
			dst, err := NewRemoteWrite(configs.Sink{URL: rcv.URL}, sinks.Env{})
			if err != nil {
				t.Fatal(err)
			}
			r := dst.(*RemoteWrite)
			var z itemizer
			for _, b := range [][]telemetry.Metric{tc.first, {tc.del}} {
				if err := r.Write(context.Background(), z.items(b...)); err != nil {
					t.Fatal(err)
				}
			}
			got := rcv.take(t)
			var marker int64
			for _, s := range got {
				if s.bits == staleNaN {
					marker = s.ms
				}
			}
			if marker == 0 {
				t.Fatalf("no marker sent: %v", got)
			}
			if tc.sweep {
				r.lastSweep = time.Time{} // the next Write sweeps
			}
			if err := r.Write(context.Background(), z.items(tc.after...)); err != nil {
				t.Fatal(err)
			}
			for _, s := range rcv.take(t) {
				if s.ms <= marker {
					t.Errorf("%s at %d sent after its marker at %d: Prometheus refuses it, and the request", s.series, s.ms, marker)
				}
			}
		})
	}
}

// TestRemoteWriteMarkerTimeKeptInPrometheus: the set's path deleted, a
// sample of it older than the marker is refused by a real Prometheus with
// the whole request, which weir dead-letters.
func TestRemoteWriteMarkerTimeKeptInPrometheus(t *testing.T) {
	promAddr := peers.Prometheus(t, "global: {scrape_interval: 1m}\n")
	peers.WaitHTTP(t, "prometheus", "http://"+promAddr+"/-/ready", 200)
	dst, err := NewRemoteWrite(configs.Sink{URL: "http://" + promAddr + "/api/v1/write"}, sinks.Env{})
	if err != nil {
		t.Fatal(err)
	}
	t0 := time.Now().Add(-time.Minute).Truncate(time.Millisecond)
	t1 := t0.Add(10 * time.Second)
	var z itemizer
	for i, b := range [][]telemetry.Metric{gnmiUpdates(t0), gnmiDelete(t1, ifacePath("Ethernet9")), inOctets(t0.Add(5*time.Second), 7)} {
		err := dst.Write(context.Background(), z.items(b...))
		var rej *sinks.RejectedError
		if errors.As(err, &rej) && strings.Contains(err.Error(), "400") {
			t.Fatalf("batch %d refused: %v", i, err)
		}
		if err != nil {
			t.Fatalf("batch %d: %v", i, err)
		}
	}
}

// TestRemoteWriteMarkerTimeKeptAfterRestart: a restarted sink reads the
// staleness window back (Warm); a delete in it sent its markers before,
// and a sample older than them is refused by Prometheus still. Warm
// dropped the deleted series without their markers' times, and the
// restarted sink sent such a sample.
func TestRemoteWriteMarkerTimeKeptAfterRestart(t *testing.T) {
	t0 := time.Now().Add(-time.Minute).Truncate(time.Millisecond)
	t1 := t0.Add(10 * time.Second)
	rcv := newRWReceiver(t)
	var z itemizer
	sent := append(z.items(gnmiUpdates(t0)...), z.items(gnmiDelete(t1, ifacePath("Ethernet9"))...)...)
	before, err := NewRemoteWrite(configs.Sink{URL: rcv.URL}, sinks.Env{})
	if err != nil {
		t.Fatal(err)
	}
	if err := before.Write(context.Background(), sent); err != nil {
		t.Fatal(err)
	}
	var marker int64
	for _, s := range rcv.take(t) {
		if s.bits == staleNaN {
			marker = s.ms
		}
	}
	if marker == 0 {
		t.Fatal("no marker sent")
	}
	dst, err := NewRemoteWrite(configs.Sink{URL: rcv.URL}, sinks.Env{})
	if err != nil {
		t.Fatal(err)
	}
	r := dst.(*RemoteWrite)
	r.Warm(sent)
	if err := r.Write(context.Background(), z.items(inOctets(t0.Add(5*time.Second), 7)...)); err != nil {
		t.Fatal(err)
	}
	for _, s := range rcv.take(t) {
		if s.ms <= marker {
			t.Errorf("%s at %d sent after its marker at %d (before the restart): Prometheus refuses it", s.series, s.ms, marker)
		}
	}
}
