package enrich

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/weirnet/weir/broker"
	"github.com/weirnet/weir/broker/embedded"
	"github.com/weirnet/weir/telemetry"
)

// heldEvents is a log whose produces to the events topic wait until
// released (or their ctx ends): a worker that judged a batch's events and
// has not published them yet.
type heldEvents struct {
	*embedded.Broker
	reached chan struct{} // told once, at the first held produce
	release chan struct{}
	once    sync.Once
}

func newHeldEvents(b *embedded.Broker) *heldEvents {
	return &heldEvents{Broker: b, reached: make(chan struct{}), release: make(chan struct{})}
}

func (h *heldEvents) ProducePartition(ctx context.Context, topic string, part int32, recs []broker.Record) error {
	if topic == telemetry.TopicEvents {
		h.once.Do(func() { close(h.reached) })
		select {
		case <-h.release:
		case <-ctx.Done():
			for i := range recs {
				recs[i].Offset = -1
			}
			return ctx.Err()
		}
	}
	return h.Broker.ProducePartition(ctx, topic, part, recs)
}

// TestCrossPathRepeatNotCommittedBeforeItsChange: a syslog worker judged
// a line's change and has yet to publish its event when the trap worker
// judges the same change, by a trap, a repeat of it. The process dies
// before the line's event is published. After the restart the change is
// one event: before, the trap's batch (no event) had committed, the
// restart's warm-up read the trap back, and the line, enriched again,
// was its repeat: the change was never published. A repeat's batch now
// commits only once the event it repeats is published.
func TestCrossPathRepeatNotCommittedBeforeItsChange(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name, line string
		trap       telemetry.Trap
		want       string // the one event, as "type object"
	}{
		{"link down", "%LINK-3-UPDOWN: Interface GigabitEthernet0/3, changed state to down",
			withIfName(rfc2863LinkDown("192.0.2.9", 3), 3, "Gi0/3"), "interface_down GigabitEthernet0/3"},
		{"restart", "%SYS-5-RESTART: System restarted --",
			telemetry.Trap{V: 1, Device: "192.0.2.9", SourceAddr: "192.0.2.9:50000", Version: "2c", TrapOID: "1.3.6.1.6.3.1.1.5.1",
				TrapName: "coldStart", Uptime: 3000, ReceivedAt: time.Now()}, "device_rebooted "},
		{"configuration change", "%SYS-5-CONFIG_I: Configured from console by netops on vty0 (10.1.1.1)",
			telemetry.Trap{V: 1, Device: "192.0.2.9", SourceAddr: "192.0.2.9:50000", Version: "2c", TrapOID: "1.3.6.1.4.1.9.9.43.2.0.1",
				TrapName: "ciscoConfigManEvent", ReceivedAt: time.Now(), Varbinds: []telemetry.Varbind{
					{OID: "1.3.6.1.4.1.9.9.43.1.1.6.1.3.7", Name: "ccmHistoryEventCommandSource.7", Type: "integer", Value: 1},
					{OID: "1.3.6.1.4.1.9.9.43.1.1.6.1.4.7", Name: "ccmHistoryEventConfigSource.7", Type: "integer", Value: 2},
					{OID: "1.3.6.1.4.1.9.9.43.1.1.6.1.5.7", Name: "ccmHistoryEventConfigDestination.7", Type: "integer", Value: 3}}},
			"config_changed netops"},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			crossPathRepeatBeforeItsChange(t, c.line, c.trap, c.want)
		})
	}
}

func crossPathRepeatBeforeItsChange(t *testing.T, line string, tr telemetry.Trap, want string) {
	b, inv := openLog(t)
	rules := NewEventRules(DefaultDedupWindow, DefaultFlapThreshold, DefaultFlapWindow)
	held := newHeldEvents(b)
	stopLogs := startRunner(NewWorker(held, inv, NewClassifier(), WithSharedEventRules(rules)))
	produceLine(t, b, line)
	select {
	case <-held.reached:
	case <-time.After(15 * time.Second):
		t.Fatal("the syslog worker published no event")
	}
	produceTrap(t, b, tr)
	stopTraps := startRunner(NewTrapWorker(b, inv, WithSharedEventRules(rules)))
	waitUntil(t, "the trap judged", func() bool {
		rules.d.mu.Lock()
		defer rules.d.mu.Unlock()
		_, ok := rules.d.read[broker.TopicPartition{Topic: telemetry.TopicRawTraps, Partition: 0}]
		return ok
	})
	time.Sleep(300 * time.Millisecond) // for a commit that should not come
	// The process dies: neither worker gets further.
	stopTraps()
	stopLogs()
	if n := countRecords(t, b, telemetry.TopicEvents); n != 0 {
		t.Fatalf("%d events before the restart; the trap was to be the line's repeat", n)
	}

	// After the restart the line is judged first, as it was before: the
	// trap worker warms up with the others, and polls its live records
	// once the line is committed. (Judged first, the trap would be the
	// change, and a configuration change naming no user is no repeat's
	// origin for one naming its user: two events, with or without a
	// crash.)
	rules = restartRules(2, DefaultDedupWindow, DefaultFlapThreshold, DefaultFlapWindow)
	traps := &heldPolls{Broker: b, release: make(chan struct{})}
	defer startRunner(NewTrapWorker(traps, inv, WithSharedEventRules(rules)))()
	defer startRunner(NewWorker(b, inv, NewClassifier(), WithSharedEventRules(rules)))()
	waitCommitted(t, b, telemetry.TopicRawSyslog, 1)
	close(traps.release)
	waitCommitted(t, b, telemetry.TopicRawTraps, 1)
	got := eventsAs(t, b, func(ev telemetry.Event) string { return ev.Type + " " + ev.Object })
	if len(got) != 1 || got[0] != want {
		t.Errorf("events after the restart: %q, want [%q]", got, want)
	}
}

// withIfName adds index's ifName varbind to tr.
func withIfName(tr telemetry.Trap, index int, name string) telemetry.Trap {
	in := fmt.Sprint(index)
	tr.Varbinds = append(tr.Varbinds, telemetry.Varbind{OID: "1.3.6.1.2.1.31.1.1.1.1." + in, Name: "ifName." + in, Type: "octet_string", Value: name})
	return tr
}

// heldPolls is a log whose group consumers poll no record until release
// is closed: until then they only take their assignment (a commit applies
// it, committing nothing new), so that a warm-up of their partitions
// (warmer.idle) runs as it would.
type heldPolls struct {
	*embedded.Broker
	release chan struct{}
}

func (h *heldPolls) Consume(ctx context.Context, group string, topics []string, opts ...broker.ConsumerOption) (broker.Consumer, error) {
	c, err := h.Broker.Consume(ctx, group, topics, opts...)
	if err != nil {
		return nil, err
	}
	return &heldConsumer{c, h.release}, nil
}

type heldConsumer struct {
	broker.Consumer
	release chan struct{}
}

func (c *heldConsumer) Poll(ctx context.Context) ([]broker.Record, error) {
	select {
	case <-c.release:
		return c.Consumer.Poll(ctx)
	default:
	}
	if err := c.Consumer.Commit(ctx); err != nil {
		return nil, err
	}
	select {
	case <-c.release:
		return c.Consumer.Poll(ctx)
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

func (c *heldConsumer) Position(ctx context.Context, tp broker.TopicPartition) (int64, bool) {
	return c.Consumer.(broker.Positioner).Position(ctx, tp)
}
