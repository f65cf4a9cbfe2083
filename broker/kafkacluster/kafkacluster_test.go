package kafkacluster

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/weirnet/weir/broker"
	"github.com/weirnet/weir/internal/brokertest"
)

func newCluster(t *testing.T) *Broker {
	t.Helper()
	_, b := newKfake(t)
	return b
}

// newKfake is newCluster with the cluster itself, to move partitions
// around; opts are given to the backend.
func newKfake(t *testing.T, opts ...Option) (*kfake.Cluster, *Broker) {
	t.Helper()
	c, err := kfake.NewCluster(kfake.NumBrokers(3))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	b, err := New(c.ListenAddrs(), append([]Option{WithReplicationFactor(3)}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { b.Close() })
	return c, b
}

func TestProduceFetchSameLayoutAsEmbedded(t *testing.T) {
	b := newCluster(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := b.CreateTopic(ctx, "t", broker.TopicConfig{Partitions: 6}); err != nil {
		t.Fatal(err)
	}
	if err := b.CreateTopic(ctx, "t", broker.TopicConfig{}); !errors.Is(err, broker.ErrTopicExists) {
		t.Fatalf("second create: %v", err)
	}
	recs := make([]broker.Record, 100)
	for i := range recs {
		recs[i] = broker.Record{Key: []byte(fmt.Sprintf("dev-%d", i%10)), Value: []byte(fmt.Sprint(i)),
			Headers: []broker.Header{{Key: "source", Value: []byte("test")}}}
	}
	if err := b.Produce(ctx, "t", recs); err != nil {
		t.Fatal(err)
	}
	for _, r := range recs {
		if want := broker.PartitionForKey(r.Key, 6); r.Partition != want {
			t.Fatalf("key %s went to %d, murmur2 says %d", r.Key, r.Partition, want)
		}
	}
	var res broker.FetchResult
	if err := b.Fetch(ctx, "t", recs[0].Partition, recs[0].Offset, broker.FetchOptions{}, &res); err != nil {
		t.Fatal(err)
	}
	if len(res.Records) == 0 || string(res.Records[0].Value) != "0" || string(res.Records[0].Headers[0].Value) != "test" {
		t.Fatalf("fetch: %+v", res.Records)
	}
	if err := b.ProducePartition(ctx, "t", 5, []broker.Record{{Value: []byte("p5")}}); err != nil {
		t.Fatal(err)
	}
	infos, err := b.DescribeTopics(ctx, "t")
	if err != nil || len(infos[0].Partitions) != 6 {
		t.Fatalf("describe: %v %+v", err, infos)
	}
	total := int64(0)
	for _, p := range infos[0].Partitions {
		total += p.HighWatermark - p.LogStartOffset
	}
	if total != 101 {
		t.Fatalf("%d records in the topic", total)
	}
	if _, err := b.DescribeTopics(ctx, "nope"); !errors.Is(err, broker.ErrUnknownTopic) {
		t.Fatalf("unknown topic: %v", err)
	}
}

func TestGroupMembersShareAndCommit(t *testing.T) {
	b := newCluster(t)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	b.CreateTopic(ctx, "g", broker.TopicConfig{Partitions: 4})
	recs := make([]broker.Record, 200)
	for i := range recs {
		recs[i] = broker.Record{Key: []byte(fmt.Sprint(i)), Value: []byte(fmt.Sprint(i))}
	}
	b.Produce(ctx, "g", recs)
	c1, err := b.Consume(ctx, "grp", []string{"g"})
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	for len(seen) < 200 {
		got, err := c1.Poll(ctx)
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range got {
			seen[string(r.Value)] = true
		}
	}
	if err := c1.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	c1.Close()
	// A new member of the group starts after what was committed.
	b.Produce(ctx, "g", []broker.Record{{Key: []byte("k"), Value: []byte("new")}})
	c2, _ := b.Consume(ctx, "grp", []string{"g"})
	defer c2.Close()
	got, err := c2.Poll(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 1 || string(got[0].Value) != "new" {
		t.Fatalf("after commit: %d records, first %q", len(got), got[0].Value)
	}
}

// TestAssignedFollowsCooperativeRebalances: franz-go's default balancer is
// cooperative, whose callbacks carry only the partitions that move;
// Assigned must still list the member's whole assignment.
func TestAssignedFollowsCooperativeRebalances(t *testing.T) {
	b := newCluster(t)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	if err := b.CreateTopic(ctx, "coop", broker.TopicConfig{Partitions: 6}); err != nil {
		t.Fatal(err)
	}
	waitFor := func(what string, ok func() bool) {
		t.Helper()
		for !ok() {
			if ctx.Err() != nil {
				t.Fatalf("timed out waiting for %s", what)
			}
			time.Sleep(50 * time.Millisecond)
		}
	}
	c1, err := b.Consume(ctx, "coop-grp", []string{"coop"}, broker.WithSessionTimeout(6*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	defer c1.Close()
	waitFor("c1 to own all 6", func() bool { return len(c1.Assigned()) == 6 })
	c2, err := b.Consume(ctx, "coop-grp", []string{"coop"}, broker.WithSessionTimeout(6*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	waitFor("3 and 3", func() bool { return len(c1.Assigned()) == 3 && len(c2.Assigned()) == 3 })
	all := map[broker.TopicPartition]bool{}
	for _, tp := range append(c1.Assigned(), c2.Assigned()...) {
		all[tp] = true
	}
	if len(all) != 6 {
		t.Fatalf("c1 %v and c2 %v overlap", c1.Assigned(), c2.Assigned())
	}
	c2.Close()
	waitFor("c1 to own all 6 again", func() bool { return len(c1.Assigned()) == 6 })
}

// TestCommitOffsetsPartOfAPoll: a member commits a position inside what
// it polled (a sink that delivered one batch of a poll); the next member
// resumes there. A position past what was polled is ignored.
func TestCommitOffsetsPartOfAPoll(t *testing.T) {
	b := newCluster(t)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	b.CreateTopic(ctx, "c", broker.TopicConfig{Partitions: 1})
	recs := make([]broker.Record, 10)
	for i := range recs {
		recs[i] = broker.Record{Value: []byte(fmt.Sprint(i))}
	}
	if err := b.ProducePartition(ctx, "c", 0, recs); err != nil {
		t.Fatal(err)
	}
	c1, err := b.Consume(ctx, "cg", []string{"c"})
	if err != nil {
		t.Fatal(err)
	}
	for n := 0; n < 10; {
		got, err := c1.Poll(ctx)
		if err != nil {
			t.Fatal(err)
		}
		n += len(got)
	}
	oc := c1.(broker.OffsetCommitter)
	tp := broker.TopicPartition{Topic: "c", Partition: 0}
	if err := oc.CommitOffsets(ctx, map[broker.TopicPartition]int64{tp: 100}); err != nil {
		t.Fatal(err)
	}
	if err := oc.CommitOffsets(ctx, map[broker.TopicPartition]int64{tp: 4}); err != nil {
		t.Fatal(err)
	}
	c1.Close()
	c2, err := b.Consume(ctx, "cg", []string{"c"})
	if err != nil {
		t.Fatal(err)
	}
	defer c2.Close()
	got, err := c2.Poll(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if got[0].Offset != 4 {
		t.Fatalf("resumed at %d, want 4", got[0].Offset)
	}
}

// TestCommitOffsetsNeverBackwards: a position at or before the committed
// one is left alone.
func TestCommitOffsetsNeverBackwards(t *testing.T) {
	b := newCluster(t)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	b.CreateTopic(ctx, "nb", broker.TopicConfig{Partitions: 1})
	produce := func(from int) {
		recs := make([]broker.Record, 10)
		for i := range recs {
			recs[i] = broker.Record{Value: []byte(fmt.Sprint(from + i))}
		}
		if err := b.ProducePartition(ctx, "nb", 0, recs); err != nil {
			t.Fatal(err)
		}
	}
	pollAll := func(c broker.Consumer, n int) {
		for got := 0; got < n; {
			recs, err := c.Poll(ctx)
			if err != nil {
				t.Fatal(err)
			}
			got += len(recs)
		}
	}
	produce(0)
	c1, err := b.Consume(ctx, "nbg", []string{"nb"})
	if err != nil {
		t.Fatal(err)
	}
	pollAll(c1, 10)
	if err := c1.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	produce(10)
	pollAll(c1, 10)
	if err := c1.(broker.OffsetCommitter).CommitOffsets(ctx, map[broker.TopicPartition]int64{{Topic: "nb", Partition: 0}: 4}); err != nil {
		t.Fatal(err)
	}
	c1.Close()
	c2, err := b.Consume(ctx, "nbg", []string{"nb"})
	if err != nil {
		t.Fatal(err)
	}
	defer c2.Close()
	got, err := c2.Poll(ctx)
	if err != nil || got[0].Offset != 10 {
		t.Fatalf("resumed at %v (%v), want 10: the commit went backwards", got, err)
	}
}

// TestPosition: as the embedded log's (internal/brokertest).
func TestPosition(t *testing.T) { brokertest.Position(t, newCluster(t)) }

// TestPositionWithoutCommit: in a partition that gave nothing yet and has
// no commit, where the member starts is not known.
func TestPositionWithoutCommit(t *testing.T) {
	b := newCluster(t)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	b.CreateTopic(ctx, "q2", broker.TopicConfig{Partitions: 2})
	if err := b.ProducePartition(ctx, "q2", 0, []broker.Record{{Value: []byte("x")}}); err != nil {
		t.Fatal(err)
	}
	c, err := b.Consume(ctx, "fresh", []string{"q2"})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if got, err := c.Poll(ctx); err != nil || len(got) != 1 {
		t.Fatalf("poll: %d records, %v", len(got), err)
	}
	pc := c.(broker.Positioner)
	if pos, ok := pc.Position(ctx, broker.TopicPartition{Topic: "q2", Partition: 0}); !ok || pos != 1 {
		t.Errorf("partition 0: position %d (%v), want 1", pos, ok)
	}
	// Not known to franz-go until polled: asked of the cluster, the log's
	// start (enrichment's warm gate waits for it).
	if pos, ok := pc.Position(ctx, broker.TopicPartition{Topic: "q2", Partition: 1}); !ok || pos != 0 {
		t.Errorf("partition 1, no commit, nothing polled: position %d (%v), want 0, the log's start", pos, ok)
	}
}

// TestPollHonoursMaxPollBytes: a poll reads about MaxPollBytes (a batch
// more at most), like the embedded log's, even when the client holds a
// fetch from each of several brokers, and every record still comes, in
// order.
func TestPollHonoursMaxPollBytes(t *testing.T) {
	kf, b := newKfake(t)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	const (
		parts      = 3
		batches    = 128 // per partition
		perBatch   = 16
		valueBytes = 512
		maxPoll    = 64 << 10
	)
	if err := b.CreateTopic(ctx, "big", broker.TopicConfig{Partitions: parts}); err != nil {
		t.Fatal(err)
	}
	// A leader per broker, so that the client fetches from three.
	for p := range int32(parts) {
		if err := kf.MoveTopicPartition("big", p, p); err != nil {
			t.Fatal(err)
		}
	}
	// 3 MiB in batches of 8 KiB (one per call), of random bytes: the
	// producer's compression leaves them as large as the records.
	for p := range int32(parts) {
		for i := range batches {
			recs := make([]broker.Record, perBatch)
			for j := range recs {
				v := make([]byte, valueBytes)
				rand.Read(v)
				copy(v, fmt.Sprint(i*perBatch+j, " "))
				recs[j] = broker.Record{Value: v}
			}
			if err := b.ProducePartition(ctx, "big", p, recs); err != nil {
				t.Fatal(err)
			}
		}
	}
	c, err := b.Consume(ctx, "mpb", []string{"big"}, broker.WithMaxPollBytes(maxPoll))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	const limit = maxPoll + perBatch*valueBytes
	next := make([]int64, parts)
	polls, largest := 0, 0
	for total := 0; total < parts*batches*perBatch; {
		recs, err := c.Poll(ctx)
		if err != nil {
			t.Fatalf("poll after %d records: %v", total, err)
		}
		polls++
		size := 0
		for _, r := range recs {
			size += len(r.Key) + len(r.Value)
			if r.Offset != next[r.Partition] {
				t.Fatalf("partition %d: offset %d after %d", r.Partition, r.Offset, next[r.Partition]-1)
			}
			if want := fmt.Sprint(r.Offset, " "); string(r.Value[:len(want)]) != want {
				t.Fatalf("partition %d offset %d holds %q", r.Partition, r.Offset, r.Value[:len(want)])
			}
			next[r.Partition]++
		}
		largest = max(largest, size)
		if size > limit {
			t.Fatalf("poll %d read %d bytes of records, want at most %d (MaxPollBytes %d and a batch)", polls, size, limit, maxPoll)
		}
		total += len(recs)
		// Work on the poll, meanwhile the client fetches from every
		// broker.
		time.Sleep(5 * time.Millisecond)
	}
	t.Logf("%d polls, the largest %d bytes", polls, largest)
}

// TestSmallPollsReadCommittedOnly: small polls skip the records of
// aborted transactions too. (kfake leaves out the aborted transactions of
// a partition that a fetch's overall limit cuts short: with that limit
// at MaxPollBytes, their records would come.)
func TestSmallPollsReadCommittedOnly(t *testing.T) {
	kf, b := newKfake(t)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	if err := b.CreateTopic(ctx, "ab", broker.TopicConfig{Partitions: 2}); err != nil {
		t.Fatal(err)
	}
	// One broker answers for both partitions.
	for p := range int32(2) {
		if err := kf.MoveTopicPartition("ab", p, 0); err != nil {
			t.Fatal(err)
		}
	}
	tx, err := kgo.NewClient(kgo.SeedBrokers(b.seeds...), kgo.TransactionalID("small-polls"),
		kgo.RecordPartitioner(kgo.ManualPartitioner()))
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Close()
	committed := 0
	for i := range 40 {
		commit := i%2 == 0
		if err := tx.BeginTransaction(); err != nil {
			t.Fatal(err)
		}
		for p := range int32(2) {
			for range 20 {
				r := broker.Record{Partition: p, Value: []byte(fmt.Sprintf("%-400v", commit))}
				if err := tx.ProduceSync(ctx, toKgo("ab", &r)).FirstErr(); err != nil {
					t.Fatal(err)
				}
				if commit {
					committed++
				}
			}
		}
		if err := tx.EndTransaction(ctx, kgo.TransactionEndTry(commit)); err != nil {
			t.Fatal(err)
		}
	}
	c, err := b.Consume(ctx, "abg", []string{"ab"}, broker.WithMaxPollBytes(16<<10))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	for got := 0; got < committed; {
		recs, err := c.Poll(ctx)
		if err != nil {
			t.Fatalf("poll after %d of %d records: %v", got, committed, err)
		}
		for _, r := range recs {
			if strings.TrimSpace(string(r.Value)) != "true" {
				t.Fatalf("polled %s/%d@%d, of an aborted transaction", r.Topic, r.Partition, r.Offset)
			}
			got++
		}
	}
}

// TestRefusedProduceAppendsNothing: a call with one record over the
// producer's batch limit is refused whole, as on the embedded log: franz-go
// failed that record and produced the others, so a caller that sends a
// refused batch again record by record (the syslog and trap collectors)
// wrote them twice.
func TestRefusedProduceAppendsNothing(t *testing.T) {
	_, b := newKfake(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := b.CreateTopic(ctx, "big", broker.TopicConfig{Partitions: 1}); err != nil {
		t.Fatal(err)
	}
	recs := values("small", 20)
	recs = append(recs, broker.Record{Key: []byte("k"), Value: make([]byte, 1_000_000)})
	err := b.Produce(ctx, "big", recs)
	if !broker.Refused(err) {
		t.Fatalf("produce with a record over the limit: %v", err)
	}
	infos, err := b.DescribeTopics(ctx, "big")
	if err != nil {
		t.Fatal(err)
	}
	if hw := infos[0].Partitions[0].HighWatermark; hw != 0 {
		t.Fatalf("a refused call appended %d records", hw)
	}
	if err := b.Produce(ctx, "big", recs[:20]); err != nil {
		t.Fatal(err)
	}
}

// TestTopicMaxMessageBytes: a topic whose max.message.bytes is below the
// producers' batch limit. franz-go filled batches up to its own limit, which
// the cluster refused whole (MESSAGE_TOO_LARGE), small records and all; the
// batches now stay within the topic's limit, and CheckSize and Produce
// refuse a record over it.
func TestTopicMaxMessageBytes(t *testing.T) {
	_, b := newKfake(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	const limit = 16 << 10
	v := fmt.Sprint(limit)
	// Made by someone else, as a user may make weir's topics.
	resp, err := b.admin.CreateTopic(ctx, 1, 3, map[string]*string{"max.message.bytes": &v}, "small")
	if err == nil {
		err = resp.Err
	}
	if err != nil {
		t.Fatal(err)
	}
	random := func(n int) []byte { p := make([]byte, n); rand.Read(p); return p } // snappy must not shrink the batches
	recs := make([]broker.Record, 200)
	for i := range recs {
		recs[i] = broker.Record{Key: []byte("edge1"), Value: random(1 << 10)}
	}
	if err := b.Produce(ctx, "small", recs); err != nil {
		t.Fatalf("200 records of 1 KiB to a topic of %d-byte batches: %v", limit, err)
	}
	big := random(limit)
	if err := b.CheckSize("small", []byte("edge1"), big, nil); !errors.Is(err, broker.ErrRecordTooLarge) {
		t.Fatalf("CheckSize of %d bytes for the topic: %v", len(big), err)
	}
	if err := b.CheckSize("other", []byte("edge1"), big, nil); err != nil {
		t.Fatalf("CheckSize for a topic of the default limit: %v", err)
	}
	if err := b.Produce(ctx, "small", []broker.Record{{Key: []byte("edge1"), Value: big}}); !errors.Is(err, broker.ErrRecordTooLarge) {
		t.Fatalf("produce over the topic's limit: %v", err)
	}
	// A transactional member's producer keeps to it too.
	if err := b.CreateTopic(ctx, "in", broker.TopicConfig{Partitions: 1}); err != nil {
		t.Fatal(err)
	}
	if err := b.Produce(ctx, "in", values("x", 1)); err != nil {
		t.Fatal(err)
	}
	c, err := b.Consume(ctx, "g", []string{"in"}, broker.WithTransactions())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if _, err := c.Poll(ctx); err != nil {
		t.Fatal(err)
	}
	ok, err := c.(broker.TxnConsumer).Transact(ctx, func(tx broker.Txn) error { return tx.Produce(ctx, "small", recs) })
	if !ok || err != nil {
		t.Fatalf("a transaction of 200 records of 1 KiB: %v %v", ok, err)
	}
}

// TestProduceAtTheBatchLimit: the size check refuses what franz-go would
// refuse, and at most 3 bytes more (franz-go counts an empty batch as 62
// bytes once it knows the produce version, 65 before): a record of exactly
// the limit by batchBytes goes, and one franz-go refuses is refused whole.
func TestProduceAtTheBatchLimit(t *testing.T) {
	_, b := newKfake(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := b.CreateTopic(ctx, "edge", broker.TopicConfig{Partitions: 1}); err != nil {
		t.Fatal(err)
	}
	limit := int(b.producer.client().OptValue(kgo.ProducerBatchMaxBytes).(int32))
	sized := func(extra int) broker.Record {
		rec := broker.Record{Key: []byte("k"), Headers: []broker.Header{{Key: "source", Value: []byte("syslog")}, {Key: "schema", Value: []byte("log/1")}}}
		rec.Value = make([]byte, limit-batchBytes(&rec))
		for batchBytes(&rec) > limit {
			rec.Value = rec.Value[:len(rec.Value)-1]
		}
		rec.Value = append(rec.Value, make([]byte, extra)...)
		return rec
	}
	if rec := sized(0); batchBytes(&rec) != limit {
		t.Fatalf("record sized %d, want %d", batchBytes(&rec), limit)
	} else if err := b.Produce(ctx, "edge", []broker.Record{rec}); err != nil {
		t.Fatalf("a record of exactly the limit: %v", err)
	}
	over := sized(4)
	if err := b.producer.client().ProduceSync(ctx, toKgo("edge", &over)).FirstErr(); err == nil {
		t.Fatal("franz-go took a record 4 bytes over the limit by batchBytes: it counts more than 3 bytes too many")
	}
	if err := b.Produce(ctx, "edge", []broker.Record{over}); !broker.Refused(err) {
		t.Fatalf("over the limit: %v", err)
	}
}

// TestCloseTwice: a second Close is harmless (it panicked closing a
// channel twice); newKfake's cleanup closes b again.
func TestCloseTwice(t *testing.T) {
	_, b := newKfake(t)
	if err := b.Close(); err != nil {
		t.Fatal(err)
	}
}
