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
// committed, with a few seconds of its own, and nothing past it.
func (s *Sink) consumeLanes(ctx context.Context, c broker.Consumer) error {
	l := s.startLanes(ctx, s.dest.(Concurrent))
	oc, _ := c.(broker.OffsetCommitter)
	filtered := s.m.filtered.With(prometheus.Labels{"sink": s.cfg.Name})
	offs := map[broker.TopicPartition]int64{}
	commit := func() {
		l.mu.Lock()
		if !l.flight.changed || (oc == nil && l.flight.pending > 0) {
			// Without OffsetCommitter, Commit takes all that was
			// polled: only once the lanes hold nothing.
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
	assigned := c.Assigned()
	pollFailures := 0
	deadline := time.Now().Add(s.flushInterval)
	for {
		pctx, pcancel := context.WithTimeout(ctx, max(time.Until(deadline), time.Millisecond))
		recs, err := c.Poll(pctx)
		pcancel()
		timedOut := false
		if err != nil && ctx.Err() == nil && errors.Is(err, context.DeadlineExceeded) {
			err, recs, timedOut = nil, nil, true
		}
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
		if now := c.Assigned(); !sameParts(now, assigned) {
			// A rebalance: the lanes deliver what they hold (of
			// partitions taken away too: at least once), and then
			// flight starts afresh for partitions taken away, so that
			// no commit rests on records of an assignment gone.
			if err := l.drain(ctx, commit); err != nil {
				return stop()
			}
			l.mu.Lock()
			for _, tp := range assigned {
				if !slices.Contains(now, tp) {
					l.flight.forget(tp)
				}
			}
			l.mu.Unlock()
			assigned = now
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
			for !l.admit(r, how) {
				// Read again after the partition went away and came
				// back: what the lanes hold of it is of before.
				if err := l.drain(ctx, commit); err != nil {
					return stop()
				}
				l.mu.Lock()
				l.flight.forget(broker.TopicPartition{Topic: r.Topic, Partition: r.Partition})
				l.mu.Unlock()
			}
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

// sameParts reports whether a and b hold the same partitions.
func sameParts(a, b []broker.TopicPartition) bool {
	if len(a) != len(b) {
		return false
	}
	for _, tp := range a {
		if !slices.Contains(b, tp) {
			return false
		}
	}
	return true
}

// lanes runs a Concurrent destination: a goroutine per lane, each taking
// records from a queue of its own (bounded: batch_size records) and
// writing what it holds at once, retried on its own, so a record being
// retried holds up its lane alone while the others take new records. The
// consume loop feeds the queues in poll order, records of one key (of
// one partition without a key) always to the same lane, and waits when a
// queue is full. What is committed comes from flight: per partition, up
// to the first record handed to a lane and not yet delivered or
// dead-lettered.
type lanes struct {
	s    *Sink
	cd   Concurrent
	qs   []chan Item
	wg   sync.WaitGroup
	stop context.CancelFunc // ends the lanes

	mu     sync.Mutex
	flight flight

	// progress is signalled (without blocking) when a lane takes what
	// its queue holds and when it is done with a write: a loop waiting
	// for room in a queue or for the lanes to drain looks again.
	progress chan struct{}
	// failed is closed when a lane stops on an error that is not the
	// end of its context (then err says which).
	failed   chan struct{}
	failOnce sync.Once
	err      error
	errLane  int
}

// startLanes starts the lanes of cd under ctx; stop them with halt.
func (s *Sink) startLanes(ctx context.Context, cd Concurrent) *lanes {
	ctx, cancel := context.WithCancel(ctx)
	s.failMu.Lock()
	s.lanesFailing = 0
	s.failMu.Unlock()
	l := &lanes{s: s, cd: cd, qs: make([]chan Item, s.lanes), stop: cancel,
		flight:   flight{parts: map[broker.TopicPartition]*partFlight{}},
		progress: make(chan struct{}, 1), failed: make(chan struct{})}
	for k := range l.qs {
		l.qs[k] = make(chan Item, s.batchSize)
		l.wg.Go(func() { l.run(ctx, k) })
	}
	return l
}

// halt stops the lanes and waits for them: a write in flight ends with
// its context (what the destination took of it is noted in flight).
func (l *lanes) halt() {
	l.stop()
	l.wg.Wait()
}

// run is lane k: it takes what its queue holds (up to the queue's size),
// writes it, notes it delivered, and again, until ctx is done or a write
// fails for good.
func (l *lanes) run(ctx context.Context, k int) {
	s, q := l.s, l.qs[k]
	var buf []Item
	write := func(ctx context.Context, items []Item) error { return l.cd.WriteLane(ctx, k, items) }
	o := &laneOutcome{k: k, note: func(items []Item) {
		l.mu.Lock()
		l.flight.done(items)
		l.mu.Unlock()
	}}
	for {
		select {
		case <-ctx.Done():
			return
		case it := <-q:
			buf = append(buf[:0], it)
		}
	more:
		for len(buf) < cap(q) {
			select {
			case it := <-q:
				buf = append(buf, it)
			default:
				break more
			}
		}
		if ctx.Err() != nil {
			return
		}
		// The queue has room now: hand, waiting for it, looks again
		// (the signal after the last write may have found it still
		// full, and this write may take long).
		l.signal()
		// With lanes, weir_sink_batch_seconds observes one lane's write:
		// the records it took from its queue at once, until delivered or
		// dead-lettered, retries included.
		start := time.Now()
		o.failed, o.through, o.attempts = false, false, 0
		n, err := s.send(ctx, write, buf, o)
		s.m.batch.WithLabelValues(s.cfg.Name).Observe(time.Since(start).Seconds())
		o.note(buf[:n])
		clear(buf) // not holding the records
		l.signal()
		if err != nil {
			if ctx.Err() == nil {
				l.fail(k, err)
			}
			return
		}
		s.laneWentThrough(n, o)
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

// hand queues it on its lane (admitted in flight first). With the
// lane's queue full it waits (back-pressure: polling waits with it),
// committing what was delivered meanwhile at each flush interval through
// commit.
func (l *lanes) hand(ctx context.Context, it *Item, commit func()) error {
	q := l.qs[laneOf(&it.Record, len(l.qs))]
	select {
	case q <- *it:
		return nil
	default:
	}
	return l.wait(ctx, func() bool {
		select {
		case q <- *it:
			return true
		default:
			return false
		}
	}, commit)
}

// admit notes r in flight as how says, unless r is read again after a
// rebalance (see flight.reread): then it notes nothing and returns
// false, and the caller drains the lanes and forgets r's partition
// first.
func (l *lanes) admit(r *broker.Record, how admitKind) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.flight.reread(r) {
		return false
	}
	switch how {
	case admitHand:
		l.flight.handed(r)
	case admitSkip:
		l.flight.skipped(r)
	}
	return true
}

type admitKind uint8

const (
	admitCheck admitKind = iota // only whether it is read again
	admitHand                   // handed to a lane
	admitSkip                   // done as polled: filtered, dead-lettered
)

// drain waits until every record handed to the lanes is delivered or
// dead-lettered.
func (l *lanes) drain(ctx context.Context, commit func()) error {
	return l.wait(ctx, func() bool {
		l.mu.Lock()
		defer l.mu.Unlock()
		return l.flight.pending == 0
	}, commit)
}

// wait waits until cond holds, looking again each time a lane is done
// with a write, and calling commit every flush interval meanwhile; it
// fails when ctx is done or a lane failed.
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

// laneOf is the lane of r among n: the same for every record of its key
// (a fixed hash, not a seeded one: a key's lane is the same from run to
// run, so what a test or an operator sees repeats), and for records
// without a key, of its partition (Kafka orders a partition, not records
// without a key across partitions).
func laneOf(r *broker.Record, n int) int {
	h := uint64(fnvOffset)
	if len(r.Key) > 0 {
		for _, b := range r.Key {
			h = fnvByte(h, b)
		}
	} else {
		for i := range len(r.Topic) {
			h = fnvByte(h, r.Topic[i])
		}
		for i := range 4 {
			h = fnvByte(h, byte(r.Partition>>(8*i)))
		}
	}
	// FNV's low bits depend on the bytes' low bits alone: mixed, as
	// MurmurHash3 ends, so that keys differing higher up spread too.
	h ^= h >> 33
	h *= 0xff51afd7ed558ccd
	h ^= h >> 33
	return int(h % uint64(n))
}

// FNV-1a, 64 bits.
const (
	fnvOffset = 14695981039346656037
	fnvPrime  = 1099511628211
)

func fnvByte(h uint64, b byte) uint64 { return (h ^ uint64(b)) * fnvPrime }

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
// noted before are skipped.
func (f *flight) done(items []Item) {
	for i := range items {
		r := &items[i].Record
		p := f.part(broker.TopicPartition{Topic: r.Topic, Partition: r.Partition})
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

// forget drops tp (its records all done: the lanes drained), so that it
// is read again from anywhere.
func (f *flight) forget(tp broker.TopicPartition) {
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
