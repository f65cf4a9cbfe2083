package enrich

import (
	"slices"
	"strings"
	"testing"
	"time"

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
