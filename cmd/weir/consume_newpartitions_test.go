package main

import (
	"context"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/weirnet/weir/internal/syncbuf"
)

// TestConsumeFollowReadsAddedPartitions: a topic on a Kafka cluster given
// more partitions while `weir consume T --follow` runs (kafka-topics
// --alter) gets some keys' records in the new ones; the command read only
// the partitions of its start and never printed those records.
func TestConsumeFollowReadsAddedPartitions(t *testing.T) {
	t.Parallel() // it waits on the partition watch (10 s), on a cluster of its own
	c, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.SeedTopics(1, "t"))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cl, err := kgo.NewClient(kgo.SeedBrokers(c.ListenAddrs()...), kgo.RecordPartitioner(kgo.ManualPartitioner()))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	var stdout, stderr syncbuf.Buffer
	cctx, stop := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() {
		done <- dispatch(cctx, []string{"consume", "--brokers", c.ListenAddrs()[0], "t", "--follow"}, strings.NewReader(""), &stdout, &stderr)
	}()
	defer func() { stop(); <-done }()
	// Following from the end: a record to partition 0 printed says it
	// has started.
	for deadline := time.Now().Add(20 * time.Second); !strings.Contains(stdout.String(), `"p0"`); time.Sleep(100 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("nothing printed from partition 0: %s", stderr.String())
		}
		cl.ProduceSync(ctx, &kgo.Record{Topic: "t", Partition: 0, Value: []byte(`"p0"`)})
	}
	if _, err := kadm.NewClient(cl).CreatePartitions(ctx, 2, "t"); err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(3 * newPartitionsEvery); ; time.Sleep(200 * time.Millisecond) {
		cl.ForceMetadataRefresh()
		err := cl.ProduceSync(ctx, &kgo.Record{Topic: "t", Partition: 2, Value: []byte(`"p2"`)}).FirstErr()
		if err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("produce to the added partition: %v", err)
		}
	}
	for deadline := time.Now().Add(3 * newPartitionsEvery); !strings.Contains(stdout.String(), `"p2"`); time.Sleep(100 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("the record in the added partition 2 not printed after %v; stdout:\n%s\nstderr:\n%s", 3*newPartitionsEvery, stdout.String(), stderr.String())
		}
	}
	if !strings.Contains(stderr.String(), "2 partition(s) added") {
		t.Errorf("stderr does not say partitions were added: %s", stderr.String())
	}
}

// TestConsumeGroupFollowReadsAddedPartitions: `weir consume T --group G
// --follow` on a Kafka cluster whose topic gains partitions: the group
// client noticed them only at its metadata refresh (5 minutes) and then
// started them at the end, as partitions without a commit, so the records
// that keys moved to them meanwhile were never printed (and committed
// past).
func TestConsumeGroupFollowReadsAddedPartitions(t *testing.T) {
	t.Parallel() // it waits on the partition watch (10 s), on a cluster of its own
	c, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.SeedTopics(1, "t"))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cl, err := kgo.NewClient(kgo.SeedBrokers(c.ListenAddrs()...), kgo.RecordPartitioner(kgo.ManualPartitioner()))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	var stdout, stderr syncbuf.Buffer
	cctx, stop := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() {
		done <- dispatch(cctx, []string{"consume", "--brokers", c.ListenAddrs()[0], "t", "--group", "g", "--follow"}, strings.NewReader(""), &stdout, &stderr)
	}()
	defer func() { stop(); <-done }()
	for deadline := time.Now().Add(20 * time.Second); !strings.Contains(stdout.String(), `"p0"`); time.Sleep(100 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("nothing printed from partition 0: %s", stderr.String())
		}
		cl.ProduceSync(ctx, &kgo.Record{Topic: "t", Partition: 0, Value: []byte(`"p0"`)})
	}
	if _, err := kadm.NewClient(cl).CreatePartitions(ctx, 2, "t"); err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(3 * newPartitionsEvery); ; time.Sleep(200 * time.Millisecond) {
		cl.ForceMetadataRefresh()
		err := cl.ProduceSync(ctx, &kgo.Record{Topic: "t", Partition: 2, Value: []byte(`"p2"`)}).FirstErr()
		if err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("produce to the added partition: %v", err)
		}
	}
	for deadline := time.Now().Add(3 * newPartitionsEvery); !strings.Contains(stdout.String(), `"p2"`); time.Sleep(100 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("the record in the added partition 2 not printed after %v; stdout:\n%s\nstderr:\n%s", 3*newPartitionsEvery, stdout.String(), stderr.String())
		}
	}
}

// TestConsumeFollowMaxStopsWatching: `weir consume T --follow --max N`
// returned after N records and left the goroutine that looks for added
// partitions running on the closed clients until the context ended.
func TestConsumeFollowMaxStopsWatching(t *testing.T) {
	c, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.SeedTopics(1, "t"))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cl, err := kgo.NewClient(kgo.SeedBrokers(c.ListenAddrs()...))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	var stdout, stderr syncbuf.Buffer
	done := make(chan error, 1)
	go func() {
		done <- dispatch(ctx, []string{"consume", "--brokers", c.ListenAddrs()[0], "t", "--follow", "--max", "1"}, strings.NewReader(""), &stdout, &stderr)
	}()
	for returned := false; !returned; {
		cl.ProduceSync(ctx, &kgo.Record{Topic: "t", Value: []byte(`"x"`)})
		select {
		case err := <-done:
			if err != nil {
				t.Fatal(err)
			}
			returned = true
		case <-time.After(100 * time.Millisecond):
		}
	}
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		buf := make([]byte, 1<<20)
		if !strings.Contains(string(buf[:runtime.Stack(buf, true)]), "watchNewPartitions") {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the partition watcher still runs after the command returned")
		}
	}
}
