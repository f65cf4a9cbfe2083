package enrich

import (
	"math"
	"testing"
	"time"

	"github.com/weirnet/weir/telemetry"
)

// TestCounterJumpingByHalfTheRangeIsNoRate: a counter that jumps forward
// by 2^63 or more between two samples did not count that many (9.2 EB in
// one interval; 10^17 B/s over a minute): a producer writing -1 as
// unsigned, an agent's "no value" of 2^64-1. It is a reset, as a move back
// by as much is: no rate, not a spike of 3e17 B/s and utilisation of 2e11
// percent. Nor is its fall back to the counter's real value a wrap at 2^64
// (a rate of the whole counter over one interval).
func TestCounterJumpingByHalfTheRangeIsNoRate(t *testing.T) {
	for _, tc := range []struct {
		name  string
		m     string
		field string
		tags  map[string]string
	}{
		{"snmp", "snmp_interface", "ifHCInOctets", map[string]string{"ifName": "Gi0/1", "ifIndex": "1"}},
		{"gnmi", "interfaces_interface_state_counters", "in-octets", map[string]string{"name": "Ethernet1"}},
	} {
		w := loneMetricsWorker()
		for i, v := range []uint64{1000, 61000, math.MaxUint64, 5_000_000_061_000, 5_000_000_121_000} {
			m := telemetry.Metric{V: 1, Measurement: tc.m, Device: "edge9", Tags: tc.tags,
				Fields:   map[string]any{tc.field: v, "ifHighSpeed": int64(1000)},
				Counters: []string{tc.field}, Counters64: []string{tc.field},
				Time: casesT0.Add(time.Duration(i) * time.Minute)}
			if tc.m == "snmp_interface" {
				m.Uptime = uint32(100_000 + i*6000)
			}
			f, _ := enrichAt(t, w, m, int64(i))
			rate, has := f[tc.field+"_rate"]
			switch i {
			case 1, 4:
				if !has || rate != 1000 {
					t.Errorf("%s: sample %d: rate %v %v, want one", tc.name, i, rate, has)
				}
			case 2, 3:
				if has || f["in_octets_rate"] != 0 || f["in_utilization_pct"] != 0 {
					t.Errorf("%s: sample %d (%d): rate %v, in_octets_rate %v, utilisation %v: want none",
						tc.name, i, v, rate, f["in_octets_rate"], f["in_utilization_pct"])
				}
			}
		}
	}
}
