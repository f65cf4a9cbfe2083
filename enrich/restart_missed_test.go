package enrich

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/weirnet/weir/broker"
	"github.com/weirnet/weir/broker/embedded"
	"github.com/weirnet/weir/telemetry"
)

// linkRestart is what the restart tests of Gi0/3 of core9 (an SNMP target
// at 192.0.2.9, whose syslog lines name no host) share: a log, the
// records of the link's reports, and the workers of a process before the
// restart and after it.
type linkRestart struct {
	t       *testing.T
	b       *embedded.Broker
	inv     *Inventory
	targets []SNMPTarget
	t0      time.Time
}

// linkRestartDedup is the tests' de-duplication window.
const linkRestartDedup = 30 * time.Second

func newLinkRestart(t *testing.T) *linkRestart {
	b, inv := openLog(t)
	return &linkRestart{t: t, b: b, inv: inv, targets: []SNMPTarget{{Name: "core9", Host: "192.0.2.9"}},
		t0: time.Now().Add(-2 * time.Minute).Truncate(time.Millisecond)}
}

// poll is a poll of Gi0/3 at at, with ifOperStatus status.
func (f *linkRestart) poll(at time.Time, status int64) broker.Record {
	m := telemetry.Metric{V: 1, Measurement: "snmp_interface", Device: "core9", Source: "snmp",
		Tags:   map[string]string{"ifIndex": "3", "ifName": "Gi0/3", "ifDescr": "GigabitEthernet0/3", "agent": "192.0.2.9"},
		Fields: map[string]any{"ifOperStatus": status}, Time: at}
	v, err := json.Marshal(&m)
	if err != nil {
		f.t.Fatal(err)
	}
	return broker.Record{Key: []byte("core9"), Value: v, Timestamp: at}
}

// down is the syslog line, received at at, that Gi0/3 went down.
func (f *linkRestart) down(at time.Time) broker.Record {
	l := telemetry.Log{V: 1, Device: "192.0.2.9", SourceAddr: "192.0.2.9:514", Facility: 23, Severity: 3,
		Message: "%LINK-3-UPDOWN: Interface GigabitEthernet0/3, changed state to down", ReceivedAt: at}
	return broker.Record{Key: []byte("core9"), Value: l.AppendJSON(nil), Timestamp: at}
}

func (f *linkRestart) produce(topic string, recs ...broker.Record) {
	f.t.Helper()
	if err := f.b.Produce(context.Background(), topic, recs); err != nil {
		f.t.Fatal(err)
	}
}

// before is the options of the workers before the restart; after, of
// those after it, as weir run starts them (held until both are warm).
func (f *linkRestart) before() []WorkerOption {
	return []WorkerOption{WithSharedEventRules(NewEventRules(linkRestartDedup, DefaultFlapThreshold, DefaultFlapWindow)),
		WithSNMPTargets(NewSNMPTargets(f.targets))}
}

func (f *linkRestart) after() []WorkerOption {
	return []WorkerOption{WithSharedEventRules(restartRules(2, linkRestartDedup, DefaultFlapThreshold, DefaultFlapWindow)),
		WithSNMPTargets(NewSNMPTargets(f.targets))}
}

// check fails the test (fatal: stop) unless the events are want.
func (f *linkRestart) check(when string, fatal bool, want ...string) {
	f.t.Helper()
	got := eventsAs(f.t, f.b, func(ev telemetry.Event) string {
		return ev.Type + " " + ev.Device + " " + ev.ObjectID + " from " + ev.Cause.Topic
	})
	if slices.Equal(got, want) {
		return
	}
	report := f.t.Errorf
	if fatal {
		report = f.t.Fatalf
	}
	report("%s:\n%s\nwant:\n%s", when, strings.Join(got, "\n"), strings.Join(want, "\n"))
}

// TestRestartThenPollAfterAMissedChange: a syslog line said Gi0/3 went
// down; every poll says up (it came back before the next poll, its up line
// lost), so the first poll more than dedup_window after the line raised
// the interface_up that was missed. weir restarts, and the next poll says
// up again: the interface is in the state its last event said, no change.
// One interface_up in all, as without the restart. (The warm-up rebuilt
// the line's down as the object's state, but not the poll's up that
// answered it, so the first live poll raised interface_up a second time.)
func TestRestartThenPollAfterAMissedChange(t *testing.T) {
	f := newLinkRestart(t)
	down := f.t0.Add(5 * time.Second)

	// The first process: a poll, the line, polls within the window and
	// one past it, which raises the missed interface_up.
	opts := f.before()
	f.produce(telemetry.TopicRawSNMP, f.poll(f.t0, 1))
	stopM := startRunner(NewMetricsWorker(f.b, f.inv, opts...))
	waitCommitted(t, f.b, telemetry.TopicRawSNMP, 1)
	f.produce(telemetry.TopicRawSyslog, f.down(down))
	stopS := startRunner(NewWorker(f.b, f.inv, NewClassifier(), opts...))
	waitCommitted(t, f.b, telemetry.TopicRawSyslog, 1)
	f.produce(telemetry.TopicRawSNMP, f.poll(down.Add(10*time.Second), 1), f.poll(down.Add(40*time.Second), 1))
	waitCommitted(t, f.b, telemetry.TopicRawSNMP, 3)
	stopS()
	stopM()
	want := []string{"interface_down core9 gi0/3 from raw.syslog", "interface_up core9 gi0/3 from raw.snmp"}
	f.check("before the restart", true, want...)

	// The restart: workers as weir run starts them; the next poll, up.
	opts = f.after()
	defer startRunner(NewWorker(f.b, f.inv, NewClassifier(), opts...))()
	defer startRunner(NewMetricsWorker(f.b, f.inv, opts...))()
	f.produce(telemetry.TopicRawSNMP, f.poll(down.Add(45*time.Second), 1), f.poll(down.Add(50*time.Second), 1))
	waitCommitted(t, f.b, telemetry.TopicRawSNMP, 5)
	f.check("after the restart and two polls saying up", false, want...)
}
