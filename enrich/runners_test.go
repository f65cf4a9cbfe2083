package enrich

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/weirnet/weir/broker"
	"github.com/weirnet/weir/broker/embedded"
	"github.com/weirnet/weir/telemetry"
)

// Helpers for the tests that run workers over an embedded log.

// startRunner runs w until the returned stop is called.
func startRunner(w runner) func() {
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { w.Run(ctx); close(done) }()
	return func() { cancel(); <-done }
}

// waitCommitted waits until the enrich group has committed n records of
// input: their outputs are in the log then.
func waitCommitted(t *testing.T, b *embedded.Broker, input string, n int) {
	t.Helper()
	waitUntil(t, fmt.Sprintf("%d records of %s committed", n, input), func() bool { return committedInput(b, input) == n })
}

// produceMetrics writes ms to raw.snmp, keyed by device.
func produceMetrics(t *testing.T, b broker.Broker, ms []telemetry.Metric) {
	t.Helper()
	var recs []broker.Record
	for _, m := range ms {
		v, _, err := m.AppendJSON(nil, nil)
		if err != nil {
			t.Fatal(err)
		}
		recs = append(recs, broker.Record{Key: []byte(m.Device), Value: v})
	}
	if err := b.Produce(context.Background(), telemetry.TopicRawSNMP, recs); err != nil {
		t.Fatal(err)
	}
}

// eventsAs are the events of b's events topic, each as line writes it.
func eventsAs(t *testing.T, b *embedded.Broker, line func(telemetry.Event) string) []string {
	var got []string
	for _, r := range readTopic(t, b, telemetry.TopicEvents) {
		var ev telemetry.Event
		if err := json.Unmarshal(r.Value, &ev); err != nil {
			t.Fatal(err)
		}
		got = append(got, line(ev))
	}
	return got
}

// waitUntil polls cond until it holds, failing t after 15 s.
func waitUntil(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(15 * time.Second); !cond(); time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
	}
}

// flappingObjects are the objects r holds as flapping, as "device object".
func flappingObjects(r *EventRules) []string {
	r.d.mu.Lock()
	defer r.d.mu.Unlock()
	var out []string
	for k, st := range r.d.flapping {
		out = append(out, k.device+" "+st.last.Object)
	}
	return out
}

// produceTrap writes tr to raw.traps, keyed by its device.
func produceTrap(t *testing.T, b broker.Broker, tr telemetry.Trap) {
	t.Helper()
	v, err := json.Marshal(&tr)
	if err != nil {
		t.Fatal(err)
	}
	if err := b.Produce(context.Background(), telemetry.TopicRawTraps, []broker.Record{{Key: []byte(tr.Device), Value: v}}); err != nil {
		t.Fatal(err)
	}
}

// produceLine writes a syslog line without a hostname from 192.0.2.9 (a
// device that takes the name of the SNMP target polling that address) to
// raw.syslog.
func produceLine(t *testing.T, b broker.Broker, msg string) {
	t.Helper()
	l := telemetry.Log{V: 1, Device: "192.0.2.9", SourceAddr: "192.0.2.9:514", Facility: 23, Severity: 3, Message: msg, ReceivedAt: time.Now()}
	if err := b.Produce(context.Background(), telemetry.TopicRawSyslog, []broker.Record{{Key: []byte(l.Device), Value: l.AppendJSON(nil)}}); err != nil {
		t.Fatal(err)
	}
}

// openLog is an embedded log, closed when the test ends, and the test
// inventory.
func openLog(t *testing.T) (*embedded.Broker, *Inventory) {
	t.Helper()
	inv, _ := ParseInventory([]byte(testInventory))
	return openBroker(t), inv
}

// openBroker is an embedded broker in a temporary folder, closed with the
// test.
func openBroker(t testing.TB) *embedded.Broker {
	t.Helper()
	b, err := embedded.Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { b.Close() })
	return b
}
