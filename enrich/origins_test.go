package enrich

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/weirnet/weir/broker"
	"github.com/weirnet/weir/telemetry"
)

var (
	logsP  = broker.TopicPartition{Topic: telemetry.TopicRawSyslog, Partition: 0}
	trapsP = broker.TopicPartition{Topic: telemetry.TopicRawTraps, Partition: 0}
)

// report is an event of edge1's Gi0/1 from the record at offset off of
// tp.
func linkReport(typ string, tp broker.TopicPartition, off int64, at time.Time) telemetry.Event {
	return telemetry.Event{Type: typ, Device: "edge1", Object: "Gi0/1", Time: at,
		Cause: telemetry.Cause{Topic: tp.Topic, Partition: tp.Partition, Offset: off}}
}

// twoWorkers is a detector of whose input partitions logs owns logsP and
// traps trapsP.
func twoWorkers() (d *detector, logs, traps any) {
	logs, traps = &struct{ string }{"logs"}, &struct{ string }{"traps"}
	d = newDetector(DefaultDedupWindow, DefaultFlapThreshold, DefaultFlapWindow)
	d.own(logs, []broker.TopicPartition{logsP})
	d.own(traps, []broker.TopicPartition{trapsP})
	return d, logs, traps
}

// awaitIn runs d.awaitOrigins for who over assigned and returns what it
// reported, or fails t if it took longer than within.
func awaitIn(t *testing.T, d *detector, who any, assigned []broker.TopicPartition, within time.Duration) bool {
	t.Helper()
	start := time.Now()
	ok := d.awaitOrigins(context.Background(), who, assigned)
	if took := time.Since(start); took > within {
		t.Fatalf("awaitOrigins took %v, want at most %v", took, within)
	}
	return ok
}

// TestRepeatWaitsForItsOrigin: a trap left out as the repeat of a syslog
// line's change waits, before its commit, until the line's worker has
// delivered it; not once it has, nor for a change a warm-up read or its
// own partition reported.
func TestRepeatWaitsForItsOrigin(t *testing.T) {
	t0 := time.Date(2026, 12, 6, 14, 0, 0, 0, time.UTC)
	d, logs, traps := twoWorkers()
	if n := len(d.observe(linkReport("interface_down", logsP, 5, t0), t0)); n != 1 {
		t.Fatalf("the line: %d events", n)
	}
	if n := len(d.observe(linkReport("interface_down", trapsP, 2, t0), t0.Add(time.Second))); n != 0 {
		t.Fatalf("the trap: %d events, want its repeat left out", n)
	}
	done := make(chan bool)
	go func() { done <- d.awaitOrigins(context.Background(), traps, []broker.TopicPartition{trapsP}) }()
	select {
	case <-done:
		t.Fatal("the trap's batch did not wait for the line's")
	case <-time.After(100 * time.Millisecond):
	}
	d.delivered([]broker.TopicPartition{logsP})
	select {
	case ok := <-done:
		if !ok {
			t.Fatal("awaitOrigins reported ctx ended")
		}
	case <-time.After(time.Second):
		t.Fatal("the trap's batch still waits once the line's is delivered")
	}

	// The line's up, delivered; the trap's repeat does not wait.
	d.observe(linkReport("interface_up", logsP, 6, t0.Add(time.Minute)), t0.Add(time.Minute))
	d.delivered([]broker.TopicPartition{logsP})
	d.observe(linkReport("interface_up", trapsP, 3, t0.Add(time.Minute)), t0.Add(time.Minute+time.Second))
	awaitIn(t, d, traps, []broker.TopicPartition{trapsP}, 50*time.Millisecond)

	// The line's down again, and a repeat from its own partition.
	d.observe(linkReport("interface_down", logsP, 7, t0.Add(2*time.Minute)), t0.Add(2*time.Minute))
	d.observe(linkReport("interface_down", logsP, 8, t0.Add(2*time.Minute)), t0.Add(2*time.Minute+time.Second))
	awaitIn(t, d, logs, []broker.TopicPartition{logsP}, 50*time.Millisecond)

	// A restart's warm-up read a coldStart trap; the live restart line is
	// its repeat, and waits for nothing.
	d, logs, traps = twoWorkers()
	d.logsFrom(telemetry.TopicRawSyslog)
	boot := telemetry.Event{Type: typeRebooted, Device: "edge1", Time: t0, Cause: telemetry.Cause{Topic: trapsP.Topic, Offset: 9}}
	rememberAt(d, boot, t0.Add(20*time.Second), t0)
	line := telemetry.Event{Type: typeRebooted, Device: "edge1", Time: t0.Add(time.Minute), Cause: telemetry.Cause{Topic: logsP.Topic, Offset: 4}}
	if n := len(d.observe(line, t0.Add(time.Minute))); n != 0 {
		t.Fatalf("the restart line after the warm-up: %d events, want its repeat left out", n)
	}
	awaitIn(t, d, logs, []broker.TopicPartition{logsP}, 50*time.Millisecond)
}

// TestRepeatWaitsEndInACycle: on a Kafka cluster, where a batch is
// delivered by its commit, two workers' batches may each have left out a
// repeat of a change the other's reported. Neither waits for the other
// for good: the second to wait sees the cycle and commits.
func TestRepeatWaitsEndInACycle(t *testing.T) {
	t0 := time.Date(2026, 12, 6, 14, 0, 0, 0, time.UTC)
	d, logs, traps := twoWorkers()
	d.observe(gi(linkReport("interface_down", logsP, 1, t0), "Gi0/1"), t0)
	d.observe(gi(linkReport("interface_down", trapsP, 1, t0), "Gi0/2"), t0)
	d.observe(gi(linkReport("interface_down", trapsP, 2, t0), "Gi0/1"), t0.Add(time.Second))
	d.observe(gi(linkReport("interface_down", logsP, 2, t0), "Gi0/2"), t0.Add(time.Second))
	first := make(chan bool)
	go func() { first <- d.awaitOrigins(context.Background(), logs, []broker.TopicPartition{logsP}) }()
	waitUntil(t, "the first batch waiting", func() bool {
		d.mu.Lock()
		defer d.mu.Unlock()
		return len(d.waiting) == 1
	})
	if !awaitIn(t, d, traps, []broker.TopicPartition{trapsP}, time.Second) {
		t.Fatal("awaitOrigins reported ctx ended")
	}
	d.delivered([]broker.TopicPartition{trapsP}) // its commit
	select {
	case <-first:
	case <-time.After(time.Second):
		t.Fatal("the first batch still waits once the second is delivered")
	}
}

// TestRepeatOfAPartitionGoneWaitsForNothing: a partition taken by another
// process is enriched there again, afresh: its records judged here are
// not waited for.
func TestRepeatOfAPartitionGoneWaitsForNothing(t *testing.T) {
	t0 := time.Date(2026, 12, 6, 14, 0, 0, 0, time.UTC)
	d, logs, traps := twoWorkers()
	d.observe(linkReport("interface_down", logsP, 5, t0), t0)
	d.observe(linkReport("interface_down", trapsP, 2, t0), t0.Add(time.Second))
	d.own(logs, nil) // the rebalance took it
	awaitIn(t, d, traps, []broker.TopicPartition{trapsP}, 50*time.Millisecond)
}

// TestRepeatOfAPartitionTakenWhileWaiting: the partition of the change a
// batch waits for is taken away while it waits (a rebalance gives it to
// another process, which judges its records afresh): the batch stops
// waiting then, not when another batch of the process happens to be
// delivered or originWait has passed.
func TestRepeatOfAPartitionTakenWhileWaiting(t *testing.T) {
	t0 := time.Date(2026, 12, 6, 14, 0, 0, 0, time.UTC)
	d, logs, traps := twoWorkers()
	d.observe(linkReport("interface_down", logsP, 5, t0), t0)
	d.observe(linkReport("interface_down", trapsP, 2, t0), t0.Add(time.Second))
	done := make(chan bool)
	go func() { done <- d.awaitOrigins(context.Background(), traps, []broker.TopicPartition{trapsP}) }()
	waitUntil(t, "the trap's batch waiting", func() bool {
		d.mu.Lock()
		defer d.mu.Unlock()
		return len(d.waiting) == 1
	})
	d.own(logs, nil) // the rebalance took it
	select {
	case <-done:
	case <-time.After(time.Second):
		t.Fatal("the trap's batch still waits for a partition no worker of the process owns")
	}
}

// assignedConsumer is a consumer of the embedded log's kind for deliver:
// its assignment is what the group gave it last, which a rebalance
// changes before the member lets go of (or gets) the partitions.
type assignedConsumer struct{ assigned []broker.TopicPartition }

func (c *assignedConsumer) Poll(ctx context.Context) ([]broker.Record, error) {
	<-ctx.Done()
	return nil, ctx.Err()
}
func (c *assignedConsumer) Commit(context.Context) error      { return nil }
func (c *assignedConsumer) Assigned() []broker.TopicPartition { return c.assigned }
func (c *assignedConsumer) Close() error                      { return nil }

// polledFrom is a poll's records of tp at offsets.
func polledFrom(tp broker.TopicPartition, offsets ...int64) []broker.Record {
	var recs []broker.Record
	for _, off := range offsets {
		recs = append(recs, broker.Record{Topic: tp.Topic, Partition: tp.Partition, Offset: off})
	}
	return recs
}

// TestDeliverTellsThePartitionsItPolled: on the embedded log, a
// consumer's assignment is the group's latest, which a rebalance changes
// before the records polled are published and committed. A worker's
// delivery is of the records it polled: it does not say another worker's
// records of a partition just given to it (still being published by the
// worker handing it over) are delivered, and its batch waits for the
// changes its records of a partition just taken from it left out, before
// its commit lets the partition go to a worker that reads them again
// (which, left out before, leaves them out again without waiting).
func TestDeliverTellsThePartitionsItPolled(t *testing.T) {
	t0 := time.Date(2026, 12, 6, 14, 0, 0, 0, time.UTC)
	logs1P := broker.TopicPartition{Topic: telemetry.TopicRawSyslog, Partition: 1}
	b := partitionedLog(t, 2, telemetry.TopicRawSyslog, telemetry.TopicEvents)
	ctx := context.Background()
	d := newDetector(DefaultDedupWindow, DefaultFlapThreshold, DefaultFlapWindow)
	newWorker := func() (*outputs, *assignedConsumer, *member) {
		o := alignedOutputs(t, b, telemetry.TopicRawSyslog, telemetry.TopicEvents)
		o.origins = d
		c := &assignedConsumer{}
		return o, c, &member{c: c}
	}

	// Worker 1 judged a line of partition 0 and is publishing it, when
	// the group gives partition 0 to worker 2, which delivers a batch of
	// partition 1.
	o1, c1, _ := newWorker()
	c1.assigned = []broker.TopicPartition{logsP}
	o1.track(ctx, c1.assigned, polledFrom(logsP, 5))
	d.observe(linkReport("interface_down", logsP, 5, t0), t0)
	o2, c2, m2 := newWorker()
	c2.assigned = []broker.TopicPartition{logsP, logs1P}
	o2.track(ctx, c2.assigned, polledFrom(logs1P, 0))
	if !o2.deliver(ctx, m2) {
		t.Fatal("deliver reported ctx ended")
	}
	d.mu.Lock()
	early := !d.undelivered(origin{logsP, 5})
	d.mu.Unlock()
	if early {
		t.Error("worker 2's delivery said worker 1's line, not published yet, was delivered")
	}

	// Worker 2's batch of partition 1 left out (as a repeat) a trap's
	// change not delivered yet; the group takes partition 1 from it
	// before its delivery.
	traps := &struct{ string }{"traps"}
	d.own(traps, []broker.TopicPartition{trapsP})
	if n := len(d.observe(linkReport("interface_up", trapsP, 2, t0.Add(time.Minute)), t0.Add(time.Minute))); n != 1 {
		t.Fatalf("the trap: %d events", n)
	}
	o2.track(ctx, c2.assigned, polledFrom(logs1P, 1))
	if n := len(d.observe(linkReport("interface_up", logs1P, 1, t0.Add(time.Minute)), t0.Add(time.Minute+time.Second))); n != 0 {
		t.Fatalf("the line: %d events, want its repeat left out", n)
	}
	c2.assigned = []broker.TopicPartition{logsP}
	done := make(chan bool)
	go func() { done <- o2.deliver(ctx, m2) }()
	select {
	case <-done:
		t.Fatal("a batch of a partition taken away did not wait for the trap's change it left out")
	case <-time.After(200 * time.Millisecond):
	}
	d.delivered([]broker.TopicPartition{trapsP})
	select {
	case <-done:
	case <-time.After(time.Second):
		t.Fatal("the batch still waits once the trap is delivered")
	}
}

// TestRepeatWaitsTimingOutLogOnce: while a worker is stalled publishing
// (a full disk), every batch waiting for its changes times out; the
// warning comes once an interval, with the count, not once a batch.
func TestRepeatWaitsTimingOutLogOnce(t *testing.T) {
	t0 := time.Date(2026, 12, 6, 14, 0, 0, 0, time.UTC)
	var out bytes.Buffer
	d, _, traps := twoWorkers()
	d.logger, d.originWaitFor = slog.New(slog.NewTextHandler(&out, nil)), 10*time.Millisecond
	for i := range 3 {
		at := t0.Add(time.Duration(i) * time.Minute)
		d.observe(gi(linkReport("interface_down", logsP, int64(i), at), fmt.Sprint("Gi0/", i)), at)
		d.observe(gi(linkReport("interface_down", trapsP, int64(i), at), fmt.Sprint("Gi0/", i)), at.Add(time.Second))
		if !d.awaitOrigins(context.Background(), traps, []broker.TopicPartition{trapsP}) {
			t.Fatal("awaitOrigins reported ctx ended")
		}
	}
	if n := strings.Count(out.String(), "committing a batch before"); n != 1 {
		t.Errorf("%d warnings for 3 waits timing out, want 1:\n%s", n, out.String())
	}
}

// gi is ev about object.
func gi(ev telemetry.Event, object string) telemetry.Event {
	ev.Object = object
	return ev
}
