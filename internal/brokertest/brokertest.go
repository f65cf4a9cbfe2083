// Package brokertest holds behaviour both broker backends must show,
// written once: each backend's tests run it against their broker.
package brokertest

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/weirnet/weir/broker"
)

// Position checks broker.Positioner: a member knows where it goes on in
// each partition it owns, after the last record it polled, or at the
// group's commit in one that gave it nothing yet; and it knows no position
// in a partition it does not own.
func Position(t *testing.T, b broker.Broker) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	if err := b.CreateTopic(ctx, "q", broker.TopicConfig{Partitions: 2}); err != nil {
		t.Fatal(err)
	}
	produce := func(p int32, n int) {
		recs := make([]broker.Record, n)
		for i := range recs {
			recs[i] = broker.Record{Value: []byte(fmt.Sprint(i))}
		}
		if err := b.ProducePartition(ctx, "q", p, recs); err != nil {
			t.Fatal(err)
		}
	}
	produce(0, 10)
	produce(1, 5)
	c1, err := b.Consume(ctx, "pg", []string{"q"})
	if err != nil {
		t.Fatal(err)
	}
	for n := 0; n < 15; {
		got, err := c1.Poll(ctx)
		if err != nil {
			t.Fatal(err)
		}
		n += len(got)
	}
	if err := c1.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	c1.Close()
	produce(0, 3)

	c2, err := b.Consume(ctx, "pg", []string{"q"})
	if err != nil {
		t.Fatal(err)
	}
	defer c2.Close()
	if got, err := c2.Poll(ctx); err != nil || len(got) != 3 {
		t.Fatalf("poll: %d records, %v", len(got), err)
	}
	pc := c2.(broker.Positioner)
	for _, tc := range []struct {
		p    int32
		want int64
	}{{0, 13}, {1, 5}} {
		if pos, ok := pc.Position(ctx, broker.TopicPartition{Topic: "q", Partition: tc.p}); !ok || pos != tc.want {
			t.Errorf("partition %d: position %d (%v), want %d", tc.p, pos, ok, tc.want)
		}
	}
	if _, ok := pc.Position(ctx, broker.TopicPartition{Topic: "other", Partition: 0}); ok {
		t.Errorf("position of a partition the member does not own")
	}
}
