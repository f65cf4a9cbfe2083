package enrich

import (
	"strings"
	"testing"
	"time"

	"github.com/weirnet/weir/broker"
	"github.com/weirnet/weir/broker/embedded"
	"github.com/weirnet/weir/telemetry"
)

// The tests of this file run a process's workers over a log, stop them,
// and start new ones (a restart: a new detector, its workers held until
// all are warm, as weir run starts them) before the next record of
// another path about the same change.

func interfaceDowns(t *testing.T, b *embedded.Broker) []string {
	var got []string
	for _, l := range eventsAs(t, b, func(ev telemetry.Event) string {
		return ev.Type + " " + ev.Device + " " + ev.Object + " from " + ev.Cause.Topic
	}) {
		if strings.HasPrefix(l, "interface_down ") {
			got = append(got, l)
		}
	}
	return got
}

// restartRules are a restarted process's event rules, shared by its
// workers (as many) and held until all are warm.
func restartRules(workers int, dedup time.Duration, threshold int, window time.Duration) *EventRules {
	rules := NewEventRules(dedup, threshold, window)
	rules.HoldUntilWarm(workers)
	return rules
}

// TestRestartThenSyslogRepeatOfPolledDown: an SNMP poll saw Gi0/3 go
// down and raised interface_down. weir restarts. Before the target's next
// poll, the device's syslog line for that same down arrives (IOS logs
// %LINK and %LINEPROTO; the line may also just be late). The metrics
// workers' status changes count for the detector after a restart, so the
// line is a repeat of the state held: one interface_down in all. (The
// syslog worker judged the line before the metrics worker warmed up, at
// the target's next poll, and published it again.)
func TestRestartThenSyslogRepeatOfPolledDown(t *testing.T) {
	b, inv := openLog(t)
	targets := []SNMPTarget{{Name: "core9", Host: "192.0.2.9"}}
	t0 := time.Now().Add(-time.Minute)
	rows := interfaceDownRows("core9", "192.0.2.9", t0)
	produceMetrics(t, b, rows)

	// The first process: the polls raise interface_down.
	opts := []WorkerOption{WithSharedEventRules(NewEventRules(time.Minute, DefaultFlapThreshold, DefaultFlapWindow)),
		WithSNMPTargets(NewSNMPTargets(targets))}
	stop := startRunner(NewMetricsWorker(b, inv, opts...))
	waitCommitted(t, b, telemetry.TopicRawSNMP, len(rows))
	stop()
	if got := interfaceDowns(t, b); len(got) != 1 {
		t.Fatalf("before the restart: %q", got)
	}

	// The restart: the process's metrics and syslog workers, as weir run
	// starts them; the syslog line comes before the next poll.
	rules := restartRules(2, time.Minute, DefaultFlapThreshold, DefaultFlapWindow)
	opts = []WorkerOption{WithSharedEventRules(rules), WithSNMPTargets(NewSNMPTargets(targets))}
	defer startRunner(NewMetricsWorker(b, inv, opts...))()
	defer startRunner(NewWorker(b, inv, NewClassifier(), opts...))()
	produceLine(t, b, "%LINK-3-UPDOWN: Interface GigabitEthernet0/3, changed state to down")
	waitCommitted(t, b, telemetry.TopicRawSyslog, 1)
	time.Sleep(200 * time.Millisecond)
	if got := interfaceDowns(t, b); len(got) != 1 {
		t.Errorf("one link down, %d interface_down events:\n%s", len(got), strings.Join(got, "\n"))
	}
}

// TestRestartThenPollOfTrapDown: a linkDown trap raised
// interface_down for Gi0/3, and weir restarted before the target's next
// poll. That poll sees Gi0/3 down: the same change, by another path,
// within dedup_window. One interface_down in all. (The trap warm-up holds
// back a trap whose names may still change, ifIndex only or a target the
// inventory does not name and whose sysName no poll gave yet, until a poll
// names it; the metrics worker judged the poll before the trap worker
// released the trap. The last case is not held.)
func TestRestartThenPollOfTrapDown(t *testing.T) {
	t.Parallel() // each case waits on workers' warm-ups, on a log of its own
	for _, tc := range []struct {
		name, target, addr string
		ifName             bool
	}{
		{"ifIndex only, inventory names the device", "edge1", "192.0.2.1", false},
		{"with ifName, no inventory entry", "core9", "192.0.2.9", true},
		{"with ifName, inventory names the device (control)", "edge1", "192.0.2.1", true},
	} {
		t.Run(tc.name, func(t *testing.T) { t.Parallel(); restartThenPollOfTrapDown(t, tc.target, tc.addr, tc.ifName) })
	}
}

func restartThenPollOfTrapDown(t *testing.T, target, addr string, ifName bool) {
	b, inv := openLog(t)
	targets := []SNMPTarget{{Name: target, Host: addr}}
	row := func(oper int64, at time.Time) []telemetry.Metric {
		return []telemetry.Metric{{V: 1, Measurement: "snmp_interface", Device: target, Source: "snmp",
			Tags:   map[string]string{"ifIndex": "3", "ifName": "Gi0/3", "ifDescr": "GigabitEthernet0/3", "agent": addr},
			Fields: map[string]any{"ifOperStatus": oper}, Time: at}}
	}
	produceMetrics(t, b, row(1, time.Now().Add(-10*time.Second)))
	tr := rfc2863LinkDown(addr, 3)
	if ifName {
		tr.Varbinds = append(tr.Varbinds, telemetry.Varbind{OID: "1.3.6.1.2.1.31.1.1.1.1.3", Name: "ifName.3", Type: "octet_string", Value: "Gi0/3"})
	}

	opts := []WorkerOption{WithSharedEventRules(NewEventRules(time.Minute, DefaultFlapThreshold, DefaultFlapWindow)),
		WithSNMPTargets(NewSNMPTargets(targets))}
	stopM := startRunner(NewMetricsWorker(b, inv, opts...))
	waitCommitted(t, b, telemetry.TopicRawSNMP, 1)
	produceTrap(t, b, tr)
	stopT := startRunner(NewTrapWorker(b, inv, opts...))
	waitCommitted(t, b, telemetry.TopicRawTraps, 1)
	stopT()
	stopM()
	if got := interfaceDowns(t, b); len(got) != 1 || !strings.Contains(got[0], "Gi0/3") {
		t.Fatalf("before the restart: %q", got)
	}

	// The restart: workers as weir run starts them; the next poll.
	rules := restartRules(2, time.Minute, DefaultFlapThreshold, DefaultFlapWindow)
	opts = []WorkerOption{WithSharedEventRules(rules), WithSNMPTargets(NewSNMPTargets(targets))}
	defer startRunner(NewTrapWorker(b, inv, opts...))()
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		rules.d.mu.Lock()
		_, ok := rules.d.read[broker.TopicPartition{Topic: telemetry.TopicRawTraps, Partition: 0}]
		n := len(rules.d.read)
		rules.d.mu.Unlock()
		if ok || n > 0 || time.Now().After(deadline) {
			break
		}
	}
	produceMetrics(t, b, row(2, time.Now()))
	defer startRunner(NewMetricsWorker(b, inv, opts...))()
	waitCommitted(t, b, telemetry.TopicRawSNMP, 2)
	time.Sleep(1500 * time.Millisecond)
	if got := interfaceDowns(t, b); len(got) != 1 {
		t.Errorf("one link down, %d interface_down events:\n%s", len(got), strings.Join(got, "\n"))
	}
}

// TestRestartFlapCountsPolledChanges: polls saw Gi0/3 go down, up and
// down (three changes, flap threshold 3); weir restarted; a syslog line
// reports it up before the next poll: the fourth change within the flap
// window, which raises interface_flapping (count 4), as it would have
// without the restart.
func TestRestartFlapCountsPolledChanges(t *testing.T) {
	b, inv := openLog(t)
	targets := []SNMPTarget{{Name: "core9", Host: "192.0.2.9"}}
	t0 := time.Now().Add(-time.Minute)
	var rows []telemetry.Metric
	for i, oper := range []int64{1, 2, 1, 2} {
		rows = append(rows, telemetry.Metric{V: 1, Measurement: "snmp_interface", Device: "core9", Source: "snmp",
			Tags:   map[string]string{"ifIndex": "3", "ifName": "Gi0/3", "agent": "192.0.2.9"},
			Fields: map[string]any{"ifOperStatus": oper}, Time: t0.Add(time.Duration(i) * 10 * time.Second)})
	}
	produceMetrics(t, b, rows)
	opts := []WorkerOption{WithSharedEventRules(NewEventRules(10*time.Second, 3, 10*time.Minute)),
		WithSNMPTargets(NewSNMPTargets(targets))}
	stop := startRunner(NewMetricsWorker(b, inv, opts...))
	waitCommitted(t, b, telemetry.TopicRawSNMP, len(rows))
	stop()

	rules := restartRules(2, 10*time.Second, 3, 10*time.Minute)
	opts = []WorkerOption{WithSharedEventRules(rules), WithSNMPTargets(NewSNMPTargets(targets))}
	defer startRunner(NewMetricsWorker(b, inv, opts...))()
	defer startRunner(NewWorker(b, inv, NewClassifier(), opts...))()
	produceLine(t, b, "%LINEPROTO-5-UPDOWN: Line protocol on Interface GigabitEthernet0/3, changed state to up")
	waitCommitted(t, b, telemetry.TopicRawSyslog, 1)
	time.Sleep(200 * time.Millisecond)
	got := eventsAs(t, b, func(ev telemetry.Event) string { return ev.Type + " " + ev.Object + " from " + ev.Cause.Topic })
	if !strings.Contains(strings.Join(got, "\n"), "interface_flapping") {
		t.Errorf("4 changes over threshold 3, no interface_flapping:\n%s", strings.Join(got, "\n"))
	}
}

// TestRestartThenPollOfColdStart: a coldStart trap raised
// device_rebooted, and weir restarted (kill -9, or a stop) before the
// target's next poll. That poll, the first after the restart, sees
// sysUpTime gone back: the same restart (boot times 100 ms apart). One
// device_rebooted in all, as without the restart.
func TestRestartThenPollOfColdStart(t *testing.T) {
	for _, tc := range []struct{ target, addr string }{{"core9", "192.0.2.9"}, {"edge1", "192.0.2.1"}} {
		t.Run(tc.target, func(t *testing.T) {
			b, inv := openLog(t)
			targets := []SNMPTarget{{Name: tc.target, Host: tc.addr}}
			sys := func(uptime uint32, at time.Time) []telemetry.Metric {
				return []telemetry.Metric{{V: 1, Measurement: "snmp_system", Device: tc.target, Source: "snmp",
					Tags: map[string]string{"agent": tc.addr}, Fields: map[string]any{"sysName": tc.target}, Time: at, Uptime: uptime}}
			}
			boot := time.Now().Add(-2 * time.Second)
			produceMetrics(t, b, sys(8_640_000, boot.Add(-3*time.Second))) // a day up
			opts := []WorkerOption{WithSharedEventRules(NewEventRules(time.Minute, DefaultFlapThreshold, DefaultFlapWindow)),
				WithSNMPTargets(NewSNMPTargets(targets))}
			stopM := startRunner(NewMetricsWorker(b, inv, opts...))
			waitCommitted(t, b, telemetry.TopicRawSNMP, 1)
			tr := telemetry.Trap{V: 1, Device: tc.addr, Version: "2c", TrapOID: "1.3.6.1.6.3.1.1.5.1", TrapName: "coldStart",
				SourceAddr: tc.addr + ":50000", ReceivedAt: boot.Add(time.Second), Uptime: 100}
			produceTrap(t, b, tr)
			stopT := startRunner(NewTrapWorker(b, inv, opts...))
			waitCommitted(t, b, telemetry.TopicRawTraps, 1)
			stopT()
			stopM()

			// The restart: its first poll, 2 s after the boot.
			rules := restartRules(2, time.Minute, DefaultFlapThreshold, DefaultFlapWindow)
			opts = []WorkerOption{WithSharedEventRules(rules), WithSNMPTargets(NewSNMPTargets(targets))}
			produceMetrics(t, b, sys(210, time.Now()))
			defer startRunner(NewTrapWorker(b, inv, opts...))()
			defer startRunner(NewMetricsWorker(b, inv, opts...))()
			waitCommitted(t, b, telemetry.TopicRawSNMP, 2)
			time.Sleep(1500 * time.Millisecond)
			got := eventsAs(t, b, func(ev telemetry.Event) string {
				return ev.Type + " " + ev.Device + " boot " + ev.Time.Format("15:04:05.000") + " from " + ev.Cause.Topic
			})
			if len(got) != 1 {
				t.Errorf("one restart, %d events:\n%s", len(got), strings.Join(got, "\n"))
			}
		})
	}
}

// TestRestartKeepsAChangeAfterAPolledOne: a syslog line reported Gi0/3
// down; a poll then saw it up again (interface_up, from raw.snmp); weir
// restarted; the link goes down again and its syslog line arrives before
// the target's next poll. That is a change (up -> down), published as
// interface_down. (With the syslog warm-up's old down in the detector and
// not yet the polled up, the new down was taken for a repeat and the
// link, down, had interface_up for its last event.)
func TestRestartKeepsAChangeAfterAPolledOne(t *testing.T) {
	b, inv := openLog(t)
	targets := []SNMPTarget{{Name: "core9", Host: "192.0.2.9"}}
	const line = "%LINEPROTO-5-UPDOWN: Line protocol on Interface GigabitEthernet0/3, changed state to "
	row := func(oper int64, at time.Time) telemetry.Metric {
		return telemetry.Metric{V: 1, Measurement: "snmp_interface", Device: "core9", Source: "snmp",
			Tags:   map[string]string{"ifIndex": "3", "ifName": "Gi0/3", "agent": "192.0.2.9"},
			Fields: map[string]any{"ifOperStatus": oper}, Time: at}
	}
	opts := []WorkerOption{WithSharedEventRules(NewEventRules(10*time.Second, DefaultFlapThreshold, DefaultFlapWindow)),
		WithSNMPTargets(NewSNMPTargets(targets))}
	stopS := startRunner(NewWorker(b, inv, NewClassifier(), opts...))
	stopM := startRunner(NewMetricsWorker(b, inv, opts...))
	produceLine(t, b, line+"down")
	waitCommitted(t, b, telemetry.TopicRawSyslog, 1)
	now := time.Now()
	produceMetrics(t, b, []telemetry.Metric{row(2, now.Add(-5*time.Second)), row(1, now)})
	waitCommitted(t, b, telemetry.TopicRawSNMP, 2)
	stopM()
	stopS()

	rules := restartRules(2, 10*time.Second, DefaultFlapThreshold, DefaultFlapWindow)
	opts = []WorkerOption{WithSharedEventRules(rules), WithSNMPTargets(NewSNMPTargets(targets))}
	defer startRunner(NewMetricsWorker(b, inv, opts...))()
	defer startRunner(NewWorker(b, inv, NewClassifier(), opts...))()
	produceLine(t, b, line+"down")
	waitCommitted(t, b, telemetry.TopicRawSyslog, 2)
	produceMetrics(t, b, []telemetry.Metric{row(2, time.Now())}) // the next poll
	waitCommitted(t, b, telemetry.TopicRawSNMP, 3)
	time.Sleep(200 * time.Millisecond)
	got := eventsAs(t, b, func(ev telemetry.Event) string {
		return ev.Time.Format("15:04:05.000") + " " + ev.Type + " " + ev.Object + " from " + ev.Cause.Topic
	})
	if n := strings.Count(strings.Join(got, "\n"), "interface_down"); n != 2 {
		t.Errorf("down, up, down: %d interface_down events, want 2:\n%s", n, strings.Join(got, "\n"))
	}
}
