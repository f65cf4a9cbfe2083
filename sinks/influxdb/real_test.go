package influxdb_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/weirnet/weir/internal/peers"
	"github.com/weirnet/weir/sinks/internal/sinktest"
	"github.com/weirnet/weir/telemetry"
)

// count is the points of measurement "interface" in database net.
func count(d *peers.Influxd) int {
	v := d.Query("net", `SELECT count("utilisation") FROM "interface"`)
	if len(v) == 0 {
		return 0
	}
	n, _ := v[0][1].(float64)
	return int(n)
}

// TestRealInfluxDB1 writes through the v1 API to a real InfluxDB 1.x,
// queries it back, then stops it for a while: the sink retries, and after
// the restart nothing is missing.
func TestRealInfluxDB1(t *testing.T) {
	d, c, dest := realInfluxDB(t, 100)
	b := sinktest.Broker(t)
	key := func(i int) string { return fmt.Sprintf("r%d", i) }
	sinktest.Produce(t, b, "enriched.metrics", telemetry.SchemaMetric, key, metrics(300, 0))
	r := sinktest.Start(t, b, c, dest)
	sinktest.Eventually(t, "300 points in InfluxDB", func() bool { return count(d) == 300 })
	v := d.Query("net", `SELECT "ifHCInOctets", "utilisation", "ifOperStatus", "ok" FROM "interface" WHERE "device" = 'r7' AND "ifName" = 'Ethernet 1/1'`)
	if len(v) != 1 || v[0][1] != float64(1<<40) || v[0][2] != 12.5 || v[0][3] != "up" || v[0][4] != true {
		t.Fatalf("r7: %v", v)
	}
	if ts, _ := time.Parse(time.RFC3339Nano, v[0][0].(string)); !ts.Equal(t0.Add(7 * time.Second)) {
		t.Fatalf("r7 time %v", v[0][0])
	}

	// Outage: stop InfluxDB, publish more, see the retries, restart.
	d.Stop()
	before := r.Counter("weir_sink_retries_total", map[string]string{"sink": "influx1"})
	key2 := func(i int) string { return fmt.Sprintf("r%d", 1000+i) }
	sinktest.Produce(t, b, "enriched.metrics", telemetry.SchemaMetric, key2, metrics(200, 1000))
	sinktest.Eventually(t, "retries while InfluxDB is down", func() bool {
		return r.Counter("weir_sink_retries_total", map[string]string{"sink": "influx1"}) >= before+3
	})
	d.Start()
	sinktest.Eventually(t, "500 points after the outage", func() bool { return count(d) == 500 })
}
