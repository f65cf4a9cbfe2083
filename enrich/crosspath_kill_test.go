package enrich

import (
	"context"
	"fmt"
	"testing"
	"time"

	gpb "github.com/openconfig/gnmi/proto/gnmi"

	"github.com/weirnet/weir/broker"
	"github.com/weirnet/weir/broker/embedded"
	"github.com/weirnet/weir/collectors/gnmi"
	"github.com/weirnet/weir/telemetry"
)

// runPathsCrashChild is TestEnrichCrashChild for the "paths" kind: a
// syslog worker and a trap worker sharing their event rules, with
// de-duplication on, as weir run has them, until killed. It reports the
// events published and the records committed of the input topic behind.
func runPathsCrashChild(b *embedded.Broker, inv *Inventory, cls *Classifier) {
	rules := NewEventRules(DefaultDedupWindow, DefaultFlapThreshold, DefaultFlapWindow)
	rules.HoldUntilWarm(2)
	go NewWorker(b, inv, cls, WithSharedEventRules(rules), WithMemberID("logs")).Run(context.Background())
	go NewTrapWorker(b, inv, WithSharedEventRules(rules), WithMemberID("traps")).Run(context.Background())
	reportProgress(b, func() int {
		return min(committedInput(b, telemetry.TopicRawSyslog), committedInput(b, telemetry.TopicRawTraps))
	})
}

// reportProgress prints, until SIGKILL, "published N committed C"
// whenever the events topic has grown to N records or committed, the
// links whose every record is committed, to C (see runCrashChild).
func reportProgress(b *embedded.Broker, committed func() int) {
	for last := [2]int{-1, -1}; ; time.Sleep(time.Millisecond) {
		now := [2]int{countRecords(nil, b, telemetry.TopicEvents), committed()}
		if now != last {
			fmt.Printf("published %d committed %d\n", now[0], now[1])
			last = now
		}
	}
}

// linkDown is link i's going down as its device (one of 17) logs it and
// traps it: a syslog line and a linkDown trap, from the device's address.
func linkDown(t testing.TB, i int) (line, trap broker.Record) {
	dev, port := fmt.Sprintf("dev%d", i%17), i/17
	l := telemetry.Log{V: 1, Device: dev, Hostname: dev, SourceAddr: fmt.Sprintf("198.51.100.%d:514", i%17), Facility: 23, Severity: 3,
		Message: fmt.Sprintf("%%LINK-3-UPDOWN: Interface GigabitEthernet0/%d, changed state to down", port), ReceivedAt: time.Now()}
	tr := withIfName(rfc2863LinkDown(dev, port), port, fmt.Sprintf("Gi0/%d", port))
	tr.SourceAddr = fmt.Sprintf("198.51.100.%d:50000", i%17)
	return broker.Record{Key: []byte(dev), Value: l.AppendJSON(nil)}, broker.Record{Key: []byte(dev), Value: mustJSON(t, tr)}
}

// wantOneDownPerLink fails t unless the events topic of the log in dir
// has exactly one interface_down of each of links links.
func wantOneDownPerLink(t *testing.T, dir string, links int) {
	t.Helper()
	b, err := embedded.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	downs := map[string]int{}
	for _, l := range eventsAs(t, b, func(ev telemetry.Event) string { return ev.Type + " " + ev.Device + " " + ev.ObjectID }) {
		downs[l]++
	}
	for l, n := range downs {
		if n != 1 {
			t.Errorf("%s: %d events, want 1", l, n)
		}
	}
	if len(downs) != links {
		t.Errorf("%d links have an event, want %d", len(downs), links)
	}
}

// TestCrossPathExactlyOnceUnderKill kills a process enriching syslog and
// traps at random points, 20 times, then lets it finish. Each link went
// down once, and said so by a syslog line and a linkDown trap, which
// arrive together: each is one interface_down in the events topic, from
// either path, whatever the kills interrupted. (The crash tests above run
// without de-duplication, every record's event counted.)
func TestCrossPathExactlyOnceUnderKill(t *testing.T) {
	if testing.Short() {
		t.Skip("crash test in -short mode")
	}
	t.Parallel()
	dir := t.TempDir()
	made := 0
	add := func(b *embedded.Broker, n int) {
		lines, traps := make([]broker.Record, 0, n), make([]broker.Record, 0, n)
		for range n {
			line, trap := linkDown(t, made)
			lines, traps = append(lines, line), append(traps, trap)
			made++
		}
		// The line first or the trap, by turns.
		topics := [2]string{telemetry.TopicRawSyslog, telemetry.TopicRawTraps}
		recs := [2][]broker.Record{lines, traps}
		first := made / n % 2
		for i := range 2 {
			j := (first + i) % 2
			if err := b.Produce(context.Background(), topics[j], recs[j]); err != nil {
				t.Fatal(err)
			}
		}
	}
	links := killUntilDone(t, dir, "paths", telemetry.TopicEvents, 1, 3000, add)

	wantOneDownPerLink(t, dir, links)
}

// runStatePathsCrashChild is runPathsCrashChild for a state path and
// traps: a metrics worker on input (raw.snmp's polls, or raw.gnmi's
// updates, as weir run has one for gNMI targets) and a trap worker sharing
// their event rules. Each link has two input records (up, then down).
func runStatePathsCrashChild(b *embedded.Broker, inv *Inventory, input string) {
	rules := NewEventRules(DefaultDedupWindow, DefaultFlapThreshold, DefaultFlapWindow)
	rules.HoldUntilWarm(2)
	go NewMetricsWorker(b, inv, WithSharedEventRules(rules), WithMemberID("states"), WithInputTopic(input)).Run(context.Background())
	go NewTrapWorker(b, inv, WithSharedEventRules(rules), WithMemberID("traps")).Run(context.Background())
	reportProgress(b, func() int {
		return min(committedInput(b, input)/2, committedInput(b, telemetry.TopicRawTraps))
	})
}

// stateThenTrap is a killUntilDone addInput for a state path: each new
// link's state record up (to input, a second before now), its linkDown
// trap, then its state record down (now). state makes link port of dev's
// record; trap its trap.
func stateThenTrap(t *testing.T, input string, state func(dev string, port int, up bool, at time.Time) broker.Record,
	trap func(i int, dev string, port int) broker.Record) func(b *embedded.Broker, n int) {
	made := 0
	return func(b *embedded.Broker, n int) {
		var up, down, traps []broker.Record
		now := time.Now()
		for range n {
			dev, port := fmt.Sprintf("dev%d", made%17), made/17
			up = append(up, state(dev, port, true, now.Add(-time.Second)))
			down = append(down, state(dev, port, false, now))
			traps = append(traps, trap(made, dev, port))
			made++
		}
		for _, p := range []struct {
			topic string
			recs  []broker.Record
		}{{input, up}, {telemetry.TopicRawTraps, traps}, {input, down}} {
			if err := b.Produce(context.Background(), p.topic, p.recs); err != nil {
				t.Fatal(err)
			}
		}
	}
}

// metricRecord is m as a raw record of its device.
func metricRecord(t *testing.T, m telemetry.Metric) broker.Record {
	v, _, err := m.AppendJSON(nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	return broker.Record{Key: []byte(m.Device), Value: v, Timestamp: m.Time,
		Headers: []broker.Header{{Key: telemetry.HeaderSchema, Value: []byte(telemetry.SchemaMetric)}}}
}

// TestPollAndTrapExactlyOnceUnderKill is TestCrossPathExactlyOnceUnderKill
// for a poll and a trap: each link is polled up, then polled down as its
// linkDown trap comes; killed 20 times mid-work, the process gives one
// interface_down of each, from the poll or the trap.
func TestPollAndTrapExactlyOnceUnderKill(t *testing.T) {
	if testing.Short() {
		t.Skip("crash test in -short mode")
	}
	t.Parallel()
	dir := t.TempDir()
	row := func(dev string, port int, up bool, at time.Time) broker.Record {
		oper := int64(2)
		if up {
			oper = 1
		}
		return metricRecord(t, telemetry.Metric{V: telemetry.Version, Measurement: "snmp_interface", Device: dev, Source: "snmp",
			Tags:   map[string]string{"ifIndex": fmt.Sprint(port), "ifName": fmt.Sprintf("Gi0/%d", port)},
			Fields: map[string]any{"ifOperStatus": oper}, Time: at, ReceivedAt: at})
	}
	trap := func(i int, _ string, _ int) broker.Record {
		_, trap := linkDown(t, i)
		return trap
	}
	// Batches of 1,000 links, not 3,000: the metrics worker warms up on
	// all of raw.snmp at every restart (DefaultWarmup), so CPU grew with
	// the stream; without waiting for origins it still loses links.
	links := killUntilDone(t, dir, "pollpaths", telemetry.TopicEvents, 1, 1000, stateThenTrap(t, telemetry.TopicRawSNMP, row, trap))

	wantOneDownPerLink(t, dir, links)
}

// TestGNMIAndTrapExactlyOnceUnderKill is TestPollAndTrapExactlyOnceUnderKill
// with the link's state streamed by gNMI (on_change updates of
// oper-status, flattened by the gNMI collector) instead of polled: each
// link's stream says UP, then DOWN as its linkDown trap comes; killed 20
// times mid-work, the process gives one interface_down of each.
func TestGNMIAndTrapExactlyOnceUnderKill(t *testing.T) {
	if testing.Short() {
		t.Skip("crash test in -short mode")
	}
	t.Parallel()
	dir := t.TempDir()
	update := func(dev string, port int, up bool, at time.Time) broker.Record {
		oper := "DOWN"
		if up {
			oper = "UP"
		}
		n := &gpb.Notification{Timestamp: at.UnixNano(), Update: []*gpb.Update{{
			Path: &gpb.Path{Elem: []*gpb.PathElem{{Name: "interfaces"}, {Name: "interface", Key: map[string]string{"name": fmt.Sprintf("Ethernet%d", port)}},
				{Name: "state"}, {Name: "oper-status"}}},
			Val: &gpb.TypedValue{Value: &gpb.TypedValue_StringVal{StringVal: oper}}}}}
		ms := gnmi.Flatten(dev, n, at)
		if len(ms) != 1 {
			t.Fatalf("%d metrics of one update", len(ms))
		}
		return metricRecord(t, ms[0])
	}
	trap := func(i int, dev string, port int) broker.Record {
		tr := withIfName(rfc2863LinkDown(dev, port), port, fmt.Sprintf("Ethernet%d", port))
		tr.SourceAddr = fmt.Sprintf("198.51.100.%d:50000", i%17)
		return broker.Record{Key: []byte(dev), Value: mustJSON(t, tr)}
	}
	links := killUntilDone(t, dir, "gnmipaths", telemetry.TopicEvents, 1, 3000, stateThenTrap(t, telemetry.TopicRawGNMI, update, trap))

	wantOneDownPerLink(t, dir, links)
}
