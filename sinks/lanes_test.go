package sinks_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"

	"github.com/weirnet/weir/broker"
	"github.com/weirnet/weir/sinks"
	"github.com/weirnet/weir/sinks/internal/sinktest"
	"github.com/weirnet/weir/telemetry"
)

// laneDest is a Concurrent destination whose records of device "stuck"
// fail for good (retryable): the lane they are in is held at them, the
// others deliver.
type laneDest struct {
	mu        sync.Mutex
	delivered int
	stuckLane int // -1 until known
	stuckLeft int // records of the stuck lane from the stuck one on
}

func (d *laneDest) Lanes() int { return 4 }

func (d *laneDest) WriteLane(ctx context.Context, lane int, items []sinks.Item) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	for i := range items {
		if items[i].Metric.Device == "stuck" {
			d.stuckLane, d.stuckLeft = lane, len(items)-i
			return &sinks.PartialError{Done: i, Err: &sinks.RetryableError{Err: errors.New("HTTP 503")}}
		}
		d.delivered++
	}
	return nil
}

func (d *laneDest) Write(ctx context.Context, items []sinks.Item) error {
	return errors.New("Write called on a destination with lanes")
}

func (d *laneDest) Close() error { return nil }

// TestStopCommitsUpToTheFirstRecordNotDelivered: a destination with posts
// in flight on lanes, one lane held at a record it retries, the others
// delivered past it. At the stop, each partition is committed up to that
// record, not past it (it would be lost) and not short of it (the
// records delivered before it would come again).
func TestStopCommitsUpToTheFirstRecordNotDelivered(t *testing.T) {
	b := sinktest.Broker(t)
	if err := b.CreateTopic(context.Background(), "enriched.metrics", broker.TopicConfig{Partitions: 1}); err != nil {
		t.Fatal(err)
	}
	const stuckAt, total = 5, 40
	key := func(i int) string {
		if i == stuckAt {
			return "stuck"
		}
		return fmt.Sprintf("dev%d", i)
	}
	ms := metrics(total, func(int) string { return "ifTable" })
	for i := range ms {
		ms[i].Device = key(i)
	}
	sinktest.Produce(t, b, "enriched.metrics", telemetry.SchemaMetric, key, ms)
	d := &laneDest{stuckLane: -1}
	c := cfg("lanes")
	c.BatchSize = total
	r := sinktest.Start(t, b, c, d)
	sinktest.Eventually(t, "every lane but the stuck one delivered", func() bool {
		d.mu.Lock()
		defer d.mu.Unlock()
		return d.stuckLane >= 0 && d.delivered == total-d.stuckLeft
	})
	r.Stop()
	if off, _ := b.Committed(sinks.Group("lanes"), "enriched.metrics", 0); off != stuckAt {
		t.Fatalf("committed at the stop: %d, want %d (the record still retried)", off, stuckAt)
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.delivered <= stuckAt {
		t.Fatalf("%d records delivered: the other lanes did not go past the stuck record", d.delivered)
	}
}
