package prometheus_test

import (
	"fmt"
	"math"
	"testing"
	"time"

	gpb "github.com/openconfig/gnmi/proto/gnmi"

	gnmic "github.com/weirnet/weir/collectors/gnmi"
	"github.com/weirnet/weir/internal/peers"
	"github.com/weirnet/weir/sinks/internal/sinktest"
	"github.com/weirnet/weir/telemetry"
)

// TestRemoteWriteDeviceClockOff: a gNMI metric carries the target's
// timestamp. One target whose clock ran 3 hours ahead had its sample taken
// by Prometheus, which moved the head's time 3 hours on: from then on every
// other device's samples were "out of bounds" (more than an hour behind
// the head), refused with 400 and dead-lettered, each batch sent again
// record by record, for hours. A target 3 days behind (or one that stamps
// its initial sync with the time of each value's last change) had all its
// samples refused. A sample's time is kept within a minute of the time weir
// received it.
func TestRemoteWriteDeviceClockOff(t *testing.T) {
	promAddr, b, cfg, d := remoteWriteToPrometheus(t)
	received := time.Now().Add(-2 * time.Minute).Truncate(time.Millisecond) // "ahead", stamped a minute later, is in the past
	at := func(dev string, in uint64, deviceTime time.Time) telemetry.Metric {
		m := metric(dev, "Ethernet1", in, 1)
		m.Time, m.ReceivedAt = deviceTime, received
		return m
	}
	ms := []telemetry.Metric{
		at("ahead", 1, received.Add(3*time.Hour)),
		at("behind", 2, received.Add(-72*time.Hour)),
		at("fine", 3, received.Add(-2*time.Second)),
	}
	// The clock that is ahead first, then the others.
	r := sinktest.Start(t, b, cfg, d)
	sinktest.Produce(t, b, "enriched.metrics", telemetry.SchemaMetric, func(int) string { return "ahead" }, ms[:1])
	sinktest.Eventually(t, "the first metric accepted or dead-lettered", func() bool {
		return r.Counter("weir_sink_records_total", map[string]string{"sink": "rw"})+
			r.Counter("weir_sink_dead_letters_total", map[string]string{"sink": "rw"}) == 1
	})
	sinktest.Produce(t, b, "enriched.metrics", telemetry.SchemaMetric, func(i int) string { return ms[1+i].Device }, ms[1:])
	sinktest.Eventually(t, "3 metrics accepted or dead-lettered", func() bool {
		return r.Counter("weir_sink_records_total", map[string]string{"sink": "rw"})+
			r.Counter("weir_sink_dead_letters_total", map[string]string{"sink": "rw"}) == 3
	})
	if n := r.Counter("weir_sink_dead_letters_total", map[string]string{"sink": "rw"}); n != 0 {
		for _, rec := range sinktest.ReadAll(t, b, "dead.letter") {
			t.Logf("dead letter: %s", sinktest.Header(rec, "dead_letter_reason"))
		}
		t.Fatalf("%v of 3 samples refused by Prometheus", n)
	}
	for _, tc := range []struct {
		dev  string
		want time.Time
	}{{"ahead", received.Add(time.Minute)}, {"behind", received.Add(-time.Minute)}, {"fine", received.Add(-2 * time.Second)}} {
		got := peers.Query(t, promAddr, fmt.Sprintf(`timestamp(interface_if_hc_in_octets_total{device=%q})`, tc.dev))
		if len(got) != 1 {
			t.Errorf("%s: %d series, want 1", tc.dev, len(got))
			continue
		}
		if ms := got[0].Float() * 1000; math.Abs(ms-float64(tc.want.UnixMilli())) > 1 {
			t.Errorf("%s: sample at %v, want %v", tc.dev, time.UnixMilli(int64(ms)), tc.want)
		}
	}
}

// TestRemoteWriteDeviceClockDriftsPastTheBound: a target's clock drifting
// ahead across the one-minute bound (58 s ahead, then 59, 60, 61, 62) must
// not send its series back in time. Stamped with weir's clock once past
// the bound, the sample after the 60 s one went back a minute, and
// Prometheus refused it and the next ones ("out of order sample", to
// dead.letter) until weir's clock caught up; a clock jittering around the
// bound lost every other sample. A time past the bound is stamped at the
// bound instead, so a series' stamps keep going forward.
func TestRemoteWriteDeviceClockDriftsPastTheBound(t *testing.T) {
	promAddr, b, cfg, d := remoteWriteToPrometheus(t)
	base := time.Now().Add(-5 * time.Minute).Truncate(time.Second)
	var ms []telemetry.Metric
	for i := range 5 {
		m := metric("drift", "Ethernet1", uint64(1000*(i+1)), 1)
		m.ReceivedAt = base.Add(time.Duration(i) * 10 * time.Second)
		m.Time = m.ReceivedAt.Add(time.Duration(58+i) * time.Second)
		ms = append(ms, m)
	}
	r := sinktest.Start(t, b, cfg, d)
	// One at a time, in order, as polls come.
	for i := range ms {
		sinktest.Produce(t, b, "enriched.metrics", telemetry.SchemaMetric, func(int) string { return "drift" }, ms[i:i+1])
		sinktest.Eventually(t, fmt.Sprintf("metric %d accepted or dead-lettered", i), func() bool {
			return r.Counter("weir_sink_records_total", map[string]string{"sink": "rw"})+
				r.Counter("weir_sink_dead_letters_total", map[string]string{"sink": "rw"}) == float64(i+1)
		})
	}
	if n := r.Counter("weir_sink_dead_letters_total", map[string]string{"sink": "rw"}); n != 0 {
		for _, rec := range sinktest.ReadAll(t, b, "dead.letter") {
			t.Logf("dead letter: %s", sinktest.Header(rec, "dead_letter_reason"))
		}
		t.Fatalf("%v of 5 samples refused by Prometheus", n)
	}
	got := peers.Query(t, promAddr, `count_over_time(interface_if_hc_in_octets_total{device="drift"}[15m])`)
	if len(got) != 1 || got[0].Float() != 5 {
		t.Fatalf("Prometheus holds %v samples of the series, want 5", got)
	}
}

// TestRemoteWriteResyncDeleteOfTargetBehind: a target whose clock is 30 s
// behind weir's stamps its samples 30 s before weir received them, but a
// resubscription's deletes (of the paths its new snapshot left out) are
// made by weir and stamped with weir's clock. The staleness marker of such
// a delete went at weir's time, 30 s ahead of the series' own: the
// interface coming back within those 30 s (the next resubscription's
// snapshot) had its samples refused by Prometheus ("out of order sample",
// 400), dead-lettered, until the target's clock passed the marker. The
// marker goes at the target's time of the delete instead, judged from the
// series' newest sample and when weir received it.
func TestRemoteWriteResyncDeleteOfTargetBehind(t *testing.T) {
	promAddr, b, cfg, d := remoteWriteToPrometheus(t)
	const behind = 30 * time.Second
	t0 := time.Now().Add(-3 * time.Minute).Truncate(time.Millisecond) // when weir received the first sample
	path := func(elems ...string) *gpb.Path {
		p := &gpb.Path{Elem: []*gpb.PathElem{{Name: "interfaces"}, {Name: "interface", Key: map[string]string{"name": "Ethernet9"}}}}
		for _, e := range elems {
			p.Elem = append(p.Elem, &gpb.PathElem{Name: e})
		}
		return p
	}
	sample := func(received time.Time, in uint64) []telemetry.Metric {
		n := &gpb.Notification{Timestamp: received.Add(-behind).UnixNano(), Update: []*gpb.Update{
			{Path: path("state", "counters", "in-octets"), Val: &gpb.TypedValue{Value: &gpb.TypedValue_UintVal{UintVal: in}}}}}
		return gnmic.Flatten("spine1", n, received)
	}
	// Samples 10 s apart; the resubscription's delete 5 s after the last
	// (weir's clock), the interface back in the next snapshot 5 s later.
	resync := t0.Add(25 * time.Second)
	steps := [][]telemetry.Metric{
		sample(t0, 100),
		sample(t0.Add(10*time.Second), 200),
		sample(t0.Add(20*time.Second), 300),
		gnmic.Flatten("spine1", &gpb.Notification{Timestamp: resync.UnixNano(), Delete: []*gpb.Path{path()}}, resync),
		sample(t0.Add(30*time.Second), 400),
		sample(t0.Add(40*time.Second), 500),
	}
	r := sinktest.Start(t, b, cfg, d)
	sent := 0
	for i, ms := range steps {
		sinktest.Produce(t, b, "enriched.metrics", telemetry.SchemaMetric, func(int) string { return "spine1" }, ms)
		sent += len(ms)
		sinktest.Eventually(t, fmt.Sprintf("step %d accepted or dead-lettered", i), func() bool {
			return r.Counter("weir_sink_records_total", map[string]string{"sink": "rw"})+
				r.Counter("weir_sink_dead_letters_total", map[string]string{"sink": "rw"}) == float64(sent)
		})
	}
	if n := r.Counter("weir_sink_dead_letters_total", map[string]string{"sink": "rw"}); n != 0 {
		for _, rec := range sinktest.ReadAll(t, b, "dead.letter") {
			t.Logf("dead letter: %s", sinktest.Header(rec, "dead_letter_reason"))
		}
		t.Fatalf("%v records refused by Prometheus", n)
	}
	q := `interfaces_interface_state_counters_in_octets_total{device="spine1",name="Ethernet9"}`
	for _, tc := range []struct {
		at   time.Time
		want int
	}{
		{resync.Add(-behind).Add(time.Second), 0},                   // ended at the delete, in the target's time
		{t0.Add(40 * time.Second).Add(-behind).Add(time.Second), 1}, // back after it
	} {
		got := peers.Query(t, promAddr, fmt.Sprintf("%s @ %.3f", q, float64(tc.at.UnixMilli())/1000))
		if len(got) != tc.want {
			t.Errorf("%s at %v: %v, want %d series", q, tc.at, got, tc.want)
		}
	}
}
