package enrich

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/weirnet/weir/broker"
	"github.com/weirnet/weir/broker/embedded"
	"github.com/weirnet/weir/telemetry"
)

// TestRedoLeavesOutWhatItLeftOut: a record read again (its partition
// handed to another worker of the process before its commit, or its
// aborted transaction taken by another) gives the events its first
// reading gave, and not those it left out: %LINK and %LINEPROTO of one
// link going down are one event, also when both are read twice. The
// first reading's events may be in the log already, where the embedded
// log's src_offset skip drops them; a repeat it left out has no output
// there to skip by.
func TestRedoLeavesOutWhatItLeftOut(t *testing.T) {
	d := newDetector(30*time.Second, 5, 10*time.Minute)
	t0 := time.Date(2026, 12, 6, 10, 0, 0, 0, time.UTC)
	ev := func(off int64, typ, obj string) telemetry.Event {
		return telemetry.Event{Type: typ, Device: "edge1", Object: obj, Cause: telemetry.Cause{Topic: "raw.syslog", Partition: 1, Offset: off}}
	}
	lines := []telemetry.Event{
		ev(10, "interface_down", "GigabitEthernet0/1"), // %LINK
		ev(11, "interface_down", "Gi0/1"),              // %LINEPROTO: the same change
		ev(12, "bgp_peer_up", "192.0.2.1"),
		ev(13, "bgp_peer_up", "192.0.2.1"), // reported up again
	}
	read := func() (got []int64) {
		for i, e := range lines {
			for _, out := range d.observe(e, t0.Add(time.Duration(i)*time.Second)) {
				got = append(got, out.Cause.Offset)
			}
		}
		return got
	}
	first := read()
	if want := []int64{10, 12}; !slices.Equal(first, want) {
		t.Fatalf("first reading published the events of %v, want %v", first, want)
	}
	if again := read(); !slices.Equal(again, first) {
		t.Errorf("read again, published the events of %v, want %v as the first time", again, first)
	}
}

// lostCommits is a log whose consumers' commits are lost, as one is when
// a rebalance takes the partition before it.
type lostCommits struct{ *embedded.Broker }

func (b lostCommits) Consume(ctx context.Context, group string, topics []string, opts ...broker.ConsumerOption) (broker.Consumer, error) {
	c, err := b.Broker.Consume(ctx, group, topics, opts...)
	if err != nil {
		return nil, err
	}
	return commitLost{c, c.(broker.Positioner)}, nil
}

type commitLost struct {
	broker.Consumer
	broker.Positioner
}

func (commitLost) Commit(context.Context) error { return nil }

// TestHandOverPublishesNoRepeat: on the embedded log, a worker publishes
// the events of a batch and loses the partition before its commit; the
// worker of the process that takes it over enriches the batch again. The
// link going down, logged by %LINK and %LINEPROTO, is one event in the
// events topic, not two: the src_offset skip drops what the first worker
// published, and the %LINEPROTO line's repeat, which it left out, is left
// out again.
func TestHandOverPublishesNoRepeat(t *testing.T) {
	b, inv := openLog(t)
	rules := NewEventRules(DefaultDedupWindow, DefaultFlapThreshold, DefaultFlapWindow)
	produceLine(t, b, "%LINK-3-UPDOWN: Interface GigabitEthernet0/1, changed state to down")
	produceLine(t, b, "%LINEPROTO-5-UPDOWN: Line protocol on Interface GigabitEthernet0/1, changed state to down")
	run := func(w *Worker, until func() bool, what string) {
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan error, 1)
		go func() { done <- w.Run(ctx) }()
		waitUntil(t, what, until)
		cancel()
		if err := <-done; err != nil {
			t.Fatal(err)
		}
	}
	first := NewWorker(lostCommits{b}, inv, NewClassifier(), WithSharedEventRules(rules), WithMemberID("enrich-0"))
	run(first, func() bool {
		return countRecords(t, b, telemetry.TopicEnrichedSyslog) == 2 && countRecords(t, b, telemetry.TopicEvents) == 1
	}, "the first worker's outputs")
	if n := committedInput(b, telemetry.TopicRawSyslog); n != 0 {
		t.Fatalf("%d records committed; the first worker's commit was to be lost", n)
	}
	second := NewWorker(b, inv, NewClassifier(), WithSharedEventRules(rules), WithMemberID("enrich-1"))
	run(second, func() bool { return committedInput(b, telemetry.TopicRawSyslog) == 2 }, "the second worker's commit")
	if n := countRecords(t, b, telemetry.TopicEnrichedSyslog); n != 2 {
		t.Errorf("%d enriched records of 2 lines", n)
	}
	var got []string
	for _, r := range readTopic(t, b, telemetry.TopicEvents) {
		got = append(got, string(r.Value))
	}
	if len(got) != 1 {
		t.Errorf("%d events of one link going down:\n%s", len(got), strings.Join(got, "\n"))
	}
}

// TestAbortedBatchTakenOverPublishesNoRepeat: on a Kafka cluster, a
// worker's transaction is aborted by a rebalance and another worker of
// the process (with no replay of the first one's outputs) enriches the
// batch again. Its committed transaction holds the link going down once.
func TestAbortedBatchTakenOverPublishesNoRepeat(t *testing.T) {
	var recs []broker.Record
	for i, msg := range []string{
		"%LINK-3-UPDOWN: Interface GigabitEthernet0/1, changed state to down",
		"%LINEPROTO-5-UPDOWN: Line protocol on Interface GigabitEthernet0/1, changed state to down",
	} {
		l := telemetry.Log{V: 1, Device: "edge1", SourceAddr: "10.1.2.3:514", Facility: 23, Severity: 3, Message: msg, ReceivedAt: time.Now()}
		recs = append(recs, broker.Record{Topic: telemetry.TopicRawSyslog, Offset: int64(i), Key: []byte(l.Device), Value: l.AppendJSON(nil)})
	}
	b, inv := openLog(t)
	if err := b.CreateTopic(context.Background(), telemetry.TopicRawSyslog, broker.TopicConfig{Partitions: 2}); err != nil {
		t.Fatal(err)
	}
	rules := NewEventRules(DefaultDedupWindow, DefaultFlapThreshold, DefaultFlapWindow)
	run := func(c *scriptedTxnConsumer) {
		w := NewWorker(&oneConsumerBroker{b, c}, inv, NewClassifier(), WithSharedEventRules(rules))
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan struct{})
		go func() { w.Run(ctx); close(done) }()
		waitUntil(t, "the script's end", func() bool {
			c.mu.Lock()
			defer c.mu.Unlock()
			return len(c.polls) == 0 && len(c.attempts) == 1
		})
		cancel()
		<-done
	}
	aborted := &scriptedTxnConsumer{polls: [][]broker.Record{recs}, commits: []bool{false}, done: make(chan struct{})}
	run(aborted)
	if n := len(aborted.attempts[0][telemetry.TopicEvents]); n != 1 {
		t.Fatalf("the aborted transaction held %d events, want 1", n)
	}
	taker := &scriptedTxnConsumer{polls: [][]broker.Record{recs}, done: make(chan struct{})}
	run(taker)
	if len(taker.committed) != 1 {
		t.Fatalf("%d transactions committed, want 1", len(taker.committed))
	}
	if evs := taker.committed[0][telemetry.TopicEvents]; len(evs) != 1 {
		t.Errorf("the committed transaction holds %d events of one link going down:\n%s", len(evs), strings.Join(evs, "\n"))
	}
}

// TestLeftOutIsBounded: a partition keeps the last maxLeftOut events left
// out at most, forgetting the oldest half past it, and forgets them all
// when its offsets start over (the topic deleted and made again: a record
// below the position read, appended after the last one read).
func TestLeftOutIsBounded(t *testing.T) {
	d := newDetector(DefaultDedupWindow, DefaultFlapThreshold, DefaultFlapWindow)
	ev := func(off int64) telemetry.Event {
		return telemetry.Event{Type: "interface_down", Device: "edge1", Object: "Gi0/1", Cause: telemetry.Cause{Topic: "raw.syslog", Offset: off}}
	}
	for off := range int64(maxLeftOut + 1) {
		d.noteLeftOut(ev(off), "gi0/1")
	}
	l := d.leftOut[broker.TopicPartition{Topic: "raw.syslog"}]
	if n := len(l.offsets); n != maxLeftOut/2+1 {
		t.Errorf("%d events kept, want %d", n, maxLeftOut/2+1)
	}
	if d.leftOutBefore(ev(maxLeftOut/2-1), "gi0/1") || !d.leftOutBefore(ev(maxLeftOut/2), "gi0/1") || !d.leftOutBefore(ev(maxLeftOut), "gi0/1") {
		t.Error("not the newest half kept")
	}
	if other := ev(maxLeftOut); d.leftOutBefore(telemetry.Event{Type: "interface_up", Device: other.Device, Object: other.Object, Cause: other.Cause}, "gi0/1") {
		t.Error("another event of the record taken for the one left out")
	}
	t0 := time.Date(2026, 12, 6, 10, 0, 0, 0, time.UTC)
	if d.beginRecord(ev(maxLeftOut).Cause, t0) {
		t.Fatal("a record read the first time taken for a redo")
	}
	if d.beginRecord(ev(3).Cause, t0.Add(time.Minute)) {
		t.Fatal("the first record of a topic made again taken for a redo")
	}
	if len(l.offsets) != 0 || d.leftOutBefore(ev(maxLeftOut), "gi0/1") {
		t.Errorf("offsets started over: %d events kept, want 0", len(l.offsets))
	}
}

// TestLeftOutNotedOutOfOrder: two workers of the process read a partition
// at once (the one handing it over finishes its batch while the one taking
// it reads on): the first notes what it left out of record 11 after the
// second noted record 12's, as beginRecord and observeInto lock apart. That
// is no start over: read again (their batches aborted, a third takes
// them), both records leave out what they left out.
func TestLeftOutNotedOutOfOrder(t *testing.T) {
	d := newDetector(DefaultDedupWindow, DefaultFlapThreshold, DefaultFlapWindow)
	t0 := time.Date(2026, 12, 6, 10, 0, 0, 0, time.UTC)
	ev := func(off int64, typ, obj string) telemetry.Event {
		return telemetry.Event{Type: typ, Device: "edge1", Object: obj, Cause: telemetry.Cause{Topic: "raw.syslog", Partition: 1, Offset: off}}
	}
	lines := []telemetry.Event{
		ev(9, "bgp_peer_up", "192.0.2.1"),
		ev(10, "interface_down", "GigabitEthernet0/1"),
		ev(11, "interface_down", "Gi0/1"),  // %LINEPROTO: the same change
		ev(12, "bgp_peer_up", "192.0.2.1"), // reported up again
	}
	at := func(e telemetry.Event) time.Time { return t0.Add(time.Duration(e.Cause.Offset) * time.Second) }
	for _, e := range lines[:2] {
		if len(d.observe(e, at(e))) != 1 {
			t.Fatalf("the change of %d left out", e.Cause.Offset)
		}
	}
	first := d.beginRecord(lines[2].Cause, at(lines[2]))  // the handing worker
	second := d.beginRecord(lines[3].Cause, at(lines[3])) // the taking one, read on
	if first || second {
		t.Fatal("records read the first time taken for redos")
	}
	if out := d.observeInto(lines[3], at(lines[3]), second, nil); len(out) != 0 {
		t.Fatalf("the repeat of 12 published: %v", out)
	}
	if out := d.observeInto(lines[2], at(lines[2]), first, nil); len(out) != 0 {
		t.Fatalf("the repeat of 11 published: %v", out)
	}
	for _, e := range lines[2:] {
		if out := d.observe(e, at(e)); len(out) != 0 {
			t.Errorf("read again, the repeat of %d published", e.Cause.Offset)
		}
	}
}

// TestLeftOutAfterReload: an inventory reloaded between two readings of a
// record may name its device otherwise; the event left out the first time
// is left out again.
func TestLeftOutAfterReload(t *testing.T) {
	d := newDetector(DefaultDedupWindow, DefaultFlapThreshold, DefaultFlapWindow)
	ev := telemetry.Event{Type: "bgp_peer_up", Device: "10.0.0.1", Object: "192.0.2.1", Cause: telemetry.Cause{Topic: "raw.syslog", Offset: 7}}
	d.noteLeftOut(ev, "192.0.2.1")
	ev.Device = "edge1"
	if !d.leftOutBefore(ev, "192.0.2.1") {
		t.Error("a device named otherwise at the redo: the event left out is published")
	}
}

// TestRecreatedTopicForgetsHandedRecords: a partition whose offsets
// started over (its topic deleted and made again) forgets which records'
// events a takeover moved, as it forgets what was left out: the new
// record at such an offset gives its events.
func TestRecreatedTopicForgetsHandedRecords(t *testing.T) {
	d := newDetector(DefaultDedupWindow, DefaultFlapThreshold, DefaultFlapWindow)
	t0 := time.Now()
	c := telemetry.Cause{Topic: telemetry.TopicRawSyslog, Partition: 0, Offset: 7}
	d.noteRead(c, t0, false)
	d.handed = map[origin]struct{}{{causePartition(c), 7}: {}}
	if !d.wasHandedOver(c) {
		t.Fatal("the handed record not known as such")
	}
	d.noteRead(telemetry.Cause{Topic: c.Topic, Partition: 0, Offset: 3}, t0.Add(time.Minute), false)
	if d.wasHandedOver(c) {
		t.Error("after the offsets started over, offset 7 is still taken for the record handed over")
	}
}
