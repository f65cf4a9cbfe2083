package prometheus

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/weirnet/weir/configs"
	"github.com/weirnet/weir/sinks"
	"github.com/weirnet/weir/sinks/internal/sinktest"
	"github.com/weirnet/weir/telemetry"
)

// TestRemoteWriteDeleteAfterRestart: a restarted sink (an upgrade, a
// crash, a partition given in a rebalance) starts past the records it
// sent before; a delete read after the start ends their series too, as it
// reads the staleness window back at the start. Knowing only what it sent
// since, it sent no marker, and the deleted interface was returned for
// Prometheus' lookback.
func TestRemoteWriteDeleteAfterRestart(t *testing.T) {
	b := sinktest.Broker(t)
	rcv := newRWReceiver(t)
	cfg := configs.Sink{Type: "prometheus_remote_write", Name: "rw", Topics: []string{"enriched.metrics"}, URL: rcv.URL,
		FlushInterval: configs.Duration(10 * time.Millisecond)}
	t0 := time.Now().Add(-time.Minute).Truncate(time.Millisecond)
	byDevice := func(int) string { return "spine1" }
	run := func(ms []telemetry.Metric) {
		t.Helper()
		sinktest.Produce(t, b, "enriched.metrics", telemetry.SchemaMetric, byDevice, ms)
		d, err := NewRemoteWrite(cfg, sinks.Env{})
		if err != nil {
			t.Fatal(err)
		}
		r := sinktest.Start(t, b, cfg, d)
		sinktest.Eventually(t, "every record delivered", func() bool {
			return r.Counter("weir_sink_records_total", map[string]string{"sink": cfg.Name}) == float64(len(ms))
		})
		if err := r.Stop(); err != nil {
			t.Fatal(err)
		}
	}
	run(gnmiUpdates(t0))
	if got := markers(t, rcv.take(t), 0); len(got) != 0 {
		t.Fatalf("markers before any delete: %q", got)
	}
	t1 := t0.Add(10 * time.Second)
	run(append(gnmiDelete(t1, ifacePath("Ethernet9")), enrichView("Ethernet9", "interface", t1, map[string]any{"deleted": true})))
	want := []string{
		`interface_in_octets_rate{device=spine1,interface=Ethernet9,role=leaf}`,
		`interface_oper_up{device=spine1,interface=Ethernet9,role=leaf}`,
		`interfaces_interface_state_counters_in_octets_total{device=spine1,name=Ethernet9,path=/interfaces/interface[name=Ethernet9]/state/counters}`,
		`interfaces_interface_state_counters_out_octets_total{device=spine1,name=Ethernet9,path=/interfaces/interface[name=Ethernet9]/state/counters}`,
	}
	if got := markers(t, rcv.take(t), t1.UnixMilli()-1); !slices.Equal(got, want) {
		t.Errorf("the restarted sink's markers after the delete:\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}
