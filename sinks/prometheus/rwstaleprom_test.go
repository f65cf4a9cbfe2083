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
