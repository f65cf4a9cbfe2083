package sinks_test

import (
	"context"
	"errors"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/weirnet/weir/broker"
	"github.com/weirnet/weir/internal/syncbuf"
	"github.com/weirnet/weir/sinks"
	"github.com/weirnet/weir/sinks/internal/sinktest"
	"github.com/weirnet/weir/telemetry"
)

// pollDown's consumers fail their first n polls, as the Kafka backend's
// do while the cluster is down (seen live: "unable to join group
// session: unable to dial", one ERROR line every few seconds and sink).
type pollDown struct {
	broker.Broker
	n     atomic.Int64
	polls atomic.Int64
}

type pollDownConsumer struct {
	broker.Consumer
	b *pollDown
}

func (b *pollDown) Consume(ctx context.Context, g string, topics []string, opts ...broker.ConsumerOption) (broker.Consumer, error) {
	c, err := b.Broker.Consume(ctx, g, topics, opts...)
	if err != nil {
		return nil, err
	}
	return &pollDownConsumer{c, b}, nil
}

func (c *pollDownConsumer) Poll(ctx context.Context) ([]broker.Record, error) {
	if c.b.n.Load() > 0 && c.b.polls.Add(1)%2 == 0 {
		// Between the failures, polls that time out with nothing, as
		// franz-go's do while it dials (seen live).
		return nil, context.DeadlineExceeded
	}
	if c.b.n.Add(-1) >= 0 {
		return nil, errors.New("kafka: poll: unable to join group session: unable to dial: connection refused")
	}
	return c.Consumer.Poll(ctx)
}

// TestPollErrorsLogThrottled: a cluster down for long fails poll after
// poll; each is counted, the first ones are logged, then one line per
// throttle period, not one per poll.
func TestPollErrorsLogThrottled(t *testing.T) {
	eb := sinktest.Broker(t)
	sinktest.Produce(t, eb, "enriched.metrics", telemetry.SchemaMetric, devKey, metrics(20, func(int) string { return "ifTable" }))
	const failures = 200
	pb := &pollDown{Broker: eb}
	pb.n.Store(failures)
	d := &fakeDest{}
	var logs syncbuf.Buffer
	r := sinktest.StartLogging(t, pb, cfg("polldown"), d, &logs, sinks.WithPollRetryWait(time.Millisecond))
	sinktest.Eventually(t, "20 delivered once the cluster is back", func() bool { n, _ := d.seen(); return n == 20 })
	if n := r.Counter("weir_sink_errors_total", map[string]string{"sink": "polldown", "kind": "poll"}); n != failures {
		t.Errorf("poll errors counted: %v, want %d", n, failures)
	}
	n := strings.Count(logs.String(), "sink poll failed")
	if n == 0 {
		t.Fatalf("the failed polls are not in the log:\n%s", logs.String())
	}
	if n > failures/10 {
		t.Errorf("%d log lines for %d failed polls, want them throttled", n, failures)
	}
}
