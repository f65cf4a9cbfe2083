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

// TestRevokedPartitionKeepsItsCommit: a partition a rebalance takes from a
// member is handed over at its committed offset, not at what the member
// polled and may not have handled yet.
func TestRevokedPartitionKeepsItsCommit(t *testing.T) {
	b, err := Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	ctx := context.Background()
	b.CreateTopic(ctx, "r", broker.TopicConfig{Partitions: 2})
	for p := int32(0); p < 2; p++ {
		recs := make([]broker.Record, 10)
		for i := range recs {
			recs[i] = broker.Record{Value: []byte(fmt.Sprint(i))}
		}
		if err := b.ProducePartition(ctx, "r", p, recs); err != nil {
			t.Fatal(err)
		}
	}
	c1, err := b.Consume(ctx, "rg", []string{"r"})
	if err != nil {
		t.Fatal(err)
	}
	defer c1.Close()
	for n := 0; n < 20; {
		got, err := c1.Poll(ctx)
		if err != nil {
			t.Fatal(err)
		}
		n += len(got)
	}
	c2, err := b.Consume(ctx, "rg", []string{"r"})
	if err != nil {
		t.Fatal(err)
	}
	defer c2.Close()
	offs := map[broker.TopicPartition]int64{{Topic: "r", Partition: 0}: 1, {Topic: "r", Partition: 1}: 1}
	if err := c1.(broker.OffsetCommitter).CommitOffsets(ctx, offs); err != nil {
		t.Fatal(err)
	}
	for p := int32(0); p < 2; p++ {
		if off, _ := b.Committed("rg", "r", p); off == 10 {
			t.Errorf("partition %d committed at 10: everything polled, handled or not", p)
		}
	}
}
