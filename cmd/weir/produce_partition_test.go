package main

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kfake"
)

// TestProducePartitionOutOfRange: --partition past the topic's partitions
// fails before any record is sent, naming the partition and how many the
// topic has, as `weir consume --partition` does ("no partition 9"); it
// failed with franz-go's "invalid record partitioning choice of 9 from 6
// available" after reading stdin.
func TestProducePartitionOutOfRange(t *testing.T) {
	c, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.SeedTopics(6, "t"))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	var stdout, stderr bytes.Buffer
	err = dispatch(ctx, []string{"produce", "t", "--partition", "9", "--brokers", c.ListenAddrs()[0]}, strings.NewReader("x\n"), &stdout, &stderr)
	if err == nil || exitCode(err) != 1 || !strings.Contains(err.Error(), "no partition 9") || !strings.Contains(err.Error(), "6 partitions") {
		t.Fatalf("produce --partition 9 to a topic of 6: %v (exit %d), stderr %q", err, exitCode(err), stderr.String())
	}
	// A partition the topic has still works.
	stdout.Reset()
	stderr.Reset()
	if err := dispatch(ctx, []string{"produce", "t", "--partition", "5", "--brokers", c.ListenAddrs()[0]}, strings.NewReader("x\n"), &stdout, &stderr); err != nil {
		t.Fatalf("produce --partition 5: %v %s", err, stderr.String())
	}
}
