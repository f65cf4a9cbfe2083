package prometheus_test

import (
	"fmt"
	"testing"
	"time"

	gpb "github.com/openconfig/gnmi/proto/gnmi"

	gnmic "github.com/weirnet/weir/collectors/gnmi"
	"github.com/weirnet/weir/internal/peers"
	"github.com/weirnet/weir/sinks/internal/sinktest"
	"github.com/weirnet/weir/telemetry"
)

// TestRemoteWriteDeleteEndsSeriesInPrometheus: a target's counters of two
// interfaces written to a real Prometheus, then the delete of one. An
// instant query a second after the delete returns nothing for the
// deleted interface and the other's value still: left out, the delete's
// series were returned for Prometheus' 5-minute lookback, while the
// scrape sink drops them at once.
func TestRemoteWriteDeleteEndsSeriesInPrometheus(t *testing.T) {
	promAddr, b, cfg, d := remoteWriteToPrometheus(t)
	t0 := time.Now().Add(-2 * time.Minute).Truncate(time.Millisecond)
	t1 := t0.Add(30 * time.Second)
	path := func(name string, elems ...string) *gpb.Path {
		p := &gpb.Path{Elem: []*gpb.PathElem{{Name: "interfaces"}, {Name: "interface", Key: map[string]string{"name": name}}}}
		for _, e := range elems {
			p.Elem = append(p.Elem, &gpb.PathElem{Name: e})
		}
		return p
	}
	var ms []telemetry.Metric
	for i, name := range []string{"Ethernet8", "Ethernet9"} {
		n := &gpb.Notification{Timestamp: t0.UnixNano(), Update: []*gpb.Update{
			{Path: path(name, "state", "counters", "in-octets"), Val: &gpb.TypedValue{Value: &gpb.TypedValue_UintVal{UintVal: uint64(100 + i)}}}}}
		ms = append(ms, gnmic.Flatten("spine1", n, t0)...)
	}
	del := gnmic.Flatten("spine1", &gpb.Notification{Timestamp: t1.UnixNano(), Delete: []*gpb.Path{path("Ethernet9")}}, t1)
	r := sinktest.Start(t, b, cfg, d)
	sinktest.Produce(t, b, "enriched.metrics", telemetry.SchemaMetric, func(int) string { return "spine1" }, ms)
	sinktest.Eventually(t, "the counters accepted", func() bool {
		return r.Counter("weir_sink_records_total", map[string]string{"sink": "rw"}) == float64(len(ms))
	})
	sinktest.Produce(t, b, "enriched.metrics", telemetry.SchemaMetric, func(int) string { return "spine1" }, del)
	sinktest.Eventually(t, "the delete accepted", func() bool {
		return r.Counter("weir_sink_records_total", map[string]string{"sink": "rw"}) == float64(len(ms)+len(del))
	})
	if n := r.Counter("weir_sink_dead_letters_total", map[string]string{"sink": "rw"}); n != 0 {
		t.Fatalf("%v records dead-lettered", n)
	}
	at := float64(t1.Add(time.Second).UnixMilli()) / 1000
	for _, tc := range []struct {
		name string
		want int
	}{{"Ethernet8", 1}, {"Ethernet9", 0}} {
		q := fmt.Sprintf(`interfaces_interface_state_counters_in_octets_total{device="spine1",name=%q} @ %.3f`, tc.name, at)
		if got := peers.Query(t, promAddr, q); len(got) != tc.want {
			t.Errorf("%s a second after Ethernet9's delete: %v, want %d series", q, got, tc.want)
		}
	}
}

// TestRemoteWriteReplaceKeepsNewValues: a target replacing an interface
// sends its delete and its new values in one notification, at one time
// (gNMI applies the deletes first). The staleness marker went at the
// delete's time, the new samples' too: Prometheus keeps the first sample
// of a series' time in a request (the marker) and refuses another in a
// later one ("duplicate sample for timestamp", 400, dead-lettered), so the
// replaced interface showed up as ended, not with its new values.
func TestRemoteWriteReplaceKeepsNewValues(t *testing.T) {
	promAddr, b, cfg, d := remoteWriteToPrometheus(t)
	t0 := time.Now().Add(-2 * time.Minute).Truncate(time.Millisecond)
	path := func(elems ...string) *gpb.Path {
		p := &gpb.Path{Elem: []*gpb.PathElem{{Name: "interfaces"}, {Name: "interface", Key: map[string]string{"name": "Ethernet9"}}}}
		for _, e := range elems {
			p.Elem = append(p.Elem, &gpb.PathElem{Name: e})
		}
		return p
	}
	in := func(v uint64) []*gpb.Update {
		return []*gpb.Update{{Path: path("state", "counters", "in-octets"), Val: &gpb.TypedValue{Value: &gpb.TypedValue_UintVal{UintVal: v}}}}
	}
	update := func(at time.Time, v uint64) []telemetry.Metric {
		return gnmic.Flatten("spine1", &gpb.Notification{Timestamp: at.UnixNano(), Update: in(v)}, at)
	}
	replace := func(at time.Time, v uint64) []telemetry.Metric {
		return gnmic.Flatten("spine1", &gpb.Notification{Timestamp: at.UnixNano(), Delete: []*gpb.Path{path()}, Update: in(v)}, at)
	}
	r := sinktest.Start(t, b, cfg, d)
	sent := 0
	step := func(ms []telemetry.Metric) {
		t.Helper()
		sinktest.Produce(t, b, "enriched.metrics", telemetry.SchemaMetric, func(int) string { return "spine1" }, ms)
		sent += len(ms)
		sinktest.Eventually(t, fmt.Sprintf("%d records accepted or dead-lettered", sent), func() bool {
			return r.Counter("weir_sink_records_total", map[string]string{"sink": "rw"})+
				r.Counter("weir_sink_dead_letters_total", map[string]string{"sink": "rw"}) == float64(sent)
		})
	}
	q := `interfaces_interface_state_counters_in_octets_total{device="spine1",name="Ethernet9"} @ %.3f`
	value := func(how string, at time.Time, want float64) {
		t.Helper()
		q := fmt.Sprintf(q, float64(at.UnixMilli())/1000)
		if got := peers.Query(t, promAddr, q); len(got) != 1 || got[0].Float() != want {
			t.Errorf("replaced %s: %s = %v, want the new value %v", how, q, got, want)
		}
	}
	// The replace in one batch.
	t1 := t0.Add(30 * time.Second)
	step(update(t0, 100))
	step(replace(t1, 7))
	value("in one batch", t1, 7)
	// Its delete and its values in two.
	t2, t3 := t1.Add(10*time.Second), t1.Add(20*time.Second)
	step(update(t2, 200))
	ms := replace(t3, 8)
	step(ms[:1])
	step(ms[1:])
	value("in two batches", t3, 8)
	if n := r.Counter("weir_sink_dead_letters_total", map[string]string{"sink": "rw"}); n != 0 {
		for _, rec := range sinktest.ReadAll(t, b, "dead.letter") {
			t.Logf("dead letter: %s", sinktest.Header(rec, "dead_letter_reason"))
		}
		t.Errorf("%v records refused by Prometheus", n)
	}
}
