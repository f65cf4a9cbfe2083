package enrich

import (
	"testing"
	"time"

	"github.com/weirnet/weir/telemetry"
)

// TestUtilisationWhenTheLinkWentDownMidInterval: a Catalyst access port at
// 1 Gbit/s carrying 500 Mbit/s goes down half way between two polls; the
// poll after reads it notconnect, and its ifSpeed/ifHighSpeed as the
// 10 Mbit/s an auto-negotiating port that is down reports. The octets it
// carried in the interval (250 Mbit/s on average) were measured against
// those 10 Mbit/s: in_utilization_pct 2500, a high-utilisation alert
// firing at the very moment a busy link failed. What a link could carry
// over an interval is at most the higher of its speeds at either end: the
// utilisation is of that, speed_mbps says the speed now.
func TestUtilisationWhenTheLinkWentDownMidInterval(t *testing.T) {
	const octetsPerSec = 62_500_000 // 500 Mbit/s
	w := loneMetricsWorker()
	in := uint64(1 << 40)
	for i, tc := range []struct {
		highSpeed, oper int64
		secsCarried     uint64
		speed, util     float64
	}{
		{1000, 1, 0, 1000, -1},
		{1000, 1, 60, 1000, 50},
		{10, 2, 30, 10, 25}, // down after 30 s: 250 Mbit/s on average, of 1 Gbit/s
		{10, 2, 0, 10, 0},   // down since: nothing carried, of 10 Mbit/s
	} {
		in += tc.secsCarried * octetsPerSec
		m := telemetry.Metric{V: 1, Measurement: "snmp_interface", Device: "edge1",
			Tags: map[string]string{"ifName": "Gi1/0/1", "ifIndex": "1"},
			Fields: map[string]any{"ifHCInOctets": in, "ifInOctets": in & 0xffffffff, "ifHighSpeed": tc.highSpeed,
				"ifSpeed": tc.highSpeed * 1_000_000, "ifOperStatus": tc.oper},
			Counters: []string{"ifHCInOctets", "ifInOctets"}, Counters64: []string{"ifHCInOctets"},
			Time: casesT0.Add(time.Duration(i) * time.Minute), Uptime: uint32(100000 + i*6000), Source: "snmp"}
		f, _ := enrichAt(t, w, m, int64(i))
		if f["speed_mbps"] != tc.speed {
			t.Errorf("poll %d: speed_mbps %v, want %v", i, f["speed_mbps"], tc.speed)
		}
		u, ok := f["in_utilization_pct"]
		if tc.util < 0 && ok || tc.util >= 0 && (!ok || u != tc.util) {
			t.Errorf("poll %d: in_utilization_pct %v (%v), want %v (in_octets_rate %v)", i, u, ok, tc.util, f["in_octets_rate"])
		}
	}
}
