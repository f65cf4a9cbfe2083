package enrich

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/weirnet/weir/broker"
	"github.com/weirnet/weir/broker/embedded"
	"github.com/weirnet/weir/telemetry"
)

// TestFlappingEventCutOffByAPartialAppendIsPublished: four lines make
// Gi0/1 flap (threshold 3), and a fifth takes it down again; the log
// appended the first four changes and not the interface_flapping after
// them (the call's last batch), and the worker stopped before its commit.
// The restart remembers the changes published (adoptUncommitted), which
// start the flapping again, and judges the lines again: the
// interface_flapping the fourth one raised goes out then, and the fifth
// line's change after it, before the cleared event. (It did not: the
// object was known to flap, its line a repeat, and only the cleared event
// came, of a flapping no event had said.)
func TestFlappingEventCutOffByAPartialAppendIsPublished(t *testing.T) {
	// 4: cut between the last change and the flapping event; 3 and 5:
	// before the change that starts it, and after its flapping event,
	// which goes out once.
	for _, keep := range []int{4, 3, 5} {
		t.Run(fmt.Sprint(keep), func(t *testing.T) { flappingEventCutOff(t, keep) })
	}
}

// flappingEventCutOff runs TestFlappingEventCutOffByAPartialAppendIsPublished
// with the first call to append events appending keep of them.
func flappingEventCutOff(t *testing.T, keep int) {
	eb, err := embedded.Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer eb.Close()
	var flaps []broker.Record
	for i := range 5 {
		l := telemetry.Log{V: 1, Device: "edge1", Hostname: "edge1", Facility: 23, Severity: 3, Format: "rfc3164",
			Message:    "%LINK-3-UPDOWN: Interface Gi0/1, changed state to " + [...]string{"down", "up"}[i%2],
			SourceAddr: "192.0.2.1:514", ReceivedAt: time.Now()}
		flaps = append(flaps, broker.Record{Key: []byte("edge1"), Value: l.AppendJSON(nil)})
	}
	if err := eb.Produce(context.Background(), telemetry.TopicRawSyslog, flaps); err != nil {
		t.Fatal(err)
	}
	inv, _ := ParseInventory([]byte(testInventory))
	events := func() []string {
		var out []string
		for _, r := range readTopic(t, eb, telemetry.TopicEvents) {
			var ev telemetry.Event
			json.Unmarshal(r.Value, &ev)
			out = append(out, ev.Type)
		}
		return out
	}
	newWorker := func(b broker.Broker) *Worker {
		return NewWorker(b, inv, NewClassifier(), WithEventRules(30*time.Second, 3, time.Second), WithWarmup(DefaultWarmup))
	}
	ctx, cancel := context.WithCancel(context.Background())
	newWorker(&partialAppend{Broker: eb, topic: telemetry.TopicEvents, keep: keep, cancel: cancel}).Run(ctx)
	want := []string{"interface_down", "interface_up", "interface_down", "interface_up", "interface_flapping",
		"interface_down", "interface_flapping_cleared"}
	if got := events(); !slices.Equal(got, want[:keep]) {
		t.Fatalf("before the restart: events %q, want %q", got, want[:keep])
	}

	stop := startRunner(newWorker(eb))
	defer stop()
	for deadline := time.Now().Add(10 * time.Second); !slices.Contains(events(), "interface_flapping_cleared"); time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			break
		}
	}
	time.Sleep(200 * time.Millisecond) // nothing more may come
	if got := events(); !slices.Equal(got, want) {
		t.Errorf("after the restart: events %q, want %q", got, want)
	}
}

// TestBurstInOneInstantJudgedAgainAfterAStopIsNoFlapping: four lines of
// Gi0/1 going down and up, appended in one call (one instant of the
// log's clock), are four changes: no flapping at the default threshold.
// weir stopped after their events were appended and before its commit.
// The restart remembers those events (adoptUncommitted) and judges the
// lines again: each is the change remembered, not a new one. (Each but
// the first was taken for a change after the instant's last, as a
// partition's reports in an instant follow one another: the burst
// counted seven changes, and an interface_flapping went out.)
func TestBurstInOneInstantJudgedAgainAfterAStopIsNoFlapping(t *testing.T) {
	eb, err := embedded.Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer eb.Close()
	var flaps []broker.Record
	for i := range 5 {
		msg := "%LINK-3-UPDOWN: Interface Gi0/1, changed state to " + [...]string{"down", "up"}[i%2]
		if i == 4 {
			msg = "%LINK-3-UPDOWN: Interface Gi0/2, changed state to down"
		}
		l := telemetry.Log{V: 1, Device: "edge1", Hostname: "edge1", Facility: 23, Severity: 3, Format: "rfc3164",
			Message: msg, SourceAddr: "192.0.2.1:514", ReceivedAt: time.Now()}
		flaps = append(flaps, broker.Record{Key: []byte("edge1"), Value: l.AppendJSON(nil)})
	}
	if err := eb.Produce(context.Background(), telemetry.TopicRawSyslog, flaps); err != nil {
		t.Fatal(err)
	}
	if recs := readTopic(t, eb, telemetry.TopicRawSyslog); len(recs) != 5 || !recs[0].Timestamp.Equal(recs[4].Timestamp) {
		t.Fatalf("the lines are not of one instant: %d records", len(recs))
	}
	inv, _ := ParseInventory([]byte(testInventory))
	events := func() []string {
		var out []string
		for _, r := range readTopic(t, eb, telemetry.TopicEvents) {
			var ev telemetry.Event
			json.Unmarshal(r.Value, &ev)
			out = append(out, ev.Type+" "+ev.Object)
		}
		return out
	}
	newWorker := func(b broker.Broker) *Worker {
		return NewWorker(b, inv, NewClassifier(), WithEventRules(DefaultDedupWindow, DefaultFlapThreshold, time.Minute), WithWarmup(DefaultWarmup))
	}
	// Gi0/1's four events appended, then the worker stops before its
	// commit (Gi0/2's event, in the call's next batch, not appended).
	ctx, cancel := context.WithCancel(context.Background())
	newWorker(&partialAppend{Broker: eb, topic: telemetry.TopicEvents, keep: 4, cancel: cancel}).Run(ctx)
	want := []string{"interface_down Gi0/1", "interface_up Gi0/1", "interface_down Gi0/1", "interface_up Gi0/1"}
	if got := events(); !slices.Equal(got, want) {
		t.Fatalf("before the restart: events %q, want %q", got, want)
	}

	stop := startRunner(newWorker(eb))
	waitCommitted(t, eb, telemetry.TopicRawSyslog, 5)
	stop()
	want = append(want, "interface_down Gi0/2")
	if got := events(); !slices.Equal(got, want) {
		t.Errorf("after the restart: events %q, want %q", got, want)
	}
}
