package enrich

import (
	"testing"
	"time"

	"github.com/weirnet/weir/broker"
	"github.com/weirnet/weir/telemetry"
)

// TestFlappingInABacklog: a worker catching up an hour of backlog reads 8
// changes of one interface, 30 s apart in the log, within a few seconds
// of wall time, settle running once a second. Windows are measured on
// the log's clock: that is one interface_flapping, not cleared (nor
// forgotten) while the worker is still an hour behind; once it has read
// all there is and the log's clock passes the window, it is cleared.
func TestFlappingInABacklog(t *testing.T) {
	d := newDetector(DefaultDedupWindow, DefaultFlapThreshold, DefaultFlapWindow)
	wall := time.Now()
	t0 := wall.Add(-time.Hour)
	worker := new(int)
	n := map[string]int{}
	count := func(evs []telemetry.Event) {
		for _, ev := range evs {
			n[ev.Type]++
		}
	}
	for i := range 8 {
		ev := change(t0, "raw.syslog", i)
		at := t0.Add(time.Duration(i) * 30 * time.Second)
		now := wall.Add(time.Duration(i) * time.Second)
		d.reportClock(worker, []broker.Record{{Topic: "raw.syslog", Offset: int64(i), Timestamp: at}}, now)
		count(d.observe(ev, at))
		count(d.settle(now))
	}
	if n["interface_flapping"] != 1 || n["interface_flapping_cleared"] != 0 {
		t.Fatalf("an hour behind: %v; want one interface_flapping, not cleared", n)
	}
	// Caught up: the log's clock is the wall clock, past the window.
	d.reportClock(worker, nil, wall.Add(10*time.Second))
	count(d.settle(wall.Add(10 * time.Second)))
	if n["interface_flapping_cleared"] != 1 {
		t.Fatalf("caught up: %v; want the flapping cleared", n)
	}
}

// TestLateReportOfAWorkerBehind: the trap worker reads 11 minutes behind
// (more than the time states are held) while the syslog worker is live.
// The linkDown trap of a change the syslog line already reported, and that
// was reported back up since, is a report of the past: not published, as
// the states it is judged by are kept while a worker reads behind them.
func TestLateReportOfAWorkerBehind(t *testing.T) {
	d := newDetector(DefaultDedupWindow, DefaultFlapThreshold, DefaultFlapWindow)
	t0 := time.Now().Add(-20 * time.Minute)
	down := telemetry.Event{Type: "interface_down", Device: "edge1", Object: "Gi0/1", Cause: telemetry.Cause{Topic: "raw.syslog", Offset: 1}}
	up := down
	up.Type, up.Cause.Offset = "interface_up", 2
	if len(d.observe(down, t0)) != 1 || len(d.observe(up, t0.Add(10*time.Second))) != 1 {
		t.Fatal("the syslog changes were not published")
	}
	syslog, traps := new(int), new(int)
	for s := 11; s <= 11*60; s++ {
		now := t0.Add(time.Duration(s) * time.Second)
		d.reportClock(syslog, nil, now) // live
		d.reportClock(traps, []broker.Record{{Topic: "raw.traps", Offset: 6, Timestamp: t0}}, now)
		d.settle(now)
	}
	trap := down
	trap.Cause = telemetry.Cause{Topic: "raw.traps", Offset: 7}
	if out := d.observe(trap, t0.Add(time.Second)); len(out) != 0 {
		t.Fatalf("the late trap of the down at t0+1s published %v after the up", out)
	}
}

// TestStoppedWorkerDoesNotHoldSettle: a worker that stopped reporting (its
// partitions taken by another process) holds settle back no longer than
// clockStale.
func TestStoppedWorkerDoesNotHoldSettle(t *testing.T) {
	d := newDetector(DefaultDedupWindow, DefaultFlapThreshold, DefaultFlapWindow)
	wall := time.Now()
	d.reportClock(new(int), []broker.Record{{Topic: "raw.syslog", Timestamp: wall.Add(-time.Hour)}}, wall)
	d.mu.Lock()
	defer d.mu.Unlock()
	if at := d.logNow(wall.Add(time.Second)); !at.Equal(wall.Add(-time.Hour)) {
		t.Fatalf("log clock %v, want the worker's, an hour back", at)
	}
	if at := d.logNow(wall.Add(clockStale + time.Second)); !at.Equal(wall.Add(clockStale + time.Second)) {
		t.Fatalf("log clock %v after the worker went quiet, want the wall clock", at)
	}
}
