package kafkacluster

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kfake"

	"github.com/weirnet/weir/broker"
)

// TestTopicsWeirCreatesTakeItsDefaults: on a cluster that creates topics
// on first use (auto.create.topics.enable, Kafka's default), a topic weir
// produces to first is created by weir, with its partitions and
// replication factor (broker.default_partitions,
// broker.kafka.replication_factor), not the cluster's num.partitions and
// default.replication.factor (1 and 1 on a stock Kafka); and describing a
// topic does not create it.
func TestTopicsWeirCreatesTakeItsDefaults(t *testing.T) {
	c, err := kfake.NewCluster(kfake.NumBrokers(3), kfake.AllowAutoTopicCreation(), kfake.DefaultNumPartitions(1))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	b, err := New(c.ListenAddrs(), WithReplicationFactor(3), WithTopicDefaults(broker.TopicConfig{Partitions: 4}))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { b.Close() })
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()

	for _, produce := range []struct {
		topic string
		do    func(topic string) error
	}{
		{"by-key", func(topic string) error {
			return b.Produce(ctx, topic, []broker.Record{{Key: []byte("edge1"), Value: []byte("v")}})
		}},
		{"by-partition", func(topic string) error {
			return b.ProducePartition(ctx, topic, 0, []broker.Record{{Value: []byte("v")}})
		}},
	} {
		if err := produce.do(produce.topic); err != nil {
			t.Fatalf("produce to %s: %v", produce.topic, err)
		}
		infos, err := b.DescribeTopics(ctx, produce.topic)
		if err != nil {
			t.Fatal(err)
		}
		if n := len(infos[0].Partitions); n != 4 {
			t.Errorf("%s, created by its first produce: %d partitions, want weir's 4", produce.topic, n)
		}
	}
	// A transactional consumer (enrichment's) waiting for its input.
	c2, err := b.Consume(ctx, "enrich", []string{"never-produced"}, broker.WithTransactions())
	if err != nil {
		t.Fatal(err)
	}
	defer c2.Close()
	pctx, pcancel := context.WithTimeout(ctx, 2*time.Second)
	c2.Poll(pctx)
	pcancel()
	for range 2 {
		if _, err := b.DescribeTopics(ctx, "never-produced"); !errors.Is(err, broker.ErrUnknownTopic) {
			t.Fatalf("describe of a topic nobody produced to: %v, want ErrUnknownTopic (and no topic created)", err)
		}
	}
}
