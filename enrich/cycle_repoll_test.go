package enrich

import (
	"testing"
	"time"

	"github.com/weirnet/weir/broker"
	"github.com/weirnet/weir/telemetry"
)

// TestCycleTakesOverAnEventNotPolledAgainYet: the syslog worker's
// transaction holding line A (raw.syslog/0) aborted, and its next poll
// brought raw.syslog/1 first (the records of an aborted batch need not
// come back in one poll: see replay): line A's event is in the replay
// memo, not in the batch being delivered. That batch left out line B as
// the repeat of trap B, whose trap batch left out trap A as the repeat of
// line A: a cycle. The trap batch, which finds it, must take line A's event
// (or wait for it); it must not leave it nowhere: neither with its
// own batch, nor in the syslog worker's replay memo, nor given again
// to a worker that enriches line A again.
func TestCycleTakesOverAnEventNotPolledAgainYet(t *testing.T) {
	t0 := time.Date(2026, 12, 6, 14, 0, 0, 0, time.UTC)
	logsQ := broker.TopicPartition{Topic: logsP.Topic, Partition: 1}
	d, logs, traps := cycleWorkers([]broker.TopicPartition{logsP, logsQ})

	report := func(tp broker.TopicPartition, off int64, link string) telemetry.Event {
		return linkDownAt(t0, tp, off, link)
	}
	for i, r := range []struct {
		ev   telemetry.Event
		want int
	}{{report(logsP, 5, "Gi0/1"), 1}, {report(trapsP, 2, "Gi0/2"), 1}, {report(trapsP, 3, "Gi0/1"), 0}, {report(logsQ, 6, "Gi0/2"), 0}} {
		if n := len(d.observe(r.ev, t0.Add(time.Duration(i)*time.Millisecond))); n != r.want {
			t.Fatalf("report %d: %d events, want %d", i, n, r.want)
		}
	}
	out := valueOut
	// Line A's transaction aborted: its outputs are remembered.
	logs.replay.put(&broker.Record{Partition: logsP.Partition, Offset: 5},
		[]outRecord{out(logsP, 5, "line A")}, []outRecord{out(logsP, 5, "interface_down A")})
	// The poll after it: line B alone, left out.
	logs.delivering = []outBatch{{telemetry.TopicEnrichedSyslog, []outRecord{out(logsQ, 6, "line B")}}, {telemetry.TopicEvents, nil}}
	logsDone := waitingIn(d, logs, []broker.TopicPartition{logsQ})
	traps.delivering = []outBatch{{telemetry.TopicEvents, []outRecord{out(trapsP, 2, "interface_down B")}}}
	if !awaitIn(t, d, traps, []broker.TopicPartition{trapsP}, time.Second) {
		t.Fatal("the trap batch's wait reported false")
	}
	traps.delivering = nil

	taken := 0
	for _, b := range traps.carry {
		for _, o := range b.outs {
			if string(o.rec.Value) == "interface_down A" {
				taken++
			}
		}
	}
	_, replayed, _ := logs.replay.get(&broker.Record{Partition: logsP.Partition, Offset: 5}, nil, nil)
	redone := d.observeInto(report(logsP, 5, "Gi0/1"), t0, true, nil)
	if n := taken + len(replayed); n != 1 {
		t.Fatalf("line A's event: %d taken by the trap batch, %d in the syslog replay memo (%d if enriched again); want it once",
			taken, len(replayed), len(redone))
	}
	if taken == 1 && len(redone) != 0 {
		t.Fatalf("line A's event taken by the trap batch, and given again when line A is enriched again")
	}
	d.delivered([]broker.TopicPartition{trapsP})
	select {
	case <-logsDone:
	case <-time.After(time.Second):
		t.Fatal("the syslog batch still waits after the trap batch was delivered")
	}
}

// TestHandedOverEventNotGivenAgainAfterAPartialRepoll: line A's event went
// with the trap batch (a cycle's takeover), which committed; the syslog
// transaction aborted and another syslog worker of the process took the
// partition. Its first poll brings the records before line A alone (an
// aborted batch need not come back in one poll), and it commits them.
// Line A, in its next poll, is still enriched again: its event must stay
// left out, as the trap batch published it.
func TestHandedOverEventNotGivenAgainAfterAPartialRepoll(t *testing.T) {
	t0 := time.Date(2026, 12, 6, 14, 0, 0, 0, time.UTC)
	d, logs, traps := cycleWorkers([]broker.TopicPartition{logsP})
	report := func(tp broker.TopicPartition, off int64, link string) telemetry.Event {
		return linkDownAt(t0, tp, off, link)
	}
	// Line X (logs@4), line A (logs@5), trap B (traps@2); trap A (traps@3)
	// and line B (logs@6) left out: a cycle.
	for i, r := range []struct {
		ev   telemetry.Event
		want int
	}{{report(logsP, 4, "Gi0/9"), 1}, {report(logsP, 5, "Gi0/1"), 1}, {report(trapsP, 2, "Gi0/2"), 1},
		{report(trapsP, 3, "Gi0/1"), 0}, {report(logsP, 6, "Gi0/2"), 0}} {
		if n := len(d.observe(r.ev, t0.Add(time.Duration(i)*time.Millisecond))); n != r.want {
			t.Fatalf("report %d: %d events, want %d", i, n, r.want)
		}
	}
	out := valueOut
	logs.delivering = []outBatch{{telemetry.TopicEvents, []outRecord{out(logsP, 4, "interface_down X"), out(logsP, 5, "interface_down A")}}}
	logsDone := waitingIn(d, logs, []broker.TopicPartition{logsP})
	traps.delivering = []outBatch{{telemetry.TopicEvents, []outRecord{out(trapsP, 2, "interface_down B")}}}
	if !awaitIn(t, d, traps, []broker.TopicPartition{trapsP}, time.Second) {
		t.Fatal("the trap batch's wait reported false")
	}
	if d.tookOver != 1 {
		t.Fatalf("%d events taken over, want line A's", d.tookOver)
	}
	d.delivered([]broker.TopicPartition{trapsP}) // committed, with line A's event
	<-logsDone
	// The syslog transaction aborts; another worker takes the partition.
	other := &outputs{input: logsP.Topic, events: telemetry.TopicEvents, replay: replay{on: true}}
	d.own(logs, nil)
	d.own(other, []broker.TopicPartition{logsP})
	if n := len(d.observe(report(logsP, 4, "Gi0/9"), t0)); n != 1 {
		t.Fatalf("line X enriched again: %d events, want its 1", n)
	}
	// Its first poll, line X alone, committed (as deliver tells it).
	d.delivered([]broker.TopicPartition{logsP})
	d.settleHanded(logsP.Topic, []inPos{{logsP.Partition, 4}})
	if evs := d.observe(report(logsP, 5, "Gi0/1"), t0.Add(time.Millisecond)); len(evs) != 0 {
		t.Fatalf("line A enriched again after a partial poll's commit: %d events, want none (the trap batch published it)", len(evs))
	}
	// Its commit settles line A's handover.
	d.delivered([]broker.TopicPartition{logsP})
	d.settleHanded(logsP.Topic, []inPos{{logsP.Partition, 6}})
	if len(d.handed) != 0 {
		t.Fatalf("%d records still handed over after their commit", len(d.handed))
	}
}
