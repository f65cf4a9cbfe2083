package enrich

import (
	"context"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/weirnet/weir/broker"
	"github.com/weirnet/weir/broker/embedded"
	"github.com/weirnet/weir/collectors/syslog"
	"github.com/weirnet/weir/telemetry"
)

// scriptedTxnConsumer is a TxnConsumer that returns a fixed sequence of
// polls and decides, transaction by transaction, whether each commits.
type scriptedTxnConsumer struct {
	mu        sync.Mutex
	polls     [][]broker.Record
	commits   []bool // one per transaction; missing: commit
	attempts  []map[string][]string
	committed []map[string][]string
	done      chan struct{} // closed when the script has run out
}

func (c *scriptedTxnConsumer) Poll(ctx context.Context) ([]broker.Record, error) {
	c.mu.Lock()
	if len(c.polls) > 0 {
		recs := c.polls[0]
		c.polls = c.polls[1:]
		c.mu.Unlock()
		return slices.Clone(recs), nil
	}
	c.mu.Unlock()
	<-ctx.Done()
	return nil, ctx.Err()
}

func (c *scriptedTxnConsumer) Transact(ctx context.Context, fn func(broker.Txn) error) (bool, error) {
	tx := recordingTxn{}
	err := fn(tx)
	c.mu.Lock()
	defer c.mu.Unlock()
	c.attempts = append(c.attempts, tx)
	commit := true
	if n := len(c.attempts) - 1; n < len(c.commits) {
		commit = c.commits[n]
	}
	if err != nil || !commit {
		return false, err
	}
	c.committed = append(c.committed, tx)
	if len(c.polls) == 0 {
		select {
		case <-c.done:
		default:
			close(c.done)
		}
	}
	return true, nil
}

func (c *scriptedTxnConsumer) Commit(context.Context) error { return nil }
func (c *scriptedTxnConsumer) Assigned() []broker.TopicPartition {
	return []broker.TopicPartition{{Topic: telemetry.TopicRawSyslog, Partition: 0}, {Topic: telemetry.TopicRawSyslog, Partition: 1}}
}
func (c *scriptedTxnConsumer) Close() error { return nil }

// TestTransactionReplayPartialRepoll: after an aborted transaction,
// franz-go's next poll need not return the whole batch again (fetches of
// partitions led by different brokers arrive apart, and a partition's
// records may come in smaller pieces). A transaction that commits part of
// the aborted batch must not make the worker forget the outputs of the
// rest: polled again, those records must get the outputs of their first
// enrichment, not be enriched a second time (with de-duplication on, their
// events would be dropped as repeats: lost).
func TestTransactionReplayPartialRepoll(t *testing.T) {
	var p syslog.Parser
	var recs []broker.Record
	offs := [2]int64{}
	for _, c := range loadCorpus(t) {
		var l telemetry.Log
		p.ParseCopy([]byte(c.Raw), &l)
		l.SourceAddr, l.ReceivedAt, l.Device = "10.1.2.3:514", time.Now(), "dev1"
		part := int32(len(recs) % 2)
		recs = append(recs, broker.Record{Topic: telemetry.TopicRawSyslog, Partition: part, Offset: offs[part],
			Key: []byte(l.Device), Value: l.AppendJSON(nil)})
		offs[part]++
	}
	var p0, p1 []broker.Record
	for _, r := range recs {
		if r.Partition == 0 {
			p0 = append(p0, r)
		} else {
			p1 = append(p1, r)
		}
	}
	half := len(p1) / 2
	c := &scriptedTxnConsumer{
		// The whole batch, aborted; then partition 0 alone and the first
		// half of partition 1, committed; then the rest of partition 1.
		polls:   [][]broker.Record{recs, append(slices.Clone(p0), p1[:half]...), p1[half:]},
		commits: []bool{false},
		done:    make(chan struct{}),
	}
	eb, err := embedded.Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer eb.Close()
	if err := eb.CreateTopic(context.Background(), telemetry.TopicRawSyslog, broker.TopicConfig{Partitions: 2}); err != nil {
		t.Fatal(err)
	}
	inv, _ := ParseInventory([]byte(testInventory))
	w := NewWorker(&oneConsumerBroker{eb, c}, inv, NewClassifier(), WithEventRules(30*time.Second, 5, time.Minute))
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { w.Run(ctx); close(done) }()
	select {
	case <-c.done:
	case <-time.After(10 * time.Second):
		t.Fatal("the script did not run to its end")
	}
	cancel()
	<-done
	first := c.attempts[0]
	if len(first[telemetry.TopicEvents]) == 0 {
		t.Fatal("the corpus raised no events")
	}
	got := map[string][]string{}
	for _, tx := range c.committed {
		for topic, vals := range tx {
			got[topic] = append(got[topic], vals...)
		}
	}
	for _, topic := range []string{telemetry.TopicEnrichedSyslog, telemetry.TopicEvents} {
		want := slices.Sorted(slices.Values(first[topic]))
		have := slices.Sorted(slices.Values(got[topic]))
		if !slices.Equal(want, have) {
			t.Errorf("%s: the committed transactions hold %d records, the aborted attempt %d; want the same",
				topic, len(have), len(want))
		}
	}
}

// TestReplayForgetsWhatCommitsSettle: a commit forgets the records up to
// the last one polled in each partition of its batch, and the records of
// partitions the worker no longer owns; it keeps the rest of an aborted
// batch.
func TestReplayForgetsWhatCommitsSettle(t *testing.T) {
	r := replay{on: true}
	rec := func(p int32, o int64) *broker.Record { return &broker.Record{Partition: p, Offset: o} }
	out := []outRecord{{part: 0}}
	for p := int32(0); p < 3; p++ {
		for o := int64(0); o < 10; o++ {
			r.get(rec(p, o), nil, nil)
			r.put(rec(p, o), out, out)
		}
	}
	r.aborted()
	// Polled again: partition 0 up to offset 4, partition 1 whole;
	// partition 2 went to another worker.
	for o := int64(0); o < 5; o++ {
		if _, _, ok := r.get(rec(0, o), nil, nil); !ok {
			t.Fatalf("0/%d not replayed", o)
		}
	}
	for o := int64(0); o < 10; o++ {
		r.get(rec(1, o), nil, nil)
	}
	r.committed([]broker.TopicPartition{{Partition: 0}, {Partition: 1}})
	if len(r.idx) != 5 {
		t.Fatalf("%d records remembered after the commit, want 5 (0/5..0/9)", len(r.idx))
	}
	for o := int64(5); o < 10; o++ {
		if m, e, ok := r.get(rec(0, o), nil, nil); !ok || len(m) != 1 || len(e) != 1 {
			t.Fatalf("0/%d: replayed %v with %d and %d outputs, want 1 and 1", o, ok, len(m), len(e))
		}
	}
	r.committed([]broker.TopicPartition{{Partition: 0}, {Partition: 1}})
	if len(r.idx) != 0 || len(r.main) != 0 || len(r.events) != 0 {
		t.Fatalf("after the last commit: %d records, %d and %d outputs remembered", len(r.idx), len(r.main), len(r.events))
	}
}
