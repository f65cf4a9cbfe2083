package enrich

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/weirnet/weir/broker"
	"github.com/weirnet/weir/telemetry"
)

// TestTargetNamedBySysNameAfterFailingPolls: the inventory lists a device
// by its hostname alone ({name: mx1}), which the SNMP target polling it
// (mx1-mgmt, at an address no entry has) finds by the sysName its polls
// read. The device is down when the target is first polled: no sysName
// yet, so the outage is mx1-mgmt's, the device named as its target. The
// poll that answers again reads the sysName, and names the device mx1:
// the recovery is the outage's end all the same, said after a
// device_renamed from mx1-mgmt (as an inventory entry added for the
// target's address would), which moves the alert fired under the old
// name. Without it, device_reachable came under mx1 with the target as
// its object, the device_unreachable of mx1-mgmt never ended, and a
// later outage under mx1 was news beside it.
func TestTargetNamedBySysNameAfterFailingPolls(t *testing.T) {
	b, inv := openLog(t)
	targets := NewSNMPTargets([]SNMPTarget{{Name: "mx1-mgmt", Host: "198.51.100.7"}})
	opts := []WorkerOption{WithSharedEventRules(NewEventRules(30*time.Second, DefaultFlapThreshold, DefaultFlapWindow)),
		WithSNMPTargets(targets)}
	stop := startRunner(NewMetricsWorker(b, inv, opts...))
	defer stop()

	t0 := time.Now().Add(-5 * time.Minute)
	status := func(up int64, min int) telemetry.Metric {
		return telemetry.Metric{V: 1, Measurement: "snmp_status", Device: "mx1-mgmt", Source: "snmp",
			Tags: map[string]string{"agent": "198.51.100.7"}, Fields: map[string]any{"snmp_up": up}, Time: t0.Add(time.Duration(min) * time.Minute)}
	}
	system := func(min int) telemetry.Metric {
		return telemetry.Metric{V: 1, Measurement: "snmp_system", Device: "mx1-mgmt", Source: "snmp",
			Tags: map[string]string{"agent": "198.51.100.7"}, Fields: map[string]any{"sysName": "mx1"}, Time: t0.Add(time.Duration(min) * time.Minute)}
	}
	produceMetrics(t, b, []telemetry.Metric{status(0, 0), status(0, 1), system(2), status(1, 2)})
	waitCommitted(t, b, telemetry.TopicRawSNMP, 4)
	stop()

	got := eventsAs(t, b, func(ev telemetry.Event) string { return ev.Type + " " + ev.Device + " " + ev.Object })
	want := []string{
		"device_unreachable mx1-mgmt ",
		"device_renamed mx1 mx1-mgmt",
		"device_reachable mx1 mx1-mgmt",
	}
	if !slices.Equal(got, want) {
		t.Fatalf("events:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// TestNoRenameOfATargetNamedBySysNameBeforeARestart: the sysName named the
// device mx1 before its outage, which was published as mx1's; weir
// restarts during the outage, and its warm-up's window holds failed
// polls only (no sysName): the device is mx1-mgmt there. The poll that
// answers names it mx1 again, which is no rename: the outage ends with
// device_reachable alone.
func TestNoRenameOfATargetNamedBySysNameBeforeARestart(t *testing.T) {
	b, inv := openLog(t)
	targets := []SNMPTarget{{Name: "mx1-mgmt", Host: "198.51.100.7"}}
	t0 := time.Now().Add(-30 * time.Minute)
	status := func(up int64, min int) telemetry.Metric {
		return telemetry.Metric{V: 1, Measurement: "snmp_status", Device: "mx1-mgmt", Source: "snmp",
			Tags: map[string]string{"agent": "198.51.100.7"}, Fields: map[string]any{"snmp_up": up}, Time: t0.Add(time.Duration(min) * time.Minute)}
	}
	system := func(min int) telemetry.Metric {
		return telemetry.Metric{V: 1, Measurement: "snmp_system", Device: "mx1-mgmt", Source: "snmp",
			Tags: map[string]string{"agent": "198.51.100.7"}, Fields: map[string]any{"sysName": "mx1"}, Time: t0.Add(time.Duration(min) * time.Minute)}
	}
	produce := func(ms ...telemetry.Metric) {
		var recs []broker.Record
		for _, m := range ms {
			v, _, err := m.AppendJSON(nil, nil)
			if err != nil {
				t.Fatal(err)
			}
			recs = append(recs, broker.Record{Key: []byte(m.Device), Value: v, Timestamp: m.Time}) // as the poller stamps them
		}
		if err := b.Produce(context.Background(), telemetry.TopicRawSNMP, recs); err != nil {
			t.Fatal(err)
		}
	}
	opts := []WorkerOption{WithSharedEventRules(NewEventRules(30*time.Second, DefaultFlapThreshold, DefaultFlapWindow)),
		WithSNMPTargets(NewSNMPTargets(targets))}
	stop := startRunner(NewMetricsWorker(b, inv, opts...))
	produce(system(0), status(1, 0), status(0, 1), status(0, 27), status(0, 28))
	waitCommitted(t, b, telemetry.TopicRawSNMP, 5)
	stop()

	opts = []WorkerOption{WithSharedEventRules(restartRules(1, 30*time.Second, DefaultFlapThreshold, DefaultFlapWindow)),
		WithSNMPTargets(NewSNMPTargets(targets))}
	defer startRunner(NewMetricsWorker(b, inv, opts...))()
	produce(status(0, 29), system(30), status(1, 30))
	waitCommitted(t, b, telemetry.TopicRawSNMP, 8)
	got := eventsAs(t, b, func(ev telemetry.Event) string { return ev.Type + " " + ev.Device + " " + ev.Object })
	want := []string{"device_unreachable mx1 mx1-mgmt", "device_reachable mx1 mx1-mgmt"}
	if !slices.Equal(got, want) {
		t.Fatalf("events:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}
