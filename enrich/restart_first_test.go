package enrich

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/weirnet/weir/broker"
	"github.com/weirnet/weir/telemetry"
)

// TestRestartThenPollAfterAFirstSampleChange: a syslog line said Gi0/3 went
// down; every poll says up (it came back before the next poll, its up line
// lost), so the row's first poll, 10 s after the line, raised the
// interface_up that was missed (detector.firstMayChange). weir restarts,
// and the next polls say up again: the interface is in the state its last
// event said, no change. One interface_up in all, as without the restart.
// (The warm-up rebuilt the line's down as the object's state, but not the
// poll's up that answered it, as it cannot tell a row's first poll from
// the first of its window; so the first live poll more than dedup_window
// after the line raised interface_up a second time.)
func TestRestartThenPollAfterAFirstSampleChange(t *testing.T) {
	b, inv := openLog(t)
	targets := []SNMPTarget{{Name: "core9", Host: "192.0.2.9"}}
	const dedup = 30 * time.Second
	t0 := time.Now().Add(-2 * time.Minute).Truncate(time.Millisecond)
	poll := func(at time.Time) broker.Record {
		m := telemetry.Metric{V: 1, Measurement: "snmp_interface", Device: "core9", Source: "snmp",
			Tags:   map[string]string{"ifIndex": "3", "ifName": "Gi0/3", "ifDescr": "GigabitEthernet0/3", "agent": "192.0.2.9"},
			Fields: map[string]any{"ifOperStatus": int64(1)}, Time: at}
		v, err := json.Marshal(&m)
		if err != nil {
			t.Fatal(err)
		}
		return broker.Record{Key: []byte("core9"), Value: v, Timestamp: at}
	}
	produce := func(topic string, recs ...broker.Record) {
		t.Helper()
		if err := b.Produce(context.Background(), topic, recs); err != nil {
			t.Fatal(err)
		}
	}
	down := t0.Add(5 * time.Second)
	line := telemetry.Log{V: 1, Device: "192.0.2.9", SourceAddr: "192.0.2.9:514", Facility: 23, Severity: 3,
		Message: "%LINK-3-UPDOWN: Interface GigabitEthernet0/3, changed state to down", ReceivedAt: down}

	// The first process: the line, then the row's first poll, which
	// raises the missed interface_up.
	opts := []WorkerOption{WithSharedEventRules(NewEventRules(dedup, DefaultFlapThreshold, DefaultFlapWindow)),
		WithSNMPTargets(NewSNMPTargets(targets))}
	produce(telemetry.TopicRawSyslog, broker.Record{Key: []byte("core9"), Value: line.AppendJSON(nil), Timestamp: down})
	stopS := startRunner(NewWorker(b, inv, NewClassifier(), opts...))
	waitCommitted(t, b, telemetry.TopicRawSyslog, 1)
	produce(telemetry.TopicRawSNMP, poll(down.Add(10*time.Second)))
	stopM := startRunner(NewMetricsWorker(b, inv, opts...))
	waitCommitted(t, b, telemetry.TopicRawSNMP, 1)
	stopS()
	stopM()
	lines := func() []string {
		return eventsAs(t, b, func(ev telemetry.Event) string {
			return ev.Type + " " + ev.Device + " " + ev.ObjectID + " from " + ev.Cause.Topic
		})
	}
	want := []string{"interface_down core9 gi0/3 from raw.syslog", "interface_up core9 gi0/3 from raw.snmp"}
	if got := lines(); !slices.Equal(got, want) {
		t.Fatalf("before the restart:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}

	// The restart: workers as weir run starts them; the next poll, up.
	rules := restartRules(2, dedup, DefaultFlapThreshold, DefaultFlapWindow)
	opts = []WorkerOption{WithSharedEventRules(rules), WithSNMPTargets(NewSNMPTargets(targets))}
	defer startRunner(NewWorker(b, inv, NewClassifier(), opts...))()
	defer startRunner(NewMetricsWorker(b, inv, opts...))()
	produce(telemetry.TopicRawSNMP, poll(down.Add(15*time.Second)), poll(down.Add(45*time.Second)), poll(down.Add(50*time.Second)))
	waitCommitted(t, b, telemetry.TopicRawSNMP, 4)
	if got := lines(); !slices.Equal(got, want) {
		t.Errorf("after the restart and two polls saying up:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// TestRestartThenPollAnsweringAReportNotAnsweredBefore: the other side
// of TestRestartThenPollAfterAFirstSampleChange. A poll saw Gi0/3 come up
// (interface_up), then a syslog line said it went down; weir restarts
// before a poll more than dedup_window after the line. The events topic
// has an interface_up of the object, but from before the line: the
// missed interface_up was not published, and the live poll publishes it.
func TestRestartThenPollAnsweringAReportNotAnsweredBefore(t *testing.T) {
	b, inv := openLog(t)
	targets := []SNMPTarget{{Name: "core9", Host: "192.0.2.9"}}
	const dedup = 30 * time.Second
	t0 := time.Now().Add(-2 * time.Minute).Truncate(time.Millisecond)
	poll := func(at time.Time, status int64) broker.Record {
		m := telemetry.Metric{V: 1, Measurement: "snmp_interface", Device: "core9", Source: "snmp",
			Tags:   map[string]string{"ifIndex": "3", "ifName": "Gi0/3", "ifDescr": "GigabitEthernet0/3", "agent": "192.0.2.9"},
			Fields: map[string]any{"ifOperStatus": status}, Time: at}
		v, err := json.Marshal(&m)
		if err != nil {
			t.Fatal(err)
		}
		return broker.Record{Key: []byte("core9"), Value: v, Timestamp: at}
	}
	produce := func(topic string, recs ...broker.Record) {
		t.Helper()
		if err := b.Produce(context.Background(), topic, recs); err != nil {
			t.Fatal(err)
		}
	}
	down := t0.Add(5 * time.Second)
	line := telemetry.Log{V: 1, Device: "192.0.2.9", SourceAddr: "192.0.2.9:514", Facility: 23, Severity: 3,
		Message: "%LINK-3-UPDOWN: Interface GigabitEthernet0/3, changed state to down", ReceivedAt: down}

	opts := []WorkerOption{WithSharedEventRules(NewEventRules(dedup, DefaultFlapThreshold, DefaultFlapWindow)),
		WithSNMPTargets(NewSNMPTargets(targets))}
	produce(telemetry.TopicRawSNMP, poll(t0, 2), poll(t0.Add(time.Second), 1))
	stopM := startRunner(NewMetricsWorker(b, inv, opts...))
	waitCommitted(t, b, telemetry.TopicRawSNMP, 2)
	produce(telemetry.TopicRawSyslog, broker.Record{Key: []byte("core9"), Value: line.AppendJSON(nil), Timestamp: down})
	stopS := startRunner(NewWorker(b, inv, NewClassifier(), opts...))
	waitCommitted(t, b, telemetry.TopicRawSyslog, 1)
	stopS()
	stopM()
	lines := func() []string {
		return eventsAs(t, b, func(ev telemetry.Event) string {
			return ev.Type + " " + ev.Device + " " + ev.ObjectID + " from " + ev.Cause.Topic
		})
	}
	want := []string{"interface_up core9 gi0/3 from raw.snmp", "interface_down core9 gi0/3 from raw.syslog"}
	if got := lines(); !slices.Equal(got, want) {
		t.Fatalf("before the restart:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}

	rules := restartRules(2, dedup, DefaultFlapThreshold, DefaultFlapWindow)
	opts = []WorkerOption{WithSharedEventRules(rules), WithSNMPTargets(NewSNMPTargets(targets))}
	defer startRunner(NewWorker(b, inv, NewClassifier(), opts...))()
	defer startRunner(NewMetricsWorker(b, inv, opts...))()
	produce(telemetry.TopicRawSNMP, poll(down.Add(10*time.Second), 1), poll(down.Add(45*time.Second), 1))
	waitCommitted(t, b, telemetry.TopicRawSNMP, 4)
	want = append(want, "interface_up core9 gi0/3 from raw.snmp")
	if got := lines(); !slices.Equal(got, want) {
		t.Errorf("after the restart and two polls saying up:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}
