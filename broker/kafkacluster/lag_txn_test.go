package kafkacluster

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/weirnet/weir/broker"
)

// TestLagZeroAfterReadingTransactionalTopic: a group that has read and
// committed everything of a topic written in transactions (enrichment's
// outputs: events, enriched.*) lags 0, as on the embedded log. The commit
// is the offset after the last record, and the transaction's commit marker
// sits there: Kafka's lag is 1 per partition for good, which
// weir_consumer_lag must not report as records to read.
func TestLagZeroAfterReadingTransactionalTopic(t *testing.T) {
	b := newCluster(t)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	tc := txnSetup(t, ctx, b, 1) // "in" with one record, "out" with 2 partitions
	pollAll(t, ctx, tc, 1)
	committed, err := tc.Transact(ctx, func(tx broker.Txn) error {
		return tx.ProducePartition(ctx, "out", 0, []broker.Record{{Value: []byte("a")}, {Value: []byte("b")}})
	})
	if err != nil || !committed {
		t.Fatalf("transaction: committed %v, %v", committed, err)
	}
	c, err := b.Consume(ctx, "sink", []string{"out"})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	for n := 0; n < 2; {
		recs, err := c.Poll(ctx)
		if err != nil {
			t.Fatal(err)
		}
		n += len(recs)
	}
	if err := c.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	reg := prometheus.NewPedanticRegistry()
	reg.MustRegister(&lagCollector{b: b})
	exp := `# HELP weir_consumer_lag Records between a group's committed offset (or, for a partition it consumes without one, the log start) and the log end.
# TYPE weir_consumer_lag gauge
weir_consumer_lag{group="g",partition="0",topic="in"} 0
weir_consumer_lag{group="g",partition="1",topic="in"} 0
weir_consumer_lag{group="g",partition="2",topic="in"} 0
weir_consumer_lag{group="sink",partition="0",topic="out"} 0
weir_consumer_lag{group="sink",partition="1",topic="out"} 0
`
	var gerr error
	for deadline := time.Now().Add(15 * time.Second); time.Now().Before(deadline); time.Sleep(200 * time.Millisecond) {
		if gerr = testutil.GatherAndCompare(reg, strings.NewReader(exp), "weir_consumer_lag"); gerr == nil {
			return
		}
	}
	t.Fatalf("every record read and committed: %v", gerr)
}
