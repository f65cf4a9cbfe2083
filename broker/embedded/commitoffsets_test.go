package embedded

import (
	"context"
	"fmt"
	"testing"

	"github.com/weirnet/weir/broker"
)

// TestCommitOffsetsPartOfAPoll: a member commits a position inside what
// it polled (a sink that delivered one batch of a poll); the next member,
// after a restart, resumes there. A position past what was polled is
// ignored.
func TestCommitOffsetsPartOfAPoll(t *testing.T) {
	dir := t.TempDir()
	b, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	b.CreateTopic(ctx, "c", broker.TopicConfig{Partitions: 1})
	recs := make([]broker.Record, 10)
	for i := range recs {
		recs[i] = broker.Record{Value: []byte(fmt.Sprint(i))}
	}
	if err := b.ProducePartition(ctx, "c", 0, recs); err != nil {
		t.Fatal(err)
	}
	c1, err := b.Consume(ctx, "cg", []string{"c"})
	if err != nil {
		t.Fatal(err)
	}
	if got, err := c1.Poll(ctx); err != nil || len(got) != 10 {
		t.Fatalf("poll: %d records, %v", len(got), err)
	}
	oc := c1.(broker.OffsetCommitter)
	tp := broker.TopicPartition{Topic: "c", Partition: 0}
	if err := oc.CommitOffsets(ctx, map[broker.TopicPartition]int64{tp: 100}); err != nil {
		t.Fatal(err)
	}
	if err := oc.CommitOffsets(ctx, map[broker.TopicPartition]int64{tp: 4}); err != nil {
		t.Fatal(err)
	}
	c1.Close()
	b.Close()

	b, err = Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	c2, err := b.Consume(ctx, "cg", []string{"c"})
	if err != nil {
		t.Fatal(err)
	}
	defer c2.Close()
	got, err := c2.Poll(ctx)
	if err != nil || len(got) == 0 || got[0].Offset != 4 {
		t.Fatalf("resumed with %d records from %v, want offset 4", len(got), got)
	}
}
