package influxdb_test

import (
	"strings"
	"testing"
	"time"

	"github.com/weirnet/weir/sinks/internal/sinktest"
	"github.com/weirnet/weir/telemetry"
)

// TestCounterPast2To63DeadLetteredByInfluxDB1: what the README says of a
// Counter64 past 2^63-1 (2^64-1, "unknown" on some devices): written
// unsigned, InfluxDB 1.x refuses the line, and the metric goes to
// dead.letter with InfluxDB's message while the rest of the batch lands
// with its counters as integers.
func TestCounterPast2To63DeadLetteredByInfluxDB1(t *testing.T) {
	d, c, dest := realInfluxDB(t, 0)
	b := sinktest.Broker(t)
	m := func(i int, v uint64) telemetry.Metric {
		return telemetry.Metric{V: 1, Measurement: "snmp_interface", Device: "edge1", Tags: map[string]string{"ifName": "Gi0/1"},
			Fields: map[string]any{"ifHCInOctets": v, "ifOperStatus": 1}, Counters: []string{"ifHCInOctets"},
			Time: t0.Add(time.Duration(i) * time.Second)}
	}
	sinktest.Produce(t, b, "enriched.metrics", telemetry.SchemaMetric, func(int) string { return "edge1" },
		[]telemetry.Metric{m(0, 5), m(1, 1<<64-1), m(2, 1<<63-1)})
	sinktest.Start(t, b, c, dest)
	var dl []string
	sinktest.Eventually(t, "the dead letter", func() bool {
		dl = dl[:0]
		for _, r := range sinktest.ReadAll(t, b, "dead.letter") {
			dl = append(dl, sinktest.Header(r, "dead_letter_reason"))
		}
		return len(dl) == 1
	})
	if !strings.HasPrefix(dl[0], "http_400:") || !strings.Contains(dl[0], "invalid number") {
		t.Fatalf("dead letter reason %q", dl[0])
	}
	var v [][]any
	sinktest.Eventually(t, "two points", func() bool {
		v = d.Query("net", `SELECT "ifHCInOctets" FROM "snmp_interface"`)
		return len(v) == 2
	})
	if v[0][1] != float64(5) || v[1][1] != float64(1<<63-1) {
		t.Fatalf("read back %v", v)
	}
	if f := d.Query("net", `SHOW FIELD KEYS FROM "snmp_interface"`); len(f) != 2 || f[0][1] != "integer" {
		t.Fatalf("field types %v", f)
	}
}
