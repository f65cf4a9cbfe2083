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
// is made again by the next produce with weir's settings, as the embedded
// log does. On a cluster that does not create topics on first use (Kafka's
// auto.create.topics.enable=false) the collector's retries failed with
// UNKNOWN_TOPIC_OR_PARTITION for as long as the process ran; on one that
// does (Kafka's default), the producer's own metadata request made it
// again, with the cluster's partitions (1 on a stock Kafka), before weir
// could.
func TestTopicDeletedWhileRunningIsMadeAgain(t *testing.T) {
	for _, tc := range []struct {
		name string
		b    func(t *testing.T) *Broker
	}{
		{"no auto-creation", func(t *testing.T) *Broker {
			_, b := newKfake(t, WithTopicDefaults(broker.TopicConfig{Partitions: 4}))
			return b
		}},
		{"auto-creation", func(t *testing.T) *Broker { return weirOn(t, autoCreating(t, 3), 3) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b := tc.b(t)
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
			if n := len(infos[0].Partitions); n != 4 {
				t.Errorf("made again with %d partitions, want weir's 4", n)
			}
		})
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

// TestConsumerReadsTopicMadeAgain: a group member (a sink, or an
// enrichment worker, transactional) whose topic is deleted and made again
// while it runs (an admin's delete, a cluster rebuilt) reads the new
// topic, also while another topic it reads keeps coming (a sink of
// enriched.metrics and events). franz-go keeps the first topic's ID and
// fails every fetch of the new one with UNKNOWN_TOPIC_ID until the topic
// is purged from the client and added again: enrichment logged "poll
// failed" every second and enriched nothing for as long as weir ran.
func TestConsumerReadsTopicMadeAgain(t *testing.T) {
	for _, tc := range []struct {
		name string
		opts []broker.ConsumerOption
	}{
		{"plain", nil},
		{"transactional", []broker.ConsumerOption{broker.WithTransactions()}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b := newCluster(t)
			ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
			defer cancel()
			const topic, other = "raw.syslog", "raw.other"
			produce := func(topic, v string) {
				t.Helper()
				var err error
				for try := 0; try < 5; try++ { // a collector's retries: the first after the delete fails
					if err = b.Produce(ctx, topic, []broker.Record{{Key: []byte("edge1"), Value: []byte(v)}}); err == nil {
						return
					}
				}
				t.Fatal(err)
			}
			produce(topic, "old")
			produce(other, "other")
			c, err := b.Consume(ctx, "g-"+tc.name, []string{topic, other}, tc.opts...)
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			for seen := 0; seen < 2; {
				recs, err := c.Poll(ctx)
				if err != nil {
					t.Fatalf("first polls: %v", err)
				}
				seen += len(recs)
			}
			if err := b.DeleteTopic(ctx, topic); err != nil {
				t.Fatal(err)
			}
			if err := b.CreateTopic(ctx, topic, broker.TopicConfig{Partitions: 6}); err != nil {
				t.Fatal(err)
			}
			produce(topic, "new")
			// Polls end with a record of the other topic each time, or
			// with an error (the caller polls again), until ctx ends.
			for {
				produce(other, "other")
				recs, _ := c.Poll(ctx)
				for _, r := range recs {
					if r.Topic == topic {
						if string(r.Value) != "new" {
							t.Fatalf("after the topic was made again: %q, want the new topic's record", r.Value)
						}
						return
					}
				}
				if ctx.Err() != nil {
					break
				}
			}
			t.Fatal("the topic made again is not read")
		})
	}
}
