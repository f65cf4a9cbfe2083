package enrich

import (
	"testing"
	"time"

	"github.com/weirnet/weir/telemetry"
)

// TestAnotherAgentsCountersGiveNoRate: a target answered by another agent
// (an HA pair's floating address answered by the other member, a target a
// SIGHUP moved to another address and back) reads a sysUpTime of a boot
// before the previous poll: nothing restarted (no device_rebooted), and
// its counters are another device's. Those that went back gave no rate;
// those that went on gave the difference of the two devices' counters as
// a rate: in_octets_rate 66.7 GB/s, 5333% of a 10 Gbit/s port that
// carried 3.3 MB/s. Across the switch, no counter gives a rate; the polls
// after it do. An agent restarted alone (its boot after the previous
// poll) keeps its counters' rates, as before.
func TestAnotherAgentsCountersGiveNoRate(t *testing.T) {
	tenG := func(in uint64) map[string]any {
		return map[string]any{"ifHCInOctets": in, "ifInErrors": in / 1_000_000, "ifHighSpeed": int64(10_000)}
	}
	type poll struct {
		sec    int
		uptime uint32
		in     uint64
		rate   bool
	}
	for name, polls := range map[string][]poll{
		"to an agent up for less time": {
			{0, 900_000_000, 5_000_000_000_000, false},
			{30, 900_003_000, 5_000_100_000_000, true},
			{60, 100_000_000, 7_000_000_000_000, false}, // the other member, up 11.6 days
			{90, 100_003_000, 7_000_100_000_000, true},
		},
		"to an agent up for longer": {
			{0, 100_000_000, 5_000_000_000_000, false},
			{30, 100_003_000, 5_000_100_000_000, true},
			{60, 900_000_000, 7_000_000_000_000, false}, // the other member, up 104 days
			{90, 900_003_000, 7_000_100_000_000, true},
		},
		"agent restarted alone": {
			{0, 900_000_000, 5_000_000_000_000, false},
			{30, 900_003_000, 5_000_100_000_000, true},
			{60, 2_000, 5_000_200_000_000, true}, // snmpd up 20 s, the host's counters on
			{90, 5_000, 5_000_300_000_000, true},
		},
	} {
		w := loneMetricsWorker()
		for i, p := range polls {
			m := telemetry.Metric{V: 1, Measurement: "snmp_interface", Device: "edge1",
				Tags: map[string]string{"ifName": "Et1", "ifIndex": "1"}, Fields: tenG(p.in),
				Counters: []string{"ifHCInOctets", "ifInErrors"}, Counters64: []string{"ifHCInOctets"},
				Time: casesT0.Add(time.Duration(p.sec) * time.Second), Uptime: p.uptime, Source: "snmp"}
			f, evs := enrichAt(t, w, m, int64(i))
			for _, k := range []string{"ifHCInOctets_rate", "in_octets_rate", "in_utilization_pct", "ifInErrors_rate", "in_errors_rate"} {
				if r, ok := f[k]; ok != p.rate {
					t.Errorf("%s, poll %d (sysUpTime %d, ifHCInOctets %d): %s %v (%v), want one: %v", name, i, p.uptime, p.in, k, r, ok, p.rate)
				}
			}
			// The agent that restarted alone did restart: device_rebooted.
			rebooted := name == "agent restarted alone" && i == 2
			if got := len(evs) == 1 && evs[0].Type == "device_rebooted"; got != rebooted || len(evs) > 1 {
				t.Errorf("%s, poll %d: events %+v, want device_rebooted %v", name, i, evs, rebooted)
			}
		}
	}
}
