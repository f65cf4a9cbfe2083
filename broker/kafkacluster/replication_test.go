package kafkacluster

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kfake"

	"github.com/weirnet/weir/broker"
)

// TestReplicationFactorAboveBrokersFailsTheProduce: broker.kafka.replication_factor
// larger than the cluster's brokers (a config meant for the 3-broker
// production cluster pointed at a 1-broker test one). weir's creation of
// a raw topic is refused (INVALID_REPLICATION_FACTOR), and ensureTopic
// takes that as "the cluster manages topics" and produces anyway: the
// cluster auto-creates the topic with its own partitions and replication
// factor, for good, with nothing logged, while enrichment (which creates
// its outputs itself) fails on every batch. The produce should fail with
// the cluster's reason instead.
func TestReplicationFactorAboveBrokersFailsTheProduce(t *testing.T) {
	c, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.AllowAutoTopicCreation(), kfake.DefaultNumPartitions(1))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	b, err := New(c.ListenAddrs(), WithReplicationFactor(3), WithTopicDefaults(broker.TopicConfig{Partitions: 6}))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { b.Close() })
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	err = b.Produce(ctx, "raw.syslog", []broker.Record{{Key: []byte("edge1"), Value: []byte("v")}})
	infos, derr := b.DescribeTopics(ctx, "raw.syslog")
	if err == nil && derr == nil {
		t.Fatalf("produce with replication_factor 3 on 1 broker succeeded: raw.syslog auto-created by the cluster with %d partition(s), not weir's 6",
			len(infos[0].Partitions))
	}
	if !errors.Is(err, kerr.InvalidReplicationFactor) {
		t.Errorf("produce: %v, want the cluster's INVALID_REPLICATION_FACTOR", err)
	}
}
