package enrich

import (
	"bytes"
	"context"
	"log/slog"
	"strings"
	"time"

	"github.com/weirnet/weir/broker"
	"github.com/weirnet/weir/internal/logwindow"
)

// DefaultWarmup is how far back a metrics worker reads a partition it
// takes, to remember counters and states from before: longer than the
// usual poll intervals.
const DefaultWarmup = 10 * time.Minute

// WithWarmup sets how far back (by record time) a metrics worker reads a
// partition it takes before enriching it; zero or less turns warm-up off,
// also the syslog and trap workers', which read back the flap window.
func WithWarmup(d time.Duration) WorkerOption {
	return func(w *Worker) { w.warmup, w.warmupSet = d, true }
}

// warmer gives a worker the memory it would have had, had it been running
// all along. Rates need each counter's previous sample, status events the
// previous status, and the event detector the changes of the flap window:
// without them, the first poll after a restart or a rebalance has no
// rates, a link that went down meanwhile raises no interface_down, and an
// interface flapping before the restart is never cleared. When the worker takes a partition, the warmer
// reads the records of the window before the first one it is given (those
// a previous owner, or this process before a restart, already enriched)
// and feeds them through enrichment with the outputs thrown away. The log
// is the memory, on the embedded broker and on Kafka alike; nothing else
// is stored.
type warmer struct {
	b      broker.Broker
	window time.Duration
	logger *slog.Logger
	warm   map[broker.TopicPartition]bool
	// ended, if set, is told when a partition's warm-up is over, however
	// it went, with the time of its first live record (detector.endWarmup).
	ended func(tp broker.TopicPartition, liveAt time.Time)
	// adopt, if set, is told of each partition warmed up from records,
	// with the start of its window, before the warm-up ends: the
	// detector.adopter of the worker.
	adopt func(ctx context.Context, topic string, partition int32, since time.Time)
	// uncommitted, if set, is told of each partition warmed up, with the
	// offset its live records start at and the window's start, after
	// its records are read and before adopt: the detector's
	// uncommittedAdopter of the worker. It reports whether it remembered
	// any event.
	uncommitted func(ctx context.Context, topic string, partition int32, from int64, since time.Time) bool
	// lost, if set, is asked after each partition's window was fed for
	// the targets it left without their last answered poll, which
	// reachBack then finds further back: the metrics worker's.
	lost func() lostPolls
	// fetched, if set, is called after each fetch's records were fed,
	// while they are still valid (logwindow.Reader.ReadFrom's fetched):
	// the syslog worker warms from what a fetch left of its 4,096-record
	// chunks (see Worker.queueWarm).
	fetched func()
}

func newWarmer(b broker.Broker, window time.Duration, logger *slog.Logger) *warmer {
	return &warmer{b: b, window: window, logger: logger, warm: map[broker.TopicPartition]bool{}}
}

// retain forgets the partitions the worker no longer owns: if it gets one
// back, another worker may have enriched it meanwhile.
func (wm *warmer) retain(assigned []broker.TopicPartition) {
	if len(wm.warm) == 0 {
		return
	}
	owned := make(map[broker.TopicPartition]bool, len(assigned))
	for _, tp := range assigned {
		owned[tp] = true
	}
	for tp := range wm.warm {
		if !owned[tp] {
			delete(wm.warm, tp)
		}
	}
}

// before warms up, for each partition of recs not yet warm, from the
// records before its first record in recs. feed gets each record of the
// window in order, with the time the window ends (see warmPartition).
// Once ctx has ended, a warm-up may have been cut short (or not begun)
// and the partition counts as warm nonetheless: the worker must then
// leave recs alone, as their events judged without the window's state
// would be repeats published and changes left out, for good (the next
// start's src_offset skip keeps what was published).
func (wm *warmer) before(ctx context.Context, recs []broker.Record, feed func(r *broker.Record, end time.Time)) {
	var last broker.TopicPartition
	for i := range recs {
		r := &recs[i]
		tp := broker.TopicPartition{Topic: r.Topic, Partition: r.Partition}
		if i > 0 && tp == last {
			continue // a poll comes partition by partition: looked up already
		}
		last = tp
		if wm.warm[tp] {
			continue
		}
		wm.warm[tp] = true
		if wm.window <= 0 || ctx.Err() != nil {
			continue
		}
		if r.Offset == 0 {
			// Nothing before it; what a process before published of
			// its records and did not commit, maybe.
			wm.warmFromStart(ctx, tp, r.Timestamp)
			continue
		}
		wm.warmPartition(ctx, r.Topic, r.Partition, r.Offset, r.Timestamp, feed)
	}
}

// warmPartition feeds the records of the window before offset upTo, whose
// record is from liveAt (or is to come), and logs how it went. The window
// ends at the record before upTo, the last one enriched before, if that
// is older than liveAt: after weir was stopped for longer than the window,
// the window before the stop still gives the last samples and states, and
// the changes of a flapping that had not cleared when it stopped. feed
// gets that end as its second argument.
func (wm *warmer) warmPartition(ctx context.Context, topic string, partition int32, upTo int64, liveAt time.Time, feed func(r *broker.Record, end time.Time)) {
	if wm.ended != nil {
		defer wm.ended(broker.TopicPartition{Topic: topic, Partition: partition}, liveAt)
	}
	start := time.Now()
	end := liveAt
	if last, ok := wm.timeOf(ctx, topic, partition, upTo-1); ok && last.Before(end) {
		end = last
	}
	n, err := wm.read(ctx, topic, partition, upTo, end.Add(-wm.window), func(r *broker.Record) { feed(r, end) })
	if ctx.Err() != nil {
		return // stopping, not a failure
	}
	if err != nil {
		// Enrichment goes on; rates and states start afresh, as without
		// warm-up. The targets the records read noted are forgotten
		// (lost clears them), or the next partition's warm-up would
		// read back through its own records for them.
		if wm.lost != nil {
			wm.lost()
		}
		wm.logger.Warn("enrich: warm-up failed", slog.String("topic", topic), slog.Int("partition", int(partition)),
			slog.Int("records", n), slog.Any("error", err))
		return
	}
	wm.reachBack(ctx, topic, partition, upTo, end.Add(-wm.window), end, feed)
	wm.adoptUncommitted(ctx, topic, partition, upTo, end)
	if n > 0 && wm.adopt != nil {
		wm.adopt(ctx, topic, partition, end.Add(-wm.window))
	}
	if n > 0 {
		wm.logger.Info("enrich: warmed up", slog.String("topic", topic), slog.Int("partition", int(partition)),
			slog.Int("records", n), slog.Duration("took", time.Since(start)))
	}
}

// idle warms up each partition in assigned that is not warm yet and whose
// position c knows: one that gave no record since the worker took it.
// Without it such a partition would wait for its first record, and an
// object that was flapping on it would not be cleared until then. feed is
// as for before.
func (wm *warmer) idle(ctx context.Context, c broker.Consumer, assigned []broker.TopicPartition, feed func(r *broker.Record, end time.Time)) {
	pc, ok := c.(broker.Positioner)
	if !ok || wm.window <= 0 {
		return
	}
	for _, tp := range assigned {
		if wm.warm[tp] {
			continue
		}
		pos, ok := pc.Position(ctx, tp)
		if !ok {
			continue // not known yet: the next round, or the first record
		}
		pi, err := logwindow.Partition(ctx, wm.b, tp.Topic, tp.Partition)
		if err != nil {
			continue // the next round
		}
		wm.warm[tp] = true
		// A position past the log's end is a commit from an earlier
		// topic of that name (deleted and made again): nothing below it
		// was enriched from this log.
		switch {
		case pos == 0:
			wm.warmFromStart(ctx, tp, time.Now())
		case pos <= pi.HighWatermark:
			wm.warmPartition(ctx, tp.Topic, tp.Partition, pos, time.Now(), feed)
		}
	}
}

// everyAssigned is idle (in its place), run again until every partition c
// is assigned is warm, for at most wait: before a worker counts as warm at
// the warm gate. idle
// leaves a partition whose position the consumer does not know yet to the
// next round; counted warm without it, a worker let the others judge live
// records before it had read back that partition's past (on Kafka, a
// syslog line published again as the change a trap there had reported
// before a kill).
func (wm *warmer) everyAssigned(ctx context.Context, c broker.Consumer, wait time.Duration, feed func(r *broker.Record, end time.Time)) {
	if _, ok := c.(broker.Positioner); !ok || wm.window <= 0 {
		return // idle warms nothing up
	}
	deadline := time.Now().Add(wait)
	for {
		assigned := c.Assigned()
		wm.idle(ctx, c, assigned, feed)
		cold := false
		for _, tp := range assigned {
			cold = cold || !wm.warm[tp]
		}
		if !cold || ctx.Err() != nil {
			return
		}
		if time.Now().After(deadline) {
			wm.logger.Warn("enrich: counting as warm before every partition given was read back: their positions are not known", slog.Duration("waited", wait))
			return
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// assignedWarmWait bounds warmer.everyAssigned.
const assignedWarmWait = 10 * time.Second

// idleRound is a poll's warm-up of the partitions it gave no record of:
// before the worker passes the warm gate, while it holds or polled any,
// every one it holds (everyAssigned); else those whose position is known
// (idle).
func (wm *warmer) idleRound(ctx context.Context, c broker.Consumer, assigned []broker.TopicPartition, polled, beforeGate bool, feed func(r *broker.Record, end time.Time)) {
	if beforeGate && (len(assigned) > 0 || polled) {
		wm.everyAssigned(ctx, c, assignedWarmWait, feed)
		return
	}
	wm.idle(ctx, c, assigned, feed)
}

// adoptUncommitted tells uncommitted, if set, of partition's warm-up,
// whose live records start at from and whose window ends at end, and
// reports whether it remembered any event.
func (wm *warmer) adoptUncommitted(ctx context.Context, topic string, partition int32, from int64, end time.Time) bool {
	return wm.uncommitted != nil && wm.uncommitted(ctx, topic, partition, from, end.Add(-wm.window))
}

// warmFromStart is the warm-up of a partition read from its first record
// on, whose live records are from liveAt: only what a process before
// published of them, if anything; then the warm-up ends as any does
// (ended), or the hold on settle it set would last for clockStale.
func (wm *warmer) warmFromStart(ctx context.Context, tp broker.TopicPartition, liveAt time.Time) {
	if wm.adoptUncommitted(ctx, tp.Topic, tp.Partition, 0, liveAt) && wm.ended != nil {
		wm.ended(tp, liveAt)
	}
}

// timeOf returns the time of the record at offset, if it can be read.
func (wm *warmer) timeOf(ctx context.Context, topic string, partition int32, offset int64) (time.Time, bool) {
	// Its own result, not one kept in the warmer: a fetch reads a batch
	// whole, and a compressed one may decode to a quarter of a million
	// records (tens of MB), which a kept result held until the next
	// warm-up, for good on a worker that took its partitions.
	var res broker.FetchResult
	if err := wm.b.Fetch(ctx, topic, partition, offset, broker.FetchOptions{MaxBytes: 1}, &res); err != nil {
		return time.Time{}, false
	}
	for _, r := range res.Records {
		if r.Offset == offset && !r.Timestamp.IsZero() {
			return r.Timestamp, true
		}
	}
	return time.Time{}, false
}

// read feeds the records of topic/partition below upTo whose time is not
// before cutoff, and returns how many it fed (logwindow.Reader.Read). Its
// reader is its own: the fetch buffer of a large window (8 MiB) goes with
// it, not kept by every worker for as long as it runs after a warm-up. The
// last record of the window is fed as a copy: a worker's scratch keeps
// the last record it decoded, whose strings share the record's bytes, and
// they would keep the whole buffer until the next record came (for good on
// a quiet partition).
//
// A fetch that fails is tried again after each of warmRetries, going on
// from where the reading got to: a warm-up given up judges the partition's
// records without the window's state, for good, and a moment's failure
// (a Kafka partition's leader moving in a rolling restart) is common.
func (wm *warmer) read(ctx context.Context, topic string, partition int32, upTo int64, cutoff time.Time, feed func(*broker.Record)) (int, error) {
	r := logwindow.Reader{B: wm.b}
	copyLast := func(rec *broker.Record) {
		if rec.Offset == upTo-1 {
			last := copyRecord(rec)
			rec = &last
		}
		feed(rec)
	}
	from, n := int64(-1), 0 // -1: the window's start is not found yet
	attempt := func() error {
		if from < 0 {
			start, err := r.WindowStart(ctx, topic, partition, upTo, cutoff)
			if err != nil {
				return err
			}
			from = start
		}
		next, fed, err := r.ReadFrom(ctx, topic, partition, from, upTo, cutoff, copyLast, wm.fetched)
		from, n = next, n+fed
		return err
	}
	for try := 0; ; try++ {
		err := attempt()
		if err == nil || ctx.Err() != nil || try == len(warmRetries) {
			return n, err
		}
		select {
		case <-ctx.Done():
			return n, ctx.Err()
		case <-time.After(warmRetries[try]):
		}
	}
}

// warmRetries are the waits before a warm-up's reading is tried again.
var warmRetries = [...]time.Duration{100 * time.Millisecond, 500 * time.Millisecond, 2 * time.Second}

// copyRecord is r with bytes of its own.
func copyRecord(r *broker.Record) broker.Record {
	c := *r
	c.Key, c.Value = bytes.Clone(r.Key), bytes.Clone(r.Value)
	if r.Headers != nil {
		c.Headers = make([]broker.Header, len(r.Headers))
		for i, h := range r.Headers {
			c.Headers[i] = broker.Header{Key: strings.Clone(h.Key), Value: bytes.Clone(h.Value)}
		}
	}
	return c
}
