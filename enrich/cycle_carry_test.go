package enrich

import (
	"context"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/weirnet/weir/broker"
	"github.com/weirnet/weir/broker/embedded"
	"github.com/weirnet/weir/telemetry"
)

// takenThenMovedConsumer is the scripted consumer of a trap worker that,
// waiting to deliver its first batch, took over another worker's event
// (takeOver, as takeEvents gives it) and whose transaction then aborted
// as its partition went to another worker: nothing is polled after it.
type takenThenMovedConsumer struct {
	mu        sync.Mutex
	out       func() *outputs // the worker's
	rec       broker.Record
	polled    bool
	moved     bool
	committed []recordingTxn
	taken     chan struct{} // closed once the taken event committed
}

func (c *takenThenMovedConsumer) Poll(ctx context.Context) ([]broker.Record, error) {
	c.mu.Lock()
	if !c.polled {
		c.polled = true
		c.mu.Unlock()
		// As takeOver does, in the worker's awaitOrigins: the event of
		// another worker's record, by key.
		c.out().takeEvents([]outRecord{{broker.Record{Key: []byte("edge1"), Value: []byte("interface_down A")}, -1, -1}})
		return []broker.Record{c.rec}, nil
	}
	c.mu.Unlock()
	<-ctx.Done()
	return nil, ctx.Err()
}

func (c *takenThenMovedConsumer) Transact(ctx context.Context, fn func(broker.Txn) error) (bool, error) {
	tx := recordingTxn{}
	if err := fn(tx); err != nil {
		return false, err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.moved {
		c.moved = true // a rebalance: aborted, the partition another's
		return false, nil
	}
	c.committed = append(c.committed, tx)
	if slices.Contains(tx[telemetry.TopicEvents], "interface_down A") {
		close(c.taken)
	}
	return true, nil
}

func (c *takenThenMovedConsumer) Commit(context.Context) error { return nil }
func (c *takenThenMovedConsumer) Assigned() []broker.TopicPartition {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.moved {
		return nil
	}
	return []broker.TopicPartition{{Topic: c.rec.Topic}}
}
func (c *takenThenMovedConsumer) Close() error { return nil }

// TestTakenEventsOfAnAbortedBatchGoOut: a trap or metrics worker that
// took over another worker's event to break a cycle of waits carries it,
// when its transaction aborts, to the next one, as the syslog worker
// carries its cleared events. They delivered only when they polled
// records: their partition gone (or quiet), the event stayed in the carry,
// while the other worker's batch, no longer waiting for a partition of
// theirs, committed the record without it.
func TestTakenEventsOfAnAbortedBatchGoOut(t *testing.T) {
	_, trap := linkDown(t, 0)
	inv, _ := ParseInventory([]byte(testInventory))
	for _, tc := range []struct {
		name, topic string
		worker      func(b broker.Broker) (run func(context.Context) error, out func() *outputs)
	}{
		{"traps", telemetry.TopicRawTraps, func(b broker.Broker) (func(context.Context) error, func() *outputs) {
			w := NewTrapWorker(b, inv)
			return w.Run, func() *outputs { return w.out }
		}},
		{"metrics", telemetry.TopicRawSNMP, func(b broker.Broker) (func(context.Context) error, func() *outputs) {
			w := NewMetricsWorker(b, inv)
			return w.Run, func() *outputs { return w.out }
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			eb, err := embedded.Open(t.TempDir())
			if err != nil {
				t.Fatal(err)
			}
			defer eb.Close()
			rec := trap
			rec.Topic, rec.Timestamp = tc.topic, time.Now()
			c := &takenThenMovedConsumer{rec: rec, taken: make(chan struct{})}
			run, out := tc.worker(&oneConsumerBroker{eb, c})
			c.out = out
			ctx, cancel := context.WithCancel(context.Background())
			done := make(chan struct{})
			go func() { run(ctx); close(done) }()
			defer func() { cancel(); <-done }()
			select {
			case <-c.taken:
			case <-time.After(5 * time.Second):
				c.mu.Lock()
				defer c.mu.Unlock()
				t.Fatalf("the event taken over was not committed (aborted: %v; %d transactions committed)", c.moved, len(c.committed))
			}
		})
	}
}
