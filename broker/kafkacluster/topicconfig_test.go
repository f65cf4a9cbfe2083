package kafkacluster

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/weirnet/weir/broker"
	"github.com/weirnet/weir/internal/syncbuf"
)

// TestTopicLimitLoweredAtRuntime: an operator lowers a topic's
// max.message.bytes while weir produces to it. franz-go keeps the batch
// limit it took when it first produced to a partition, so its batches of
// small records went on being refused whole (MESSAGE_TOO_LARGE) until
// weir restarted: the collectors dropped them as too large, enrichment
// retried its transaction for ever. Now the plain producers are replaced
// by ones that take the new limit and the refused records sent again; a
// transaction fails with ErrRecordTooLarge once, and its member's next
// client (the one enrichment makes when it joins again) keeps to the limit.
func TestTopicLimitLoweredAtRuntime(t *testing.T) {
	_, b := newKfake(t)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	random := func(n int) []byte { p := make([]byte, n); rand.Read(p); return p } // snappy must not shrink the batches
	small := func(n int) []broker.Record {
		recs := make([]broker.Record, n)
		for i := range recs {
			recs[i] = broker.Record{Key: []byte("edge1"), Value: random(1 << 10)}
		}
		return recs
	}
	for _, topic := range []string{"shrinks", "in"} {
		if err := b.CreateTopic(ctx, topic, broker.TopicConfig{Partitions: 1}); err != nil {
			t.Fatal(err)
		}
	}
	if err := b.Produce(ctx, "shrinks", small(200)); err != nil {
		t.Fatal(err)
	}
	if err := b.ProducePartition(ctx, "shrinks", 0, small(200)); err != nil {
		t.Fatal(err)
	}
	if err := b.Produce(ctx, "in", values("x", 1)); err != nil {
		t.Fatal(err)
	}
	c, err := b.Consume(ctx, "g", []string{"in"}, broker.WithTransactions(), broker.WithMemberID("m"))
	if err != nil {
		t.Fatal(err)
	}
	defer func() { c.Close() }()
	if _, err := c.Poll(ctx); err != nil {
		t.Fatal(err)
	}
	transact := func(c broker.Consumer) error {
		ok, err := c.(broker.TxnConsumer).Transact(ctx, func(tx broker.Txn) error { return tx.Produce(ctx, "shrinks", small(200)) })
		if err == nil && !ok {
			err = errors.New("not committed")
		}
		return err
	}
	if err := transact(c); err != nil {
		t.Fatal(err)
	}

	const limit = 16 << 10
	v := fmt.Sprint(limit)
	res, err := b.admin.AlterTopicConfigs(ctx, []kadm.AlterConfig{{Name: "max.message.bytes", Value: &v}}, "shrinks")
	if err == nil {
		_, err = res.On("shrinks", nil)
	}
	if err != nil {
		t.Fatal(err)
	}
	if err := b.Produce(ctx, "shrinks", small(200)); err != nil {
		t.Fatalf("Produce, 200 records of 1 KiB after the topic's limit went down to %d: %v", limit, err)
	}
	if err := b.ProducePartition(ctx, "shrinks", 0, small(200)); err != nil {
		t.Fatalf("ProducePartition, after the limit went down: %v", err)
	}
	if err := b.CheckSize("shrinks", nil, random(limit), nil); !errors.Is(err, broker.ErrRecordTooLarge) {
		t.Fatalf("CheckSize of a record over the new limit: %v", err)
	}
	if err := transact(c); !errors.Is(err, broker.ErrRecordTooLarge) {
		t.Fatalf("a transaction on the member's old client: %v, want ErrRecordTooLarge", err)
	}
	c.Close()
	if err := b.Produce(ctx, "in", values("y", 1)); err != nil {
		t.Fatal(err)
	}
	if c, err = b.Consume(ctx, "g", []string{"in"}, broker.WithTransactions(), broker.WithMemberID("m")); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Poll(ctx); err != nil {
		t.Fatal(err)
	}
	if err := transact(c); err != nil {
		t.Fatalf("a transaction of the member joined again: %v", err)
	}
}

// TestCompactedTopicWarned: a topic weir writes that exists already as a
// compacted topic (someone made it so) would keep only each device's last
// record: weir says so at its first produce, once; a topic of its own
// making, or one made with the delete policy, is not warned of.
func TestCompactedTopicWarned(t *testing.T) {
	var logs syncbuf.Buffer
	_, b := newKfake(t, WithLogger(slog.New(slog.NewTextHandler(&logs, nil))))
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	for policy, topic := range map[string]string{"compact": "raw.syslog", "delete": "raw.snmp"} {
		resp, err := b.admin.CreateTopic(ctx, 1, 3, map[string]*string{"cleanup.policy": &policy}, topic)
		if err == nil {
			err = resp.Err
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	for _, topic := range []string{"raw.syslog", "raw.syslog", "raw.snmp", "events"} {
		if err := b.Produce(ctx, topic, []broker.Record{{Key: []byte("edge1"), Value: []byte("x")}}); err != nil {
			t.Fatal(err)
		}
	}
	out := logs.String()
	if n := strings.Count(out, "is compacted"); n != 1 || !strings.Contains(out, "topic=raw.syslog") {
		t.Fatalf("%d warnings, want one for raw.syslog:\n%s", n, out)
	}
}

// TestResetToLatestStartsAtTheEndOnce: a group of WithResetToLatest
// members starts partitions without a commit at the log end, and that
// start holds: a member that leaves before anything came to a partition,
// and one that joins later, goes on from there rather than from the end
// of then, which skipped what came meanwhile (a sink with start: latest
// restarted).
func TestResetToLatestStartsAtTheEndOnce(t *testing.T) {
	var logs syncbuf.Buffer
	_, b := newKfake(t, WithLogger(slog.New(slog.NewTextHandler(&logs, nil))))
	defer func() {
		if strings.Contains(logs.String(), "not committed") {
			t.Errorf("the start was not committed:\n%s", logs.String())
		}
	}()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	if err := b.CreateTopic(ctx, "news", broker.TopicConfig{Partitions: 2}); err != nil {
		t.Fatal(err)
	}
	if err := b.ProducePartition(ctx, "news", 0, values("old", 5)); err != nil {
		t.Fatal(err)
	}
	join := func() broker.Consumer {
		c, err := b.Consume(ctx, "g", []string{"news"}, broker.WithResetToLatest())
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	c := join()
	// Partition 1 gets a record once the member has it; partition 0's
	// old records are not polled.
	for deadline := time.Now().Add(20 * time.Second); len(c.Assigned()) < 2; time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("partitions not assigned")
		}
	}
	if err := b.ProducePartition(ctx, "news", 1, values("new", 1)); err != nil {
		t.Fatal(err)
	}
	recs, err := c.Poll(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(recs) != 1 || string(recs[0].Value) != "new0" {
		t.Fatalf("polled %d records (%v), want the one produced after the member joined", len(recs), recs)
	}
	if err := c.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	c.Close()
	// Meanwhile partition 0, which nothing came to while the member was
	// there, gets a record.
	if err := b.ProducePartition(ctx, "news", 0, values("meanwhile", 1)); err != nil {
		t.Fatal(err)
	}
	c = join()
	defer c.Close()
	pctx, pcancel := context.WithTimeout(ctx, 10*time.Second)
	defer pcancel()
	recs, err = c.Poll(pctx)
	if err != nil {
		t.Fatalf("the record that came while no member was there: %v", err)
	}
	if len(recs) != 1 || string(recs[0].Value) != "meanwhile0" {
		t.Fatalf("polled %v, want meanwhile0 only", recs)
	}
}

// TestProduceBegunBeforeTheClientIsReplaced: a call that took the
// producer just before another call replaced it (the topic's limit
// lowered) found it closed, and failed with "client closed": a collector
// logged a failed publish and retried, other callers failed. It now goes
// on with the new client.
func TestProduceBegunBeforeTheClientIsReplaced(t *testing.T) {
	kf, b := newKfake(t)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	random := func(n int) []byte { p := make([]byte, n); rand.Read(p); return p }
	small := func(n int) []broker.Record {
		recs := make([]broker.Record, n)
		for i := range recs {
			recs[i] = broker.Record{Key: []byte("edge1"), Value: random(1 << 10)}
		}
		return recs
	}
	if err := b.CreateTopic(ctx, "shrinks", broker.TopicConfig{Partitions: 1}); err != nil {
		t.Fatal(err)
	}
	if err := b.Produce(ctx, "shrinks", small(200)); err != nil {
		t.Fatal(err)
	}
	// A collector's first publish to a topic of its own: the backend
	// makes the topic first, which takes a round trip.
	creating, release := make(chan struct{}), make(chan struct{})
	kf.ControlKey(int16(kmsg.CreateTopics), func(kmsg.Request) (kmsg.Response, error, bool) {
		close(creating)
		kf.SleepControl(func() { <-release })
		return nil, nil, false
	})
	done := make(chan error, 1)
	go func() { done <- b.Produce(ctx, "fresh", small(1)) }()
	<-creating
	v := "16384"
	if _, err := b.admin.AlterTopicConfigs(ctx, []kadm.AlterConfig{{Name: "max.message.bytes", Value: &v}}, "shrinks"); err != nil {
		t.Fatal(err)
	}
	if err := b.Produce(ctx, "shrinks", small(200)); err != nil {
		t.Fatal(err)
	}
	time.Sleep(100 * time.Millisecond) // the replaced client closed
	close(release)
	if err := <-done; err != nil {
		t.Fatalf("a Produce begun before the client was replaced: %v", err)
	}
}

// TestResetToLatestKeepsAnOpenTransaction: the start a WithResetToLatest
// member commits is where a read-committed member starts, the last
// stable offset. It was the high watermark, past the records of a
// transaction still open (an enrichment worker's, into the topic a sink
// with start: latest reads): once committed, they were never polled.
func TestResetToLatestKeepsAnOpenTransaction(t *testing.T) {
	kf, b := newKfake(t)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	if err := b.CreateTopic(ctx, "enriched", broker.TopicConfig{Partitions: 1}); err != nil {
		t.Fatal(err)
	}
	txn, err := kgo.NewClient(kgo.SeedBrokers(kf.ListenAddrs()...), kgo.TransactionalID("enricher"), kgo.DefaultProduceTopic("enriched"))
	if err != nil {
		t.Fatal(err)
	}
	defer txn.Close()
	if err := txn.BeginTransaction(); err != nil {
		t.Fatal(err)
	}
	if err := txn.ProduceSync(ctx, &kgo.Record{Value: []byte("open")}).FirstErr(); err != nil {
		t.Fatal(err)
	}
	c, err := b.Consume(ctx, "sink", []string{"enriched"}, broker.WithResetToLatest())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	for deadline := time.Now().Add(20 * time.Second); len(c.Assigned()) < 1; time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("partition not assigned")
		}
	}
	if err := txn.EndTransaction(ctx, kgo.TryCommit); err != nil {
		t.Fatal(err)
	}
	pctx, pcancel := context.WithTimeout(ctx, 10*time.Second)
	defer pcancel()
	recs, err := c.Poll(pctx)
	if err != nil || len(recs) != 1 || string(recs[0].Value) != "open" {
		t.Fatalf("polled %v (%v), want the record of the transaction open when the member joined", recs, err)
	}
}
