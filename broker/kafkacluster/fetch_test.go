package kafkacluster

import (
	"context"
	"errors"
	"fmt"
	"net"
	"slices"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/weirnet/weir/broker"
)

// connCounter counts the connections the backend's clients open.
type connCounter struct{ n atomic.Int64 }

func (c *connCounter) OnBrokerConnect(_ kgo.BrokerMetadata, _ time.Duration, _ net.Conn, err error) {
	if err == nil {
		c.n.Add(1)
	}
}

// fetchAll reads the partition from offset to its end a batch at a time,
// as the enrichment warm-up does, and returns the values and offsets.
func fetchAll(t *testing.T, ctx context.Context, b *Broker, topic string, partition int32, from int64) ([]string, []int64) {
	t.Helper()
	var vals []string
	var offs []int64
	var res broker.FetchResult
	for {
		if err := b.Fetch(ctx, topic, partition, from, broker.FetchOptions{MaxBytes: 1}, &res); err != nil {
			t.Fatalf("fetch %s/%d@%d: %v", topic, partition, from, err)
		}
		if len(res.Records) == 0 {
			return vals, offs
		}
		for _, r := range res.Records {
			if r.Offset < from {
				t.Fatalf("fetch @%d returned offset %d", from, r.Offset)
			}
			vals = append(vals, string(r.Value))
			offs = append(offs, r.Offset)
			from = r.Offset + 1
		}
	}
}

func values(prefix string, n int) []broker.Record {
	recs := make([]broker.Record, n)
	for i := range recs {
		recs[i] = broker.Record{Value: []byte(fmt.Sprint(prefix, i))}
	}
	return recs
}

// TestFetchKeepsItsClient: Fetch reads a partition back a batch at a time
// (the enrichment warm-up) without a client, and its connections, per
// call.
func TestFetchKeepsItsClient(t *testing.T) {
	conns := new(connCounter)
	_, b := newKfake(t, WithClientOpts(kgo.WithHooks(conns)))
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	if err := b.CreateTopic(ctx, "w", broker.TopicConfig{Partitions: 1}); err != nil {
		t.Fatal(err)
	}
	for range 50 { // 50 batches
		if err := b.ProducePartition(ctx, "w", 0, values("v", 2)); err != nil {
			t.Fatal(err)
		}
	}
	var res broker.FetchResult
	if err := b.Fetch(ctx, "w", 0, 0, broker.FetchOptions{MaxBytes: 1}, &res); err != nil {
		t.Fatal(err)
	}
	before := conns.n.Load()
	vals, _ := fetchAll(t, ctx, b, "w", 0, 0)
	if len(vals) != 100 {
		t.Fatalf("read %d records back, want 100", len(vals))
	}
	if n := conns.n.Load() - before; n != 0 {
		t.Fatalf("reading 50 batches back opened %d connections", n)
	}
}

// TestFetchCommittedOnly: Fetch skips the records of aborted transactions
// (whatever MaxWait, when committed ones follow) and stops at those of an
// open one, as a read-committed consumer does.
func TestFetchCommittedOnly(t *testing.T) {
	b := newCluster(t)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	if err := b.CreateTopic(ctx, "tx", broker.TopicConfig{Partitions: 1}); err != nil {
		t.Fatal(err)
	}
	tx, err := kgo.NewClient(kgo.SeedBrokers(b.seeds...), kgo.TransactionalID("fetch-test"),
		kgo.RecordPartitioner(kgo.ManualPartitioner()))
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Close()
	// transact produces n records in a transaction, and leaves it open.
	transact := func(prefix string, n int) {
		t.Helper()
		if err := tx.BeginTransaction(); err != nil {
			t.Fatal(err)
		}
		for _, r := range values(prefix, n) {
			if err := tx.ProduceSync(ctx, toKgo("tx", &r)).FirstErr(); err != nil {
				t.Fatal(err)
			}
		}
	}
	end := func(commit kgo.TransactionEndTry) {
		t.Helper()
		if err := tx.EndTransaction(ctx, commit); err != nil {
			t.Fatal(err)
		}
	}
	if err := b.ProducePartition(ctx, "tx", 0, values("plain", 2)); err != nil {
		t.Fatal(err)
	}
	transact("aborted", 3)
	end(kgo.TryAbort)
	transact("committed", 2)
	end(kgo.TryCommit)
	transact("aborted-again", 2)
	end(kgo.TryAbort)
	if err := b.ProducePartition(ctx, "tx", 0, values("last", 1)); err != nil {
		t.Fatal(err)
	}
	vals, offs := fetchAll(t, ctx, b, "tx", 0, 0)
	if want := []string{"plain0", "plain1", "committed0", "committed1", "last0"}; !slices.Equal(vals, want) {
		t.Fatalf("read %v, want %v", vals, want)
	}
	// From the first aborted record, at once: the next committed one.
	var res broker.FetchResult
	if err := b.Fetch(ctx, "tx", 0, offs[1]+1, broker.FetchOptions{MaxBytes: 1}, &res); err != nil {
		t.Fatal(err)
	}
	if len(res.Records) == 0 || string(res.Records[0].Value) != "committed0" {
		t.Fatalf("from the aborted transaction: %d records, want committed0 first", len(res.Records))
	}

	// An open transaction holds back what follows it.
	transact("open", 2)
	if err := b.ProducePartition(ctx, "tx", 0, values("after-open", 1)); err != nil {
		t.Fatal(err)
	}
	from := offs[len(offs)-1] + 1
	start := time.Now()
	if err := b.Fetch(ctx, "tx", 0, from, broker.FetchOptions{MaxWait: 200 * time.Millisecond}, &res); err != nil {
		t.Fatal(err)
	}
	if len(res.Records) != 0 {
		t.Fatalf("read %d records of an open transaction", len(res.Records))
	}
	if waited := time.Since(start); waited < 150*time.Millisecond {
		t.Fatalf("returned after %v, want a wait of about MaxWait", waited)
	}
	if res.HighWatermark <= from {
		t.Fatalf("high watermark %d, want past %d (the open transaction)", res.HighWatermark, from)
	}
	end(kgo.TryCommit)
	// The commit marker ends the log: read, not waited for.
	start = time.Now()
	if vals, _ := fetchAll(t, ctx, b, "tx", 0, from); !slices.Equal(vals, []string{"open0", "open1", "after-open0"}) {
		t.Fatalf("after the commit read %v", vals)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Fatalf("reading up to the commit marker took %v", d)
	}
}

// TestFetchBoundsAndWaits: the high watermark and log start, the errors
// out of them and for a partition that does not exist, and a wait at the
// end that a new record ends.
func TestFetchBoundsAndWaits(t *testing.T) {
	b := newCluster(t)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	if err := b.CreateTopic(ctx, "bw", broker.TopicConfig{Partitions: 2}); err != nil {
		t.Fatal(err)
	}
	if err := b.ProducePartition(ctx, "bw", 1, values("v", 10)); err != nil {
		t.Fatal(err)
	}
	resp, err := b.admin.DeleteRecords(ctx, kadm.Offsets{"bw": {1: {Topic: "bw", Partition: 1, At: 4}}})
	if err == nil {
		err = resp.Error()
	}
	if err != nil {
		t.Fatal(err)
	}
	var res broker.FetchResult
	if err := b.Fetch(ctx, "bw", 1, 4, broker.FetchOptions{}, &res); err != nil {
		t.Fatal(err)
	}
	if len(res.Records) != 6 || res.Records[0].Offset != 4 || res.LogStartOffset != 4 || res.HighWatermark != 10 {
		t.Fatalf("from the log start: %d records, bounds [%d, %d]; want 6 from 4, [4, 10]", len(res.Records), res.LogStartOffset, res.HighWatermark)
	}
	for _, off := range []int64{3, 11} {
		res = broker.FetchResult{}
		err := b.Fetch(ctx, "bw", 1, off, broker.FetchOptions{}, &res)
		if !errors.Is(err, broker.ErrOffsetOutOfRange) || res.LogStartOffset != 4 || res.HighWatermark != 10 {
			t.Errorf("at %d: %v, bounds [%d, %d]; want out of range of [4, 10]", off, err, res.LogStartOffset, res.HighWatermark)
		}
	}
	for _, tp := range []broker.TopicPartition{{Topic: "bw", Partition: 2}, {Topic: "nope", Partition: 0}} {
		if err := b.Fetch(ctx, tp.Topic, tp.Partition, 0, broker.FetchOptions{}, &res); !errors.Is(err, broker.ErrUnknownPartition) {
			t.Errorf("%s/%d: %v, want unknown partition", tp.Topic, tp.Partition, err)
		}
	}
	// At the end: at once without MaxWait, else until a record comes.
	start := time.Now()
	if err := b.Fetch(ctx, "bw", 1, 10, broker.FetchOptions{}, &res); err != nil || len(res.Records) != 0 {
		t.Fatalf("at the end: %d records, %v", len(res.Records), err)
	}
	if d := time.Since(start); d > time.Second {
		t.Fatalf("at the end without MaxWait: returned after %v", d)
	}
	go func() {
		time.Sleep(200 * time.Millisecond)
		b.ProducePartition(ctx, "bw", 1, values("new", 1))
	}()
	start = time.Now()
	if err := b.Fetch(ctx, "bw", 1, 10, broker.FetchOptions{MaxWait: 20 * time.Second}, &res); err != nil {
		t.Fatal(err)
	}
	if len(res.Records) != 1 || string(res.Records[0].Value) != "new0" || time.Since(start) > 10*time.Second {
		t.Fatalf("waiting at the end: %d records after %v", len(res.Records), time.Since(start))
	}
}

// TestFetchFollowsTheLeader: Fetch goes on when the partition's leader
// moves, and when its topic is deleted and made again.
func TestFetchFollowsTheLeader(t *testing.T) {
	kf, b := newKfake(t)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	if err := b.CreateTopic(ctx, "mv", broker.TopicConfig{Partitions: 1}); err != nil {
		t.Fatal(err)
	}
	if err := b.ProducePartition(ctx, "mv", 0, values("v", 3)); err != nil {
		t.Fatal(err)
	}
	var res broker.FetchResult
	for i := range int32(4) {
		if err := kf.MoveTopicPartition("mv", 0, (kf.LeaderFor("mv", 0)+1)%3); err != nil {
			t.Fatal(err)
		}
		if err := b.Fetch(ctx, "mv", 0, 0, broker.FetchOptions{}, &res); err != nil || len(res.Records) != 3 {
			t.Fatalf("after move %d: %d records, %v", i, len(res.Records), err)
		}
		// The old leader, now a follower, answers a consumer's fetch
		// too (from its own high watermark, which may lag): the leader
		// epoch sent with the fetch makes it refuse, and Fetch go to
		// the new leader.
		b.leadersMu.Lock()
		l := b.leaders[broker.TopicPartition{Topic: "mv", Partition: 0}]
		b.leadersMu.Unlock()
		if want := kf.LeaderFor("mv", 0); l.id != want {
			t.Fatalf("after move %d: fetched from broker %d, the leader is %d", i, l.id, want)
		}
	}
	if err := b.DeleteTopic(ctx, "mv"); err != nil {
		t.Fatal(err)
	}
	if err := b.CreateTopic(ctx, "mv", broker.TopicConfig{Partitions: 1}); err != nil {
		t.Fatal(err)
	}
	// The producer that has not written to the old topic (the manual
	// one fails on the old topic's id).
	if err := b.Produce(ctx, "mv", values("again", 1)); err != nil {
		t.Fatal(err)
	}
	if err := b.Fetch(ctx, "mv", 0, 0, broker.FetchOptions{}, &res); err != nil || len(res.Records) != 1 || string(res.Records[0].Value) != "again0" {
		t.Fatalf("after the topic was made again: %d records, %v", len(res.Records), err)
	}
}

// TestFetchWithoutTopicIDs: a cluster whose ApiVersions allows
// Fetch v13+ but whose metadata carries no topic IDs (Kafka 3.x with an
// inter.broker.protocol.version below 2.8, franz-go #295; kgo caps its own
// fetches at v12 then). Fetch should read the partition by name.
func TestFetchWithoutTopicIDs(t *testing.T) {
	kf, b := newKfake(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := b.CreateTopic(ctx, "noid", broker.TopicConfig{Partitions: 1}); err != nil {
		t.Fatal(err)
	}
	if err := b.ProducePartition(ctx, "noid", 0, values("v", 3)); err != nil {
		t.Fatal(err)
	}
	leader := kf.LeaderFor("noid", 0)
	var brokers []kmsg.MetadataResponseBroker
	for i, addr := range kf.ListenAddrs() {
		h, p, _ := net.SplitHostPort(addr)
		port, _ := strconv.Atoi(p)
		mb := kmsg.NewMetadataResponseBroker()
		mb.NodeID, mb.Host, mb.Port = int32(i), h, int32(port)
		brokers = append(brokers, mb)
	}
	// Metadata for "noid" as such a cluster answers it: no topic ID.
	kf.ControlKey(int16(kmsg.Metadata), func(kreq kmsg.Request) (kmsg.Response, error, bool) {
		req := kreq.(*kmsg.MetadataRequest)
		if len(req.Topics) != 1 || req.Topics[0].Topic == nil || *req.Topics[0].Topic != "noid" {
			return nil, nil, false
		}
		kf.KeepControl()
		resp := req.ResponseKind().(*kmsg.MetadataResponse)
		resp.Brokers = brokers
		resp.ControllerID = 0
		mt := kmsg.NewMetadataResponseTopic()
		mt.Topic = kmsg.StringPtr("noid") // TopicID left zero
		mp := kmsg.NewMetadataResponseTopicPartition()
		mp.Partition, mp.Leader, mp.Replicas, mp.ISR = 0, leader, []int32{leader}, []int32{leader}
		mt.Partitions = append(mt.Partitions, mp)
		resp.Topics = append(resp.Topics, mt)
		return resp, nil, true
	})
	b.leadersMu.Lock()
	clear(b.leaders)
	b.leadersMu.Unlock()
	var res broker.FetchResult
	if err := b.Fetch(ctx, "noid", 0, 0, broker.FetchOptions{}, &res); err != nil {
		t.Fatalf("Fetch: %v", err)
	}
	if len(res.Records) != 3 {
		t.Fatalf("%d records, want 3", len(res.Records))
	}
}
