package enrich

import (
	"testing"
	"time"

	"github.com/weirnet/weir/telemetry"
)

// TestReachBackKeepsTheWindowsStateStampedAhead: core9's poller stamps its
// polls by a clock 5 minutes ahead of weir's. Its polls fail for 80
// minutes and weir restarts: the warm-up's window, failed polls alone, is
// stamped ahead, and the reach back's answered poll of before the outage
// (not ahead) took its place as core9's reachability (newer lets an older
// sample replace one stamped ahead), so the next failed poll raised
// device_unreachable a second time. A worker that ran all along raises it
// once.
func TestReachBackKeepsTheWindowsStateStampedAhead(t *testing.T) {
	for _, restart := range []bool{false, true} {
		f := newLinkRestart(t)
		// The 80th minute is 5 minutes ahead of now.
		start := time.Now().Add(-75 * time.Minute).Truncate(time.Second)
		f.produce(telemetry.TopicRawSNMP, f.answered(start, 1, 100*24*3600*100)...)
		n := 2
		failed := func(from, to int) { n += f.failedPolls(start, from, to) }
		failed(1, 80)
		stop := startRunner(NewMetricsWorker(f.b, f.inv, f.before()...))
		waitCommitted(t, f.b, telemetry.TopicRawSNMP, n)
		if restart {
			stop()
			stop = startRunner(NewMetricsWorker(f.b, f.inv, f.before()...))
		}
		failed(81, 89)
		waitCommitted(t, f.b, telemetry.TopicRawSNMP, n)
		stop()
		f.check(map[bool]string{false: "ran all along", true: "restarted 80 minutes in"}[restart], false,
			"device_unreachable core9  from raw.snmp")
	}
}
