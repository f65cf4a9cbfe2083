package sinks

import (
	"context"
	"errors"
	"slices"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/weirnet/weir/broker"
)

// laneOutcome is what one lane's write came to, and the lane's part in
// the retry log's state (under Sink.failMu).
type laneOutcome struct {
	k        int  // the lane
	failed   bool // an attempt failed on the way
	through  bool // an attempt went through (not only given up)
	attempts int  // of its last attempt that went through
	// failing: an attempt of the lane's current write failed and none
	// went through since; counted in Sink.lanesFailing.
	failing bool
	// note is told of the write's first records delivered or
	// dead-lettered while the rest is retried, so that they are
	// committed without waiting for the rest.
	note func(items []Item)
}

// consumeLanes is consume's loop for a Concurrent destination: polled
// records are decoded and handed to the lanes (see lanes), and each
// partition is committed every flush interval up to its first record not
// yet delivered or dead-lettered. At a stop (ctx done, or a lane failing
// on an error of its own) the lanes stop, and what they delivered is
// committed, with a few seconds of its own, and nothing past it. A
// rebalance does not wait for the lanes: at the next flush interval what
// they hold of partitions taken away is dropped, a write of it stopped
// (see dropGone), as their new owner delivers it from their committed
// offset; a partition read again starts afresh in flight (see
// flight.reread).
func (s *Sink) consumeLanes(ctx context.Context, c broker.Consumer) error {
	l := s.startLanes(ctx, s.dest.(Concurrent))
	oc, _ := c.(broker.OffsetCommitter)
	filtered := s.m.filtered.With(prometheus.Labels{"sink": s.cfg.Name})
	offs := map[broker.TopicPartition]int64{}
	commit := func() {
		// Called every flush interval: the lanes' outage may have ended
		// without a write since (see Sink.laneWentThrough).
		s.lanesQuiet()
		assigned := c.Assigned()
		l.mu.Lock()
		l.dropGone(assigned)
		if !l.flight.changed || (oc == nil && (l.flight.pending > 0 || len(l.keys) > 0)) {
			// Without OffsetCommitter, Commit takes all that was
			// polled: only once the lanes hold nothing (records of a
			// partition read again, forgotten in flight, are still in
			// l.keys until written).
			l.mu.Unlock()
			return
		}
		l.flight.commitPoints(offs)
		l.mu.Unlock()
		cctx, cancel := commitContext(ctx)
		defer cancel()
		var err error
		if oc != nil {
			err = oc.CommitOffsets(cctx, offs)
		} else {
			err = c.Commit(cctx)
		}
		if err != nil {
			// A failed commit only means some records come again;
			// the next flush tries again.
			s.logger.Warn("sink commit failed", "sink", s.cfg.Name, "err", err)
			l.mu.Lock()
			l.flight.changed = true
			l.mu.Unlock()
		}
	}
	stop := func() error {
		l.halt()
		select {
		case <-l.failed:
			s.logger.Error("sink stops delivering: a lane failed", "sink", s.cfg.Name, "lane", l.errLane, "err", l.err)
		default:
		}
		l.mu.Lock()
		l.flight.commitPoints(offs)
		l.mu.Unlock()
		s.commitDone(c, offs)
		return nil
	}
	var dec []decoded
	pollFailures := 0
	deadline := time.Now().Add(s.flushInterval)
	for {
		recs, timedOut, err := poll(ctx, c, time.Until(deadline))
		if err != nil {
			if !s.pollFailed(ctx, err, &pollFailures) {
				return stop()
			}
			continue
		}
		s.pollWent(timedOut, &pollFailures)
		select {
		case <-l.failed:
			return stop()
		default:
		}
		dec = s.decodeAll(recs, dec[:0])
		for i := range dec {
			d := &dec[i]
			r := &d.it.Record
			how := admitHand
			switch {
			case d.err != nil:
				how = admitCheck // noted once dead-lettered
			case !d.ok:
				how = admitSkip
			}
			l.admit(r, how)
			switch how {
			case admitCheck:
				s.m.errors.WithLabelValues(s.cfg.Name, "decode").Inc()
				if n, ok := s.decodeLog.Due(time.Now()); ok {
					s.logger.Warn("sink dead-letters a record that does not decode", "sink", s.cfg.Name, "err", d.err, "times", n)
				}
				if err := s.deadLetter(ctx, []Item{d.it}, "decode", d.err); err != nil {
					return stop() // ctx done: not committed
				}
				l.admit(r, admitSkip)
			case admitSkip:
				filtered.Inc()
			case admitHand:
				if err := l.hand(ctx, &d.it, commit); err != nil {
					return stop()
				}
			}
		}
		if !time.Now().Before(deadline) {
			commit()
			deadline = time.Now().Add(s.flushInterval)
		}
	}
}

// lanes runs a Concurrent destination with key-level scheduling, as
// Confluent's Parallel Consumer does in key-ordering mode: polled records
// queue per key (in poll order; records without a key per partition), a
// goroutine per lane takes the next ready key (one with records queued
// and no lane writing it; keys in the order they became ready), writes
// what the key has queued (up to keyTurn records) retried on its own,
// and gives the key back, ready again if records came meanwhile. So the
// records of a key are written one write at a time and in order, a key
// being retried holds up one lane, and the other lanes go on with every
// other key: a fixed key-to-lane hash made the busiest lane, and a key
// retried, hold up every key sharing its lane. At most batch_size ×
// lanes records are queued; polling waits for room (back-pressure). What
// is committed comes from flight: per partition, up to the first record
// handed and not yet delivered or dead-lettered.
type lanes struct {
	s    *Sink
	cd   Concurrent
	wg   sync.WaitGroup
	stop context.CancelFunc // ends the lanes

	mu     sync.Mutex
	flight flight
	keys   map[keyID]*keyQueue // keys with records queued or written
	ready  keyFIFO
	turns  []laneTurn  // per lane, the records it is writing
	free   []*keyQueue // of keys gone, reused
	queued int         // records in keys, not taken by a lane
	room   int         // most records queued at once
	take   int         // most records a lane takes of a key at once (a turn)

	// work is signalled (without blocking; a token per lane at most)
	// when a key becomes ready: a lane without one looks again.
	work chan struct{}
	// progress is signalled (without blocking) when a lane takes
	// records and when it is done with a write: a loop waiting for room
	// or for the lanes to drain looks again.
	progress chan struct{}
	// failed is closed when a lane stops on an error that is not the
	// end of its context (then err says which).
	failed   chan struct{}
	failOnce sync.Once
	err      error
	errLane  int
}

// keyID is what records are ordered by: their key, or without one their
// partition (Kafka orders a partition, not records without a key across
// partitions).
type keyID struct {
	key   string
	topic string
	part  int32
	nokey bool
}

// keyQueue is a key's records queued, from head on, and whether a lane
// is writing records of it. A key not busy with records queued is in
// lanes.ready; one neither busy nor with records queued is dropped.
type keyQueue struct {
	id    keyID
	items []Item
	head  int
	busy  bool
}

// laneTurn is what a lane is writing: the records it took of a key (a
// turn, or what is left of one; its buf, not changed while it writes),
// and the end of the write's context. dropGone stops the write of a turn
// with records of partitions taken away (cancel), marking them in lost.
type laneTurn struct {
	items  []Item
	cancel context.CancelFunc // nil: no turn
	lost   uint64             // bit i: items[i]'s partition was taken away
}

// The lost records of a turn are bits of a uint64.
var _ [64 - keyTurn]struct{}

// keyFIFO is the ready keys, first come first taken.
type keyFIFO struct {
	q    []*keyQueue
	head int
}

func (f *keyFIFO) push(k *keyQueue) {
	if f.head > 0 && len(f.q) == cap(f.q) {
		n := copy(f.q, f.q[f.head:])
		clear(f.q[n:])
		f.q, f.head = f.q[:n], 0
	}
	f.q = append(f.q, k)
}

func (f *keyFIFO) pop() *keyQueue {
	if f.head == len(f.q) {
		return nil
	}
	k := f.q[f.head]
	f.q[f.head] = nil
	f.head++
	if f.head == len(f.q) {
		f.q, f.head = f.q[:0], 0
	}
	return k
}

// keyTurn is the most records of a key a lane takes at once: then the key
// goes behind the other ready keys, so that keys take turns. A key's
// whole backlog at once kept the keys behind it waiting, and at the end
// of a backlog left lanes idle behind the last keys (BenchmarkFlakyReceiver
// at concurrency 4: 252-277 records/s so, 283-295 with turns of 8).
const keyTurn = 8

// Kept for reuse: this many keyQueues of keys gone, each with records'
// room up to keepItems.
const (
	keepKeys  = 256
	keepItems = 16
)

// startLanes starts the lanes of cd under ctx; stop them with halt.
func (s *Sink) startLanes(ctx context.Context, cd Concurrent) *lanes {
	ctx, cancel := context.WithCancel(ctx)
	s.failMu.Lock()
	s.lanesFailing = 0
	s.failMu.Unlock()
	l := s.newLanes(cd, cancel)
	for k := range s.lanes {
		l.wg.Go(func() { l.run(ctx, k) })
	}
	return l
}

// newLanes is startLanes without its lanes running.
func (s *Sink) newLanes(cd Concurrent, stop context.CancelFunc) *lanes {
	n := s.lanes
	return &lanes{s: s, cd: cd, stop: stop,
		flight: flight{parts: map[broker.TopicPartition]*partFlight{}},
		keys:   map[keyID]*keyQueue{}, turns: make([]laneTurn, n), room: s.batchSize * n, take: min(s.batchSize, keyTurn),
		work: make(chan struct{}, n), progress: make(chan struct{}, 1), failed: make(chan struct{})}
}

// halt stops the lanes and waits for them: a write in flight ends with
// its context (what the destination took of it is noted in flight).
func (l *lanes) halt() {
	l.stop()
	l.wg.Wait()
}

// run is lane k: it takes the next ready key's records, writes them,
// notes them delivered, gives the key back, and again, until ctx is done
// or a write fails for good. A write stopped by dropGone goes on with the
// records of its turn not written and not of partitions taken away, if
// any, and else ends the turn: no failure of the lane.
func (l *lanes) run(ctx context.Context, k int) {
	s := l.s
	var buf []Item
	write := func(ctx context.Context, items []Item) error { return l.cd.WriteLane(ctx, k, items) }
	o := &laneOutcome{k: k, note: func(items []Item) {
		l.mu.Lock()
		l.flight.done(items)
		l.mu.Unlock()
	}}
	for {
		var kq *keyQueue
		var tctx context.Context
		kq, buf, tctx = l.next(ctx, k, buf)
		if kq == nil {
			select {
			case <-ctx.Done():
				return
			case <-l.work:
			}
			continue
		}
		if ctx.Err() != nil {
			l.endTurn(k, nil, nil)
			return
		}
		// There is room now: hand, waiting for it, looks again.
		l.signal()
		// With lanes, weir_sink_batch_seconds observes one lane's write:
		// the records of a key it took at once, until delivered or
		// dead-lettered, retries included.
		start := time.Now()
		o.failed, o.through, o.attempts = false, false, 0
		items, total := buf, 0
		var n int
		var err error
		for {
			n, err = s.send(tctx, write, items, o)
			total += n
			if err == nil || ctx.Err() != nil || tctx.Err() == nil {
				break
			}
			// Stopped by dropGone: what is left of the turn.
			if items, tctx = l.resume(ctx, k, kq, n); tctx == nil {
				break
			}
		}
		s.m.batch.WithLabelValues(s.cfg.Name).Observe(time.Since(start).Seconds())
		if tctx == nil {
			// Ended by resume, which gave the key back.
			clear(buf)
			l.signal()
			s.laneWentThrough(total, o)
			continue
		}
		if err == nil {
			l.endTurn(k, kq, items[:n])
		} else {
			l.endTurn(k, nil, items[:n])
		}
		clear(buf) // not holding the records
		l.signal()
		if err != nil {
			if ctx.Err() == nil {
				l.fail(k, err)
			}
			return
		}
		s.laneWentThrough(total, o)
	}
}

// next takes the next ready key's records (a turn: up to l.take) into buf
// as lane k's turn, marking the key busy, with the context of the turn's
// write (under ctx; see dropGone); nil if no key is ready.
func (l *lanes) next(ctx context.Context, k int, buf []Item) (*keyQueue, []Item, context.Context) {
	l.mu.Lock()
	defer l.mu.Unlock()
	kq := l.ready.pop()
	if kq == nil {
		return nil, buf, nil
	}
	q := kq.items[kq.head:]
	n := min(len(q), l.take)
	buf = append(buf[:0], q[:n]...)
	clear(q[:n])
	kq.head += n
	if kq.head == len(kq.items) {
		kq.items, kq.head = kq.items[:0], 0
	}
	l.queued -= n
	kq.busy = true
	tctx, cancel := context.WithCancel(ctx)
	l.turns[k] = laneTurn{items: buf, cancel: cancel}
	return kq, buf, tctx
}

// endTurn ends lane k's turn: kq, if not nil, is given back (ready again
// if records of it came meanwhile, behind the keys ready before it: a
// lane waiting for work is woken; else dropped), and then done, the
// records written, are noted done. Given back first: once every record
// handed is done, the lanes hold no key.
func (l *lanes) endTurn(k int, kq *keyQueue, done []Item) {
	l.mu.Lock()
	wake := l.endTurnLocked(k, kq, done)
	l.mu.Unlock()
	if wake {
		l.wake()
	}
}

func (l *lanes) endTurnLocked(k int, kq *keyQueue, done []Item) (wake bool) {
	if t := &l.turns[k]; t.cancel != nil {
		t.cancel()
		*t = laneTurn{}
	}
	if kq != nil {
		wake = l.giveBack(kq)
	}
	l.flight.done(done)
	return wake
}

// resume goes on with lane k's turn of kq, whose write dropGone stopped
// after its first n records were written: the records not written and
// not of partitions taken away, moved to the front of the turn, with the
// context of their write; with none, the turn ends (nil context).
func (l *lanes) resume(ctx context.Context, k int, kq *keyQueue, n int) ([]Item, context.Context) {
	l.mu.Lock()
	t := &l.turns[k]
	items := t.items
	l.flight.done(items[:n])
	m := 0
	for i := n; i < len(items); i++ {
		if t.lost&(1<<i) == 0 {
			items[m] = items[i]
			m++
		}
	}
	clear(items[m:])
	items = items[:m]
	if m == 0 {
		wake := l.endTurnLocked(k, kq, nil)
		l.mu.Unlock()
		if wake {
			l.wake()
		}
		return nil, nil
	}
	t.cancel()
	tctx, cancel := context.WithCancel(ctx)
	*t = laneTurn{items: items, cancel: cancel}
	l.mu.Unlock()
	return items, tctx
}

// giveBack ends a lane's write of kq (under l.mu): the key is ready again
// if records of it came meanwhile (behind the keys ready before it; then
// it reports that a lane waiting for work is to be woken), else it is
// dropped.
func (l *lanes) giveBack(kq *keyQueue) (wake bool) {
	kq.busy = false
	if kq.head < len(kq.items) {
		l.ready.push(kq)
		return true
	}
	l.dropKey(kq)
	return false
}

// dropKey drops kq, neither busy nor with records queued (under l.mu),
// keeping it for reuse while few are.
func (l *lanes) dropKey(kq *keyQueue) {
	delete(l.keys, kq.id)
	if len(l.free) < keepKeys {
		kq.id = keyID{}
		if cap(kq.items) > keepItems {
			kq.items = nil
		}
		l.free = append(l.free, kq)
	}
}

// dropGone (under l.mu, every flush interval) drops what the lanes hold
// of the partitions in flight that are not in assigned: a rebalance gave
// them to another member of the group (another weir process), which
// delivers them from their committed offset. Their records queued are
// taken out of their keys (a key left with none, and not being written,
// is dropped), a lane's write of a turn with records of them not yet
// written is stopped (see run: the turn goes on with its other records),
// and flight forgets them, so that nothing more is committed for them
// and, given back, they are read afresh. Delivered all the same, they
// reached the receiver twice, the two members' posts of a key
// interleaved, and a key the receiver refused held a lane for good.
func (l *lanes) dropGone(assigned []broker.TopicPartition) {
	var gone []broker.TopicPartition
	for tp := range l.flight.parts {
		if !slices.Contains(assigned, tp) {
			gone = append(gone, tp)
		}
	}
	if len(gone) == 0 {
		return
	}
	for _, tp := range gone {
		l.flight.forget(tp)
	}
	isGone := func(r *broker.Record) bool {
		return slices.Contains(gone, broker.TopicPartition{Topic: r.Topic, Partition: r.Partition})
	}
	for _, kq := range l.keys {
		q := kq.items[kq.head:]
		m := 0
		for i := range q {
			if !isGone(&q[i].Record) {
				q[m] = q[i]
				m++
			}
		}
		if m == len(q) {
			continue
		}
		clear(q[m:])
		l.queued -= len(q) - m
		kq.items = kq.items[:kq.head+m]
		if kq.head == len(kq.items) {
			kq.items, kq.head = kq.items[:0], 0
		}
	}
	// The ready keys left with no records queued are dropped.
	r := &l.ready
	kept := r.q[:r.head]
	for _, kq := range r.q[r.head:] {
		if kq.head < len(kq.items) {
			kept = append(kept, kq)
		} else {
			l.dropKey(kq)
		}
	}
	clear(r.q[len(kept):])
	r.q = kept
	if r.head == len(r.q) {
		r.q, r.head = r.q[:0], 0
	}
	for k := range l.turns {
		t := &l.turns[k]
		if t.cancel == nil {
			continue
		}
		lost := t.lost
		for i := range t.items {
			if isGone(&t.items[i].Record) {
				lost |= 1 << i
			}
		}
		if lost != t.lost {
			t.lost = lost
			t.cancel()
		}
	}
}

// wake tells a lane waiting for work that a key is ready, without
// blocking: with a token for each lane waiting, every lane looks again.
func (l *lanes) wake() {
	select {
	case l.work <- struct{}{}:
	default:
	}
}

// signal tells a loop waiting in wait to look again, without blocking.
func (l *lanes) signal() {
	select {
	case l.progress <- struct{}{}:
	default:
	}
}

// fail notes the first lane to stop on an error of its own, and stops
// the others.
func (l *lanes) fail(k int, err error) {
	l.failOnce.Do(func() {
		l.err, l.errLane = err, k
		close(l.failed)
	})
	l.stop()
}

// errLaneFailed is what hand and drain return once a lane failed (see
// lanes.err).
var errLaneFailed = errors.New("a lane failed")

// hand queues it under its key (admitted in flight first). With
// l.room records queued it waits (back-pressure: polling waits with it),
// committing what was delivered meanwhile at each flush interval through
// commit.
func (l *lanes) hand(ctx context.Context, it *Item, commit func()) error {
	if l.enqueue(it) {
		return nil
	}
	return l.wait(ctx, func() bool { return l.enqueue(it) }, commit)
}

// enqueue queues it under its key, unless l.room records are queued; a
// key that becomes ready wakes a lane.
func (l *lanes) enqueue(it *Item) bool {
	l.mu.Lock()
	if l.queued >= l.room {
		l.mu.Unlock()
		return false
	}
	kq := l.key(&it.Record)
	if kq.head > 0 && len(kq.items) == cap(kq.items) {
		n := copy(kq.items, kq.items[kq.head:])
		clear(kq.items[n:])
		kq.items, kq.head = kq.items[:n], 0
	}
	kq.items = append(kq.items, *it)
	l.queued++
	ready := !kq.busy && len(kq.items)-kq.head == 1
	if ready {
		l.ready.push(kq)
	}
	l.mu.Unlock()
	if ready {
		l.wake()
	}
	return true
}

// key is r's keyQueue, made if new. Looking a key up does not allocate;
// a new key's string does.
func (l *lanes) key(r *broker.Record) *keyQueue {
	var kq *keyQueue
	if len(r.Key) > 0 {
		kq = l.keys[keyID{key: string(r.Key)}]
	} else {
		kq = l.keys[keyID{topic: r.Topic, part: r.Partition, nokey: true}]
	}
	if kq != nil {
		return kq
	}
	if n := len(l.free); n > 0 {
		kq, l.free = l.free[n-1], l.free[:n-1]
	} else {
		kq = &keyQueue{}
	}
	if len(r.Key) > 0 {
		kq.id = keyID{key: string(r.Key)}
	} else {
		kq.id = keyID{topic: r.Topic, part: r.Partition, nokey: true}
	}
	l.keys[kq.id] = kq
	return kq
}

// admit notes r in flight as how says. r read again after a rebalance
// (see flight.reread) first forgets its partition, without waiting for
// the lanes: waiting, a key the destination refuses (retried forever
// under retry.max_attempts 0) held every other key up at each rebalance.
// What the lanes still hold of the partition (it went away and came back
// between two flush intervals, unseen by dropGone) is delivered (again,
// with its copies read again: at least once, each key in order).
func (l *lanes) admit(r *broker.Record, how admitKind) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.flight.reread(r) {
		l.flight.forget(broker.TopicPartition{Topic: r.Topic, Partition: r.Partition})
	}
	switch how {
	case admitHand:
		l.flight.handed(r)
	case admitSkip:
		l.flight.skipped(r)
	}
}

type admitKind uint8

const (
	admitCheck admitKind = iota // only whether it is read again (see admit)
	admitHand                   // handed to a lane
	admitSkip                   // done as polled: filtered, dead-lettered
)

// wait waits until cond holds, looking again each time a lane takes
// records or is done with a write, and calling commit every flush
// interval meanwhile; it fails when ctx is done or a lane failed.
func (l *lanes) wait(ctx context.Context, cond func() bool, commit func()) error {
	t := time.NewTimer(l.s.flushInterval)
	defer t.Stop()
	for !cond() {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-l.failed:
			return errLaneFailed
		case <-l.progress:
		case <-t.C:
			commit()
			t.Reset(l.s.flushInterval)
		}
	}
	return nil
}

// flight is, per partition, what of the records polled is not yet
// delivered or dead-lettered: a partition's records are spread over the
// lanes, which finish them in any order across lanes, so what can be
// committed is up to the lowest offset still handed to a lane.
type flight struct {
	parts   map[broker.TopicPartition]*partFlight
	pending int  // records handed and not done, over all partitions
	changed bool // since the last commit
	last    *partFlight
	lastTP  broker.TopicPartition
}

// partFlight is one partition's records in flight.
type partFlight struct {
	ents []flightEnt // from head on: handed, in offset order
	head int
	next int64 // after the last record polled
}

type flightEnt struct {
	off  int64
	done bool
}

// part is tp's, made if new.
func (f *flight) part(tp broker.TopicPartition) *partFlight {
	if f.last != nil && f.lastTP == tp {
		return f.last
	}
	p := f.parts[tp]
	if p == nil {
		p = &partFlight{}
		f.parts[tp] = p
	}
	f.last, f.lastTP = p, tp
	return p
}

// find is tp's, nil if not in flight.
func (f *flight) find(tp broker.TopicPartition) *partFlight {
	if f.last != nil && f.lastTP == tp {
		return f.last
	}
	p := f.parts[tp]
	if p != nil {
		f.last, f.lastTP = p, tp
	}
	return p
}

// reread reports whether r comes before a record of its partition polled
// earlier: the partition went to another member of the group and came
// back, and is read again from its committed offset.
func (f *flight) reread(r *broker.Record) bool {
	p := f.parts[broker.TopicPartition{Topic: r.Topic, Partition: r.Partition}]
	return p != nil && r.Offset < p.next
}

// handed notes r handed to a lane.
func (f *flight) handed(r *broker.Record) {
	p := f.part(broker.TopicPartition{Topic: r.Topic, Partition: r.Partition})
	p.ents = append(p.ents, flightEnt{off: r.Offset})
	p.next = r.Offset + 1
	f.pending++
	f.changed = true
}

// skipped notes r done as it is polled (filtered, or dead-lettered as
// not decoding).
func (f *flight) skipped(r *broker.Record) {
	p := f.part(broker.TopicPartition{Topic: r.Topic, Partition: r.Partition})
	p.next = r.Offset + 1
	f.changed = true
}

// done notes items (handed earlier) delivered or dead-lettered; items
// noted before are skipped, and so are those of a partition forgotten
// since, unless it was read again: then the record at that offset (the
// same record, handed again) is done.
func (f *flight) done(items []Item) {
	for i := range items {
		r := &items[i].Record
		p := f.find(broker.TopicPartition{Topic: r.Topic, Partition: r.Partition})
		if p == nil {
			continue // forgotten
		}
		ents := p.ents[p.head:]
		j, ok := slices.BinarySearchFunc(ents, r.Offset, func(e flightEnt, off int64) int { return cmpOff(e.off, off) })
		if !ok || ents[j].done {
			continue
		}
		ents[j].done = true
		f.pending--
		f.changed = true
		for p.head < len(p.ents) && p.ents[p.head].done {
			p.head++
		}
		if p.head == len(p.ents) {
			p.ents, p.head = p.ents[:0], 0
		} else if p.head > 1024 && p.head > len(p.ents)/2 {
			n := copy(p.ents, p.ents[p.head:])
			p.ents, p.head = p.ents[:n], 0
		}
	}
}

func cmpOff(a, b int64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// forget drops tp, so that it is read again from anywhere. Its records
// not yet done are no longer pending: a lane writing one later finds
// tp forgotten, or read again (see done).
func (f *flight) forget(tp broker.TopicPartition) {
	if p := f.parts[tp]; p != nil {
		for _, e := range p.ents[p.head:] {
			if !e.done {
				f.pending--
			}
		}
	}
	delete(f.parts, tp)
	f.last = nil
}

// commitPoints fills out, per partition, with the offset up to which
// every record polled was delivered, filtered or dead-lettered.
func (f *flight) commitPoints(out map[broker.TopicPartition]int64) {
	clear(out)
	for tp, p := range f.parts {
		if p.head < len(p.ents) {
			out[tp] = p.ents[p.head].off
		} else {
			out[tp] = p.next
		}
	}
	f.changed = false
}
