package sinks_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/weirnet/weir/broker"
	"github.com/weirnet/weir/configs"
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
}

func (d *laneDest) Lanes() int { return 4 }

func (d *laneDest) WriteLane(ctx context.Context, lane int, items []sinks.Item) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	for i := range items {
		if items[i].Metric.Device == "stuck" {
			d.stuckLane = lane
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
	// The stuck record waits; every other key's go, on the other lanes.
	const stuckLeft = 1
	sinktest.Eventually(t, "every record but the stuck one delivered", func() bool {
		d.mu.Lock()
		defer d.mu.Unlock()
		return d.stuckLane >= 0 && d.delivered == total-stuckLeft
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

// dlDown fails every produce to the dead-letter topic, as a broker whose
// disk is full does.
type dlDown struct{ broker.Broker }

func (b *dlDown) Produce(ctx context.Context, topic string, recs []broker.Record) error {
	if topic == telemetry.TopicDeadLetter {
		return errors.New("injected: no space left on device")
	}
	return b.Broker.Produce(ctx, topic, recs)
}

// rejectingLanes is a Concurrent destination refusing device "bad" for
// good, taking the others; it notes the devices it took.
type rejectingLanes struct {
	mu  sync.Mutex
	got []string
}

func (d *rejectingLanes) Lanes() int { return 4 }

func (d *rejectingLanes) WriteLane(ctx context.Context, lane int, items []sinks.Item) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	for i := range items {
		if items[i].Metric.Device == "bad" {
			return &sinks.PartialError{Done: i, Err: &sinks.RejectedError{Reason: "bad", Err: errors.New("HTTP 400")}}
		}
		d.got = append(d.got, items[i].Metric.Device)
	}
	return nil
}

func (d *rejectingLanes) Write(ctx context.Context, items []sinks.Item) error {
	return errors.New("Write called on a destination with lanes")
}

func (d *rejectingLanes) Close() error { return nil }

func (d *rejectingLanes) taken(prefix string) int {
	d.mu.Lock()
	defer d.mu.Unlock()
	n := 0
	for _, dev := range d.got {
		if strings.HasPrefix(dev, prefix) {
			n++
		}
	}
	return n
}

// TestDeadLetterDownHoldsOnlyItsLane: a refused record whose dead letter
// cannot be written (the broker's disk full) holds up its lane alone:
// records polled after it go on to the other lanes, the partition is
// committed up to the refused record and no further, and a stop ends
// the lane waiting on the dead-letter topic.
func TestDeadLetterDownHoldsOnlyItsLane(t *testing.T) {
	eb := sinktest.Broker(t)
	if err := eb.CreateTopic(context.Background(), "enriched.metrics", broker.TopicConfig{Partitions: 1}); err != nil {
		t.Fatal(err)
	}
	produce := func(devs ...string) {
		ms := metrics(len(devs), func(int) string { return "ifTable" })
		for i := range ms {
			ms[i].Device = devs[i]
		}
		sinktest.Produce(t, eb, "enriched.metrics", telemetry.SchemaMetric, func(i int) string { return devs[i] }, ms)
	}
	const badAt = 5
	produce("dev0", "dev1", "dev2", "dev3", "dev4", "bad", "dev6")
	d := &rejectingLanes{}
	c := cfg("dldown")
	r := sinktest.Start(t, &dlDown{Broker: eb}, c, d)
	sinktest.Eventually(t, "the dead letter failing", func() bool {
		return r.Counter("weir_sink_errors_total", map[string]string{"sink": "dldown", "kind": "dead_letter"}) > 0
	})
	var late []string
	for i := range 24 {
		late = append(late, fmt.Sprintf("late%d", i))
	}
	produce(late...)
	// Most are in other lanes than the refused record's.
	sinktest.Eventually(t, "records polled later delivered while the dead letter fails", func() bool {
		return d.taken("late") >= len(late)/2
	})
	sinktest.Eventually(t, "committed up to the refused record", func() bool {
		off, _ := eb.Committed(sinks.Group("dldown"), "enriched.metrics", 0)
		return off == badAt
	})
	if err := r.Stop(); err != nil {
		t.Fatal(err)
	}
	if off, _ := eb.Committed(sinks.Group("dldown"), "enriched.metrics", 0); off != badAt {
		t.Fatalf("committed at the stop: %d, want %d (the refused record, not dead-lettered)", off, badAt)
	}
}

// gatedLanes is a Concurrent destination whose writes of devices named
// gated+"-…" each wait for a token on gate (noting the record's device on
// started as they begin); the others are delivered at once.
type gatedLanes struct {
	gated   string
	gate    chan struct{}
	started chan string
	mu      sync.Mutex
	got     map[string]bool
}

func (d *gatedLanes) Lanes() int { return 4 }

func (d *gatedLanes) WriteLane(ctx context.Context, lane int, items []sinks.Item) error {
	for i := range items {
		dev := items[i].Metric.Device
		if strings.HasPrefix(dev, d.gated+"-") {
			d.started <- dev
			select {
			case <-d.gate:
			case <-ctx.Done():
				return &sinks.PartialError{Done: i, Err: ctx.Err()}
			}
		}
		d.mu.Lock()
		d.got[dev] = true
		d.mu.Unlock()
	}
	return nil
}

func (d *gatedLanes) Write(ctx context.Context, items []sinks.Item) error {
	return errors.New("Write called on a destination with lanes")
}

func (d *gatedLanes) Close() error { return nil }

func (d *gatedLanes) has(dev string) bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.got[dev]
}

// TestFullQueueTakenWhileALaneWrites: the lanes' queues are full
// (batch_size 1: 4 records over 4 lanes, all of key a, written one at a
// time) and polling waits for room; once a lane takes a record and begins
// a long write, polling goes on: a record of another key, polled after
// the one that waited, is delivered while that write lasts. A lane used
// to say so only when a write ended: polling, woken as the write before
// ended and finding the queue still full, waited for the end of the next
// write (or the flush interval, an hour here). It is a race, so the test
// runs it many times.
func TestFullQueueTakenWhileALaneWrites(t *testing.T) {
	b := sinktest.Broker(t)
	const lanes, batch = 4, 1
	var keys []string
	for range 1 + lanes*batch {
		keys = append(keys, "a")
	}
	keys = append(keys, "o")
	last := fmt.Sprintf("o-%d", len(keys)-1)
	for run := range 100 {
		topic := fmt.Sprintf("gated%d", run)
		if err := b.CreateTopic(context.Background(), topic, broker.TopicConfig{Partitions: 1}); err != nil {
			t.Fatal(err)
		}
		ms := metrics(len(keys), func(int) string { return "ifTable" })
		for i := range ms {
			ms[i].Device = fmt.Sprintf("%s-%d", keys[i], i)
		}
		sinktest.Produce(t, b, topic, telemetry.SchemaMetric, func(i int) string { return keys[i] }, ms)
		d := &gatedLanes{gated: "a", gate: make(chan struct{}), started: make(chan string, len(keys)),
			got: map[string]bool{}}
		c := cfg(topic)
		c.Topics = []string{topic}
		c.BatchSize = batch
		c.FlushInterval = configs.Duration(time.Hour)
		r := sinktest.Start(t, b, c, d)
		// a-0 in its write, a-1..a-4 queued, polling waits to queue o-5.
		if dev := <-d.started; dev != "a-0" {
			t.Fatalf("first write of key a: %s", dev)
		}
		// Time for polling to come to the full queues (o-5): without it
		// the race is seldom run; either way the test cannot pass
		// wrongly.
		time.Sleep(5 * time.Millisecond)
		d.gate <- struct{}{}
		if dev := <-d.started; dev != "a-1" {
			t.Fatalf("second write of key a: %s", dev)
		}
		// a-1's write lasts until the gate closes.
		sinktest.Eventually(t, fmt.Sprintf("run %d: o's record delivered while a lane writes a", run), func() bool {
			return d.has(last)
		})
		close(d.gate)
		if err := r.Stop(); err != nil {
			t.Fatal(err)
		}
	}
}
