package enrich

import (
	"fmt"
	"testing"
	"time"

	"github.com/weirnet/weir/telemetry"
)

// TestRebootAfterAPollWithoutSysUpTimeIsNoWrap: an agent that leaves
// sysUpTime out of one poll (the poller publishes its rows without an
// uptime) and reboots before the next. device_rebooted compares the
// next poll's sysUpTime with the last good one and is raised; the
// counters compared it with the poll without one, which told nothing,
// and read ifInOctets going from 3.2 GB to 1 MB as a 32-bit wrap of
// 1.1 GB: in_octets_rate 36.5 MB/s, 29% of a 1 Gbit/s port that carried
// 3.3 MB/s, in the very record that said the device rebooted. The last
// sysUpTime read stays the counters' until another comes; a real wrap
// after a poll without sysUpTime keeps its rate.
func TestRebootAfterAPollWithoutSysUpTimeIsNoWrap(t *testing.T) {
	oneG := map[string]any{"ifSpeed": int64(1_000_000_000)}
	type poll struct {
		uptime   uint32 // 0: none in this poll
		value    uint64
		rate     float64 // -1: none
		rebooted bool
	}
	for name, polls := range map[string][]poll{
		"reboot": {
			{100_000_000, 3_000_000_000, -1, false},
			{100_003_000, 3_100_000_000, 100_000_000.0 / 30, false},
			{0, 3_200_000_000, 100_000_000.0 / 30, false}, // no sysUpTime
			{1_500, 1_000_000, -1, true},                  // up 15 s: rebooted
			{4_500, 101_000_000, 100_000_000.0 / 30, false},
		},
		"wrap": {
			{100_000_000, 4_000_000_000, -1, false},
			{100_003_000, 4_100_000_000, 100_000_000.0 / 30, false},
			{0, 4_200_000_000, 100_000_000.0 / 30, false}, // no sysUpTime
			{100_009_000, 5_032_704, 100_000_000.0 / 30, false},
		},
	} {
		w := loneMetricsWorker()
		for i, p := range polls {
			m := octetsRow(i, 30*time.Second, p.value, oneG)
			m.Uptime = p.uptime
			f, evs := enrichAt(t, w, m, int64(i))
			what := fmt.Sprintf("%s, poll %d (sysUpTime %d, ifInOctets %d)", name, i, p.uptime, p.value)
			octetRates(t, f, what, p.rate >= 0, telemetry.RoundSignificant(p.rate, rateDigits))
			rebooted := len(evs) == 1 && evs[0].Type == "device_rebooted"
			if rebooted != p.rebooted || len(evs) > 1 {
				t.Errorf("%s: events %+v, want device_rebooted %v", what, evs, p.rebooted)
			}
		}
	}
}
