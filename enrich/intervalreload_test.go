package enrich

import (
	"testing"
	"time"

	"github.com/weirnet/weir/telemetry"
)

// TestRebootOnceAcrossAReloadThatShortensThePollInterval: a device polled
// every 15 minutes restarts a minute after a poll; its coldStart trap
// comes at once. Eleven minutes later a reload polls it every minute
// instead, and its first poll, 30 s on, sees sysUpTime 11.5 minutes: the
// same restart, one device_rebooted. The detector held the trap's boot time
// for twice the longest interval, but from the reload on by the new one
// (the flap window, 10 minutes), and forgot it before the poll that the
// old interval had it wait for: a second device_rebooted.
func TestRebootOnceAcrossAReloadThatShortensThePollInterval(t *testing.T) {
	rules := NewEventRules(DefaultDedupWindow, DefaultFlapThreshold, DefaultFlapWindow)
	targets := NewSNMPTargets([]SNMPTarget{{Name: "edge1", Host: "192.0.2.1", Interval: 15 * time.Minute}})
	NewMetricsWorker(nil, nil, WithSharedEventRules(rules), WithSNMPTargets(targets))
	d := rules.d
	t0 := time.Date(2026, 11, 29, 14, 0, 0, 0, time.UTC) // the last poll before the restart
	boot := t0.Add(time.Minute)
	var got []string
	observe := func(ev telemetry.Event, at time.Time) {
		for _, e := range d.observe(ev, at) {
			got = append(got, e.Type+" from "+e.Cause.Topic)
		}
	}
	trapAt := boot.Add(5 * time.Second)
	observe(telemetry.Event{Type: typeRebooted, Device: "edge1", Time: bootTime(trapAt, 500), Cause: telemetry.Cause{Topic: "raw.traps", Offset: 1}}, trapAt)
	reload, poll := t0.Add(12*time.Minute), t0.Add(12*time.Minute+30*time.Second)
	for now := trapAt; now.Before(poll); now = now.Add(time.Second) {
		if now.Equal(reload) {
			targets.Set([]SNMPTarget{{Name: "edge1", Host: "192.0.2.1", Interval: time.Minute}})
		}
		d.settle(now)
	}
	observe(telemetry.Event{Type: typeRebooted, Device: "edge1", Time: bootTime(poll, 69000), Cause: telemetry.Cause{Topic: "raw.snmp", Offset: 1}}, poll)
	if len(got) != 1 {
		t.Errorf("one restart, events %q", got)
	}
}
