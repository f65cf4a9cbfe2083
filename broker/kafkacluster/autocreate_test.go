package kafkacluster

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kmsg"

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

// TestTopicCreateRetriedAfterTransientFailure: when weir's creation of a
// topic fails for a reason that passes (here REQUEST_TIMED_OUT; a cluster
// not reachable yet at start, a controller moving), the produce must not
// go on and let the cluster auto-create the topic with its own defaults
// for good: it fails, and the next one creates the topic with weir's.
func TestTopicCreateRetriedAfterTransientFailure(t *testing.T) {
	c, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.AllowAutoTopicCreation(), kfake.DefaultNumPartitions(1))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	// The first CreateTopics (one-shot control) times out.
	c.ControlKey(int16(kmsg.CreateTopics), func(req kmsg.Request) (kmsg.Response, error, bool) {
		r := req.(*kmsg.CreateTopicsRequest)
		resp := r.ResponseKind().(*kmsg.CreateTopicsResponse)
		for _, rt := range r.Topics {
			st := kmsg.NewCreateTopicsResponseTopic()
			st.Topic = rt.Topic
			st.ErrorCode = kerr.RequestTimedOut.Code
			resp.Topics = append(resp.Topics, st)
		}
		return resp, nil, true
	})
	b, err := New(c.ListenAddrs(), WithReplicationFactor(1), WithTopicDefaults(broker.TopicConfig{Partitions: 4}))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { b.Close() })
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	var perr error
	for range 3 { // callers retry a failed produce
		if perr = b.Produce(ctx, "late", []broker.Record{{Key: []byte("edge1"), Value: []byte("v")}}); perr == nil {
			break
		}
	}
	if perr != nil {
		t.Fatalf("produce: %v", perr)
	}
	infos, err := b.DescribeTopics(ctx, "late")
	if err != nil {
		t.Fatal(err)
	}
	if n := len(infos[0].Partitions); n != 4 {
		t.Errorf("topic whose first creation timed out: %d partitions, want weir's 4", n)
	}
}
