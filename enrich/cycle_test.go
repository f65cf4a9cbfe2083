package enrich

import (
	"context"
	"testing"
	"time"

	"github.com/weirnet/weir/broker"
	"github.com/weirnet/weir/telemetry"
)

// TestCycleTakesTheEventsOver: on a Kafka cluster, where a batch's
// outputs are produced at its commit, a syslog batch holding link A's
// change and leaving out link B's line as the repeat of a trap, and a
// trap batch holding link B's change and leaving out link A's trap, each
// wait for the other. The second to wait takes link A's event into its
// own batch (and out of the other's, and of its replay memo) and commits
// without waiting; the first commits after it. A crash between the two
// commits then loses nothing: the trap batch committed both the change it
// left out and the one it holds.
func TestCycleTakesTheEventsOver(t *testing.T) {
	t0 := time.Date(2026, 12, 6, 14, 0, 0, 0, time.UTC)
	d, logs, traps := cycleWorkers([]broker.TopicPartition{logsP})

	report := func(tp broker.TopicPartition, off int64, link string) telemetry.Event {
		return linkDownAt(t0, tp, off, link)
	}
	// Line A (logs@5) and trap B (traps@2) first, then each one's other
	// report: trap A (traps@3) and line B (logs@6), left out; then lines
	// C (logs@7) and D (logs@8), and C's trap (traps@4), left out.
	for i, r := range []struct {
		ev   telemetry.Event
		want int
	}{{report(logsP, 5, "Gi0/1"), 1}, {report(trapsP, 2, "Gi0/2"), 1}, {report(trapsP, 3, "Gi0/1"), 0}, {report(logsP, 6, "Gi0/2"), 0},
		{report(logsP, 7, "Gi0/3"), 1}, {report(logsP, 8, "Gi0/4"), 1}, {report(trapsP, 4, "Gi0/3"), 0}} {
		if n := len(d.observe(r.ev, t0.Add(time.Duration(i)*time.Millisecond))); n != r.want {
			t.Fatalf("report %d: %d events, want %d", i, n, r.want)
		}
	}
	out := valueOut
	lineA, enrichedA, enrichedB := out(logsP, 5, "interface_down A"), out(logsP, 5, "line A"), out(logsP, 6, "line B")
	lineC, lineD := out(logsP, 7, "interface_down C"), out(logsP, 8, "interface_down D")
	logs.replay.put(&broker.Record{Partition: logsP.Partition, Offset: 5}, []outRecord{enrichedA}, []outRecord{lineA})
	logsBatch := []outBatch{{telemetry.TopicEnrichedSyslog, []outRecord{enrichedA, enrichedB}}, {telemetry.TopicEvents, []outRecord{lineA, lineC, lineD}}}
	trapsBatch := []outBatch{{telemetry.TopicEvents, []outRecord{out(trapsP, 2, "interface_down B")}}}

	// As deliver has them: the syslog batch waits first.
	logs.delivering = logsBatch
	logsDone := waitingIn(d, logs, []broker.TopicPartition{logsP})
	traps.delivering = trapsBatch
	if !awaitIn(t, d, traps, []broker.TopicPartition{trapsP}, time.Second) {
		t.Fatal("the trap batch's wait reported false")
	}
	traps.delivering = nil

	// Both events its traps left out repeats of, not D's.
	if d.tookOver != 2 {
		t.Errorf("%d events taken over, want 2", d.tookOver)
	}
	if len(traps.carry) != 1 || len(traps.carry[0].outs) != 2 || string(traps.carry[0].outs[0].rec.Value) != "interface_down A" ||
		string(traps.carry[0].outs[1].rec.Value) != "interface_down C" ||
		traps.carry[0].topic != telemetry.TopicEvents || traps.carry[0].outs[0].part != -1 {
		t.Fatalf("the trap batch took %+v, want lines A's and C's events, by key", traps.carry)
	}
	if got := logsBatch[1].outs; len(got) != 1 || string(got[0].rec.Value) != "interface_down D" {
		t.Fatalf("the syslog batch holds %d events, want D's alone", len(got))
	}
	if got := logsBatch[0].outs; len(got) != 2 {
		t.Fatalf("the syslog batch holds %d enriched records, want its 2", len(got))
	}
	if main, events, ok := logs.replay.get(&broker.Record{Partition: logsP.Partition, Offset: 5}, nil, nil); !ok || len(main) != 1 || len(events) != 0 {
		t.Fatalf("the syslog replay memo of line A: %d enriched, %d events (remembered %v), want 1 and none", len(main), len(events), ok)
	}
	// Another worker of the process that enriches line A again (the
	// syslog transaction aborted, the partition moved) leaves its event
	// out: the trap batch has it.
	if redone := d.observeInto(report(logsP, 5, "Gi0/1"), t0, true, nil); len(redone) != 0 {
		t.Fatalf("line A enriched again: %d events, want its event left with the trap batch", len(redone))
	}

	select {
	case <-logsDone:
		t.Fatal("the syslog batch committed before the trap batch it waits for")
	case <-time.After(50 * time.Millisecond):
	}
	d.delivered([]broker.TopicPartition{trapsP})
	select {
	case ok := <-logsDone:
		if !ok {
			t.Fatal("the syslog batch's wait reported false")
		}
	case <-time.After(time.Second):
		t.Fatal("the syslog batch still waits after the trap batch was delivered")
	}
}

// cycleWorkers is a detector with a syslog worker's and a trap worker's
// outputs, with transactions (replay memos) as on a Kafka cluster,
// owning logs and trapsP.
func cycleWorkers(logs []broker.TopicPartition) (*detector, *outputs, *outputs) {
	d := newDetector(DefaultDedupWindow, DefaultFlapThreshold, DefaultFlapWindow)
	lo := &outputs{input: logsP.Topic, events: telemetry.TopicEvents, replay: replay{on: true}}
	tr := &outputs{input: trapsP.Topic, events: telemetry.TopicEvents, replay: replay{on: true}}
	d.own(lo, logs)
	d.own(tr, []broker.TopicPartition{trapsP})
	return d, lo, tr
}

// linkDownAt is link's interface_down on edge1 at t0, reported by the
// input record at tp@off.
func linkDownAt(t0 time.Time, tp broker.TopicPartition, off int64, link string) telemetry.Event {
	return telemetry.Event{Type: "interface_down", Device: "edge1", Object: link, Time: t0,
		Cause: telemetry.Cause{Topic: tp.Topic, Partition: tp.Partition, Offset: off}}
}

// valueOut is an output, of value v, of the input record at tp@off.
func valueOut(tp broker.TopicPartition, off int64, v string) outRecord {
	return outRecord{broker.Record{Key: []byte("edge1"), Value: []byte(v)}, tp.Partition, off}
}

// waitingIn starts who's awaitOrigins over parts and returns once it
// waits; its result comes on the channel.
func waitingIn(d *detector, who *outputs, parts []broker.TopicPartition) <-chan bool {
	done := make(chan bool, 1)
	go func() { done <- d.awaitOrigins(context.Background(), who, parts) }()
	for waiting := false; !waiting; time.Sleep(time.Millisecond) {
		d.mu.Lock()
		waiting = d.waiting[who] != nil
		d.mu.Unlock()
	}
	return done
}
