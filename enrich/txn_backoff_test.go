package enrich

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/weirnet/weir/broker"
	"github.com/weirnet/weir/broker/embedded"
	"github.com/weirnet/weir/telemetry"
)

// failingTxnBroker hands out consumers whose every transaction fails, as
// with a missing TransactionalId ACL, and counts the joins.
type failingTxnBroker struct {
	*embedded.Broker
	joins atomic.Int64
}

func (b *failingTxnBroker) Consume(context.Context, string, []string, ...broker.ConsumerOption) (broker.Consumer, error) {
	b.joins.Add(1)
	return failingTxnConsumer{}, nil
}

type failingTxnConsumer struct{}

func (failingTxnConsumer) Poll(ctx context.Context) ([]broker.Record, error) {
	l := telemetry.Log{V: 1, Device: "d", Format: "rfc3164", Message: "%SYS-5-CONFIG_I: Configured from console by netops on vty0"}
	return []broker.Record{{Topic: telemetry.TopicRawSyslog, Value: l.AppendJSON(nil)}}, nil
}
func (failingTxnConsumer) Transact(context.Context, func(broker.Txn) error) (bool, error) {
	return false, errors.New("TRANSACTIONAL_ID_AUTHORIZATION_FAILED")
}
func (failingTxnConsumer) Commit(context.Context) error      { return nil }
func (failingTxnConsumer) Assigned() []broker.TopicPartition { return nil }
func (failingTxnConsumer) Close() error                      { return nil }

// TestTransactionFailuresBackOff: a worker whose transactions keep failing
// rejoins the group after growing pauses, not at once every batch (each
// rejoin rebalances the whole group).
func TestTransactionFailuresBackOff(t *testing.T) {
	eb, err := embedded.Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer eb.Close()
	b := &failingTxnBroker{Broker: eb}
	inv, _ := ParseInventory([]byte(testInventory))
	w := NewWorker(b, inv, NewClassifier())
	ctx, cancel := context.WithTimeout(context.Background(), 2500*time.Millisecond)
	defer cancel()
	w.Run(ctx)
	// Joins at 0 s, after 1 s and after 1+2 s: two within 2.5 s.
	if n := b.joins.Load(); n > 3 {
		t.Fatalf("%d joins in 2.5 s of failing transactions: no back-off", n)
	}
}
