package enrich

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/weirnet/weir/broker"
	"github.com/weirnet/weir/broker/embedded"
)

// TestPublisherKeepsOrderAcrossChunks: outputs handed over chunk by chunk,
// as a worker enriches them, and the rest at deliver, reach each output
// partition once and in order, across several polls.
func TestPublisherKeepsOrderAcrossChunks(t *testing.T) {
	b, err := embedded.Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	ctx := context.Background()
	for _, topic := range []string{"in", "out", "ev"} {
		if err := b.CreateTopic(ctx, topic, broker.TopicConfig{Partitions: 2}); err != nil {
			t.Fatal(err)
		}
	}
	m := NewWorkerMetrics(nil).m
	o := newOutputs(b, "in", slog.New(slog.DiscardHandler), m, false)
	if err := o.align(ctx, "out", "ev"); err != nil {
		t.Fatal(err)
	}
	o.track(context.Background(), []broker.TopicPartition{{Topic: "in", Partition: 0}, {Topic: "in", Partition: 1}}, nil)
	stop := o.startPublisher(ctx)
	defer stop()
	var main, events []outRecord
	src := int64(0)
	for poll := 0; poll < 3; poll++ {
		main, events = main[:0], events[:0]
		for chunk := 0; chunk < 5; chunk++ {
			for i := 0; i < 7; i++ {
				part := int32(src % 2)
				v := []byte(fmt.Sprintf("%d", src))
				main = append(main, outRecord{broker.Record{Key: []byte("d"), Value: v}, part, src})
				if src%3 == 0 {
					events = append(events, outRecord{broker.Record{Key: []byte("d"), Value: v}, part, src})
				}
				src++
			}
			o.flush(outBatch{"out", main}, outBatch{"ev", events})
		}
		// What deliver gets: everything of the poll, some of it handed
		// over already, plus an event no input caused.
		events = append(events, outRecord{broker.Record{Key: []byte("d"), Value: []byte("settled")}, -1, -1})
		o.flush(outBatch{"out", main}, outBatch{"ev", events})
		// Flushed again, the settled event is not handed over twice.
		o.flush(outBatch{"out", main}, outBatch{"ev", events})
		if !o.published() {
			t.Fatal("published reports a failure")
		}
	}
	settled := 0
	for topic, every := range map[string]int64{"out": 1, "ev": 3} {
		for part := int32(0); part < 2; part++ {
			var got []string
			var res broker.FetchResult
			if err := b.Fetch(ctx, topic, part, 0, broker.FetchOptions{MaxBytes: 1 << 20}, &res); err != nil {
				t.Fatal(err)
			}
			for _, r := range res.Records {
				if string(r.Value) == "settled" {
					settled++
				} else {
					got = append(got, string(r.Value))
				}
			}
			var want []string
			for s := int64(0); s < src; s++ {
				if int32(s%2) == part && s%every == 0 {
					want = append(want, fmt.Sprint(s))
				}
			}
			if strings.Join(got, " ") != strings.Join(want, " ") {
				t.Errorf("%s/%d: %v, want %v", topic, part, got, want)
			}
		}
	}
	if settled != 3 {
		t.Errorf("%d settled events, want 3 (one a poll)", settled)
	}
}

// refusingBroker refuses every produce, as a full disk does: nothing
// appended, so every record's Offset is -1 (see broker.Broker).
type refusingBroker struct{ *embedded.Broker }

func (r refusingBroker) ProducePartition(_ context.Context, _ string, _ int32, recs []broker.Record) error {
	for i := range recs {
		recs[i].Offset = -1
	}
	return errors.New("no space left on device")
}

// TestPublisherStopsWithCtx: a publish that cannot succeed is retried
// until ctx ends; then published reports it and the publisher stops.
func TestPublisherStopsWithCtx(t *testing.T) {
	eb, err := embedded.Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer eb.Close()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	for _, topic := range []string{"in", "out"} {
		if err := eb.CreateTopic(ctx, topic, broker.TopicConfig{Partitions: 1}); err != nil {
			t.Fatal(err)
		}
	}
	o := newOutputs(refusingBroker{eb}, "in", slog.New(slog.DiscardHandler), NewWorkerMetrics(nil).m, false)
	if err := o.align(ctx, "out"); err != nil {
		t.Fatal(err)
	}
	o.track(context.Background(), []broker.TopicPartition{{Topic: "in", Partition: 0}}, nil)
	stop := o.startPublisher(ctx)
	outs := []outRecord{{broker.Record{Value: []byte("x")}, 0, 0}}
	o.flush(outBatch{"out", outs})
	o.flush(outBatch{"out", append(outs, outRecord{broker.Record{Value: []byte("y")}, 0, 1})})
	done := make(chan bool)
	go func() { done <- o.published() }()
	select {
	case <-done:
		t.Fatal("published returned while the broker refuses")
	case <-time.After(100 * time.Millisecond):
	}
	cancel()
	select {
	case ok := <-done:
		if ok {
			t.Fatal("published reports success after ctx ended")
		}
	case <-time.After(10 * time.Second):
		t.Fatal("published did not return after ctx ended")
	}
	stop()
}

// TestNextChunk: chunks are publishChunkBytes of input values, the last
// record taking a chunk past it, and never empty.
func TestNextChunk(t *testing.T) {
	recs := func(n, size int) []broker.Record {
		r := make([]broker.Record, n)
		for i := range r {
			r[i].Value = make([]byte, size)
		}
		return r
	}
	for _, c := range []struct {
		name string
		recs []broker.Record
		want int
	}{
		{"none", nil, 0},
		{"one larger than a chunk", recs(3, 2*publishChunkBytes), 1},
		{"1 KiB values", recs(1000, 1024), publishChunkBytes / 1024},
		{"300 B values", recs(1000, 300), (publishChunkBytes + 299) / 300},
		{"fewer than a chunk", recs(10, 300), 10},
	} {
		if got := nextChunk(c.recs); got != c.want {
			t.Errorf("%s: %d records, want %d", c.name, got, c.want)
		}
	}
}
