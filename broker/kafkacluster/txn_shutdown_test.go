package kafkacluster

import (
	"bytes"
	"context"
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/weirnet/weir/broker"
)

// cancelOnWrite cancels a context when a request of a key is written, once
// armed.
type cancelOnWrite struct {
	key    int16
	armed  atomic.Bool
	cancel atomic.Pointer[context.CancelFunc]
}

func (h *cancelOnWrite) OnBrokerWrite(_ kgo.BrokerMetadata, key int16, _ int, _, _ time.Duration, err error) {
	if key == h.key && err == nil && h.armed.CompareAndSwap(true, false) {
		(*h.cancel.Load())()
	}
}

// TestTransactShutdownMidEnd: a shutdown (ctx canceled) while Transact is
// ending its transaction must not leave the transaction open on the
// cluster: an open transaction holds back every read_committed reader of
// the topics it wrote to (the last stable offset stops at its first
// record) and the group's next member of its partitions, until the
// cluster aborts it after the transaction timeout. Whatever the outcome,
// the outputs and the offsets stay together.
func TestTransactShutdownMidEnd(t *testing.T) {
	for _, key := range []int16{kmsg.AddOffsetsToTxn.Int16(), kmsg.TxnOffsetCommit.Int16(), kmsg.EndTxn.Int16()} {
		t.Run(kmsg.NameForKey(key), func(t *testing.T) {
			cl, err := kfake.NewCluster(kfake.NumBrokers(3))
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(cl.Close)
			h := &cancelOnWrite{key: key}
			b, err := New(cl.ListenAddrs(), WithReplicationFactor(3), WithClientOpts(kgo.WithHooks(h)))
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { b.Close() })
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			const n = 30
			c := txnSetup(t, ctx, b, n)
			in := pollAll(t, ctx, c, n)
			wctx, wcancel := context.WithCancel(ctx) // the worker's: canceled by the shutdown
			defer wcancel()
			h.cancel.Store(&wcancel)
			committed, err := c.Transact(wctx, func(tx broker.Txn) error {
				if err := tx.Produce(wctx, "out", outputs(in)); err != nil {
					return err
				}
				h.armed.Store(true)
				return nil
			})
			t.Logf("Transact: committed %v, %v", committed, err)
			c.Close()
			// Right after the shutdown (well within the 4.8 s
			// transaction timeout), nothing is left open.
			lso, err := b.admin.ListCommittedOffsets(ctx, "out")
			if err != nil {
				t.Fatal(err)
			}
			hwm, err := b.admin.ListEndOffsets(ctx, "out")
			if err != nil {
				t.Fatal(err)
			}
			for p := range int32(2) {
				s, _ := lso.Lookup("out", p)
				e, _ := hwm.Lookup("out", p)
				if s.Offset != e.Offset {
					t.Errorf("out/%d: last stable offset %d, end %d: the transaction was left open", p, s.Offset, e.Offset)
				}
			}
			got, offs := readOut(t, ctx, b, "reader"), committedOffsets(t, ctx, b)
			switch {
			case committed && (len(got) != n || offs != n):
				t.Fatalf("committed, but %d outputs visible and %d offsets committed; want %d and %d", len(got), offs, n, n)
			case !committed && (len(got) != 0 || offs != 0):
				t.Fatalf("not committed, but %d outputs visible and %d offsets committed", len(got), offs)
			}
		})
	}
}

// TestHungClusterTransactBoundedByContext: enrichment's stop cancels the
// context of the transaction in hand. A cluster that takes the
// transaction's produce request and never answers (a broker stuck on its
// disk) held the produce, so Transact, the worker, and weir's stop, for
// as long as the cluster hung (minutes, past systemd's TimeoutStopSec): a
// transactional client may not cancel records in flight, and the produce
// waited for them. It ends with its context, the transaction is aborted
// within endGrace, and the records' memory is the caller's again.
func TestHungClusterTransactBoundedByContext(t *testing.T) {
	kf, err := kfake.NewCluster(kfake.NumBrokers(1))
	if err != nil {
		t.Fatal(err)
	}
	defer kf.Close()
	var logs syncBuffer
	b, err := New(kf.ListenAddrs(), WithLogger(slog.New(slog.NewTextHandler(&logs, nil))))
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	const n = 10
	c := txnSetup(t, ctx, b, n)
	in := pollAll(t, ctx, c, n)
	// One transaction first: the coordinator known, the producer ID
	// acquired, the output topic ensured.
	if _, err := c.Transact(ctx, func(tx broker.Txn) error { return tx.Produce(ctx, "out", outputs(in[:1])) }); err != nil {
		t.Fatal(err)
	}
	var hang atomic.Bool
	var leaves atomic.Int32
	kf.Control(func(req kmsg.Request) (kmsg.Response, error, bool) {
		kf.KeepControl()
		if hang.Load() && req.Key() == kmsg.LeaveGroup.Int16() {
			leaves.Add(1)
		}
		return nil, nil, hang.Load() // hanging: swallow, never answer
	})
	defer hang.Store(false)
	hang.Store(true)
	wctx, wcancel := context.WithCancel(ctx) // the worker's: canceled by the shutdown
	defer wcancel()
	time.AfterFunc(time.Second, wcancel)
	recs := outputs(in)
	done := make(chan error, 1)
	start := time.Now()
	go func() {
		_, err := c.Transact(wctx, func(tx broker.Txn) error { return tx.Produce(wctx, "out", recs) })
		done <- err
	}()
	// endGrace after the context ends, and room for a loaded machine.
	select {
	case err := <-done:
		t.Logf("Transact: %v after %v", err, time.Since(start).Round(time.Millisecond))
		if err == nil {
			t.Error("Transact on a hung cluster reported no error")
		}
	case <-time.After(time.Second + endGrace + 20*time.Second):
		t.Fatalf("Transact still blocked %v after its context ended, on a cluster that never answers", (time.Since(start) - time.Second).Round(time.Second))
	}
	for i := range recs {
		copy(recs[i].Value, "XXXXXXXX") // the caller's memory, its own again
	}
	closed := make(chan struct{})
	go func() { c.Close(); close(closed) }()
	select {
	case <-closed:
	case <-time.After(leaveTimeout + 20*time.Second):
		t.Fatal("Close still blocked on a cluster that never answers")
	}
	// Said, since the cluster is left with an open transaction; and no
	// LeaveGroup (another leaveTimeout of the stop) to a cluster that
	// has just not answered for endGrace.
	if !strings.Contains(logs.String(), "the transaction was not ended") {
		t.Errorf("nothing logged of the transaction left open:\n%s", logs.String())
	}
	if n := leaves.Load(); n > 0 {
		t.Errorf("Close sent %d LeaveGroup requests to a cluster that did not answer the transaction's end", n)
	}
	hang.Store(false)
	for _, r := range readOut(t, ctx, b, "reader") {
		if strings.Contains(r, "XXX") {
			t.Errorf("output %q: franz-go sent the caller's memory after Transact returned", r)
		}
	}
}

// syncBuffer is a bytes.Buffer that a logger and a test share.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}
