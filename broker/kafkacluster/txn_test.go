package kafkacluster

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/weirnet/weir/broker"
)

// txnSetup creates topic "in" (3 partitions) holding n records and topic
// "out" (2 partitions), and joins a transactional member of group "g".
func txnSetup(t *testing.T, ctx context.Context, b *Broker, n int) broker.TxnConsumer {
	t.Helper()
	if err := b.CreateTopic(ctx, "in", broker.TopicConfig{Partitions: 3}); err != nil {
		t.Fatal(err)
	}
	if err := b.CreateTopic(ctx, "out", broker.TopicConfig{Partitions: 2}); err != nil {
		t.Fatal(err)
	}
	recs := make([]broker.Record, n)
	for i := range recs {
		recs[i] = broker.Record{Key: []byte(fmt.Sprint("dev", i%7)), Value: []byte(fmt.Sprint(i))}
	}
	if err := b.Produce(ctx, "in", recs); err != nil {
		t.Fatal(err)
	}
	return joinTxn(t, ctx, b, "m1")
}

func joinTxn(t *testing.T, ctx context.Context, b *Broker, member string) broker.TxnConsumer {
	t.Helper()
	c, err := b.Consume(ctx, "g", []string{"in"}, broker.WithTransactions(), broker.WithMemberID(member),
		broker.WithSessionTimeout(6*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	tc, ok := c.(broker.TxnConsumer)
	if !ok {
		t.Fatalf("WithTransactions gave a %T, not a TxnConsumer", c)
	}
	return tc
}

// pollAll polls until n distinct records were returned since the last
// rewind; it returns their values.
func pollAll(t *testing.T, ctx context.Context, c broker.Consumer, n int) []string {
	t.Helper()
	var got []string
	for len(got) < n {
		recs, err := c.Poll(ctx)
		if err != nil {
			t.Fatalf("poll after %d of %d: %v", len(got), n, err)
		}
		for _, r := range recs {
			got = append(got, string(r.Value))
		}
	}
	slices.Sort(got)
	return got
}

// readOut returns the values a read-committed consumer sees on "out" up to
// a marker produced now, outside any transaction, to every partition: the
// marker is behind whatever the transactions before it wrote, so reading
// up to it shows everything they made visible.
func readOut(t *testing.T, ctx context.Context, b *Broker, group string) []string {
	t.Helper()
	for p := range int32(2) {
		if err := b.ProducePartition(ctx, "out", p, []broker.Record{{Value: []byte("marker")}}); err != nil {
			t.Fatal(err)
		}
	}
	c, err := b.Consume(ctx, group, []string{"out"})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	var got []string
	for markers := 0; markers < 2; {
		recs, err := c.Poll(ctx)
		if err != nil {
			t.Fatalf("reading out: %v (so far %v)", err, got)
		}
		for _, r := range recs {
			if string(r.Value) == "marker" {
				markers++
			} else {
				got = append(got, string(r.Value))
			}
		}
	}
	slices.Sort(got)
	return got
}

func committedOffsets(t *testing.T, ctx context.Context, b *Broker) int64 {
	t.Helper()
	resp, err := b.admin.FetchOffsets(ctx, "g")
	if err != nil {
		t.Fatal(err)
	}
	var sum int64
	resp.Each(func(o kadm.OffsetResponse) {
		if o.Err == nil && o.At >= 0 {
			sum += o.At
		}
	})
	return sum
}

func outputs(vals []string) []broker.Record {
	recs := make([]broker.Record, len(vals))
	for i, v := range vals {
		recs[i] = broker.Record{Key: []byte(v), Value: []byte("out-" + v)}
	}
	return recs
}

// TestTransactCommitIsVisibleOnce: records produced in a transaction and
// the commit of what was polled become visible together: a read-committed
// reader sees each record once, the group's offsets are past the input,
// and the next member of the group starts after it.
func TestTransactCommitIsVisibleOnce(t *testing.T) {
	b := newCluster(t)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	const n = 60
	c := txnSetup(t, ctx, b, n)
	in := pollAll(t, ctx, c, n)
	committed, err := c.Transact(ctx, func(tx broker.Txn) error {
		recs := outputs(in)
		if err := tx.Produce(ctx, "out", recs[:n/2]); err != nil {
			return err
		}
		for _, r := range recs[:n/2] {
			if r.Partition != broker.PartitionForKey(r.Key, 2) {
				return fmt.Errorf("key %s went to %d, murmur2 says %d", r.Key, r.Partition, broker.PartitionForKey(r.Key, 2))
			}
		}
		if err := tx.ProducePartition(ctx, "out", 1, recs[n/2:]); err != nil {
			return err
		}
		for _, r := range recs[n/2:] {
			if r.Partition != 1 {
				return fmt.Errorf("ProducePartition(1) wrote to %d", r.Partition)
			}
		}
		return nil
	})
	if err != nil || !committed {
		t.Fatalf("Transact: committed %v, %v", committed, err)
	}
	want := make([]string, n)
	for i, v := range in {
		want[i] = "out-" + v
	}
	slices.Sort(want)
	if got := readOut(t, ctx, b, "reader"); !slices.Equal(got, want) {
		t.Fatalf("read committed: %d records, want %d once each:\n%v", len(got), len(want), got)
	}
	if got := committedOffsets(t, ctx, b); got != n {
		t.Fatalf("group g committed %d records' worth, want %d", got, n)
	}
	// A member that takes over starts after the committed input.
	c.Close()
	if err := b.Produce(ctx, "in", []broker.Record{{Key: []byte("k"), Value: []byte("new")}}); err != nil {
		t.Fatal(err)
	}
	c2 := joinTxn(t, ctx, b, "m2")
	if got := pollAll(t, ctx, c2, 1); !slices.Equal(got, []string{"new"}) {
		t.Fatalf("after the commit the group polled %v", got)
	}
}

// TestTransactAbortHidesRecordsAndRewinds: when fn fails, the records it
// produced never reach read-committed readers, nothing is committed, and
// the member polls the same records again; committing them then makes
// them visible once.
func TestTransactAbortHidesRecordsAndRewinds(t *testing.T) {
	b := newCluster(t)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	const n = 40
	c := txnSetup(t, ctx, b, n)
	in := pollAll(t, ctx, c, n)
	failed := errors.New("enrichment failed")
	committed, err := c.Transact(ctx, func(tx broker.Txn) error {
		if err := tx.Produce(ctx, "out", outputs(in)); err != nil {
			return err
		}
		return failed
	})
	if committed || !errors.Is(err, failed) {
		t.Fatalf("Transact: committed %v, %v; want fn's error", committed, err)
	}
	if got := readOut(t, ctx, b, "reader1"); len(got) != 0 {
		t.Fatalf("read committed sees %d records of the aborted transaction: %v", len(got), got)
	}
	if got := committedOffsets(t, ctx, b); got != 0 {
		t.Fatalf("group g committed %d records' worth after the abort", got)
	}
	// The records were written, and aborted: a read-uncommitted client
	// sees them (so the reader above had something to skip).
	raw, err := kgo.NewClient(kgo.SeedBrokers(b.seeds...), kgo.ConsumeTopics("out"),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()), kgo.FetchIsolationLevel(kgo.ReadUncommitted()))
	if err != nil {
		t.Fatal(err)
	}
	defer raw.Close()
	uncommitted := 0
	for uncommitted < n {
		f := raw.PollFetches(ctx)
		if ctx.Err() != nil {
			t.Fatalf("read uncommitted: %d of the %d aborted records", uncommitted, n)
		}
		f.EachRecord(func(r *kgo.Record) {
			if string(r.Value) != "marker" {
				uncommitted++
			}
		})
	}
	// Rewound: the same records again, and Commit (a transaction of its
	// own) commits them.
	if again := pollAll(t, ctx, c, n); !slices.Equal(again, in) {
		t.Fatalf("after the abort polled %v, want %v", again, in)
	}
	if err := c.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	if got := committedOffsets(t, ctx, b); got != n {
		t.Fatalf("group g committed %d records' worth, want %d", got, n)
	}
}

// TestTransactAbortsWhenRebalanced: a member that loses partitions while
// its transaction is open cannot commit it (their new owner starts from
// the committed offsets and must not see the old owner's work land): the
// transaction aborts, and between them the two members poll every record
// again.
func TestTransactAbortsWhenRebalanced(t *testing.T) {
	b := newCluster(t)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	const n = 60
	c1 := txnSetup(t, ctx, b, n)
	in := pollAll(t, ctx, c1, n)
	var c2 broker.TxnConsumer
	committed, err := c1.Transact(ctx, func(tx broker.Txn) error {
		if err := tx.Produce(ctx, "out", outputs(in)); err != nil {
			return err
		}
		c2 = joinTxn(t, ctx, b, "m2")
		for len(c1.Assigned()) == 3 {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			time.Sleep(20 * time.Millisecond)
		}
		return nil
	})
	if err != nil || committed {
		t.Fatalf("Transact across a rebalance: committed %v, %v; want an abort", committed, err)
	}
	if got := readOut(t, ctx, b, "reader"); len(got) != 0 {
		t.Fatalf("read committed sees %d records of the aborted transaction", len(got))
	}
	if got := committedOffsets(t, ctx, b); got != 0 {
		t.Fatalf("group g committed %d records' worth after the abort", got)
	}
	// Each member polls its partitions from the start again.
	seen := map[string]int{}
	for len(seen) < n {
		for _, c := range []broker.TxnConsumer{c1, c2} {
			pctx, pcancel := context.WithTimeout(ctx, 200*time.Millisecond)
			recs, _ := c.Poll(pctx)
			pcancel()
			for _, r := range recs {
				seen[string(r.Value)]++
			}
		}
		if ctx.Err() != nil {
			t.Fatalf("after the rebalance %d of %d records polled again", len(seen), n)
		}
	}
	for v, k := range seen {
		if k != 1 {
			t.Fatalf("record %s polled %d times after the rebalance", v, k)
		}
	}
}

// TestTransactionalIDs: members get distinct ids, a re-created member
// gets its id back, and embedded-style ids stay within Kafka's limits.
func TestTransactionalIDs(t *testing.T) {
	a := claimTxnID("weir-g-m-host-1")
	b := claimTxnID("weir-g-m-host-1")
	if a == b {
		t.Fatalf("two live members share %q", a)
	}
	releaseTxnID(a)
	if c := claimTxnID("weir-g-m-host-1"); c != a {
		t.Fatalf("re-created member got %q, want %q back", c, a)
	}
	releaseTxnID(a)
	releaseTxnID(b)
}
