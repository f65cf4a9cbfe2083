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

// TestProduceEmptyLineIsNotNull: `weir produce` sends an empty input
// line as a record with a null value (Kafka's tombstone) instead of an
// empty value: kcat -P sends "" unless asked (-Z), and `weir consume`
// prints it as "value":null.
func TestProduceEmptyLineIsNotNull(t *testing.T) {
	c, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.SeedTopics(1, "t"))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	var stdout, stderr bytes.Buffer
	if err := dispatch(ctx, []string{"produce", "--brokers", c.ListenAddrs()[0], "t"},
		strings.NewReader("a\n\nb\n"), &stdout, &stderr); err != nil {
		t.Fatalf("produce: %v (%s)", err, stderr.String())
	}
	cl, err := kgo.NewClient(kgo.SeedBrokers(c.ListenAddrs()...), kgo.ConsumeTopics("t"),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	var recs []*kgo.Record
	for len(recs) < 3 && ctx.Err() == nil {
		recs = append(recs, cl.PollFetches(ctx).Records()...)
	}
	if len(recs) != 3 {
		t.Fatalf("got %d records", len(recs))
	}
	if recs[1].Value == nil {
		t.Fatalf("the empty line became a null value (a tombstone), not an empty one")
	}
}
