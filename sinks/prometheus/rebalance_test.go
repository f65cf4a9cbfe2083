package prometheus_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/weirnet/weir/configs"
	"github.com/weirnet/weir/sinks/internal/sinktest"
	promsink "github.com/weirnet/weir/sinks/prometheus"
	"github.com/weirnet/weir/telemetry"
)

// TestRevokedPartitionSeriesLinger: two weir processes run the same
// prometheus sink (one group, as docker-compose.yml's weir1 and weir2 do).
// When a second member joins, the first loses partitions: it must stop
// serving the series it read from them, which the new owner serves now.
// Kept until staleness (5m), Prometheus held every such series twice
// (instance differs), and the dashboards' count()/sum()/topk() counted
// them twice.
func TestRevokedPartitionSeriesLinger(t *testing.T) {
	b := sinktest.Broker(t) // 3 partitions
	cfg := func(addr string) configs.Sink {
		return configs.Sink{Type: "prometheus", Name: "prom", Topics: []string{"enriched.metrics"}, Listen: configs.Address(addr),
			FlushInterval: configs.Duration(10 * time.Millisecond)}
	}
	const devices = 30
	key := func(i int) string { return fmt.Sprintf("d%d", i) }
	batch := func(in uint64) []telemetry.Metric {
		var ms []telemetry.Metric
		for i := range devices {
			ms = append(ms, metric(key(i), "Ethernet1", in, 1))
		}
		return ms
	}
	a, err := promsink.NewSink(cfg("127.0.0.1:0"), time.Now)
	if err != nil {
		t.Fatal(err)
	}
	ra := sinktest.Start(t, b, cfg("127.0.0.1:0"), a)
	sinktest.Produce(t, b, "enriched.metrics", telemetry.SchemaMetric, key, batch(1000))
	sinktest.Eventually(t, "A has every device", func() bool {
		return ra.Counter("weir_sink_records_total", map[string]string{"sink": "prom"}) == devices
	})
	bs, err := promsink.NewSink(cfg("127.0.0.1:0"), time.Now)
	if err != nil {
		t.Fatal(err)
	}
	rb := sinktest.Start(t, b, cfg("127.0.0.1:0"), bs)
	time.Sleep(3 * time.Second) // rebalance
	sinktest.Produce(t, b, "enriched.metrics", telemetry.SchemaMetric, key, batch(2000))
	sinktest.Eventually(t, "every device's new value delivered", func() bool {
		return ra.Counter("weir_sink_records_total", map[string]string{"sink": "prom"})+
			rb.Counter("weir_sink_records_total", map[string]string{"sink": "prom"}) == 2*devices
	})
	nb := rb.Counter("weir_sink_records_total", map[string]string{"sink": "prom"})
	if nb == 0 {
		t.Skip("no partition moved to the second member")
	}
	_, fa := scrape(t, "http://"+a.Addr().String()+"/metrics")
	_, fb := scrape(t, "http://"+bs.Addr().String()+"/metrics")
	dup := 0
	for k, v := range fb["interface_if_hc_in_octets_total"].values {
		if old, ok := fa["interface_if_hc_in_octets_total"].values[k]; ok {
			dup++
			if dup == 1 {
				t.Logf("%s: A (no longer its partition) serves %v, B (owner) serves %v", k, old, v)
			}
		}
	}
	t.Logf("B took %v records; A serves %d series, B %d", nb, testutil.CollectAndCount(a.Collector()), testutil.CollectAndCount(bs.Collector()))
	if dup > 0 {
		t.Errorf("%d series served by both members after a rebalance (A's copies stay until staleness, 5m)", dup)
	}
}
