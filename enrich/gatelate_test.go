package enrich

import (
	"context"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/weirnet/weir/broker"
	"github.com/weirnet/weir/broker/embedded"
	"github.com/weirnet/weir/telemetry"
)

// TestGateWaitsForALateFirstAssignment: a link's line was enriched and its
// event published before a restart; its trap comes after. The restarted
// process's syslog worker is given its partitions only past gateEmptyWait
// after its start (a Kafka group's first rebalance on a loaded machine).
// It must not count as warm, given nothing, before its group has given it
// anything: the trap worker would judge the trap before the line was read
// back, and publish it again. (TestCrossPathExactlyOnceUnderKillOnKafka
// found it under load: hundreds of links of one partition with two
// events.)
func TestGateWaitsForALateFirstAssignment(t *testing.T) {
	t.Parallel()
	b, inv := openLog(t)
	line, trap := linkDown(t, 0)
	if err := b.Produce(context.Background(), telemetry.TopicRawSyslog, []broker.Record{line}); err != nil {
		t.Fatal(err)
	}
	r0 := NewEventRules(DefaultDedupWindow, DefaultFlapThreshold, DefaultFlapWindow)
	stop := startRunner(NewWorker(b, inv, NewClassifier(), WithSharedEventRules(r0)))
	waitCommitted(t, b, telemetry.TopicRawSyslog, 1)
	stop()

	if err := b.Produce(context.Background(), telemetry.TopicRawTraps, []broker.Record{trap}); err != nil {
		t.Fatal(err)
	}
	late := &lateAssignment{Broker: b, topic: telemetry.TopicRawSyslog, at: time.Now().Add(gateEmptyWait + time.Second)}
	rules := NewEventRules(DefaultDedupWindow, DefaultFlapThreshold, DefaultFlapWindow)
	rules.HoldUntilWarm(2)
	defer startRunner(NewTrapWorker(late, inv, WithSharedEventRules(rules)))()
	defer startRunner(NewWorker(late, inv, NewClassifier(), WithSharedEventRules(rules)))()
	waitCommitted(t, b, telemetry.TopicRawTraps, 1)
	given := late.given.Load()
	var downs []string
	for _, l := range eventsAs(t, b, func(ev telemetry.Event) string { return ev.Type + " " + ev.Cause.Topic }) {
		if strings.HasPrefix(l, "interface_down") {
			downs = append(downs, l)
		}
	}
	if len(downs) != 1 {
		t.Errorf("events: %q, want the line's interface_down alone (syslog partitions given before the trap's commit: %v)", downs, given)
	}
}

// lateAssignment is a log whose group consumers of topic are given their
// partitions only at at: until then they poll nothing, say they hold
// nothing, and that their group has not assigned them yet.
type lateAssignment struct {
	*embedded.Broker
	topic string
	at    time.Time
	given atomic.Bool
}

func (l *lateAssignment) Consume(ctx context.Context, group string, topics []string, opts ...broker.ConsumerOption) (broker.Consumer, error) {
	c, err := l.Broker.Consume(ctx, group, topics, opts...)
	if err != nil || len(topics) != 1 || topics[0] != l.topic {
		return c, err
	}
	return &lateConsumer{c, l}, nil
}

type lateConsumer struct {
	broker.Consumer
	l *lateAssignment
}

func (c *lateConsumer) assigned() bool {
	if time.Now().Before(c.l.at) {
		return false
	}
	c.l.given.Store(true)
	return true
}

func (c *lateConsumer) Poll(ctx context.Context) ([]broker.Record, error) {
	if !c.assigned() {
		// The member takes its assignment (committing nothing new), as
		// heldConsumer's.
		if err := c.Consumer.Commit(ctx); err != nil {
			return nil, err
		}
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(100 * time.Millisecond):
			return nil, nil
		}
	}
	return c.Consumer.Poll(ctx)
}

func (c *lateConsumer) Assigned() []broker.TopicPartition {
	if !c.assigned() {
		return nil
	}
	return c.Consumer.Assigned()
}

func (c *lateConsumer) Position(ctx context.Context, tp broker.TopicPartition) (int64, bool) {
	if !c.assigned() {
		return 0, false
	}
	return c.Consumer.(broker.Positioner).Position(ctx, tp)
}

// FirstAssigned is as a Kafka member's (kafkacluster).
func (c *lateConsumer) FirstAssigned() (time.Time, bool) {
	if !c.assigned() {
		return time.Time{}, false
	}
	return c.l.at, true
}
