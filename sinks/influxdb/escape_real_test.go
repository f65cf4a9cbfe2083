package influxdb_test

import (
	"strings"
	"testing"

	"github.com/weirnet/weir/sinks/internal/sinktest"
	"github.com/weirnet/weir/telemetry"
)

// TestOddNamesRoundTripThroughInfluxDB: spaces, commas, equals signs,
// quotes and backslashes in the measurement, tag keys and values, field
// keys and string values read back from a real InfluxDB as they were.
func TestOddNamesRoundTripThroughInfluxDB(t *testing.T) {
	d, c, dest := realInfluxDB(t, 0)
	b := sinktest.Broker(t)
	meas, tk, tv, fk, fv := `a b,c=d"e\f`, `k e,y=1"\x`, `Gi0/1 "x" \y, z=1 [a] p\ q\,r\=s`, `f e,l=d "q"\z`, `v "q" \ \\ , = [x]/y-z`
	sinktest.Produce(t, b, "enriched.metrics", telemetry.SchemaMetric, func(int) string { return "edge 1" }, []telemetry.Metric{{
		V: 1, Measurement: meas, Device: "edge 1,x=y", Tags: map[string]string{tk: tv, "empty": ""},
		Fields: map[string]any{fk: fv, "n": 1.5}, Time: t0}})
	sinktest.Start(t, b, c, dest)
	id := func(s string) string { return `"` + strings.NewReplacer(`\`, `\\`, `"`, `\"`).Replace(s) + `"` }
	q := "SELECT " + id("device") + "," + id(tk) + "," + id(fk) + ",n FROM " + id(meas)
	var v [][]any
	sinktest.Eventually(t, "the point in InfluxDB", func() bool {
		v = d.Query("net", q)
		return len(v) == 1
	})
	if v[0][1] != "edge 1,x=y" || v[0][2] != tv || v[0][3] != fv || v[0][4] != 1.5 {
		t.Fatalf("read back: %q", v)
	}
	if keys := d.Query("net", "SHOW TAG KEYS FROM "+id(meas)); len(keys) != 2 {
		t.Fatalf("tag keys %q", keys)
	}
}

// TestTrailingBackslashTrimmedThroughInfluxDB: a tag value ending in a
// backslash (HOST-RESOURCES-MIB's hrStorageDescr of a Windows drive, "C:\")
// reaches a real InfluxDB as "C:", as Telegraf writes it, where the whole
// point went to dead.letter at every poll; a value of backslashes alone
// leaves its tag out.
func TestTrailingBackslashTrimmedThroughInfluxDB(t *testing.T) {
	d, c, dest := realInfluxDB(t, 0)
	b := sinktest.Broker(t)
	sinktest.Produce(t, b, "enriched.metrics", telemetry.SchemaMetric, func(int) string { return "win1" }, []telemetry.Metric{{
		V: 1, Measurement: "storage", Device: "win1", Tags: map[string]string{"descr": `C:\`, "path": `\\`},
		Fields: map[string]any{"used_pct": 41.5}, Time: t0}})
	sinktest.Start(t, b, c, dest)
	var v [][]any
	sinktest.Eventually(t, "the point in InfluxDB", func() bool {
		v = d.Query("net", `SELECT "descr", "used_pct" FROM "storage"`)
		return len(v) == 1
	})
	if v[0][1] != "C:" || v[0][2] != 41.5 {
		t.Fatalf("read back: %q", v)
	}
	if keys := d.Query("net", `SHOW TAG KEYS FROM "storage"`); len(keys) != 2 {
		t.Fatalf("tag keys %q, want descr and device", keys)
	}
}
