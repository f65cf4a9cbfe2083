package embedded

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

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

// pollAllOfTwo opens a broker with topic "r" of two partitions of 10
// records each, and a member of group "rg" that polled all 20 and
// committed none.
func pollAllOfTwo(t *testing.T) (*Broker, broker.Consumer) {
	t.Helper()
	b, err := Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { b.Close() })
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
	t.Cleanup(func() { c1.Close() })
	for n := 0; n < 20; {
		got, err := c1.Poll(ctx)
		if err != nil {
			t.Fatal(err)
		}
		n += len(got)
	}
	return b, c1
}

// TestRevokedPartitionKeepsItsCommit: a partition a rebalance takes from a
// member is handed over at its committed offset, not at what the member
// polled and may not have handled yet.
func TestRevokedPartitionKeepsItsCommit(t *testing.T) {
	b, c1 := pollAllOfTwo(t)
	ctx := context.Background()
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

// TestRevokedAndBackBeforePollStartsAtCommit: a partition a rebalance
// takes from a member and a second gives back before the member polls
// again (a member joining and leaving at once: a process in a crash
// loop) is a partition handed over, so the member reads it again from
// its committed offset, as a Kafka consumer does. It went on from what
// the member had polled: a sink that let go of what it held of the
// partition at the first rebalance (its records are the new owner's to
// deliver) never saw those records again.
func TestRevokedAndBackBeforePollStartsAtCommit(t *testing.T) {
	b, c1 := pollAllOfTwo(t)
	ctx := context.Background()
	offs := map[broker.TopicPartition]int64{{Topic: "r", Partition: 0}: 3, {Topic: "r", Partition: 1}: 3}
	if err := c1.(broker.OffsetCommitter).CommitOffsets(ctx, offs); err != nil {
		t.Fatal(err)
	}
	c2, err := b.Consume(ctx, "rg", []string{"r"})
	if err != nil {
		t.Fatal(err)
	}
	kept := c1.Assigned()
	if len(kept) != 1 {
		t.Fatalf("c1 assigned %v after c2 joined, want one partition", kept)
	}
	c2.Close()
	if len(c1.Assigned()) != 2 {
		t.Fatalf("c1 assigned %v after c2 left, want both", c1.Assigned())
	}
	moved := 1 - kept[0].Partition
	pctx, cancel := context.WithTimeout(ctx, 10*time.Second) // a guard: the records are there
	defer cancel()
	got, err := c1.Poll(pctx)
	if err != nil {
		t.Fatalf("partition %d, taken and given back, was not read again: %v", moved, err)
	}
	if len(got) != 7 || got[0].Partition != moved || got[0].Offset != 3 {
		t.Errorf("polled %d records from %d/%d, want the 7 of partition %d from its commit, 3", len(got), got[0].Partition, got[0].Offset, moved)
	}
}

// TestOffsetsRetention: a group with no member that has not committed for
// the offsets retention loses its offsets (and its lag series); one with a
// member keeps them however long it has not committed, and one that
// committed within the retention keeps them.
func TestOffsetsRetention(t *testing.T) {
	var clock atomic.Pointer[time.Time]
	now := time.Date(2026, 11, 30, 0, 0, 0, 0, time.UTC)
	clock.Store(&now)
	advance := func(d time.Duration) {
		t2 := clock.Load().Add(d)
		clock.Store(&t2)
	}
	b := openTest(t, t.TempDir(), withClock(func() time.Time { return *clock.Load() }),
		WithRetentionCheckInterval(0), WithOffsetsRetention(7*24*time.Hour))
	ctx := context.Background()
	b.CreateTopic(ctx, "c", broker.TopicConfig{Partitions: 1})
	if err := b.ProducePartition(ctx, "c", 0, []broker.Record{{Value: []byte("x")}}); err != nil {
		t.Fatal(err)
	}
	consume := func(group string) broker.Consumer {
		c, err := b.Consume(ctx, group, []string{"c"})
		if err != nil {
			t.Fatal(err)
		}
		if got, err := c.Poll(ctx); err != nil || len(got) != 1 {
			t.Fatalf("%s: poll %d records, %v", group, len(got), err)
		}
		if err := c.Commit(ctx); err != nil {
			t.Fatal(err)
		}
		return c
	}
	consume("once").Close()
	member := consume("member") // stays
	defer member.Close()
	advance(6 * 24 * time.Hour)
	consume("recent").Close()
	b.ApplyRetention()
	if got := b.offsets.groupNames(); len(got) != 3 {
		t.Fatalf("groups after 6 days: %v, want all three", got)
	}
	advance(2 * 24 * time.Hour) // 8 days after the first commits
	b.ApplyRetention()
	got := b.offsets.groupNames()
	if got["once"] || !got["member"] || !got["recent"] {
		t.Fatalf("groups after 8 days: %v, want member and recent", got)
	}
	// Gone for good: a new member of the group starts afresh.
	if _, ok := b.offsets.committed("once", "c", 0); ok {
		t.Error("once's offset kept")
	}
}
