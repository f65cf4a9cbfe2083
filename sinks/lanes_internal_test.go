package sinks

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/weirnet/weir/broker"
	"github.com/weirnet/weir/configs"
	"github.com/weirnet/weir/internal/peers"
)

// okLanes is a raw Concurrent destination taking everything.
type okLanes struct{}

func (okLanes) Lanes() int                                   { return 4 }
func (okLanes) RawRecords() bool                             { return true }
func (okLanes) Write(context.Context, []Item) error          { return nil }
func (okLanes) WriteLane(context.Context, int, []Item) error { return nil }
func (okLanes) Close() error                                 { return nil }

// movedConsumer owns partition 0 of "t" alone, but its first poll also
// returns records of partition 1, polled as a rebalance took that
// partition away; later polls return one record of partition 0 each. It
// notes the offsets of each commit.
type movedConsumer struct {
	polls   int
	mu      sync.Mutex
	commits []map[broker.TopicPartition]int64
}

func (c *movedConsumer) Poll(ctx context.Context) ([]broker.Record, error) {
	c.polls++
	if c.polls == 1 {
		return []broker.Record{
			{Topic: "t", Partition: 1, Offset: 7, Key: []byte("a"), Value: []byte("{}")},
			{Topic: "t", Partition: 1, Offset: 8, Key: []byte("b"), Value: []byte("{}")},
			{Topic: "t", Partition: 0, Offset: 0, Key: []byte("a"), Value: []byte("{}")},
		}, nil
	}
	select {
	case <-ctx.Done():
		return nil, ctx.Err()
	case <-time.After(time.Millisecond):
	}
	return []broker.Record{{Topic: "t", Partition: 0, Offset: int64(c.polls - 1), Key: []byte("c"), Value: []byte("{}")}}, nil
}

func (c *movedConsumer) CommitOffsets(ctx context.Context, offs map[broker.TopicPartition]int64) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.commits = append(c.commits, maps.Clone(offs))
	return nil
}

func (c *movedConsumer) Commit(context.Context) error { return nil }
func (c *movedConsumer) Close() error                 { return nil }
func (c *movedConsumer) Assigned() []broker.TopicPartition {
	return []broker.TopicPartition{{Topic: "t", Partition: 0}}
}

// TestFlightForgetsAPartitionPolledAfterItWentAway: records of a
// partition polled as a rebalance took it away are delivered or dropped,
// and the partition is forgotten: it was kept, and committed, for the
// life of the sink.
func TestFlightForgetsAPartitionPolledAfterItWentAway(t *testing.T) {
	s, err := New(nil, configs.Sink{Name: "moved", FlushInterval: configs.Duration(5 * time.Millisecond)}, okLanes{})
	if err != nil {
		t.Fatal(err)
	}
	c := &movedConsumer{}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- s.consumeLanes(ctx, c) }()
	defer func() { cancel(); <-done }()
	p1 := broker.TopicPartition{Topic: "t", Partition: 1}
	var last map[broker.TopicPartition]int64
	peers.Within(t, time.Minute, "partition 1 no longer committed once done", func() bool {
		c.mu.Lock()
		defer c.mu.Unlock()
		if n := len(c.commits); n > 0 {
			last = c.commits[n-1]
		}
		_, moved := last[p1]
		return last[broker.TopicPartition{Topic: "t"}] > 1 && !moved
	})
}

// heldLanes is a Concurrent destination whose writes wait for the end of
// their context.
type heldLanes struct{ okLanes }

func (heldLanes) WriteLane(ctx context.Context, _ int, items []Item) error {
	<-ctx.Done()
	return &PartialError{Done: 0, Err: ctx.Err()}
}

// TestHandDoesNotAllocate: queueing a record of a key already queued (or
// written) allocates nothing, with a key or without one.
func TestHandDoesNotAllocate(t *testing.T) {
	s, err := New(nil, configs.Sink{Name: "allocs", BatchSize: 1000}, heldLanes{})
	if err != nil {
		t.Fatal(err)
	}
	l := s.startLanes(context.Background(), heldLanes{})
	defer l.halt()
	// A key longer than the 32 bytes a string converted on the stack has.
	for _, key := range []string{"core-router-17.fra1.example.net/Ethernet1/1", ""} {
		it := Item{Record: broker.Record{Topic: "t", Partition: 2, Key: []byte(key), Value: []byte("{}")}}
		// The key's first record (taken by a lane, held), and room
		// made for the rest.
		for range 300 {
			if !l.enqueue(&it) {
				t.Fatal("no room")
			}
		}
		if n := testing.AllocsPerRun(200, func() { l.enqueue(&it) }); n != 0 {
			t.Errorf("key %q: %v allocations a record queued", key, n)
		}
	}
}

// TestKeysDroppedWhenDone: once every record is delivered, no key is
// kept (a sink sees new devices all its life), and what is kept for
// reuse is bounded.
func TestKeysDroppedWhenDone(t *testing.T) {
	s, err := New(nil, configs.Sink{Name: "keys", BatchSize: 10}, okLanes{})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	l := s.startLanes(ctx, okLanes{})
	defer l.halt()
	for i := range 5000 {
		r := broker.Record{Topic: "t", Offset: int64(i), Key: fmt.Appendf(nil, "edge%d", i%1000), Value: []byte("{}")}
		if i%7 == 0 {
			r.Key = nil // by partition
		}
		l.admit(&r, admitHand)
		if err := l.hand(ctx, &Item{Record: r}, func() {}); err != nil {
			t.Fatal(err)
		}
	}
	allDone := func() bool {
		l.mu.Lock()
		defer l.mu.Unlock()
		return l.flight.pending == 0
	}
	if err := l.wait(ctx, allDone, func() {}); err != nil {
		t.Fatal(err)
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if len(l.keys) != 0 || l.queued != 0 {
		t.Errorf("%d keys and %d records kept once all is delivered", len(l.keys), l.queued)
	}
	if len(l.free) > keepKeys {
		t.Errorf("%d keys kept for reuse, want at most %d", len(l.free), keepKeys)
	}
}

// rereadConsumer owns partition 0 of "t" alone; its second poll reads
// the partition again from offset 0 (it went to another member and came
// back between polls) and one record more. It notes the offsets of each
// commit.
type rereadConsumer struct {
	movedConsumer
}

func (c *rereadConsumer) Poll(ctx context.Context) ([]broker.Record, error) {
	c.polls++
	rec := func(off int64, key string) broker.Record {
		return broker.Record{Topic: "t", Partition: 0, Offset: off, Key: []byte(key), Value: []byte("{}")}
	}
	switch c.polls {
	case 1:
		return []broker.Record{rec(0, "stuck"), rec(1, "x")}, nil
	case 2:
		return []broker.Record{rec(0, "stuck"), rec(1, "x"), rec(2, "y")}, nil
	}
	<-ctx.Done()
	return nil, ctx.Err()
}

// stuckLanes is a Concurrent destination holding the writes of key
// "stuck" until release is closed, noting the keys it took in order.
type stuckLanes struct {
	okLanes
	release chan struct{}
	mu      sync.Mutex
	took    []string
}

func (d *stuckLanes) WriteLane(ctx context.Context, _ int, items []Item) error {
	for i := range items {
		if string(items[i].Record.Key) == "stuck" {
			select {
			case <-d.release:
			case <-ctx.Done():
				return &PartialError{Done: i, Err: ctx.Err()}
			}
		}
		d.mu.Lock()
		d.took = append(d.took, string(items[i].Record.Key))
		d.mu.Unlock()
	}
	return nil
}

func (d *stuckLanes) taken() []string {
	d.mu.Lock()
	defer d.mu.Unlock()
	return slices.Clone(d.took)
}

// TestRereadWhileAKeyIsHeld: a partition read again while a lane holds
// a key of it (a write retried until the destination takes it) goes on
// with its other keys meanwhile, is not committed past the held record,
// and once the key is taken every record is delivered (some twice), each
// key in its order, and committed. Draining the lanes before forgetting
// the partition, polling waited for the held key, and every other key
// with it.
func TestRereadWhileAKeyIsHeld(t *testing.T) {
	d := &stuckLanes{release: make(chan struct{})}
	s, err := New(nil, configs.Sink{Name: "reread", FlushInterval: configs.Duration(5 * time.Millisecond)}, d)
	if err != nil {
		t.Fatal(err)
	}
	c := &rereadConsumer{}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- s.consumeLanes(ctx, c) }()
	defer func() { cancel(); <-done }()
	p0 := broker.TopicPartition{Topic: "t"}
	peers.Within(t, time.Minute, "the record after those read again delivered while a key is held", func() bool {
		return slices.Contains(d.taken(), "y")
	})
	c.mu.Lock()
	for _, offs := range c.commits {
		if offs[p0] > 0 {
			t.Errorf("committed %v while the record at 0 is held", offs)
		}
	}
	c.mu.Unlock()
	close(d.release)
	peers.Within(t, time.Minute, "everything committed once the key is taken", func() bool {
		c.mu.Lock()
		defer c.mu.Unlock()
		n := len(c.commits)
		return n > 0 && c.commits[n-1][p0] == 3
	})
	took := d.taken()
	for _, key := range []string{"stuck", "x", "y"} {
		if !slices.Contains(took, key) {
			t.Errorf("%s never delivered: %v", key, took)
		}
	}
}

// TestFlightDoneAfterForget: a record noted done once its partition was
// forgotten does not bring the partition back (committed at offset 0,
// the start of the log), and one whose partition was read again since
// is the record at its offset read again.
func TestFlightDoneAfterForget(t *testing.T) {
	f := flight{parts: map[broker.TopicPartition]*partFlight{}}
	tp := broker.TopicPartition{Topic: "t", Partition: 3}
	it := func(off int64) Item { return Item{Record: broker.Record{Topic: "t", Partition: 3, Offset: off}} }
	rec := func(off int64) *broker.Record { r := it(off).Record; return &r }
	out := map[broker.TopicPartition]int64{}

	// Noted done twice (a lane's write noted as it goes, and at its
	// end), the partition forgotten between.
	f.handed(rec(5))
	f.done([]Item{it(5)})
	f.forget(tp)
	f.done([]Item{it(5)})
	f.commitPoints(out)
	if len(out) != 0 {
		t.Fatalf("a forgotten partition committed: %v", out)
	}

	// Forgotten with records not done, and read again from 3.
	f.handed(rec(5))
	f.handed(rec(6))
	f.forget(tp)
	if f.pending != 0 {
		t.Fatalf("%d pending once the partition is forgotten, want 0", f.pending)
	}
	for off := int64(3); off <= 5; off++ {
		f.handed(rec(off))
	}
	f.done([]Item{it(6), it(5)}) // the lane's write of before ends
	f.commitPoints(out)
	if out[tp] != 3 || f.pending != 2 {
		t.Fatalf("committed at %v with %d pending, want 3 with 2", out, f.pending)
	}
	f.done([]Item{it(3), it(4), it(5)})
	f.commitPoints(out)
	if out[tp] != 6 || f.pending != 0 {
		t.Fatalf("committed at %v with %d pending, want 6 with 0", out, f.pending)
	}
}

// goneRec is a record of partition part of "t" at off, with key (none
// if empty).
func goneRec(part int32, off int64, key string) broker.Record {
	r := broker.Record{Topic: "t", Partition: part, Offset: off, Value: []byte("{}")}
	if key != "" {
		r.Key = []byte(key)
	}
	return r
}

// queue admits and queues records on l, whose lanes do not run.
func queue(t *testing.T, l *lanes, recs ...broker.Record) {
	t.Helper()
	for i := range recs {
		l.admit(&recs[i], admitHand)
		if !l.enqueue(&Item{Record: recs[i]}) {
			t.Fatal("no room")
		}
	}
}

// where lists items as partition/offset.
func where(items []Item) []string {
	var out []string
	for _, it := range items {
		out = append(out, fmt.Sprintf("%d/%d", it.Record.Partition, it.Record.Offset))
	}
	return out
}

// TestDropGoneQueued: the records queued of a partition taken away are
// taken out of their keys (those of the partition kept stay, in order),
// a key left with none is dropped and no longer ready, the count of
// records queued follows, and flight forgets the partition: nothing more
// is committed for it.
func TestDropGoneQueued(t *testing.T) {
	s, err := New(nil, configs.Sink{Name: "gone", BatchSize: 100}, okLanes{})
	if err != nil {
		t.Fatal(err)
	}
	l := s.newLanes(okLanes{}, func() {})
	queue(t, l,
		goneRec(0, 0, "a"), goneRec(1, 0, "a"), goneRec(0, 1, "a"), // a key on both partitions
		goneRec(1, 1, "b"), goneRec(1, 2, "b"), // on the partition taken away alone
		goneRec(1, 3, ""), // without a key: by partition
		goneRec(0, 2, "c"))
	p0, p1 := broker.TopicPartition{Topic: "t"}, broker.TopicPartition{Topic: "t", Partition: 1}

	l.mu.Lock()
	l.dropGone([]broker.TopicPartition{p0})
	l.mu.Unlock()

	if l.queued != 3 || len(l.keys) != 2 {
		t.Fatalf("%d records queued in %d keys, want 3 in 2", l.queued, len(l.keys))
	}
	var took [][]string
	for {
		kq, buf, tctx := l.next(context.Background(), 0, nil)
		if kq == nil {
			break
		}
		if len(buf) == 0 {
			t.Fatalf("key %q handed to a lane with no records", kq.id.key)
		}
		if tctx.Err() != nil {
			t.Fatalf("key %q handed with its turn stopped", kq.id.key)
		}
		took = append(took, append([]string{kq.id.key}, where(buf)...))
		l.endTurn(0, kq, buf)
	}
	if want := [][]string{{"a", "0/0", "0/1"}, {"c", "0/2"}}; fmt.Sprint(took) != fmt.Sprint(want) {
		t.Errorf("the lanes took %v, want %v", took, want)
	}
	drained(t, l, p0, 3, p1)
}

// TestDropGoneStopsTurns: a lane's turn whose records are all of a
// partition taken away is stopped and ends with nothing noted done for
// it; one mixing records of both partitions is stopped and goes on with
// those of the partition kept that were not written, in order; a turn of
// the partition kept alone goes on.
func TestDropGoneStopsTurns(t *testing.T) {
	s, err := New(nil, configs.Sink{Name: "turns", BatchSize: 100}, okLanes{})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	l := s.newLanes(okLanes{}, func() {})
	queue(t, l,
		goneRec(1, 0, "lost"), goneRec(1, 1, "lost"),
		goneRec(0, 0, "mixed"), goneRec(1, 2, "mixed"), goneRec(0, 1, "mixed"), goneRec(0, 2, "mixed"),
		goneRec(0, 3, "kept"))
	p0, p1 := broker.TopicPartition{Topic: "t"}, broker.TopicPartition{Topic: "t", Partition: 1}
	type turn struct {
		kq   *keyQueue
		buf  []Item
		tctx context.Context
	}
	var turns [3]turn
	for k := range turns {
		tn := &turns[k]
		tn.kq, tn.buf, tn.tctx = l.next(ctx, k, nil)
		if tn.kq == nil {
			t.Fatalf("lane %d: no key ready", k)
		}
	}
	if turns[0].kq.id.key != "lost" || turns[1].kq.id.key != "mixed" || turns[2].kq.id.key != "kept" {
		t.Fatalf("lanes took %q, %q, %q", turns[0].kq.id.key, turns[1].kq.id.key, turns[2].kq.id.key)
	}
	// Lane 1 wrote the first record of its turn; a record of the
	// partition kept comes for the key lane 2 writes.
	l.mu.Lock()
	l.flight.done(turns[1].buf[:1])
	l.mu.Unlock()
	queue(t, l, goneRec(0, 4, "kept"))

	l.mu.Lock()
	l.dropGone([]broker.TopicPartition{p0})
	l.mu.Unlock()

	if turns[0].tctx.Err() == nil || turns[1].tctx.Err() == nil {
		t.Fatal("the turns with records of the partition taken away go on")
	}
	if turns[2].tctx.Err() != nil {
		t.Fatal("the turn of the partition kept alone was stopped")
	}
	// Lane 0 was retrying its first record: the turn ends, the key with it.
	if items, tctx := l.resume(ctx, 0, turns[0].kq, 0); tctx != nil {
		t.Fatalf("the turn of the partition taken away goes on with %v", where(items))
	}
	// Lane 1 was stopped after its first record.
	items, tctx := l.resume(ctx, 1, turns[1].kq, 1)
	if tctx == nil || tctx.Err() != nil {
		t.Fatal("the mixed turn does not go on")
	}
	if got := where(items); fmt.Sprint(got) != "[0/1 0/2]" {
		t.Fatalf("the mixed turn goes on with %v, want [0/1 0/2]", got)
	}
	l.mu.Lock()
	if _, ok := l.keys[keyID{key: "lost"}]; ok {
		t.Error("the key of the partition taken away is kept once its turn ended")
	}
	l.mu.Unlock()
	l.endTurn(1, turns[1].kq, items)
	l.endTurn(2, turns[2].kq, turns[2].buf)
	kq, buf, _ := l.next(ctx, 2, nil)
	if kq == nil || kq.id.key != "kept" || fmt.Sprint(where(buf)) != "[0/4]" {
		t.Fatalf("next: %v %v, want kept's 0/4", kq, where(buf))
	}
	l.endTurn(2, kq, buf)

	drained(t, l, p0, 5, p1)
}

// refusingLanes is a Concurrent destination refusing key "stuck" for as
// long as it is asked (retryable), taking the others; it notes the
// attempts at "stuck" and the keys it took.
type refusingLanes struct {
	okLanes
	mu       sync.Mutex
	attempts int
	took     []string
}

func (d *refusingLanes) WriteLane(ctx context.Context, _ int, items []Item) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	for i := range items {
		if string(items[i].Record.Key) == "stuck" {
			d.attempts++
			return &PartialError{Done: i, Err: &RetryableError{Err: errors.New("HTTP 500")}}
		}
		d.took = append(d.took, string(items[i].Record.Key))
	}
	return nil
}

// TestDropGoneStopsARetriedKey: a lane retrying a key whose partition is
// taken away stops it, without failing (the other lanes and the lane
// itself go on, the sink not stopped) and without a write of it again.
func TestDropGoneStopsARetriedKey(t *testing.T) {
	d := &refusingLanes{}
	s, err := New(nil, configs.Sink{Name: "retried", BatchSize: 10,
		Retry: configs.SinkRetry{Initial: configs.Duration(time.Millisecond), Max: configs.Duration(time.Millisecond)}}, d)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	l := s.startLanes(ctx, d)
	defer l.halt()
	hand := func(r broker.Record) {
		l.admit(&r, admitHand)
		if err := l.hand(ctx, &Item{Record: r}, func() {}); err != nil {
			t.Fatal(err)
		}
	}
	hand(goneRec(1, 0, "stuck"))
	hand(goneRec(1, 1, "stuck"))
	hand(goneRec(0, 0, "x"))
	peers.Within(t, time.Minute, "x taken while stuck is retried", func() bool {
		d.mu.Lock()
		defer d.mu.Unlock()
		return d.attempts > 1 && slices.Contains(d.took, "x")
	})
	l.mu.Lock()
	l.dropGone([]broker.TopicPartition{{Topic: "t"}})
	l.mu.Unlock()
	peers.Within(t, time.Minute, "the lanes hold nothing once the partition is gone", func() bool {
		l.mu.Lock()
		defer l.mu.Unlock()
		return len(l.keys) == 0 && l.queued == 0 && l.flight.pending == 0
	})
	d.mu.Lock()
	attempts := d.attempts
	d.mu.Unlock()
	hand(goneRec(0, 1, "y"))
	peers.Within(t, time.Minute, "y taken", func() bool {
		d.mu.Lock()
		defer d.mu.Unlock()
		return slices.Contains(d.took, "y")
	})
	select {
	case <-l.failed:
		t.Fatalf("lane %d failed: %v", l.errLane, l.err)
	default:
	}
	d.mu.Lock()
	if d.attempts != attempts {
		t.Errorf("stuck written %d times more once its partition was gone", d.attempts-attempts)
	}
	if slices.Contains(d.took, "stuck") {
		t.Error("stuck taken once its partition was gone")
	}
	d.mu.Unlock()
	s.failMu.Lock()
	failing := s.lanesFailing
	s.failMu.Unlock()
	if failing != 0 {
		t.Errorf("%d lanes failing once the retried key was stopped", failing)
	}
}

// drained checks that, all written, l commits partition kept up to at and
// nothing of gone, with nothing pending, and holds no key or record.
func drained(t *testing.T, l *lanes, kept broker.TopicPartition, at int64, gone broker.TopicPartition) {
	t.Helper()
	out := map[broker.TopicPartition]int64{}
	l.flight.commitPoints(out)
	if _, ok := out[gone]; ok || out[kept] != at || l.flight.pending != 0 {
		t.Errorf("committed %v with %d pending, want partition %d at %d alone and none", out, l.flight.pending, kept.Partition, at)
	}
	if len(l.keys) != 0 || l.queued != 0 {
		t.Errorf("%d keys and %d records kept once all is written", len(l.keys), l.queued)
	}
}
