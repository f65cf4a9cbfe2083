package sinks

import (
	"context"
	"slices"
	"time"

	"github.com/weirnet/weir/broker"
	"github.com/weirnet/weir/internal/logwindow"
	"github.com/weirnet/weir/telemetry"
)

// Warmer is a destination that holds the latest state of what it
// consumed instead of passing records on (the prometheus sink's series).
// The records before the group's committed position were delivered to it
// by an earlier run, or by another member of the group, and are not
// delivered again: without them such a destination starts empty after a
// restart or a rebalance, until every series is updated again. When the
// sink takes a partition it reads back the records of the partition from
// WarmWindow before now up to that position and hands them to Warm, oldest
// first, before any new record of the partition; they are neither counted
// nor committed.
type Warmer interface {
	// WarmWindow is how far back to read, by record time (zero or less:
	// not at all).
	WarmWindow() time.Duration
	// Warm takes decoded items of the window (those the filter keeps).
	// The items and their Points are valid only during the call.
	Warm(items []Item)
}

// warmup reads back the window of each partition the sink takes, once.
type warmup struct {
	s    *Sink
	dest Warmer
	warm map[broker.TopicPartition]bool
	log  logwindow.Reader
	dec  decoder
	pts  []*telemetry.Point
	its  []Item
}

func newWarmup(s *Sink, dest Warmer) *warmup {
	return &warmup{s: s, dest: dest, warm: map[broker.TopicPartition]bool{}, log: logwindow.Reader{B: s.b}}
}

// run warms each partition c owns that is not warm yet: from the first of
// recs (what this poll gives of it), or from c's position of one that gave
// nothing yet. A partition c no longer owns is forgotten, so one taken back
// later (its state dropped meanwhile, see PartitionReleaser) is read back
// again.
func (w *warmup) run(ctx context.Context, c broker.Consumer, recs []broker.Record) {
	window := w.dest.WarmWindow()
	if window <= 0 {
		return
	}
	assigned := c.Assigned()
	for tp := range w.warm {
		if !slices.Contains(assigned, tp) {
			delete(w.warm, tp)
		}
	}
	cutoff := time.Now().Add(-window)
	var last broker.TopicPartition
	for i := range recs {
		r := &recs[i]
		tp := broker.TopicPartition{Topic: r.Topic, Partition: r.Partition}
		if i > 0 && tp == last {
			continue // a poll comes partition by partition: looked up already
		}
		last = tp
		if w.warm[tp] {
			continue
		}
		w.warm[tp] = true
		if r.Offset > 0 && ctx.Err() == nil {
			w.partition(ctx, tp, r.Offset, cutoff)
		}
	}
	pc, ok := c.(broker.Positioner)
	if !ok {
		return
	}
	for _, tp := range assigned {
		if w.warm[tp] || ctx.Err() != nil {
			continue
		}
		pos, ok := pc.Position(ctx, tp)
		if !ok {
			continue // not known yet: the next poll, or its first record
		}
		w.warm[tp] = true
		if pos > 0 {
			w.partition(ctx, tp, pos, cutoff)
		}
	}
}

// partition reads tp's records below upTo whose time is not before cutoff
// into the destination, and logs how it went.
func (w *warmup) partition(ctx context.Context, tp broker.TopicPartition, upTo int64, cutoff time.Time) {
	start := time.Now()
	n, err := w.read(ctx, tp, upTo, cutoff)
	w.release()
	if ctx.Err() != nil {
		return // stopping, not a failure
	}
	if err != nil {
		w.s.logger.Warn("sink warm-up failed; its series come back with their next update", "sink", w.s.cfg.Name,
			"topic", tp.Topic, "partition", tp.Partition, "records", n, "err", err)
		return
	}
	if n > 0 {
		w.s.logger.Info("sink warmed up", "sink", w.s.cfg.Name, "topic", tp.Topic, "partition", tp.Partition,
			"records", n, "took", time.Since(start).Round(time.Millisecond))
	}
}

// release drops what a read decoded into and fetched with (a fetch's
// Points, the fetch buffer, the decoder's caches: tens of MB), so a sink
// does not hold them for the rest of its life; a partition is warmed once
// each time the sink takes it, so the next one allocates again.
func (w *warmup) release() {
	w.pts, w.its = nil, nil
	w.dec = decoder{}
	w.log = logwindow.Reader{B: w.s.b}
}

func (w *warmup) read(ctx context.Context, tp broker.TopicPartition, upTo int64, cutoff time.Time) (int, error) {
	pi, err := logwindow.Partition(ctx, w.s.b, tp.Topic, tp.Partition)
	if err != nil {
		return 0, err
	}
	if upTo > pi.HighWatermark {
		// A commit from an earlier topic of that name (deleted and
		// made again): nothing below it came from this log.
		return 0, nil
	}
	n := 0
	w.its = w.its[:0]
	_, err = w.log.Read(ctx, tp.Topic, tp.Partition, upTo, cutoff, func(r *broker.Record) {
		if w.item(r) {
			n++
		}
	}, func() {
		// Before the next fetch reuses the records' memory.
		if len(w.its) > 0 {
			w.dest.Warm(w.its)
			clear(w.its)
			w.its = w.its[:0]
		}
	})
	return n, err
}

// item decodes r into the next item of w.its; false for a record the sink
// would not deliver (another schema, filtered out, undecodable).
func (w *warmup) item(r *broker.Record) bool {
	it := Item{Record: *r}
	for _, h := range r.Headers {
		if h.Key == telemetry.HeaderSchema {
			it.Schema = schemaName(h.Value)
		}
	}
	var pt *telemetry.Point
	if w.s.points {
		if len(w.its) == len(w.pts) {
			w.pts = append(w.pts, new(telemetry.Point))
		}
		pt = w.pts[len(w.its)]
	}
	ok, err := w.s.decode(&w.dec, &it, pt)
	if err != nil || !ok {
		return false
	}
	w.its = append(w.its, it)
	return true
}
