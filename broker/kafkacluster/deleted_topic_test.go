package kafkacluster

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
	"github.com/twmb/franz-go/pkg/sasl/plain"

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

// TestMissingTopicNotPermittedSaysWhy: a topic weir writes that does not
// exist, on a cluster that does not create topics on first use and whose
// ACLs do not let weir's user create them, fails the produce naming the
// topic and why weir did not make it (its admins must), not only
// UNKNOWN_TOPIC_OR_PARTITION, which the collectors log again and again.
func TestMissingTopicNotPermittedSaysWhy(t *testing.T) {
	allow := func(r kmsg.ACLResourceType) kfake.ACL {
		return kfake.ACL{Resource: r, Name: "*", Pattern: kmsg.ACLResourcePatternTypeLiteral, Operation: kmsg.ACLOperationAll, Allow: true}
	}
	deny := func(r kmsg.ACLResourceType, name string) kfake.ACL {
		return kfake.ACL{Resource: r, Name: name, Pattern: kmsg.ACLResourcePatternTypeLiteral, Operation: kmsg.ACLOperationCreate}
	}
	c, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.EnableSASL(), kfake.Superuser("PLAIN", "admin", "admin"), kfake.EnableACLs(),
		kfake.User("PLAIN", "weir", "pw", allow(kmsg.ACLResourceTypeTopic), allow(kmsg.ACLResourceTypeCluster),
			deny(kmsg.ACLResourceTypeTopic, "*"), deny(kmsg.ACLResourceTypeCluster, "kafka-cluster")))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	b, err := New(c.ListenAddrs(), WithClientOpts(kgo.SASL(plain.Auth{User: "weir", Pass: "pw"}.AsMechanism())))
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	err = b.Produce(ctx, "raw.syslog", []broker.Record{{Key: []byte("edge1"), Value: []byte("v")}})
	if !errors.Is(err, broker.ErrUnknownTopic) {
		t.Fatalf("produce to a missing topic: %v, want an unknown topic", err)
	}
	for _, want := range []string{"raw.syslog", "not permitted to create", "TOPIC_AUTHORIZATION_FAILED"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("produce to a missing topic weir may not create: %q, want it to say %q", err, want)
		}
	}
}
