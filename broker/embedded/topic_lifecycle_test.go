package embedded

import (
	"errors"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/weirnet/weir/broker"
)

// TestRecreateDuringDeleteKeepsNewTopic: a topic deleted while a
// producer auto-creates it again (a collector producing to raw.syslog while
// an operator runs `weir topics delete raw.syslog`) must end up with its
// partition directories on disk: DeleteTopic renames NAME-P after dropping
// b.mu, so it can move away (and remove) the directory of the topic that was
// just created under the same name. The records acknowledged to the new
// topic are then written to unlinked files and gone after a restart.
func TestRecreateDuringDeleteKeepsNewTopic(t *testing.T) {
	for round := 0; round < 20; round++ {
		dir := t.TempDir()
		b, err := Open(dir, WithTopicDefaults(broker.TopicConfig{Partitions: 32}))
		if err != nil {
			t.Fatal(err)
		}
		if err := b.Produce(ctx, "churn", makeRecords(200, 0)); err != nil {
			t.Fatal(err)
		}
		var wg sync.WaitGroup
		recreated := make(chan struct{})
		wg.Go(func() {
			// Auto-create it again as soon as it is gone.
			for {
				if _, err := b.DescribeTopics(ctx, "churn"); errors.Is(err, broker.ErrUnknownTopic) {
					break
				}
				time.Sleep(10 * time.Microsecond)
			}
			b.CreateTopic(ctx, "churn", broker.TopicConfig{})
			close(recreated)
		})
		if err := b.DeleteTopic(ctx, "churn"); err != nil {
			t.Fatal(err)
		}
		<-recreated
		wg.Wait()
		info, err := b.DescribeTopics(ctx, "churn")
		if err != nil {
			t.Fatalf("round %d: recreated topic: %v", round, err)
		}
		var missing []int32
		for _, p := range info[0].Partitions {
			if _, err := os.Stat(partitionDir(dir, "churn", p.Partition)); err != nil {
				missing = append(missing, p.Partition)
			}
		}
		// What a user sees: produce to the new topic, restart, data gone.
		if err := b.Produce(ctx, "churn", makeRecords(200, 1000)); err != nil {
			t.Fatalf("round %d: produce after re-create: %v", round, err)
		}
		if err := b.Close(); err != nil {
			t.Logf("round %d: close: %v", round, err)
		}
		b2, err := Open(dir)
		if err != nil {
			t.Fatalf("round %d: reopen: %v", round, err)
		}
		info2, _ := b2.DescribeTopics(ctx, "churn")
		var n int64
		for _, p := range info2[0].Partitions {
			n += p.HighWatermark - p.LogStartOffset
		}
		b2.Close()
		if len(missing) > 0 || n != 200 {
			t.Fatalf("round %d: the re-created topic lost partition directories %v to the delete; after a restart it holds %d of the 200 records acknowledged", round, missing, n)
		}
	}
}

// TestTopicIDSurvivesRestart: a topic's ID is stored in its meta file
// but read back with fmt.Sscanf("%x") into a [16]byte, which fmt cannot
// scan into, so every open makes up a new ID. Kafka clients take a new
// topic ID for a deleted and re-created topic (franz-go then fails the
// topic with UNKNOWN_TOPIC_ID for good).
func TestTopicIDSurvivesRestart(t *testing.T) {
	dir := t.TempDir()
	b, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	if err := b.CreateTopic(ctx, "ids", broker.TopicConfig{Partitions: 1}); err != nil {
		t.Fatal(err)
	}
	before, _ := b.DescribeTopics(ctx, "ids")
	if err := b.Close(); err != nil {
		t.Fatal(err)
	}
	b = openTest(t, dir)
	after, _ := b.DescribeTopics(ctx, "ids")
	if before[0].ID != after[0].ID {
		t.Fatalf("topic ID changed across a restart: %x, then %x", before[0].ID, after[0].ID)
	}
}

// TestCreateTopicTooManyPartitions: the refusal says what the bound is, as
// Kafka clients show only the message (their text for INVALID_PARTITIONS
// is "Number of partitions is below 1").
func TestCreateTopicTooManyPartitions(t *testing.T) {
	b := openTest(t, t.TempDir())
	err := b.CreateTopic(ctx, "wide", broker.TopicConfig{Partitions: 20000})
	if !errors.Is(err, broker.ErrInvalidPartitions) || !strings.Contains(err.Error(), "10000") {
		t.Fatalf("20000 partitions: %v; want ErrInvalidPartitions naming the bound", err)
	}
}
