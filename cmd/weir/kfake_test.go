package main

import (
	"context"
	"testing"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
)

// kfakeTopic is a one-broker kfake cluster with topic "t" of partitions
// partitions, and a client of it that writes each record to the partition
// it names (opts added); both are closed when the test ends.
func kfakeTopic(t *testing.T, partitions int32, opts ...kgo.Opt) (*kfake.Cluster, *kgo.Client) {
	t.Helper()
	c, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.SeedTopics(partitions, "t"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	cl, err := kgo.NewClient(append([]kgo.Opt{kgo.SeedBrokers(c.ListenAddrs()...), kgo.RecordPartitioner(kgo.ManualPartitioner())}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(cl.Close)
	return c, cl
}

// produceTo writes values to partition p of topic "t", one record each.
func produceTo(ctx context.Context, t *testing.T, cl *kgo.Client, p int32, values ...string) {
	t.Helper()
	for _, v := range values {
		if err := cl.ProduceSync(ctx, &kgo.Record{Topic: "t", Partition: p, Value: []byte(v)}).FirstErr(); err != nil {
			t.Fatal(err)
		}
	}
}

// deleteBelow deletes the records of "t"/p below offset at, as retention
// does.
func deleteBelow(ctx context.Context, t *testing.T, cl *kgo.Client, p int32, at int64) {
	t.Helper()
	var del kadm.Offsets
	del.Add(kadm.Offset{Topic: "t", Partition: p, At: at})
	if _, err := kadm.NewClient(cl).DeleteRecords(ctx, del); err != nil {
		t.Fatal(err)
	}
}

// values are n one-character values from first on ("0".."9" are JSON
// numbers, "a".. strings).
func values(first byte, n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = string(first + byte(i))
	}
	return out
}
