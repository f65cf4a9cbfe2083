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

// TestRestartThenLinkDownAgain: a syslog line said Gi0/3 went down; the
// row's first poll, 10 s later, found it up and published the missed
// interface_up. weir restarts, and a new line says Gi0/3 went down again,
// 40 s after the first (past the de-duplication window): a change, whose
// interface_down must be published. The warm-up rebuilds the first line's
// down as the object's state, but not the poll's up that answered it.
func TestRestartThenLinkDownAgain(t *testing.T) {
	b, inv := openLog(t)
	targets := []SNMPTarget{{Name: "core9", Host: "192.0.2.9"}}
	const dedup = 30 * time.Second
	t0 := time.Now().Add(-2 * time.Minute).Truncate(time.Millisecond)
	m := telemetry.Metric{V: 1, Measurement: "snmp_interface", Device: "core9", Source: "snmp",
		Tags:   map[string]string{"ifIndex": "3", "ifName": "Gi0/3", "ifDescr": "GigabitEthernet0/3", "agent": "192.0.2.9"},
		Fields: map[string]any{"ifOperStatus": int64(1)}, Time: t0.Add(15 * time.Second)}
	poll, err := json.Marshal(&m)
	if err != nil {
		t.Fatal(err)
	}
	line := func(at time.Time) broker.Record {
		l := telemetry.Log{V: 1, Device: "192.0.2.9", SourceAddr: "192.0.2.9:514", Facility: 23, Severity: 3,
			Message: "%LINK-3-UPDOWN: Interface GigabitEthernet0/3, changed state to down", ReceivedAt: at}
		return broker.Record{Key: []byte("core9"), Value: l.AppendJSON(nil), Timestamp: at}
	}
	produce := func(topic string, recs ...broker.Record) {
		t.Helper()
		if err := b.Produce(context.Background(), topic, recs); err != nil {
			t.Fatal(err)
		}
	}
	down := t0.Add(5 * time.Second)
	opts := []WorkerOption{WithSharedEventRules(NewEventRules(dedup, DefaultFlapThreshold, DefaultFlapWindow)),
		WithSNMPTargets(NewSNMPTargets(targets))}
	produce(telemetry.TopicRawSyslog, line(down))
	stopS := startRunner(NewWorker(b, inv, NewClassifier(), opts...))
	waitCommitted(t, b, telemetry.TopicRawSyslog, 1)
	produce(telemetry.TopicRawSNMP, broker.Record{Key: []byte("core9"), Value: poll, Timestamp: m.Time})
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

	rules := restartRules(2, dedup, DefaultFlapThreshold, DefaultFlapWindow)
	opts = []WorkerOption{WithSharedEventRules(rules), WithSNMPTargets(NewSNMPTargets(targets))}
	defer startRunner(NewWorker(b, inv, NewClassifier(), opts...))()
	defer startRunner(NewMetricsWorker(b, inv, opts...))()
	produce(telemetry.TopicRawSyslog, line(down.Add(40*time.Second)))
	waitCommitted(t, b, telemetry.TopicRawSyslog, 2)
	want = append(want, "interface_down core9 gi0/3 from raw.syslog")
	if got := lines(); !slices.Equal(got, want) {
		t.Errorf("after the restart and a new link down:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}
