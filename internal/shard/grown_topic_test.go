package shard

import (
	"context"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/weirnet/weir/broker"
	"github.com/weirnet/weir/broker/kafkacluster"
)

// TestKafkaCoordinationTopicGrown: the coordination topic's partition
// count is the most processes that can share the targets, so an operator
// who needs more adds partitions to it. A process that started before and
// one that starts after must still map every target to the same
// partition: each target owned by exactly one of them.
func TestKafkaCoordinationTopicGrown(t *testing.T) {
	cluster, err := kfake.NewCluster(kfake.NumBrokers(3), kfake.GroupMinSessionTimeout(100*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	defer cluster.Close()
	b, err := kafkacluster.New(cluster.ListenAddrs())
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	if err := b.CreateTopic(ctx, DefaultTopic, broker.TopicConfig{Partitions: 4}); err != nil {
		t.Fatal(err)
	}
	targets := names(300)
	cfg := Config{Broker: b, Group: "weir-collect-test", SessionTimeout: 2 * time.Second, CheckInterval: 20 * time.Millisecond,
		RefreshInterval: 500 * time.Millisecond}
	a := start(t, cfg)
	waitFor(t, 20*time.Second, "the first member owning every target", func() bool { return exactlyOnce([]*Member{a.m}, targets) })

	cl, err := kgo.NewClient(kgo.SeedBrokers(cluster.ListenAddrs()...))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	resp, err := kadm.NewClient(cl).CreatePartitions(ctx, 4, DefaultTopic)
	if err == nil {
		err = resp.Error()
	}
	if err != nil {
		t.Fatal(err)
	}
	waitFor(t, 10*time.Second, "the topic to have 8 partitions", func() bool {
		infos, err := b.DescribeTopics(ctx, DefaultTopic)
		return err == nil && len(infos[0].Partitions) == 8
	})
	c := start(t, cfg)
	members := []*Member{a.m, c.m}
	// Within the refresh of the count and a rebalance, each target has
	// one owner, and keeps it.
	deadline := time.Now().Add(20 * time.Second)
	for !(exactlyOnce(members, targets) && len(c.m.snap.Load().owned) > 0 && c.m.snap.Load().n > 0) && time.Now().Before(deadline) {
		time.Sleep(50 * time.Millisecond)
	}
	for range 10 {
		if !exactlyOnce(members, targets) {
			o := owners(members, targets)
			missed, twice := 0, 0
			for _, n := range targets {
				switch o[n] {
				case 0:
					missed++
				case 2:
					twice++
				}
			}
			pa, na := a.m.Partitions()
			pc, nc := c.m.Partitions()
			t.Fatalf("%d targets owned by none, %d by both (first member: %v of %d, second: %v of %d)", missed, twice, pa, na, pc, nc)
		}
		time.Sleep(100 * time.Millisecond)
	}
}
