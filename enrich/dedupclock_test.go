package enrich

import (
	"testing"
	"time"

	"github.com/weirnet/weir/broker"
	"github.com/weirnet/weir/telemetry"
)

// login is the login_succeeded event of the raw.syslog record at p/off.
func login(p int32, off int64) telemetry.Event {
	return telemetry.Event{Type: "login_succeeded", Device: "dev1", Object: "netops",
		Cause: telemetry.Cause{Topic: "raw.syslog", Partition: p, Offset: off}}
}

// TestDedupInABacklogWithAPartitionAhead: one worker catches up a backlog
// of two partitions that it reads at different log times (partition 0
// holds most of the records, so partition 3 is read minutes further into
// the log). A poll that returns only partition 3's records must not move
// the worker's clock past partition 0's position: settle would forget the
// de-duplication time of partition 0's objects, and their repeat within
// dedup_window is published. On a 3-broker kfake cluster, an uninterrupted
// weir published 197 login_succeeded/config_changed events of raw.syslog
// partition 0 within 30 s of the same event (device, object, type).
func TestDedupInABacklogWithAPartitionAhead(t *testing.T) {
	d := newDetector(30*time.Second, -1, time.Hour)
	wall := time.Now()
	t0 := wall.Add(-time.Hour)
	w := new(int)
	d.reportClock(w, []broker.Record{{Topic: "raw.syslog", Partition: 0, Offset: 1, Timestamp: t0}}, wall)
	if out := d.observe(login(0, 1), t0); len(out) != 1 {
		t.Fatalf("the first login: %v", out)
	}
	// A poll of partition 3 alone, ten minutes further into the log.
	d.reportClock(w, []broker.Record{{Topic: "raw.syslog", Partition: 3, Offset: 1, Timestamp: t0.Add(10 * time.Minute)}}, wall.Add(time.Second))
	d.settle(wall.Add(time.Second))
	// Partition 0 again: the same login 10 s later in the log.
	d.reportClock(w, []broker.Record{{Topic: "raw.syslog", Partition: 0, Offset: 2, Timestamp: t0.Add(10 * time.Second)}}, wall.Add(2*time.Second))
	if out := d.observe(login(0, 2), t0.Add(10*time.Second)); len(out) != 0 {
		t.Fatalf("a repeat 10 s after the first, within dedup_window, published: %v", out)
	}
}

// TestWarmupRebuildsDedupAsPublished: a partition taken over from another
// process is warmed up while the process's other worker, reading live,
// settles once a second on the wall clock. The warm-up must rebuild the
// de-duplication state the previous owner published by: logins at t0
// (published), t0+20s (a repeat), t0+31s (published); so a live one at
// t0+55s is a repeat of t0+31s. If settle forgets t0 midway through the
// warm-up, the warm-up takes t0+20s as published and t0+31s as its repeat,
// and publishes t0+55s; the previous owner's t0+31s is then followed by a
// second login 24 s later. With two processes on a 3-broker kfake cluster
// (kill -9, SIGTERM, restarts), weir left out 1,257 login_succeeded and
// config_changed events whose key's previous published event was more than
// dedup_window before them (and published 216 within it), in bursts in the
// seconds after each hand-over of raw.syslog partition 0.
func TestWarmupRebuildsDedupAsPublished(t *testing.T) {
	d := newDetector(30*time.Second, -1, time.Hour)
	wall := time.Now()
	t0 := wall.Add(-2 * time.Minute)
	warming, live := new(int), new(int)
	// Both workers have polled live records (the warming one: the first
	// record after the group's committed offset, at t0+55s).
	d.reportClock(warming, []broker.Record{{Topic: "raw.syslog", Partition: 0, Offset: 4, Timestamp: wall}}, wall)
	d.reportClock(live, nil, wall)
	since := wall.Add(-time.Hour)
	rememberAt(d, login(0, 1), t0, since)
	d.settle(wall) // the live worker's settle, midway through the warm-up
	rememberAt(d, login(0, 2), t0.Add(20*time.Second), since)
	rememberAt(d, login(0, 3), t0.Add(31*time.Second), since)
	if out := d.observe(login(0, 4), t0.Add(55*time.Second)); len(out) != 0 {
		t.Fatalf("a login 24 s after the one published at t0+31s published again after the warm-up: %v", out)
	}
}

// TestLongWarmupKeepsRebuiltDedup: a warm-up that takes longer than
// clockStale outlives the clock its worker reported at the poll before it;
// once it is over, the records after it are still judged by what it
// rebuilt, however soon another worker settles on the wall clock (a
// 3-broker kfake run: warm-ups of 10 s and more were each followed by
// every repeat of the 30 s before published).
func TestLongWarmupKeepsRebuiltDedup(t *testing.T) {
	for _, took := range []time.Duration{5 * time.Second, 11 * time.Second, time.Minute} {
		t.Run(took.String(), func(t *testing.T) { longWarmup(t, took, false) })
		// The warming worker's next poll is empty: on a Kafka cluster, a
		// rebalance aborted its batch (a helper's kfake run: all 75
		// repeats of the 30 s before a 10 s warm-up published again).
		t.Run(took.String()+"/empty poll", func(t *testing.T) { longWarmup(t, took, true) })
	}
}

func longWarmup(t *testing.T, took time.Duration, emptyPoll bool) {
	d := newDetector(30*time.Second, -1, time.Hour)
	wall := time.Now().Add(-took) // when the warm-up began
	t0 := wall.Add(-time.Hour)
	warming, live := new(int), new(int)
	// The poll before the warm-up: the first record after the commit, behind.
	liveAt := t0.Add(60 * time.Second)
	d.reportClock(warming, []broker.Record{{Topic: "raw.syslog", Partition: 0, Offset: 100, Timestamp: liveAt}}, wall)
	d.reportClock(live, nil, wall)
	rememberAt(d, login(0, 1), t0.Add(40*time.Second), t0.Add(-time.Hour)) // published by the previous owner
	d.endWarmup(warming, broker.TopicPartition{Topic: "raw.syslog", Partition: 0}, liveAt)
	if emptyPoll {
		d.reportClock(warming, nil, wall.Add(took))
	}
	d.reportClock(live, nil, wall.Add(took)) // the live worker polls on
	d.settle(wall.Add(took))                 // and settles, right after the warm-up
	if out := d.observe(login(0, 100), liveAt); len(out) != 0 {
		t.Errorf("a warm-up of %v: a login 20 s after the one published before it published again", took)
	}
}
