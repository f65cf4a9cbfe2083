package enrich

import (
	"bytes"
	"context"
	"log/slog"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/weirnet/weir/broker"
	"github.com/weirnet/weir/broker/embedded"
)

// refusingFirst refuses the first n produces, as a full disk does, then
// passes them on.
type refusingFirst struct {
	*embedded.Broker
	n atomic.Int32
}

func (r *refusingFirst) ProducePartition(ctx context.Context, topic string, p int32, recs []broker.Record) error {
	if r.n.Add(-1) >= 0 {
		return refusingBroker{r.Broker}.ProducePartition(ctx, topic, p, recs)
	}
	return r.Broker.ProducePartition(ctx, topic, p, recs)
}

// TestPublishRetryLogThrottled: a full disk failed every publish retry,
// and each was logged at error, one line every 5 s (about 720 an hour) for
// as long as it lasted. The first failure is logged, then one line per
// throttle.Every with the attempts since, and once it works again, that;
// weir_enrich_publish_errors_total still counts each attempt.
func TestPublishRetryLogThrottled(t *testing.T) {
	eb, err := embedded.Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer eb.Close()
	ctx := context.Background()
	for _, topic := range []string{"in", "out"} {
		if err := eb.CreateTopic(ctx, topic, broker.TopicConfig{Partitions: 1}); err != nil {
			t.Fatal(err)
		}
	}
	b := &refusingFirst{Broker: eb}
	b.n.Store(6)
	var logs bytes.Buffer
	m := NewWorkerMetrics(nil).m
	o := newOutputs(b, "in", slog.New(slog.NewTextHandler(&logs, nil)), m, false)
	if err := o.align(ctx, "out"); err != nil {
		t.Fatal(err)
	}
	o.track(ctx, []broker.TopicPartition{{Topic: "in", Partition: 0}}, nil)
	if !o.publishRetrying(ctx, outBatch{"out", []outRecord{{broker.Record{Value: []byte("x")}, 0, 0}}}) {
		t.Fatal("not published")
	}
	// One line unless the retries took more than a throttle interval
	// (10 s; they wait 0.6 s in all): fewer lines than failures, and the
	// first says how many it stands for.
	if n := strings.Count(logs.String(), "enrich: publishing failed"); n == 0 || n >= 6 || !strings.Contains(logs.String(), "times=1") {
		t.Errorf("%d failure lines for 6 failed attempts, want fewer, the first with times=1:\n%s", n, logs.String())
	}
	if !strings.Contains(logs.String(), "enrich: publishing works again") || !strings.Contains(logs.String(), "failures=6") {
		t.Errorf("the recovery is not logged with the failures:\n%s", logs.String())
	}
}
