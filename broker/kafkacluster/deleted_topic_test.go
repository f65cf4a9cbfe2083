package kafkacluster

import (
	"context"
	"testing"
	"time"

	"github.com/weirnet/weir/broker"
)

// TestTopicDeletedWhileRunningIsMadeAgain: a topic weir made and produced
// to, deleted while weir runs (an admin's `weir topics delete raw.syslog`),
// on a cluster that does not create topics on first use (Kafka's
// auto.create.topics.enable=false), is made again by the next produce, as
// the embedded log does; the collector's retries failed with
// UNKNOWN_TOPIC_OR_PARTITION for as long as the process ran.
func TestTopicDeletedWhileRunningIsMadeAgain(t *testing.T) {
	b := newCluster(t) // no auto-creation
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	rec := func() []broker.Record { return []broker.Record{{Key: []byte("edge1"), Value: []byte("v")}} }
	if err := b.Produce(ctx, "raw.syslog", rec()); err != nil {
		t.Fatal(err)
	}
	if err := b.DeleteTopic(ctx, "raw.syslog"); err != nil {
		t.Fatal(err)
	}
	var err error
	for try := 0; try < 5; try++ { // a collector's retries
		pctx, pcancel := context.WithTimeout(ctx, 8*time.Second)
		err = b.Produce(pctx, "raw.syslog", rec())
		pcancel()
		if err == nil {
			break
		}
		t.Logf("produce %d: %v", try, err)
	}
	if err != nil {
		t.Fatalf("the deleted topic was not made again: %v", err)
	}
	infos, err := b.DescribeTopics(ctx, "raw.syslog")
	if err != nil {
		t.Fatal(err)
	}
	if n := len(infos[0].Partitions); n != 6 {
		t.Errorf("made again with %d partitions, want weir's 6", n)
	}
}
