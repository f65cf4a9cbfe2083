package influxdb_test

import (
	"strings"
	"testing"
	"time"

	"github.com/weirnet/weir/configs"
	"github.com/weirnet/weir/internal/peers"
	"github.com/weirnet/weir/sinks"
	"github.com/weirnet/weir/sinks/influxdb"
	"github.com/weirnet/weir/sinks/internal/sinktest"
	"github.com/weirnet/weir/telemetry"
)

// TestOddNamesRoundTripThroughInfluxDB: spaces, commas, equals signs,
// quotes and backslashes in the measurement, tag keys and values, field
// keys and string values read back from a real InfluxDB as they were.
func TestOddNamesRoundTripThroughInfluxDB(t *testing.T) {
	d := peers.InfluxDB(t)
	d.Query("net", "CREATE DATABASE net")
	c := configs.Sink{Type: "influxdb", Name: "influx1", Topics: []string{"enriched.metrics"}, URL: "http://" + d.Addr,
		Database: "net", FlushInterval: configs.Duration(20 * time.Millisecond),
		Retry: configs.SinkRetry{Initial: configs.Duration(20 * time.Millisecond), Max: configs.Duration(200 * time.Millisecond)}}
	dest, err := influxdb.New(c, sinks.Env{})
	if err != nil {
		t.Fatal(err)
	}
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
