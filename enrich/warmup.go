package enrich

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/weirnet/weir/broker"
)

// DefaultWarmup is how far back a metrics worker reads a partition it
// takes, to remember counters and states from before: longer than the
// usual poll intervals.
const DefaultWarmup = 10 * time.Minute

// warmupMaxRecords bounds the records one partition's warm-up reads.
const warmupMaxRecords = 4 << 20

// warmupFetchBytes is how much one warm-up fetch reads: large, so that a
// window is read back in few fetches (on Kafka, a request to the
// partition's leader each).
const warmupFetchBytes = 8 << 20

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
	res    broker.FetchResult
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
		if wm.window <= 0 || r.Offset == 0 || ctx.Err() != nil {
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
		// warm-up.
		wm.logger.Warn("enrich: warm-up failed", slog.String("topic", topic), slog.Int("partition", int(partition)),
			slog.Int("records", n), slog.Any("error", err))
		return
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
		pos, ok := pc.Position(tp)
		if !ok {
			continue // not known yet: the next round, or the first record
		}
		pi, err := wm.partition(ctx, tp.Topic, tp.Partition)
		if err != nil {
			continue // the next round
		}
		wm.warm[tp] = true
		// A position past the log's end is a commit from an earlier
		// topic of that name (deleted and made again): nothing below it
		// was enriched from this log.
		if pos > 0 && pos <= pi.HighWatermark {
			wm.warmPartition(ctx, tp.Topic, tp.Partition, pos, time.Now(), feed)
		}
	}
}

// timeOf returns the time of the record at offset, if it can be read.
func (wm *warmer) timeOf(ctx context.Context, topic string, partition int32, offset int64) (time.Time, bool) {
	if err := wm.b.Fetch(ctx, topic, partition, offset, broker.FetchOptions{MaxBytes: 1}, &wm.res); err != nil {
		return time.Time{}, false
	}
	for _, r := range wm.res.Records {
		if r.Offset == offset && !r.Timestamp.IsZero() {
			return r.Timestamp, true
		}
	}
	return time.Time{}, false
}

// read feeds the records of topic/partition below upTo whose time is not
// before cutoff, and returns how many it fed.
func (wm *warmer) read(ctx context.Context, topic string, partition int32, upTo int64, cutoff time.Time, feed func(*broker.Record)) (int, error) {
	from, err := wm.windowStart(ctx, topic, partition, upTo, cutoff)
	if err != nil {
		return 0, err
	}
	n, restarts := 0, 0
	for from < upTo {
		if err := ctx.Err(); err != nil {
			// Stopping: a fetch of what is in the log does not look at
			// ctx, and a window of millions of records would hold the
			// stop for as long as it takes to read.
			return n, err
		}
		err := wm.b.Fetch(ctx, topic, partition, from, broker.FetchOptions{MaxBytes: warmupFetchBytes}, &wm.res)
		if errors.Is(err, broker.ErrOffsetOutOfRange) && restarts < 3 {
			// Retention moved the log start past from meanwhile: go on
			// from the new start.
			restarts++
			start, err := wm.logStart(ctx, topic, partition)
			if err != nil {
				return n, err
			}
			from = max(from, start)
			continue
		}
		if err != nil {
			return n, fmt.Errorf("fetch %s/%d@%d: %w", topic, partition, from, err)
		}
		before := from
		for i := range wm.res.Records {
			r := &wm.res.Records[i]
			if r.Offset < from {
				continue // a batch is read whole
			}
			if r.Offset >= upTo {
				return n, nil
			}
			if !r.Timestamp.Before(cutoff) {
				feed(r)
				n++
			}
			from = r.Offset + 1
		}
		if from == before {
			return n, nil // nothing more (markers, or the log was truncated)
		}
	}
	return n, nil
}

// windowStart finds an offset at or before the first record of
// topic/partition below upTo whose time is not before cutoff: it steps
// back from upTo, four times further each time, until it reaches a record
// older than cutoff, the log start or warmupMaxRecords.
func (wm *warmer) windowStart(ctx context.Context, topic string, partition int32, upTo int64, cutoff time.Time) (int64, error) {
	logStart, err := wm.logStart(ctx, topic, partition)
	if err != nil {
		return 0, err
	}
	for back := int64(1024); ; back *= 4 {
		from := max(logStart, upTo-min(back, warmupMaxRecords))
		if from == logStart || back >= warmupMaxRecords {
			return from, nil
		}
		err := wm.b.Fetch(ctx, topic, partition, from, broker.FetchOptions{MaxBytes: 1}, &wm.res)
		if errors.Is(err, broker.ErrOffsetOutOfRange) {
			return wm.logStart(ctx, topic, partition) // retention moved the start meanwhile
		}
		if err != nil {
			return 0, fmt.Errorf("fetch %s/%d@%d: %w", topic, partition, from, err)
		}
		if len(wm.res.Records) == 0 || wm.res.Records[0].Timestamp.Before(cutoff) {
			return from, nil
		}
	}
}

func (wm *warmer) logStart(ctx context.Context, topic string, partition int32) (int64, error) {
	pi, err := wm.partition(ctx, topic, partition)
	return pi.LogStartOffset, err
}

// partition describes topic/partition.
func (wm *warmer) partition(ctx context.Context, topic string, partition int32) (broker.PartitionInfo, error) {
	infos, err := wm.b.DescribeTopics(ctx, topic)
	if err != nil {
		return broker.PartitionInfo{}, fmt.Errorf("describe %s: %w", topic, err)
	}
	for _, t := range infos {
		for _, p := range t.Partitions {
			if t.Name == topic && p.Partition == partition {
				return p, nil
			}
		}
	}
	return broker.PartitionInfo{}, fmt.Errorf("describe %s: partition %d not found", topic, partition)
}
