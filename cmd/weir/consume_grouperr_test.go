package main

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
)

// TestConsumeGroupErrorNamesTheTopic: a group error (here a member of
// another client's group whose assignors have none in common with weir's)
// is reported with the topic, not as "consume /0:", an empty topic and a
// partition the error has nothing to do with.
func TestConsumeGroupErrorNamesTheTopic(t *testing.T) {
	c, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.SeedTopics(1, "t"))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	groupMember(ctx, t, c.ListenAddrs(), "g", "t", kgo.Balancers(kgo.RangeBalancer()))
	var stdout, stderr bytes.Buffer
	err = dispatch(ctx, []string{"consume", "--brokers", c.ListenAddrs()[0], "t", "--group", "g", "--from-beginning"},
		strings.NewReader(""), &stdout, &stderr)
	if err == nil {
		t.Fatalf("joining a group of another protocol succeeded: %s", stdout.String())
	}
	if strings.Contains(err.Error(), " /0") || !strings.Contains(err.Error(), "consume t:") {
		t.Fatalf("error %q does not name the topic alone", err)
	}
	// franz-go's text for INCONSISTENT_GROUP_PROTOCOL does not say what to
	// do; on weir it is also what a Kafka client gets on a group weir's
	// own workers consume (enrich, a sink's).
	if !strings.Contains(err.Error(), "another --group") {
		t.Errorf("error %q does not say to pick another --group", err)
	}
}

// groupMember is a client that has joined group on topic (it produced to
// topic until it consumed a record), closed when the test ends.
func groupMember(ctx context.Context, t *testing.T, addrs []string, group, topic string, opts ...kgo.Opt) *kgo.Client {
	t.Helper()
	cl, err := kgo.NewClient(append([]kgo.Opt{kgo.SeedBrokers(addrs...), kgo.ConsumerGroup(group), kgo.ConsumeTopics(topic)}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(cl.Close)
	for ctx.Err() == nil {
		if err := cl.ProduceSync(ctx, &kgo.Record{Topic: topic, Value: []byte("x")}).FirstErr(); err != nil {
			t.Fatal(err)
		}
		pctx, pcancel := context.WithTimeout(ctx, time.Second)
		n := len(cl.PollFetches(pctx).Records())
		pcancel()
		if n > 0 {
			break
		}
	}
	return cl
}
