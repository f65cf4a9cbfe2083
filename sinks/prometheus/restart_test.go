package prometheus_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/weirnet/weir/configs"
	"github.com/weirnet/weir/sinks/internal/sinktest"
	promsink "github.com/weirnet/weir/sinks/prometheus"
	"github.com/weirnet/weir/telemetry"
)

// TestRestartServesLatestValues: the endpoint is a cache of the latest
// value of each series, filled from the log. A restart of weir (an
// upgrade, a crash) starts the sink at its committed offset, past every
// record it served before: without reading back, the endpoint was empty
// until each device's next poll or sample (a minute for the default SNMP
// interval, longer for slow ones), so Prometheus marked every series
// stale and graphs and alerts saw the gap. The series of the staleness
// window before the restart are served at once, as before it.
func TestRestartServesLatestValues(t *testing.T) {
	b := sinktest.Broker(t)
	cfg := configs.Sink{Type: "prometheus", Name: "prom", Topics: []string{"enriched.metrics"}, Listen: "127.0.0.1:0",
		Staleness: configs.Duration(5 * time.Minute), FlushInterval: configs.Duration(10 * time.Millisecond)}
	const devices = 12
	key := func(i int) string { return fmt.Sprintf("d%d", i) }
	var ms []telemetry.Metric
	for i := range devices {
		ms = append(ms, metric(key(i), "Ethernet1", uint64(100+i), 1))
	}
	// An hour-old record before them: past staleness, not served.
	old := metric("gone", "Ethernet1", 1, 1)
	old.Time, old.ReceivedAt = time.Now().Add(-time.Hour), time.Now().Add(-time.Hour)
	sinktest.Produce(t, b, "enriched.metrics", telemetry.SchemaMetric, func(int) string { return "gone" }, []telemetry.Metric{old})
	sinktest.Produce(t, b, "enriched.metrics", telemetry.SchemaMetric, key, ms)

	first, err := promsink.NewSink(cfg, time.Now)
	if err != nil {
		t.Fatal(err)
	}
	r := sinktest.Start(t, b, cfg, first)
	sinktest.Eventually(t, "every metric delivered", func() bool {
		return r.Counter("weir_sink_records_total", map[string]string{"sink": "prom"}) == devices+1
	})
	if err := r.Stop(); err != nil { // commits what it delivered
		t.Fatal(err)
	}
	first.Close()

	// The restart: a new sink of the same group; one device has a new
	// value in the log since, which the window read back must not undo.
	sinktest.Produce(t, b, "enriched.metrics", telemetry.SchemaMetric, key, []telemetry.Metric{metric(key(0), "Ethernet1", 999, 1)})
	second, err := promsink.NewSink(cfg, time.Now)
	if err != nil {
		t.Fatal(err)
	}
	r = sinktest.Start(t, b, cfg, second)
	var fams map[string]*dto
	var body string
	deadline := time.Now().Add(10 * time.Second)
	for {
		body, fams = scrape(t, "http://"+second.Addr().String()+"/metrics")
		n := 0
		if f := fams["interface_if_hc_in_octets_total"]; f != nil {
			n = len(f.values)
		}
		if n == devices {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("10 s after a restart the endpoint serves %d of the %d series it served before:\n%s", n, devices, body)
		}
		time.Sleep(50 * time.Millisecond)
	}
	f := fams["interface_if_hc_in_octets_total"]
	if v := f.values["device=d7,if_name=Ethernet1,site=ams1"]; v != 107 {
		t.Errorf("d7 served %v after the restart, want 107:\n%s", v, body)
	}
	// Read back, not delivered again: only the new record is counted.
	sinktest.Eventually(t, "the new record delivered", func() bool {
		return r.Counter("weir_sink_records_total", map[string]string{"sink": "prom"}) == 1
	})
	if _, fams = scrape(t, "http://"+second.Addr().String()+"/metrics"); fams["interface_if_hc_in_octets_total"].values["device=d0,if_name=Ethernet1,site=ams1"] != 999 {
		t.Errorf("d0 not at its new value 999 after the restart: %v", fams["interface_if_hc_in_octets_total"].values)
	}
	if _, ok := f.values["device=gone,if_name=Ethernet1,site=ams1"]; ok {
		t.Errorf("a record an hour old is served after the restart:\n%s", body)
	}
}
