package enrich

import (
	"testing"
	"time"

	"github.com/weirnet/weir/telemetry"
)

// TestWarmupOfALaggingPathFirstRaisesNoFlapping: Gi0/1 changes five
// times, 100 s apart (threshold 5: no flapping); syslog says each change,
// and a poll 50 s later (within twice the poll interval, past
// dedup_window) says it again. Live, each poll is the state already held:
// five changes. Warmed up with raw.snmp's partition read before
// raw.syslog's, each line is recorded before its poll's report of the
// same state. (They counted as ten changes: a flapping nobody had
// published, whose cleared event went out after the restart.)
func TestWarmupOfALaggingPathFirstRaisesNoFlapping(t *testing.T) {
	t0 := time.Date(2026, 11, 29, 14, 0, 0, 0, time.UTC)
	report := func(topic string, i int, lag time.Duration) (telemetry.Event, time.Time) {
		at := t0.Add(time.Duration(i)*100*time.Second + lag)
		return telemetry.Event{Type: [...]string{"interface_down", "interface_up"}[i%2], Device: "edge1", Object: "Gi0/1",
			Time: at, Cause: telemetry.Cause{Topic: topic, Offset: int64(i)}}, at
	}
	d := newDetector(DefaultDedupWindow, DefaultFlapThreshold, DefaultFlapWindow)
	since := t0.Add(450 * time.Second).Add(-DefaultFlapWindow)
	for i := range 5 {
		ev, at := report("raw.snmp", i, 50*time.Second)
		rememberAt(d, ev, at, since)
	}
	for i := range 5 {
		ev, at := report("raw.syslog", i, 0)
		rememberAt(d, ev, at, since)
	}
	if c := d.settle(t0.Add(time.Hour)); len(d.flapping) != 0 || len(c) != 0 {
		t.Errorf("five changes by two paths: cleared events %v after the warm-up, want none", c)
	}
}
