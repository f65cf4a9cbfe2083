package sinks_test

import (
	"context"
	"errors"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/weirnet/weir/broker"
	"github.com/weirnet/weir/broker/embedded"
	"github.com/weirnet/weir/sinks"
	"github.com/weirnet/weir/sinks/internal/sinktest"
	"github.com/weirnet/weir/telemetry"
)

// TestSinkOutlivesPollErrors: a failed poll is counted and polled again;
// the sink does not stop (weir run stopped with it).
func TestSinkOutlivesPollErrors(t *testing.T) {
	eb := sinktest.Broker(t)
	sinktest.Produce(t, eb, "enriched.metrics", telemetry.SchemaMetric, devKey, metrics(20, func(int) string { return "ifTable" }))
	d := &fakeDest{}
	pb := &pollDown{Broker: eb} // its first poll fails, as after a group session lost in a network blip
	pb.n.Store(1)
	r := sinktest.Start(t, pb, cfg("flaky"), d)
	sinktest.Eventually(t, "20 delivered", func() bool { n, _ := d.seen(); return n == 20 })
	if n := r.Counter("weir_sink_errors_total", map[string]string{"sink": "flaky", "kind": "poll"}); n != 1 {
		t.Errorf("poll errors counted: %v, want 1", n)
	}
	r.Stop()
}

type alwaysDown struct{}

func (alwaysDown) Write(context.Context, []sinks.Item) error {
	return &sinks.RetryableError{Err: errors.New("connection refused")}
}
func (alwaysDown) Close() error { return nil }

// TestDeadLetterRefusedDropsOnlyThatRecord: one record too large for the
// dead-letter topic once its headers are added does not take the rest of
// its batch with it.
func TestDeadLetterRefusedDropsOnlyThatRecord(t *testing.T) {
	b, err := embedded.Open(t.TempDir(), embedded.WithTopicDefaults(broker.TopicConfig{Partitions: 1}), embedded.WithMaxMessageBytes(4096))
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	var recs []broker.Record
	for i := range 10 {
		v := `{"n":1}`
		if i == 5 {
			v = `{"pad":"` + strings.Repeat("x", 3900) + `"}` // fits; with the dead-letter headers it does not
		}
		recs = append(recs, broker.Record{Key: []byte("k"), Value: []byte(v)})
	}
	if err := b.Produce(context.Background(), "t", recs); err != nil {
		t.Fatal(err)
	}
	c := cfg("dl")
	c.Topics = []string{"t"}
	c.Retry.MaxAttempts = 1
	r := sinktest.Start(t, b, c, alwaysDown{})
	sinktest.Eventually(t, "the batch given up", func() bool {
		return r.Counter("weir_sink_errors_total", map[string]string{"sink": "dl", "kind": "dead_letter_dropped"}) > 0
	})
	r.Stop()
	if dl := sinktest.ReadAll(t, b, telemetry.TopicDeadLetter); len(dl) != 9 {
		t.Fatalf("%d dead letters, want the 9 records that fit", len(dl))
	}
	if n := r.Counter("weir_sink_errors_total", map[string]string{"sink": "dl", "kind": "dead_letter_dropped"}); n != 1 {
		t.Errorf("%v dropped, want 1", n)
	}
}

// dlPartial fails its first produce to the dead-letter topic after
// appending the first half of the records, as the embedded log does when
// the disk fills between partitions.
type dlPartial struct {
	broker.Broker
	done atomic.Bool
}

func (b *dlPartial) Produce(ctx context.Context, topic string, recs []broker.Record) error {
	if topic != telemetry.TopicDeadLetter || len(recs) < 2 || b.done.Swap(true) {
		return b.Broker.Produce(ctx, topic, recs)
	}
	half := len(recs) / 2
	if err := b.Broker.Produce(ctx, topic, recs[:half]); err != nil {
		return err
	}
	for i := half; i < len(recs); i++ {
		recs[i].Offset = -1
	}
	return errors.New("injected: no space left on device")
}

// TestDeadLettersRetriedOnce: dead letters the broker could not all take
// are retried (counted as a dead_letter error), and those it took before
// failing are not written twice.
func TestDeadLettersRetriedOnce(t *testing.T) {
	eb, err := embedded.Open(t.TempDir(), embedded.WithTopicDefaults(broker.TopicConfig{Partitions: 1}))
	if err != nil {
		t.Fatal(err)
	}
	defer eb.Close()
	var recs []broker.Record
	for range 10 {
		recs = append(recs, broker.Record{Key: []byte("k"), Value: []byte(`{"n":1}`)})
	}
	if err := eb.Produce(context.Background(), "t", recs); err != nil {
		t.Fatal(err)
	}
	c := cfg("dl")
	c.Topics = []string{"t"}
	c.Retry.MaxAttempts = 1
	b := &dlPartial{Broker: eb}
	r := sinktest.Start(t, b, c, alwaysDown{})
	sinktest.Eventually(t, "10 dead letters", func() bool {
		return r.Counter("weir_sink_dead_letters_total", map[string]string{"sink": "dl", "reason": "retries_exhausted"}) == 10
	})
	r.Stop()
	if dl := sinktest.ReadAll(t, eb, telemetry.TopicDeadLetter); len(dl) != 10 {
		t.Fatalf("%d dead letters, want each of the 10 once", len(dl))
	}
	if n := r.Counter("weir_sink_errors_total", map[string]string{"sink": "dl", "kind": "dead_letter"}); n != 1 {
		t.Errorf("%v dead-letter write errors, want 1", n)
	}
}

// ctxCommitting's consumers refuse to commit with a context that has
// ended, as the Kafka backend's do (franz-go fails the commit request at
// once).
type ctxCommitting struct{ broker.Broker }

type ctxCommittingConsumer struct{ broker.Consumer }

func (b *ctxCommitting) Consume(ctx context.Context, g string, topics []string, opts ...broker.ConsumerOption) (broker.Consumer, error) {
	c, err := b.Broker.Consume(ctx, g, topics, opts...)
	if err != nil {
		return nil, err
	}
	return &ctxCommittingConsumer{c}, nil
}

func (c *ctxCommittingConsumer) Commit(ctx context.Context) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	return c.Consumer.Commit(ctx)
}

func (c *ctxCommittingConsumer) CommitOffsets(ctx context.Context, offsets map[broker.TopicPartition]int64) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	return c.Consumer.(broker.OffsetCommitter).CommitOffsets(ctx, offsets)
}

// finishingDest takes its writes after weir has begun to stop: each waits
// for the stop, then succeeds (an answer that arrives as the signal does,
// a file written and synced), as a write in flight at a stop may.
type finishingDest struct{ writes atomic.Int32 }

func (d *finishingDest) Write(ctx context.Context, _ []sinks.Item) error {
	d.writes.Add(1)
	<-ctx.Done()
	return nil
}

func (d *finishingDest) Close() error { return nil }

// TestStopCommitsTheBatchDelivered: a batch the destination took while
// weir was stopping is committed, on a Kafka cluster too. The commit used
// the sink's context, done by then, which the Kafka backend refuses: a
// clean stop left the batch uncommitted, and the next start delivered it
// again (up to batch_size records posted twice, where the sinks promise a
// repeat only after a crash).
func TestStopCommitsTheBatchDelivered(t *testing.T) {
	eb := sinktest.Broker(t)
	sinktest.Produce(t, eb, "enriched.metrics", telemetry.SchemaMetric, devKey, metrics(40, func(int) string { return "ifTable" }))
	d := &finishingDest{}
	c := cfg("finishing")
	c.BatchSize = 40
	r := sinktest.Start(t, &ctxCommitting{Broker: eb}, c, d)
	sinktest.Eventually(t, "a write in flight", func() bool { return d.writes.Load() > 0 })
	r.Stop()
	var committed int64
	for p := int32(0); p < 3; p++ {
		off, _ := eb.Committed(sinks.Group("finishing"), "enriched.metrics", p)
		committed += off
	}
	if committed != 40 {
		t.Fatalf("%d records committed at the stop, want the 40 the destination took", committed)
	}
}

// hangingCommits' consumers commit nothing until their context ends, as
// the Kafka backend's do against a cluster that hangs.
type hangingCommits struct{ broker.Broker }

type hangingCommitsConsumer struct{ broker.Consumer }

func (b *hangingCommits) Consume(ctx context.Context, g string, topics []string, opts ...broker.ConsumerOption) (broker.Consumer, error) {
	c, err := b.Broker.Consume(ctx, g, topics, opts...)
	if err != nil {
		return nil, err
	}
	return &hangingCommitsConsumer{c}, nil
}

func (c *hangingCommitsConsumer) Commit(ctx context.Context) error {
	<-ctx.Done()
	return ctx.Err()
}

func (c *hangingCommitsConsumer) CommitOffsets(ctx context.Context, _ map[broker.TopicPartition]int64) error {
	<-ctx.Done()
	return ctx.Err()
}

// TestStopWithHangingCommitsIsBounded: a stop while a poll's batches are
// being delivered, against a cluster whose commits hang, ends within the
// one commit's few seconds a stop gives, not a few seconds per batch the
// poll still held. Each batch delivered after the stop (a file sink's
// write does not end with the context) was committed with 5 s of its
// own: 10 batches of a poll took 45 s to stop, past systemd's
// TimeoutStopSec.
func TestStopWithHangingCommitsIsBounded(t *testing.T) {
	eb := sinktest.Broker(t)
	sinktest.Produce(t, eb, "enriched.metrics", telemetry.SchemaMetric, devKey, metrics(100, func(int) string { return "ifTable" }))
	d := &finishingDest{}
	c := cfg("hanging")
	c.BatchSize = 10
	r := sinktest.Start(t, &hangingCommits{Broker: eb}, c, d)
	sinktest.Eventually(t, "a write in flight", func() bool { return d.writes.Load() > 0 })
	start := time.Now()
	r.Stop()
	if took := time.Since(start); took > 8*time.Second {
		t.Fatalf("the stop took %v with %d batches written, want one commit's 5 s at most", took.Round(time.Second), d.writes.Load())
	}
}
