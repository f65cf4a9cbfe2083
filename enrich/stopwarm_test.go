package enrich

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/weirnet/weir/broker"
	"github.com/weirnet/weir/broker/embedded"
	"github.com/weirnet/weir/telemetry"
)

// stopAtWarmup is a log whose first fetch of the input topic, a warm-up's,
// finds the process stopping (SIGTERM), as a fetch may.
type stopAtWarmup struct {
	*embedded.Broker
	input string
	stop  context.CancelFunc
}

func (b *stopAtWarmup) Fetch(ctx context.Context, topic string, partition int32, offset int64, opts broker.FetchOptions, res *broker.FetchResult) error {
	if topic == b.input && b.stop != nil {
		b.stop()
		b.stop = nil
		return ctx.Err()
	}
	return b.Broker.Fetch(ctx, topic, partition, offset, opts, res)
}

// TestStopDuringWarmupPublishesNothing: a worker stopped while it warms
// up a partition leaves the records it polled alone. Judged without the
// state the warm-up was to give, a link logged down again would be
// published as a change, and a poll's link going down (its first sample,
// then) would raise nothing; the next start enriches them after a whole
// warm-up.
func TestStopDuringWarmupPublishesNothing(t *testing.T) {
	down := "%LINK-3-UPDOWN: Interface GigabitEthernet0/1, changed state to down"
	row := func(oper int64, at time.Time) []telemetry.Metric {
		return []telemetry.Metric{{V: 1, Measurement: "snmp_interface", Device: "core9", Source: "snmp",
			Tags:   map[string]string{"ifIndex": "3", "ifName": "Gi0/3", "agent": "192.0.2.9"},
			Fields: map[string]any{"ifOperStatus": oper}, Time: at}}
	}
	t0 := time.Now().Add(-time.Minute)
	for _, tc := range []struct {
		name          string
		input, output string
		// first is the input of a first run, then is more of it, for a
		// run stopped in its warm-up; events are the first run's, and
		// after those of a third run, which enriches then's input.
		first, then   func(t *testing.T, b broker.Broker)
		events, after int
		worker        func(b broker.Broker, inv *Inventory) interface{ Run(context.Context) error }
	}{
		{name: "syslog", input: telemetry.TopicRawSyslog, output: telemetry.TopicEnrichedSyslog,
			first: func(t *testing.T, b broker.Broker) { produceLine(t, b, down) },
			// A repeat: no event, then or at the next run.
			then:   func(t *testing.T, b broker.Broker) { produceLine(t, b, down) },
			events: 1, after: 1,
			worker: func(b broker.Broker, inv *Inventory) interface{ Run(context.Context) error } {
				return NewWorker(b, inv, NewClassifier())
			}},
		{name: "metrics", input: telemetry.TopicRawSNMP, output: telemetry.TopicEnrichedMetrics,
			first: func(t *testing.T, b broker.Broker) { produceMetrics(t, b, row(1, t0)) },
			// The link going down: the next run's event.
			then:   func(t *testing.T, b broker.Broker) { produceMetrics(t, b, row(2, t0.Add(30*time.Second))) },
			events: 0, after: 1,
			worker: func(b broker.Broker, inv *Inventory) interface{ Run(context.Context) error } {
				return NewMetricsWorker(b, inv)
			}},
		{name: "traps", input: telemetry.TopicRawTraps, output: telemetry.TopicEvents,
			first: func(t *testing.T, b broker.Broker) { produceTrap(t, b, rfc2863LinkDown("192.0.2.9", 3)) },
			// A repeat: no event, then or at the next run.
			then:   func(t *testing.T, b broker.Broker) { produceTrap(t, b, rfc2863LinkDown("192.0.2.9", 3)) },
			events: 1, after: 1,
			worker: func(b broker.Broker, inv *Inventory) interface{ Run(context.Context) error } {
				return NewTrapWorker(b, inv)
			}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b, inv := openLog(t)
			tc.first(t, b)
			run := func(commits int) {
				ctx, cancel := context.WithCancel(context.Background())
				done := make(chan error, 1)
				go func() { done <- tc.worker(b, inv).Run(ctx) }()
				waitUntil(t, "the commit", func() bool { return committedInput(b, tc.input) == commits })
				cancel()
				if err := <-done; err != nil {
					t.Fatal(err)
				}
			}
			run(1)
			outputs := countRecords(t, b, tc.output)
			if n := countRecords(t, b, telemetry.TopicEvents); n != tc.events {
				t.Fatalf("first run: %d events, want %d", n, tc.events)
			}
			tc.then(t, b)
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			if err := tc.worker(&stopAtWarmup{Broker: b, input: tc.input, stop: cancel}, inv).Run(ctx); err != nil {
				t.Fatal(err)
			}
			if n := countRecords(t, b, telemetry.TopicEvents); n != tc.events {
				t.Errorf("%d events after a run stopped in its warm-up, want the first run's %d", n, tc.events)
			}
			if n := countRecords(t, b, tc.output); n != outputs {
				t.Errorf("%d records in %s after a run stopped in its warm-up, want the first run's %d", n, tc.output, outputs)
			}
			run(2)
			if n := countRecords(t, b, telemetry.TopicEvents); n != tc.after {
				t.Errorf("%d events after the next run, want %d", n, tc.after)
			}
		})
	}
}

// failingFetches is a log whose first fetches of the input topic fail, as
// they may while a Kafka partition's leader moves (a rolling restart).
type failingFetches struct {
	*embedded.Broker
	input string
	fails int
}

func (b *failingFetches) Fetch(ctx context.Context, topic string, partition int32, offset int64, opts broker.FetchOptions, res *broker.FetchResult) error {
	if topic == b.input && b.fails > 0 {
		b.fails--
		return errors.New("NOT_LEADER_FOR_PARTITION")
	}
	return b.Broker.Fetch(ctx, topic, partition, offset, opts, res)
}

// TestWarmupRetriesFailedFetches: a warm-up whose fetches fail for a moment
// tries again rather than leave the worker without the window's state: a
// link logged down again is no change.
func TestWarmupRetriesFailedFetches(t *testing.T) {
	b, inv := openLog(t)
	down := "%LINK-3-UPDOWN: Interface GigabitEthernet0/1, changed state to down"
	run := func(via broker.Broker, commits int) {
		produceLine(t, b, down)
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan error, 1)
		go func() { done <- NewWorker(via, inv, NewClassifier()).Run(ctx) }()
		waitUntil(t, "the commit", func() bool { return committedInput(b, telemetry.TopicRawSyslog) == commits })
		cancel()
		if err := <-done; err != nil {
			t.Fatal(err)
		}
	}
	run(b, 1)
	failing := &failingFetches{Broker: b, input: telemetry.TopicRawSyslog, fails: 2}
	run(failing, 2) // the same change, logged again
	if failing.fails != 0 {
		t.Fatalf("%d fetches of the warm-up left to fail", failing.fails)
	}
	if n := countRecords(t, b, telemetry.TopicEvents); n != 1 {
		t.Errorf("%d events of one link going down, logged twice", n)
	}
}
