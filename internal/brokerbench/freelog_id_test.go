package brokerbench

import (
	"context"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/weirnet/weir/broker"
)

// TestFreeLogKeepsTopicIDs: the free log's topics keep their ID from one
// DescribeTopics to the next, as Kafka's do; franz-go takes a new ID in a
// metadata refresh for a deleted and recreated topic and fails it with
// UNKNOWN_TOPIC_ID, which would stop the ceiling's runs at their first
// refresh.
func TestFreeLogKeepsTopicIDs(t *testing.T) {
	free := newFreeLog()
	ctx := context.Background()
	if err := free.CreateTopic(ctx, "wire", broker.TopicConfig{Partitions: 2}); err != nil {
		t.Fatal(err)
	}
	a, err := free.DescribeTopics(ctx, "wire")
	if err != nil {
		t.Fatal(err)
	}
	b, err := free.DescribeTopics(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if a[0].ID == [16]byte{} || a[0].ID != b[0].ID {
		t.Fatalf("topic ID %x, then %x", a[0].ID, b[0].ID)
	}

	// And what it means for a client: records produced after a metadata
	// refresh still go through.
	addr, stop := serveWire(t, free)
	defer stop()
	cl, err := kgo.NewClient(kgo.SeedBrokers(addr), kgo.DefaultProduceTopic("wire"), kgo.MetadataMinAge(10*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	pctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	for i := range 3 {
		if err := cl.ProduceSync(pctx, &kgo.Record{Key: []byte("k"), Value: []byte("v")}).FirstErr(); err != nil {
			t.Fatalf("produce %d: %v", i, err)
		}
		cl.ForceMetadataRefresh()
		time.Sleep(50 * time.Millisecond)
	}
}
