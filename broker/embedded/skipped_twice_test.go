package embedded

import (
	"testing"
	"time"

	"github.com/weirnet/weir/broker"
)

// TestSkippedCountedOnce: records retention deleted are counted once, not
// each time a member of the group resets past them: a member that polled
// (counted) and left before committing, then another member of the group.
func TestSkippedCountedOnce(t *testing.T) {
	b := openTest(t, t.TempDir(),
		WithTopicDefaults(broker.TopicConfig{Partitions: 1, SegmentBytes: 8 << 10, RetentionBytes: 32 << 10, RetentionTime: time.Hour}))
	if err := b.Produce(ctx, "t", makeRecords(10, 0)); err != nil {
		t.Fatal(err)
	}
	c, err := b.Consume(ctx, "slow", []string{"t"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Poll(ctx); err != nil {
		t.Fatal(err)
	}
	if err := c.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	for i := 1; i < 200; i++ {
		if err := b.Produce(ctx, "t", makeRecords(10, i*10)); err != nil {
			t.Fatal(err)
		}
	}
	b.ApplyRetention()
	info, _ := b.DescribeTopics(ctx, "t")
	start := info[0].Partitions[0].LogStartOffset
	if _, err := c.Poll(ctx); err != nil {
		t.Fatal(err)
	}
	c.Close() // e.g. a worker's transaction aborted, the partition handed over
	c2, err := b.Consume(ctx, "slow", []string{"t"})
	if err != nil {
		t.Fatal(err)
	}
	defer c2.Close()
	if _, err := c2.Poll(ctx); err != nil {
		t.Fatal(err)
	}
	got := b.groups.skippedRecords()[[2]string{"slow", "t"}]
	if got != start-10 {
		t.Errorf("skipped %d, want %d (records deleted: offsets 10 to %d)", got, start-10, start)
	}
}
