package influxdb_test

import (
	"testing"
	"time"

	"github.com/weirnet/weir/sinks/internal/sinktest"
	"github.com/weirnet/weir/telemetry"
)

// TestCounterPast2To63LeftOut: a Counter64 past 2^63-1 (2^64-1, "unknown"
// on some devices; a 400G port's octets after about six years) has no
// line-protocol type InfluxDB 1.x takes, and written unsigned it was
// refused: the whole metric, its other fields too, went to dead.letter.
// Capped at 2^63-1 (Telegraf's way) it would read as a counter that
// stopped, a port with no traffic. The field is left out, as a NaN is;
// the metric's other fields land and the counter stays an integer field.
func TestCounterPast2To63LeftOut(t *testing.T) {
	d, c, dest := realInfluxDB(t, 0)
	b := sinktest.Broker(t)
	m := func(i int, v uint64) telemetry.Metric {
		return telemetry.Metric{V: 1, Measurement: "snmp_interface", Device: "edge1", Tags: map[string]string{"ifName": "Gi0/1"},
			Fields: map[string]any{"ifHCInOctets": v, "ifOperStatus": 1}, Counters: []string{"ifHCInOctets"},
			Time: t0.Add(time.Duration(i) * time.Second)}
	}
	sinktest.Produce(t, b, "enriched.metrics", telemetry.SchemaMetric, func(int) string { return "edge1" },
		[]telemetry.Metric{m(0, 5), m(1, 1<<64-1), m(2, 1<<63-1)})
	r := sinktest.Start(t, b, c, dest)
	var v [][]any
	sinktest.Eventually(t, "three points", func() bool {
		v = d.Query("net", `SELECT "ifHCInOctets", "ifOperStatus" FROM "snmp_interface"`)
		return len(v) == 3
	})
	if v[0][1] != float64(5) || v[1][1] != nil || v[2][1] != float64(1<<63-1) || v[1][2] != float64(1) {
		t.Fatalf("read back %v", v)
	}
	if n := r.Counter("weir_sink_dead_letters_total", nil); n != 0 {
		t.Fatalf("%v dead letters", n)
	}
	f := d.Query("net", `SHOW FIELD KEYS FROM "snmp_interface"`)
	if len(f) != 2 || f[0][0] != "ifHCInOctets" || f[0][1] != "integer" {
		t.Fatalf("field types %v", f)
	}
}
