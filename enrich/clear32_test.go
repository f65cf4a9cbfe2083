package enrich

import (
	"encoding/json"
	"slices"
	"testing"
	"time"

	"github.com/weirnet/weir/broker"
	"github.com/weirnet/weir/telemetry"
)

// TestClearCounters32NoPhantomUtilisation: a 100 Mbit/s port of an agent
// without ifXTable (32-bit ifInOctets only; old switches, SNMPv1), `clear
// counters` between two polls a minute apart, sysUpTime moving on
// normally. ifInOctets goes 3,000,000,000 -> 5,000: as a 32-bit wrap, 1.29
// GB in 60 s, 172 Mbit/s on a 100 Mbit/s port: in_utilization_pct 172, a
// spike on the dashboard and a utilisation alert. A wrap the port could
// not carry in the interval is a reset: no rate. A real wrap is kept.
func TestClearCounters32NoPhantomUtilisation(t *testing.T) {
	inv, _ := ParseInventory([]byte(testInventory))
	w := NewMetricsWorker(nil, inv)
	w.out = newOutputs(nil, telemetry.TopicRawSNMP, w.logger, w.m, false)
	t0 := time.Date(2026, 11, 29, 14, 0, 0, 0, time.UTC)
	// rates gives, for each poll of the port's ifInOctets, whether it had
	// a rate; it fails on a utilisation over 100%.
	rates := func(port string, ins ...uint64) (got []bool) {
		for i, in := range ins {
			at := t0.Add(time.Duration(i) * time.Minute)
			m := telemetry.Metric{V: 1, Measurement: "snmp_interface", Device: "edge1",
				Tags:   map[string]string{"ifName": port, "ifIndex": port[len(port)-1:], "agent": "192.0.2.1"},
				Fields: map[string]any{"ifInOctets": in, "ifSpeed": int64(100_000_000)}, Counters: []string{"ifInOctets"},
				Time: at, Uptime: uint32(1_000_000 + i*6000), Source: "snmp"}
			w.rates.setNow(at)
			v, _ := json.Marshal(&m)
			if _, ok := w.enrich(&broker.Record{Topic: telemetry.TopicRawSNMP, Offset: int64(i), Value: v}); !ok {
				t.Fatal("not enriched")
			}
			_, ok := w.row.Field("ifInOctets_rate")
			got = append(got, ok)
			if f, ok := w.row.Field("in_utilization_pct"); ok {
				if pct, _ := f.Number(); pct > 100 {
					t.Errorf("%s poll %d: in_utilization_pct %v on a 100 Mbit/s port", port, i, pct)
				}
			}
		}
		return got
	}
	// The clear: 3,000,000,000 to 5,000, 1.29 GB in a minute as a wrap.
	if got := rates("Fa0/1", 2_999_000_000, 3_000_000_000, 5_000, 6_000); !slices.Equal(got, []bool{false, true, false, true}) {
		t.Errorf("clear counters: rates at polls %v, want [false true false true]", got)
	}
	// A real wrap: 4,290,000,000 to 100,000, 5 MB in a minute.
	if got := rates("Fa0/2", 4_289_000_000, 4_290_000_000, 100_000); !slices.Equal(got, []bool{false, true, true}) {
		t.Errorf("a wrap: rates at polls %v, want [false true true]", got)
	}
}

// TestClearCounters32SmallErrorCountNoSpikeOnFastPort: IF-MIB's error and
// discard counters are 32 bits wide only, and usually small. `clear
// counters` on a port with a few errors takes ifInErrors from 1,200 to
// 3: as a 32-bit wrap that is 2^32 less 1,197, one of 2^31 or more
// (wrapFar). On a 10 Gbit/s port polled every 5 minutes, or a 100 Gbit/s
// one every 30 s, the link could carry that many minimum-size frames, so
// the speed check let it through: in_errors_rate 14.3 million/s (143
// million/s), a spike of errors where there were none. A wrap of 2^31
// errors or discards in one poll is no real port's: a reset, no rate. A
// small real wrap of the same counters keeps its rate.
func TestClearCounters32SmallErrorCountNoSpikeOnFastPort(t *testing.T) {
	for _, tc := range []struct {
		name   string
		speed  int64 // ifHighSpeed, Mbit/s
		every  time.Duration
		errors []uint64
		want   []bool
	}{
		{"10G port every 5 min, clear counters", 10_000, 5 * time.Minute, []uint64{1_000, 1_200, 3, 10}, []bool{false, true, false, true}},
		{"100G port every 30 s, clear counters", 100_000, 30 * time.Second, []uint64{1_000, 1_200, 3, 10}, []bool{false, true, false, true}},
		{"10G port every 5 min, a wrap", 10_000, 5 * time.Minute, []uint64{4_294_000_000, 4_294_900_000, 600_000}, []bool{false, true, true}},
	} {
		w := loneMetricsWorker()
		var got []bool
		for i, e := range tc.errors {
			m := telemetry.Metric{V: 1, Measurement: "snmp_interface", Device: "edge1",
				Tags:   map[string]string{"ifName": "Et1", "ifIndex": "1"},
				Fields: map[string]any{"ifInErrors": e, "ifInDiscards": e, "ifHighSpeed": tc.speed}, Counters: []string{"ifInDiscards", "ifInErrors"},
				Time: casesT0.Add(time.Duration(i) * tc.every), Uptime: uint32(100_000 + i*int(tc.every/(10*time.Millisecond))), Source: "snmp"}
			f, _ := enrichAt(t, w, m, int64(i))
			r, ok := f["in_errors_rate"]
			_, dok := f["in_discards_rate"]
			if ok != dok {
				t.Errorf("%s poll %d: in_errors_rate %v, in_discards_rate %v", tc.name, i, ok, dok)
			}
			if ok && r > 1e6 {
				t.Errorf("%s poll %d: in_errors_rate %v", tc.name, i, r)
			}
			got = append(got, ok)
		}
		if !slices.Equal(got, tc.want) {
			t.Errorf("%s: in_errors_rate at polls %v, want %v", tc.name, got, tc.want)
		}
	}
}
