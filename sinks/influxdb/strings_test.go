package influxdb_test

import (
	"testing"

	"github.com/weirnet/weir/sinks/internal/sinktest"
	"github.com/weirnet/weir/telemetry"
)

// TestStringFieldRoundTripsThroughInfluxDB: a Cisco sysDescr has CR LF in it ("Cisco IOS Software, ...\r\nTechnical
// Support: ..."); the snmp collector keeps it as text in the string field
// sysDescr of snmp_system. InfluxDB's line-protocol parser unescapes only
// \\ and \" in string fields, so the \r \n \t escapes weir writes (those of
// line-protocol/v2's encoder) are stored as a backslash and a letter: the
// value read back is not the one the device sent.
func TestStringFieldRoundTripsThroughInfluxDB(t *testing.T) {
	d, c, dest := realInfluxDB(t, 0)
	b := sinktest.Broker(t)
	descr := "Cisco IOS Software, C2960 Software (C2960-LANBASEK9-M), Version 12.2(55)SE\r\nTechnical Support: http://www.cisco.com/techsupport\r\n\tCopyright (c) 1986-2010 by \"Cisco\" \\ Systems"
	sinktest.Produce(t, b, "enriched.metrics", telemetry.SchemaMetric, func(int) string { return "edge1" }, []telemetry.Metric{{
		V: 1, Measurement: "snmp_system", Device: "edge1", Fields: map[string]any{"sysDescr": descr}, Time: t0}})
	sinktest.Start(t, b, c, dest)
	var v [][]any
	sinktest.Eventually(t, "the point in InfluxDB", func() bool {
		v = d.Query("net", `SELECT "sysDescr" FROM "snmp_system"`)
		return len(v) == 1
	})
	if got := v[0][1]; got != descr {
		t.Fatalf("sysDescr read back from InfluxDB:\n got  %q\n want %q", got, descr)
	}
}
