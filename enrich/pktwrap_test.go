package enrich

import (
	"slices"
	"testing"
	"time"

	"github.com/weirnet/weir/telemetry"
)

// TestCounter32PacketResetNoPhantomRate: IF-MIB's ifInUcastPkts and
// ifOutUcastPkts (in the shipped if-mib profile) are 32 bits wide. A line
// card reloaded, or the port's counters cleared, on an agent whose
// ifCounterDiscontinuityTime stays 0 (sysUpTime moving on): ifInUcastPkts
// from 3,000,000,000 to 1,000 reads as a 32-bit wrap of 1.29 billion
// packets, ifInUcastPkts_rate 21.6 million/s on a 1 Gbit/s port that can
// carry 1.5 million a second at most (2^32 - 3e9 < 2^31: a near wrap,
// which was checked against the link for octets, errors and discards
// only). A wrap the link could not carry is a reset, no rate; a real wrap
// keeps its rate, and a port of unknown speed keeps it as before.
func TestCounter32PacketResetNoPhantomRate(t *testing.T) {
	for _, tc := range []struct {
		name  string
		speed map[string]any
		pkts  []uint64
		want  []bool
	}{
		{"line card reloaded", map[string]any{"ifHighSpeed": int64(1000), "ifSpeed": int64(1_000_000_000)},
			[]uint64{2_999_000_000, 3_000_000_000, 1_000, 61_000}, []bool{false, true, false, true}},
		{"a wrap", map[string]any{"ifHighSpeed": int64(1000), "ifSpeed": int64(1_000_000_000)},
			[]uint64{4_294_000_000, 4_294_900_000, 600_000}, []bool{false, true, true}},
		{"no speed known", nil, []uint64{2_999_000_000, 3_000_000_000, 1_000, 61_000}, []bool{false, true, true, true}},
	} {
		w := loneMetricsWorker()
		var got []bool
		for i, n := range tc.pkts {
			fields := map[string]any{"ifInUcastPkts": n, "ifOutUcastPkts": n, "ifCounterDiscontinuityTime": int64(0)}
			for k, v := range tc.speed {
				fields[k] = v
			}
			m := telemetry.Metric{V: 1, Measurement: "snmp_interface", Device: "edge1",
				Tags:   map[string]string{"ifName": "Gi0/1", "ifIndex": "1"},
				Fields: fields, Counters: []string{"ifInUcastPkts", "ifOutUcastPkts"},
				Time: casesT0.Add(time.Duration(i) * time.Minute), Uptime: uint32(100000 + i*6000), Source: "snmp"}
			f, _ := enrichAt(t, w, m, int64(i))
			r, ok := f["ifInUcastPkts_rate"]
			if _, ook := f["ifOutUcastPkts_rate"]; ook != ok {
				t.Errorf("%s poll %d: ifInUcastPkts_rate %v, ifOutUcastPkts_rate %v", tc.name, i, ok, ook)
			}
			if ok && tc.speed != nil && r > 1_500_000*maxUtilisation {
				t.Errorf("%s poll %d: ifInUcastPkts_rate %v packets/s on a 1 Gbit/s port", tc.name, i, r)
			}
			got = append(got, ok)
		}
		if !slices.Equal(got, tc.want) {
			t.Errorf("%s: ifInUcastPkts_rate at polls %v, want %v", tc.name, got, tc.want)
		}
	}
}
