package kafkacluster

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
	"github.com/twmb/franz-go/pkg/sasl/plain"

	"github.com/weirnet/weir/broker"
)

// TestTopicsWeirCreatesTakeItsDefaults: on a cluster that creates topics
// on first use (auto.create.topics.enable, Kafka's default), a topic weir
// produces to first is created by weir, with its partitions and
// replication factor (broker.default_partitions,
// broker.kafka.replication_factor), not the cluster's num.partitions and
// default.replication.factor (1 and 1 on a stock Kafka); and describing a
// topic does not create it.
func TestTopicsWeirCreatesTakeItsDefaults(t *testing.T) {
	b := weirOn(t, autoCreating(t, 3), 3)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()

	for _, produce := range []struct {
		topic string
		do    func(topic string) error
	}{
		{"by-key", func(topic string) error {
			return b.Produce(ctx, topic, []broker.Record{{Key: []byte("edge1"), Value: []byte("v")}})
		}},
		{"by-partition", func(topic string) error {
			return b.ProducePartition(ctx, topic, 0, []broker.Record{{Value: []byte("v")}})
		}},
	} {
		if err := produce.do(produce.topic); err != nil {
			t.Fatalf("produce to %s: %v", produce.topic, err)
		}
		infos, err := b.DescribeTopics(ctx, produce.topic)
		if err != nil {
			t.Fatal(err)
		}
		if n := len(infos[0].Partitions); n != 4 {
			t.Errorf("%s, created by its first produce: %d partitions, want weir's 4", produce.topic, n)
		}
	}
	// A transactional consumer (enrichment's) waiting for its input.
	c2, err := b.Consume(ctx, "enrich", []string{"never-produced"}, broker.WithTransactions())
	if err != nil {
		t.Fatal(err)
	}
	defer c2.Close()
	pctx, pcancel := context.WithTimeout(ctx, 2*time.Second)
	c2.Poll(pctx)
	pcancel()
	for range 2 {
		if _, err := b.DescribeTopics(ctx, "never-produced"); !errors.Is(err, broker.ErrUnknownTopic) {
			t.Fatalf("describe of a topic nobody produced to: %v, want ErrUnknownTopic (and no topic created)", err)
		}
	}
}

// TestTopicCreateRetriedAfterTransientFailure: when weir's creation of a
// topic fails for a reason that passes (here REQUEST_TIMED_OUT; a cluster
// not reachable yet at start, a controller moving), the produce must not
// go on and let the cluster auto-create the topic with its own defaults
// for good: it fails, and the next one creates the topic with weir's.
func TestTopicCreateRetriedAfterTransientFailure(t *testing.T) {
	c := autoCreating(t, 1)
	// The first CreateTopics (one-shot control) times out.
	c.ControlKey(int16(kmsg.CreateTopics), func(req kmsg.Request) (kmsg.Response, error, bool) {
		r := req.(*kmsg.CreateTopicsRequest)
		resp := r.ResponseKind().(*kmsg.CreateTopicsResponse)
		for _, rt := range r.Topics {
			st := kmsg.NewCreateTopicsResponseTopic()
			st.Topic = rt.Topic
			st.ErrorCode = kerr.RequestTimedOut.Code
			resp.Topics = append(resp.Topics, st)
		}
		return resp, nil, true
	})
	b := weirOn(t, c, 1)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	var perr error
	for range 3 { // callers retry a failed produce
		if perr = b.Produce(ctx, "late", []broker.Record{{Key: []byte("edge1"), Value: []byte("v")}}); perr == nil {
			break
		}
	}
	if perr != nil {
		t.Fatalf("produce: %v", perr)
	}
	infos, err := b.DescribeTopics(ctx, "late")
	if err != nil {
		t.Fatal(err)
	}
	if n := len(infos[0].Partitions); n != 4 {
		t.Errorf("topic whose first creation timed out: %d partitions, want weir's 4", n)
	}
}

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
	b := weirOn(t, autoCreating(t, 1), 3)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	err := b.Produce(ctx, "raw.syslog", []broker.Record{{Key: []byte("edge1"), Value: []byte("v")}})
	infos, derr := b.DescribeTopics(ctx, "raw.syslog")
	if err == nil && derr == nil {
		t.Fatalf("produce with replication_factor 3 on 1 broker succeeded: raw.syslog auto-created by the cluster with %d partition(s), not weir's 4",
			len(infos[0].Partitions))
	}
	if !errors.Is(err, kerr.InvalidReplicationFactor) {
		t.Errorf("produce: %v, want the cluster's INVALID_REPLICATION_FACTOR", err)
	}
}

// autoCreating is a kfake cluster of n brokers that creates topics on
// first use with its own defaults (1 partition), closed when the test ends.
func autoCreating(t *testing.T, n int) *kfake.Cluster {
	t.Helper()
	c, err := kfake.NewCluster(kfake.NumBrokers(n), kfake.AllowAutoTopicCreation(), kfake.DefaultNumPartitions(1))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	return c
}

// weirOn is weir's broker on c, making topics of 4 partitions replicated
// rf times, closed when the test ends.
func weirOn(t *testing.T, c *kfake.Cluster, rf int16) *Broker {
	t.Helper()
	b, err := New(c.ListenAddrs(), WithReplicationFactor(rf), WithTopicDefaults(broker.TopicConfig{Partitions: 4}))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { b.Close() })
	return b
}

// TestConfiguredTopicCreatedOnFirstUse: a topic of broker.topics that
// could not be created at start (the cluster not reachable yet) is
// created with its own config when first produced to, not weir's
// defaults nor the cluster's.
func TestConfiguredTopicCreatedOnFirstUse(t *testing.T) {
	c := autoCreating(t, 1)
	b, err := New(c.ListenAddrs(), WithTopicDefaults(broker.TopicConfig{Partitions: 4}),
		WithTopics(map[string]broker.TopicConfig{"events": {Partitions: 3}}))
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	for _, topic := range []string{"events", "other"} {
		if err := b.Produce(ctx, topic, []broker.Record{{Key: []byte("edge1"), Value: []byte("v")}}); err != nil {
			t.Fatal(err)
		}
	}
	for topic, want := range map[string]int{"events": 3, "other": 4} {
		infos, err := b.DescribeTopics(ctx, topic)
		if err != nil {
			t.Fatal(err)
		}
		if n := len(infos[0].Partitions); n != want {
			t.Errorf("%s: %d partitions, want %d", topic, n, want)
		}
	}
}

// TestSASLRefusalIsNotACreationRefusal: a cluster that refuses weir's
// SASL credentials (SASL_AUTHENTICATION_FAILED: a wrong password, or a
// SCRAM user the cluster's admins have not created yet) refuses the
// connection, not the topic. Taken as "the cluster manages topics", it
// made weir run exit at start when broker.topics listed a topic (while it
// waits for the cluster without one), and had ensureTopic give the topic
// up to the cluster: once the credentials worked, the first produce had
// the cluster auto-create it with its own defaults, for good, not
// broker.topics' config nor weir's partitions.
func TestSASLRefusalIsNotACreationRefusal(t *testing.T) {
	c, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.AllowAutoTopicCreation(), kfake.DefaultNumPartitions(1),
		kfake.EnableSASL(), kfake.Superuser("PLAIN", "weir", "pw"))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	var refuse atomic.Bool
	refuse.Store(true)
	c.ControlKey(int16(kmsg.SASLAuthenticate), func(req kmsg.Request) (kmsg.Response, error, bool) {
		c.KeepControl()
		if !refuse.Load() {
			return nil, nil, false
		}
		resp := req.ResponseKind().(*kmsg.SASLAuthenticateResponse)
		resp.ErrorCode = kerr.SaslAuthenticationFailed.Code
		msg := "Authentication failed: Invalid username or password"
		resp.ErrorMessage = &msg
		return resp, nil, true
	})
	b, err := New(c.ListenAddrs(), WithTopicDefaults(broker.TopicConfig{Partitions: 4}),
		WithTopics(map[string]broker.TopicConfig{"events": {Partitions: 3}}),
		WithClientOpts(kgo.SASL(plain.Auth{User: "weir", Pass: "pw"}.AsMechanism())))
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()

	err = b.CreateTopic(ctx, "events", broker.TopicConfig{Partitions: 3})
	if !errors.Is(err, kerr.SaslAuthenticationFailed) {
		t.Fatalf("create while the credentials are refused: %v, want SASL_AUTHENTICATION_FAILED", err)
	}
	if !Unreachable(err) {
		t.Errorf("Unreachable(%v) = false: weir run would exit at start instead of waiting for the cluster", err)
	}
	for _, topic := range []string{"events", "other"} {
		pctx, pcancel := context.WithTimeout(ctx, 2*time.Second) // a produce waits for the cluster while its ctx lasts
		err := b.Produce(pctx, topic, []broker.Record{{Key: []byte("edge1"), Value: []byte("v")}})
		pcancel()
		if err == nil {
			t.Fatalf("produce to %s succeeded while the credentials are refused", topic)
		}
	}

	refuse.Store(false) // the user created, the password fixed
	for _, topic := range []string{"events", "other"} {
		var perr error
		for range 5 { // callers retry a failed produce
			if perr = b.Produce(ctx, topic, []broker.Record{{Key: []byte("edge1"), Value: []byte("v")}}); perr == nil {
				break
			}
			time.Sleep(200 * time.Millisecond)
		}
		if perr != nil {
			t.Fatalf("produce to %s once the credentials work: %v", topic, perr)
		}
	}
	for topic, want := range map[string]int{"events": 3, "other": 4} {
		infos, err := b.DescribeTopics(ctx, topic)
		if err != nil {
			t.Fatal(err)
		}
		if n := len(infos[0].Partitions); n != want {
			t.Errorf("%s: %d partitions (the cluster's auto-creation), want weir's %d", topic, n, want)
		}
	}
}
