package enrich

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/weirnet/weir/broker"
	"github.com/weirnet/weir/broker/embedded"
	"github.com/weirnet/weir/telemetry"
)

// TestClearsScanReadsOnlyWhatCame: the cleared events of a restart's
// rebuilt flapping objects, settling over many seconds, are checked
// against the events topic each time; the topic is read once, and then
// only from where it got to. Each check read it again from when the first
// began flapping: a second a settle per two million events.
func TestClearsScanReadsOnlyWhatCame(t *testing.T) {
	b, w := newClearsRig(t)
	ctx := context.Background()
	began := time.Now().Add(-time.Minute)
	produce := func(fillers int, evs ...telemetry.Event) {
		t.Helper()
		produceEvents(t, b, append(fillerEvents(t, fillers), eventsAsRecords(t, evs...)...))
	}
	ev := func(typ, device string) telemetry.Event {
		return telemetry.Event{Type: typ, Device: device, ObjectID: "gi0/1"}
	}
	rebuilt := func(device string, since time.Time) []rebuiltClear {
		return []rebuiltClear{{ev("interface_flapping_cleared", device), since}}
	}

	produce(1000, ev("interface_flapping", "edge1"), ev("interface_flapping_cleared", "edge1"), ev("interface_flapping", "edge2"))
	if got := w.unpublishedClears(ctx, rebuilt("edge1", began)); len(got) != 0 {
		t.Errorf("edge1, cleared in the topic: %d cleared events to send, want 0", len(got))
	}
	if w.clears.read != 1003 {
		t.Fatalf("first check read %d records, want 1003", w.clears.read)
	}
	scan := w.clears

	produce(10, ev("interface_flapping_cleared", "edge2"), ev("interface_flapping", "edge3"))
	if got := w.unpublishedClears(ctx, rebuilt("edge2", began)); len(got) != 0 {
		t.Errorf("edge2, cleared in the topic since: %d cleared events to send, want 0", len(got))
	}
	if got := w.unpublishedClears(ctx, rebuilt("edge3", began)); len(got) != 1 {
		t.Errorf("edge3, flapping in the topic: %d cleared events to send, want 1", len(got))
	}
	if w.clears != scan || w.clears.read != 1015 {
		t.Errorf("later checks read the topic again (%v), %d records, want 1003 and the 12 that came", w.clears != scan, w.clears.read)
	}

	// A flapping that began before what was read: read again from it.
	if got := w.unpublishedClears(ctx, rebuilt("edge1", began.Add(-time.Hour))); len(got) != 0 {
		t.Errorf("edge1, checked again: %d cleared events to send, want 0", len(got))
	}
	if w.clears == scan || w.clears.read != 1015 {
		t.Errorf("a check from an earlier time: read again %v, %d records, want the topic's 1015 again", w.clears != scan, w.clears.read)
	}
}

func mustJSON(t testing.TB, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// newClearsRig is a syslog worker on an embedded log of its own.
func newClearsRig(tb testing.TB) (*embedded.Broker, *Worker) {
	tb.Helper()
	b, err := embedded.Open(tb.TempDir())
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { b.Close() })
	inv, _ := ParseInventory([]byte(testInventory))
	return b, NewWorker(b, inv, NewClassifier())
}

// fillerEvents are n interface_down events of edge9, no flapping.
func fillerEvents(tb testing.TB, n int) []broker.Record {
	recs := make([]broker.Record, 0, n)
	for i := range n {
		ev := telemetry.Event{V: 1, Type: "interface_down", Device: "edge9", ObjectID: "gi0/" + itoa(i), Time: time.Now()}
		recs = append(recs, broker.Record{Key: []byte(ev.Device), Value: mustJSON(tb, ev)})
	}
	return recs
}

// eventsAsRecords are evs as the events topic has them, timed now.
func eventsAsRecords(tb testing.TB, evs ...telemetry.Event) []broker.Record {
	recs := make([]broker.Record, 0, len(evs))
	for _, ev := range evs {
		ev.V, ev.Time = 1, time.Now()
		recs = append(recs, broker.Record{Key: []byte(ev.Device), Value: mustJSON(tb, ev)})
	}
	return recs
}

func produceEvents(tb testing.TB, b *embedded.Broker, recs []broker.Record) {
	tb.Helper()
	if err := b.Produce(context.Background(), telemetry.TopicEvents, recs); err != nil {
		tb.Fatal(err)
	}
}

// BenchmarkClearsCheck is a rebuilt flapping's cleared-event check
// against an events topic of 200,000 records: the first, which reads the
// topic from when the flapping began, and a later one, which reads only
// what came since (nothing here).
func BenchmarkClearsCheck(b *testing.B) {
	br, w := newClearsRig(b)
	ctx := context.Background()
	for range 200 {
		produceEvents(b, br, fillerEvents(b, 1000))
	}
	rebuilt := []rebuiltClear{{telemetry.Event{Type: "interface_flapping_cleared", Device: "edge1", ObjectID: "gi0/1"}, time.Now().Add(-time.Hour)}}
	for _, first := range []bool{true, false} {
		name := map[bool]string{true: "first", false: "later"}[first]
		b.Run(name, func(b *testing.B) {
			for b.Loop() {
				if first {
					w.clears = nil
				}
				if got := w.unpublishedClears(ctx, rebuilt); len(got) != 1 {
					b.Fatalf("%d cleared events", len(got))
				}
			}
		})
	}
}

// TestClearsScanTopicRecreated: an events topic deleted and made again
// while rebuilt flapping objects settle is read from its window again,
// even when it has grown past where the old one was read: its records
// below that offset (edge1's cleared event here) are new ones.
func TestClearsScanTopicRecreated(t *testing.T) {
	b, w := newClearsRig(t)
	ctx := context.Background()
	began := time.Now().Add(-time.Minute)
	produce := func(evs []telemetry.Event, fillers int) {
		t.Helper()
		produceEvents(t, b, append(eventsAsRecords(t, evs...), fillerEvents(t, fillers)...))
	}
	edge := func(typ, device string) telemetry.Event {
		return telemetry.Event{Type: typ, Device: device, ObjectID: "gi0/1"}
	}
	rebuilt := func(device string) []rebuiltClear {
		return []rebuiltClear{{edge("interface_flapping_cleared", device), began}}
	}

	produce([]telemetry.Event{edge("interface_flapping", "edge1")}, 100)
	if got := w.unpublishedClears(ctx, rebuilt("edge2")); len(got) != 1 {
		t.Fatalf("edge2, not in the topic: %d cleared events to send, want 1", len(got))
	}
	if err := b.DeleteTopic(ctx, telemetry.TopicEvents); err != nil {
		t.Fatal(err)
	}
	produce([]telemetry.Event{edge("interface_flapping_cleared", "edge1")}, 200)
	if got := w.unpublishedClears(ctx, rebuilt("edge1")); len(got) != 0 {
		t.Errorf("edge1, cleared in the topic made again: %d cleared events to send, want 0", len(got))
	}
}

// TestClearsScanBounded: the scan of the events topic for cleared events
// kept every flapping object the topic named since the earliest rebuilt
// one began flapping, and any Kafka client may write to the topic: a
// flood of flapping events of invented devices grew it without bound.
// Past maxObjects a new object is not kept and its records are counted;
// its cleared event, if rebuilt, goes out again (a repeat, as when the
// topic cannot be read), while the objects kept are answered as before.
func TestClearsScanBounded(t *testing.T) {
	b, w := newClearsRig(t)
	w.maxClears = 10
	ctx := context.Background()
	// One partition: the records are read in the order written.
	if err := b.CreateTopic(ctx, telemetry.TopicEvents, broker.TopicConfig{Partitions: 1}); err != nil {
		t.Fatal(err)
	}
	began := time.Now().Add(-time.Minute)
	ev := func(typ, device string) telemetry.Event {
		return telemetry.Event{Type: typ, Device: device, ObjectID: "gi0/1"}
	}
	evs := []telemetry.Event{ev("interface_flapping", "edge1"), ev("interface_flapping_cleared", "edge1")}
	for i := range 100 {
		evs = append(evs, ev("interface_flapping", "flood"+itoa(i)))
	}
	evs = append(evs, ev("interface_flapping", "edge2"), ev("interface_flapping_cleared", "edge2"))
	produceEvents(t, b, eventsAsRecords(t, evs...))
	rebuilt := []rebuiltClear{{ev("interface_flapping_cleared", "edge1"), began}, {ev("interface_flapping_cleared", "edge2"), began}}
	got := w.unpublishedClears(ctx, rebuilt)
	if n := len(w.clears.last); n > 10 {
		t.Fatalf("%d objects kept from the events topic, want at most 10", n)
	}
	if len(got) != 1 || got[0].Device != "edge2" {
		t.Fatalf("cleared events to send: %v; want edge2's alone (edge1's was kept as cleared, edge2's past the bound)", got)
	}
	if n := testutil.ToFloat64(w.m.untrackedKind.WithLabelValues("clears")); n != 93 {
		t.Fatalf("%v records counted untracked, want 93 (91 of the flood, edge2's 2)", n)
	}
}
