package enrich

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/weirnet/weir/broker"
	"github.com/weirnet/weir/collectors/syslog"
	"github.com/weirnet/weir/telemetry"
)

// TestOSPFTrapEndsTheDownUnderItsSpellingAfterARestart: a Junos device
// whose vendor the inventory does not give sends ospfNbrStateChange down
// before any line of it: the down is published under the neighbor's
// router ID. A line of it then shows Junos. weir restarts, and the trap
// warm-up spells the trap by the neighbor's address, as the lines read
// back by then say: the syslog warm-up, which runs beside it, read the
// line first, or the trap waited for its SNMP target's sysName until every
// warm-up was done. The trap up after the restart must end the down as it
// was published, under the router ID: else that alert stays open for good.
func TestOSPFTrapEndsTheDownUnderItsSpellingAfterARestart(t *testing.T) {
	for _, c := range []struct {
		name    string
		inv     string       // added to testInventory
		targets []SNMPTarget // polled
		first   bool         // the syslog warm-up reads the line before the trap one reads the trap
	}{
		{"the line read back first", "  - {name: mx9, address: 198.51.100.9}\n", nil, true},
		{"the trap held for its target's sysName", "", []SNMPTarget{{Name: "mx9", Host: "198.51.100.9"}}, false},
	} {
		t.Run(c.name, func(t *testing.T) { ospfSpellingAcrossARestart(t, c.inv, c.targets, c.first) })
	}
}

func ospfSpellingAcrossARestart(t *testing.T, devices string, targets []SNMPTarget, lineFirst bool) {
	b := openBroker(t)
	inv, _ := ParseInventory([]byte(testInventory + devices))
	trap := func(state int) telemetry.Trap {
		tr := ospfNbrDownTrap("198.51.100.9", "10.0.0.6", "2.2.2.2")
		tr.Varbinds[4].Value = state
		tr.V, tr.Version, tr.ReceivedAt, tr.SourceAddr = 1, "2c", time.Now(), "198.51.100.9:50000"
		return tr
	}
	var p syslog.Parser
	r := receivedRecord(&p, "<29>Nov 29 14:02:11 mx9 mgd[4321]: UI_COMMIT: User 'netops' requested 'commit' operation (comment: none)")
	var l telemetry.Log
	if err := json.Unmarshal(r.Value, &l); err != nil {
		t.Fatal(err)
	}
	l.SourceAddr, l.ReceivedAt = "198.51.100.9:514", time.Now()
	line := broker.Record{Key: []byte(l.Device), Value: l.AppendJSON(nil)}
	events := func() []string {
		var got []string
		for _, e := range eventsAs(t, b, func(ev telemetry.Event) string { return ev.Type + " " + ev.Device + " " + ev.Object }) {
			if strings.HasPrefix(e, "ospf_neighbor_") {
				got = append(got, e)
			}
		}
		return got
	}

	// The first process: the trap down, then the device's first line.
	opts := []WorkerOption{WithSharedEventRules(NewEventRules(DefaultDedupWindow, DefaultFlapThreshold, DefaultFlapWindow)),
		WithSNMPTargets(NewSNMPTargets(targets))}
	stopT := startRunner(NewTrapWorker(b, inv, opts...))
	stopS := startRunner(NewWorker(b, inv, NewClassifier(), opts...))
	produceTrap(t, b, trap(1)) // down
	waitCommitted(t, b, telemetry.TopicRawTraps, 1)
	if err := b.Produce(context.Background(), telemetry.TopicRawSyslog, []broker.Record{line}); err != nil {
		t.Fatal(err)
	}
	waitCommitted(t, b, telemetry.TopicRawSyslog, 1)
	stopT()
	stopS()
	if got := events(); len(got) != 1 || got[0] != "ospf_neighbor_down mx9 2.2.2.2" {
		t.Fatalf("before the restart: %q, want the down under the router ID", got)
	}

	// The restart.
	rules := restartRules(2, DefaultDedupWindow, DefaultFlapThreshold, DefaultFlapWindow)
	if lineFirst {
		// The warm-ups run side by side: noted beforehand, as the
		// syslog one would have.
		rules.d.vendors.note("mx9", SyslogInfo{Vendor: VendorJunos})
	}
	opts = []WorkerOption{WithSharedEventRules(rules), WithSNMPTargets(NewSNMPTargets(targets))}
	defer startRunner(NewWorker(b, inv, NewClassifier(), opts...))()
	defer startRunner(NewTrapWorker(b, inv, opts...))()
	produceTrap(t, b, trap(8)) // full
	waitCommitted(t, b, telemetry.TopicRawTraps, 2)
	want := []string{"ospf_neighbor_down mx9 2.2.2.2", "ospf_neighbor_up mx9 2.2.2.2"}
	if got := events(); strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("after the restart:\n%s\nwant the down ended under its spelling:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	// Down again: a change, named by address now as the device's lines
	// do (no down the warm-up spelt so is held).
	produceTrap(t, b, trap(1))
	waitCommitted(t, b, telemetry.TopicRawTraps, 3)
	want = append(want, "ospf_neighbor_down mx9 10.0.0.6")
	if got := events(); strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("down again:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}
