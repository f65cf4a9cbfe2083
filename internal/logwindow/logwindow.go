// Package logwindow reads back the recent past of a partition, by record
// time, for the parts that rebuild their state from the log when they take
// a partition: enrichment's warm-up (rates, states, flapping) and the
// prometheus sink's (the series it serves).
package logwindow

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/weirnet/weir/broker"
)

// MaxRecords bounds how far back from its end a window starts.
const MaxRecords = 4 << 20

// FetchBytes is how much one fetch reads: large, so that a window is read
// in few fetches (on Kafka, a request to the partition's leader each).
const FetchBytes = 8 << 20

// Reader reads windows of one broker's partitions; its fetch buffer is
// reused from one read to the next. One goroutine at a time.
type Reader struct {
	B   broker.Broker
	res broker.FetchResult
}

// Read feeds the records of topic/partition below upTo whose time is not
// before cutoff, oldest first, and returns how many it fed. A record is
// valid until the next fetch: fetched, if not nil, is called after each
// fetch's records were fed. A fetch of what is in the log does not look at
// ctx, so Read checks it between fetches: a window of millions of records
// would otherwise hold a stop for as long as it takes to read.
func (r *Reader) Read(ctx context.Context, topic string, partition int32, upTo int64, cutoff time.Time, feed func(*broker.Record), fetched func()) (int, error) {
	from, err := r.WindowStart(ctx, topic, partition, upTo, cutoff)
	if err != nil {
		return 0, err
	}
	_, n, err := r.ReadFrom(ctx, topic, partition, from, upTo, cutoff, feed, fetched)
	return n, err
}

// ReadFrom is Read from offset from on, not from where cutoff's window
// starts; it also returns the offset it read up to, where a later read of
// what came since goes on from (below upTo when the rest were not
// readable yet: transaction markers, an open transaction).
func (r *Reader) ReadFrom(ctx context.Context, topic string, partition int32, from, upTo int64, cutoff time.Time, feed func(*broker.Record), fetched func()) (next int64, n int, err error) {
	restarts := 0
	for from < upTo {
		if err := ctx.Err(); err != nil {
			return from, n, err
		}
		err := r.B.Fetch(ctx, topic, partition, from, broker.FetchOptions{MaxBytes: FetchBytes}, &r.res)
		if errors.Is(err, broker.ErrOffsetOutOfRange) && restarts < 3 {
			// Retention moved the log start past from meanwhile: go on
			// from the new start.
			restarts++
			start, err := r.logStart(ctx, topic, partition)
			if err != nil {
				return from, n, err
			}
			from = max(from, start)
			continue
		}
		if err != nil {
			return from, n, fmt.Errorf("fetch %s/%d@%d: %w", topic, partition, from, err)
		}
		before, done := from, false
		for i := range r.res.Records {
			rec := &r.res.Records[i]
			if rec.Offset < from {
				continue // a batch is read whole
			}
			if rec.Offset >= upTo {
				done = true
				break
			}
			if !rec.Timestamp.Before(cutoff) {
				feed(rec)
				n++
			}
			from = rec.Offset + 1
		}
		if fetched != nil {
			fetched()
		}
		if done || from == before {
			return from, n, nil // the end, or nothing more (markers, or the log was truncated)
		}
	}
	return from, n, nil
}

// WindowStart finds an offset at or before the first record of
// topic/partition below upTo whose time is not before cutoff: it steps
// back from upTo, four times further each time, until it reaches a record
// older than cutoff, the log start or MaxRecords.
func (r *Reader) WindowStart(ctx context.Context, topic string, partition int32, upTo int64, cutoff time.Time) (int64, error) {
	logStart, err := r.logStart(ctx, topic, partition)
	if err != nil {
		return 0, err
	}
	for back := int64(1024); ; back *= 4 {
		from := max(logStart, upTo-min(back, MaxRecords))
		if from == logStart || back >= MaxRecords {
			return from, nil
		}
		err := r.B.Fetch(ctx, topic, partition, from, broker.FetchOptions{MaxBytes: 1}, &r.res)
		if errors.Is(err, broker.ErrOffsetOutOfRange) {
			return r.logStart(ctx, topic, partition) // retention moved the start meanwhile
		}
		if err != nil {
			return 0, fmt.Errorf("fetch %s/%d@%d: %w", topic, partition, from, err)
		}
		if len(r.res.Records) == 0 || r.res.Records[0].Timestamp.Before(cutoff) {
			return from, nil
		}
	}
}

func (r *Reader) logStart(ctx context.Context, topic string, partition int32) (int64, error) {
	pi, err := Partition(ctx, r.B, topic, partition)
	return pi.LogStartOffset, err
}

// Partition describes topic/partition.
func Partition(ctx context.Context, b broker.Broker, topic string, partition int32) (broker.PartitionInfo, error) {
	infos, err := b.DescribeTopics(ctx, topic)
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
