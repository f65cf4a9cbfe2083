package enrich

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/weirnet/weir/broker"
	"github.com/weirnet/weir/broker/embedded"
	"github.com/weirnet/weir/telemetry"
)

func TestTrapWorker(t *testing.T) {
	b, err := embedded.Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	now := time.Now()
	traps := []telemetry.Trap{
		{V: 1, Device: "edge1", Version: "2c", TrapOID: "1.3.6.1.6.3.1.1.5.3", TrapName: "linkDown", SourceAddr: "192.0.2.1:50000", ReceivedAt: now,
			Varbinds: []telemetry.Varbind{{OID: "1.3.6.1.2.1.2.2.1.1.3", Name: "ifIndex", Type: "Integer", Value: 3}, {OID: "1.3.6.1.2.1.2.2.1.2.3", Name: "ifDescr", Type: "OctetString", Value: "Gi0/3"}}},
		{V: 1, Device: "edge1", Version: "2c", TrapName: "coldStart", SourceAddr: "192.0.2.1:50000", ReceivedAt: now},
		{V: 1, Device: "edge1", Version: "2c", TrapName: "bgpBackwardTransNotification", SourceAddr: "192.0.2.1:50000", ReceivedAt: now,
			Varbinds: []telemetry.Varbind{{OID: "1.3.6.1.2.1.15.3.1.2.10.0.0.9", Name: "bgpPeerState", Type: "Integer", Value: 1}}},
		{V: 1, Device: "edge1", Version: "2c", TrapName: "authenticationFailure", SourceAddr: "192.0.2.1:50000", ReceivedAt: now},
	}
	var recs []broker.Record
	for _, tr := range traps {
		v, _ := json.Marshal(&tr)
		recs = append(recs, broker.Record{Key: []byte(tr.Device), Value: v})
	}
	b.Produce(context.Background(), telemetry.TopicRawTraps, recs)
	got := map[string]string{}
	for _, ev := range trapEvents(t, b, 3) {
		got[ev.Type] = ev.Object
		if ev.Tags["site"] != "ams1" || ev.Cause.Topic != telemetry.TopicRawTraps {
			t.Errorf("event %+v", ev)
		}
		if want := map[string]string{"interface_down": "error", "device_rebooted": "warning", "bgp_peer_down": "error"}[ev.Type]; ev.Severity != want {
			t.Errorf("%s: severity %q, want %q", ev.Type, ev.Severity, want)
		}
	}
	want := map[string]string{"interface_down": "Gi0/3", "device_rebooted": "", "bgp_peer_down": "10.0.0.9"}
	if len(got) != len(want) {
		t.Fatalf("events %v, want %v", got, want)
	}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s: object %q, want %q", k, got[k], v)
		}
	}
}

// trapEvents runs a trap worker (testInventory's) over b's raw.traps
// until events holds n events or 10 s have passed, and returns them.
func trapEvents(t *testing.T, b *embedded.Broker, n int) []telemetry.Event {
	t.Helper()
	inv, _ := ParseInventory([]byte(testInventory))
	stop := startRunner(NewTrapWorker(b, inv))
	for deadline := time.Now().Add(10 * time.Second); len(readTopic(t, b, telemetry.TopicEvents)) < n && time.Now().Before(deadline); {
		time.Sleep(20 * time.Millisecond)
	}
	stop()
	var evs []telemetry.Event
	eventsAs(t, b, func(ev telemetry.Event) string { evs = append(evs, ev); return "" })
	return evs
}

// TestTrapWorkerWarmsUpIdlePartitions: a trap worker started after
// another stopped rebuilds the flap state of the traps before, though no
// trap comes after the restart.
func TestTrapWorkerWarmsUpIdlePartitions(t *testing.T) {
	b, err := embedded.Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	var recs []broker.Record
	for i := range 4 {
		name, oid := "linkDown", "1.3.6.1.6.3.1.1.5.3"
		if i%2 == 1 {
			name, oid = "linkUp", "1.3.6.1.6.3.1.1.5.4"
		}
		tr := telemetry.Trap{V: 1, Device: "edge1", Version: "2c", TrapOID: oid, TrapName: name, SourceAddr: "192.0.2.1:50000", ReceivedAt: time.Now(),
			Varbinds: []telemetry.Varbind{{OID: "1.3.6.1.2.1.2.2.1.2.3", Name: "ifDescr", Type: "OctetString", Value: "Gi0/3"}}}
		v, _ := json.Marshal(&tr)
		recs = append(recs, broker.Record{Key: []byte(tr.Device), Value: v})
	}
	if err := b.Produce(context.Background(), telemetry.TopicRawTraps, recs); err != nil {
		t.Fatal(err)
	}
	inv, _ := ParseInventory([]byte(testInventory))
	// A process's trap worker, until it holds the object as flapping.
	run := func(rules *EventRules) {
		t.Helper()
		defer startRunner(NewTrapWorker(b, inv, WithSharedEventRules(rules)))()
		waitUntil(t, "flapping", func() bool { return len(flappingObjects(rules)) == 1 })
	}
	run(NewEventRules(0, 3, time.Minute))
	run(NewEventRules(0, 3, time.Minute))
	if n := len(readTopic(t, b, telemetry.TopicEvents)); n != 5 {
		t.Errorf("%d events, want the 4 changes and one interface_flapping, published once", n)
	}
}

// TestTrapObjectFromCollectorVarbinds: the trap collector names a table's
// varbinds with their instance ("ifDescr.3"); the event's object is the
// interface all the same, and a large ifIndex is written whole.
func TestTrapObjectFromCollectorVarbinds(t *testing.T) {
	inv, _ := ParseInventory([]byte(testInventory))
	w := NewTrapWorker(nil, inv)
	for _, c := range []struct {
		vbs  []telemetry.Varbind
		want string
	}{
		{[]telemetry.Varbind{{OID: "1.3.6.1.2.1.2.2.1.1.3", Name: "ifIndex.3", Type: "integer", Value: 3},
			{OID: "1.3.6.1.2.1.2.2.1.2.3", Name: "ifDescr.3", Type: "octet_string", Value: "Gi0/3"}}, "Gi0/3"},
		{[]telemetry.Varbind{{OID: "1.3.6.1.2.1.2.2.1.1.436207616", Name: "ifIndex.436207616", Type: "integer", Value: 436207616}}, "ifIndex 436207616"},
		// No ifIndex varbind, only the status columns: their instance.
		{[]telemetry.Varbind{{OID: "1.3.6.1.2.1.2.2.1.8.3", Name: "ifOperStatus.3", Type: "integer", Value: 2}}, "ifIndex 3"},
		{[]telemetry.Varbind{{OID: ".1.3.6.1.2.1.31.1.1.1.15.7", Name: "ifHighSpeed.7", Type: "gauge32", Value: 1000}}, "ifIndex 7"},
		{[]telemetry.Varbind{{OID: "1.3.6.1.2.1.2.2.1.8", Name: "ifOperStatus", Type: "integer", Value: 2}}, ""},         // no instance
		{[]telemetry.Varbind{{OID: "1.3.6.1.2.1.2.2.1.8.3.1", Name: "ifOperStatus.3.1", Type: "integer", Value: 2}}, ""}, // not an ifIndex
	} {
		tr := telemetry.Trap{V: 1, Device: "edge1", TrapOID: "1.3.6.1.6.3.1.1.5.3", TrapName: "linkDown",
			SourceAddr: "192.0.2.1:50000", ReceivedAt: time.Now(), Varbinds: c.vbs}
		v, _ := json.Marshal(&tr)
		var back telemetry.Trap // as the worker reads it
		if err := json.Unmarshal(v, &back); err != nil {
			t.Fatal(err)
		}
		ev, ok := w.eventOf(&back, &broker.Record{Topic: "raw.traps"})
		if !ok || ev.Object != c.want {
			t.Errorf("object %q, want %q", ev.Object, c.want)
		}
	}
}

// TestTrapNamedByPolledIfIndex: a linkDown trap as RFC 2863 defines it
// (ifIndex, ifAdminStatus and ifOperStatus, no name) about an interface
// the device's SNMP polls name is that interface's event: the same link
// down seen by a poll and by the trap is one event. A trap about an
// interface no poll named keeps "ifIndex N".
func TestTrapNamedByPolledIfIndex(t *testing.T) {
	t0 := time.Now().Add(-time.Minute)
	rows := interfaceDownRows("edge1", "192.0.2.1", t0)
	traps := []telemetry.Trap{rfc2863LinkDown("192.0.2.1", 3), rfc2863LinkDown("192.0.2.1", 9)} // polled, and not
	got := pollsThenTraps(t, []SNMPTarget{{Name: "edge1", Host: "192.0.2.1"}}, rows, traps, 2)
	want := []string{"interface_down edge1 Gi0/3 site=ams1 from raw.snmp", "interface_down edge1 ifIndex 9 site=ams1 from raw.traps"}
	if !slices.Equal(got, want) {
		t.Fatalf("events:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// TestTrapFromPolledAddress: a trap from an address the inventory does
// not name (not listed, or only in a CIDR range) but an SNMP target of the
// config polls takes the target's name, as the device's polls do, so their
// events are one; an address two targets poll (agents per port) names
// neither, and a target polled by DNS name names no address.
func TestTrapFromPolledAddress(t *testing.T) {
	t0 := time.Now().Add(-time.Minute)
	rows := append(interfaceDownRows("core9", "192.0.2.9", t0), interfaceDownRows("sw1", "10.1.1.1", t0)...)
	coldStart := func(from string) telemetry.Trap {
		return telemetry.Trap{V: 1, Device: from, Version: "2c", TrapOID: "1.3.6.1.6.3.1.1.5.1", TrapName: "coldStart",
			SourceAddr: from + ":50000", ReceivedAt: time.Now()}
	}
	traps := []telemetry.Trap{rfc2863LinkDown("192.0.2.9", 3), rfc2863LinkDown("10.1.1.1", 3),
		coldStart("192.0.2.9"), coldStart("10.1.1.1"), coldStart("127.0.0.1")}
	targets := []SNMPTarget{{Name: "core9", Host: "192.0.2.9"}, {Name: "sw1", Host: "10.1.1.1"}, {Name: "simA", Host: "127.0.0.1"}, {Name: "simB", Host: "127.0.0.1"}, {Name: "dns", Host: "router.example.net"}}
	got := pollsThenTraps(t, targets, rows, traps, 5)
	want := []string{ // sorted
		"device_rebooted 127.0.0.1  site= from raw.traps",
		"device_rebooted core9  site= from raw.traps",
		"device_rebooted sw1  site=lab from raw.traps", // its address is in the lab range
		"interface_down core9 Gi0/3 site= from raw.snmp",
		"interface_down sw1 Gi0/3 site=lab from raw.snmp",
	}
	slices.Sort(got)
	if !slices.Equal(got, want) {
		t.Fatalf("events:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// interfaceDownRows are a target's SNMP status row and two polls of its
// interface 3 (Gi0/3), up then down.
func interfaceDownRows(target, agent string, t0 time.Time) []telemetry.Metric {
	rows := []telemetry.Metric{{V: 1, Measurement: "snmp_status", Device: target, Source: "snmp",
		Tags: map[string]string{"agent": agent}, Fields: map[string]any{"snmp_up": int64(1)}, Time: t0}}
	for i, oper := range []int64{1, 2} {
		rows = append(rows, telemetry.Metric{V: 1, Measurement: "snmp_interface", Device: target, Source: "snmp",
			Tags:   map[string]string{"ifIndex": "3", "ifName": "Gi0/3", "ifDescr": "GigabitEthernet0/3", "agent": agent},
			Fields: map[string]any{"ifOperStatus": oper}, Time: t0.Add(time.Duration(i) * 30 * time.Second)})
	}
	return rows
}

// rfc2863LinkDown is a linkDown trap from address as RFC 2863 defines
// it: ifIndex, ifAdminStatus and ifOperStatus of the interface, no name.
func rfc2863LinkDown(from string, index int) telemetry.Trap {
	in := fmt.Sprint(index)
	return telemetry.Trap{V: 1, Device: from, Version: "2c", TrapOID: "1.3.6.1.6.3.1.1.5.3", TrapName: "linkDown",
		SourceAddr: from + ":50000", ReceivedAt: time.Now(), Varbinds: []telemetry.Varbind{
			{OID: "1.3.6.1.2.1.2.2.1.1." + in, Name: "ifIndex." + in, Type: "integer", Value: index},
			{OID: "1.3.6.1.2.1.2.2.1.7." + in, Name: "ifAdminStatus." + in, Type: "integer", Value: 1},
			{OID: "1.3.6.1.2.1.2.2.1.8." + in, Name: "ifOperStatus." + in, Type: "integer", Value: 2}}}
}

// pollsThenTraps runs a metrics worker over rows until it has committed
// them all, then a trap worker sharing its event rules (as weir run
// shares them) over traps likewise, and returns the events (want of
// them) as "type device object site=S from topic".
func pollsThenTraps(t *testing.T, targets []SNMPTarget, rows []telemetry.Metric, traps []telemetry.Trap, want int) []string {
	t.Helper()
	var recs []broker.Record
	for _, tr := range traps {
		v, _ := json.Marshal(&tr)
		recs = append(recs, broker.Record{Key: []byte(tr.Device), Value: v})
	}
	b := pollsThen(t, targets, rows, telemetry.TopicRawTraps, recs, func(b broker.Broker, inv *Inventory, opts ...WorkerOption) runner {
		return NewTrapWorker(b, inv, opts...)
	})
	return eventLines(t, b, want)
}

type runner interface{ Run(context.Context) error }

// pollsThen runs a metrics worker over rows until it has committed them
// all, then the worker next makes over recs of topic likewise, both given
// the SNMP targets and sharing event rules (as weir run has them); it
// returns the broker, open until the test ends.
func pollsThen(t *testing.T, targets []SNMPTarget, rows []telemetry.Metric, topic string, recs []broker.Record,
	next func(broker.Broker, *Inventory, ...WorkerOption) runner) *embedded.Broker {
	t.Helper()
	b, err := embedded.Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { b.Close() })
	produceMetrics(t, b, rows)
	inv, _ := ParseInventory([]byte(testInventory))
	opts := []WorkerOption{WithSharedEventRules(NewEventRules(time.Minute, DefaultFlapThreshold, DefaultFlapWindow)),
		WithSNMPTargets(NewSNMPTargets(targets))}
	run := func(w runner, input string, n int) {
		t.Helper()
		defer startRunner(w)()
		waitCommitted(t, b, input, n)
	}
	run(NewMetricsWorker(b, inv, opts...), telemetry.TopicRawSNMP, len(rows))
	if err := b.Produce(context.Background(), topic, recs); err != nil {
		t.Fatal(err)
	}
	run(next(b, inv, opts...), topic, len(recs))
	return b
}

// eventLines are the events in b as "type device object site=S from
// topic"; there should be want of them.
func eventLines(t *testing.T, b *embedded.Broker, want int) []string {
	t.Helper()
	got := eventsAs(t, b, func(ev telemetry.Event) string {
		return ev.Type + " " + ev.Device + " " + ev.Object + " site=" + ev.Tags["site"] + " from " + ev.Cause.Topic
	})
	if len(got) != want {
		t.Errorf("%d events, want %d", len(got), want)
	}
	return got
}

// wantEventLines fails the test unless the events are want, as eventLines
// has them.
func wantEventLines(t *testing.T, b *embedded.Broker, want []string) {
	t.Helper()
	if got := eventLines(t, b, len(want)); !slices.Equal(got, want) {
		t.Fatalf("events:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// TestSyslogFromPolledAddress: a syslog line without a hostname (as IOS
// sends them unless told otherwise), or with an address for one, from an
// address an SNMP target polls and the inventory does not name is that
// target's: its link down is the one the polls saw, and its enriched
// record carries the target's name. A line with a hostname keeps it.
func TestSyslogFromPolledAddress(t *testing.T) {
	t0 := time.Now().Add(-time.Minute)
	line := func(host, msg string) broker.Record {
		l := telemetry.Log{V: 1, Hostname: host, Device: cmp.Or(host, "192.0.2.9"), SourceAddr: "192.0.2.9:514",
			Facility: 23, Severity: 3, Message: msg, ReceivedAt: time.Now()}
		return broker.Record{Key: []byte(l.Device), Value: l.AppendJSON(nil)}
	}
	recs := []broker.Record{
		line("", "%LINEPROTO-5-UPDOWN: Line protocol on Interface GigabitEthernet0/3, changed state to down"), // the polls' change
		line("192.0.2.9", "%LINEPROTO-5-UPDOWN: Line protocol on Interface GigabitEthernet0/4, changed state to down"),
		line("edge-x", "%LINEPROTO-5-UPDOWN: Line protocol on Interface GigabitEthernet0/5, changed state to down"),
	}
	b := pollsThen(t, []SNMPTarget{{Name: "core9", Host: "192.0.2.9"}}, interfaceDownRows("core9", "192.0.2.9", t0), telemetry.TopicRawSyslog, recs,
		func(b broker.Broker, inv *Inventory, opts ...WorkerOption) runner {
			return NewWorker(b, inv, NewClassifier(), opts...)
		})
	got := eventLines(t, b, 3)
	slices.Sort(got)
	want := []string{
		"interface_down core9 Gi0/3 site= from raw.snmp",
		"interface_down core9 GigabitEthernet0/4 site= from raw.syslog",
		"interface_down edge-x GigabitEthernet0/5 site= from raw.syslog",
	}
	if !slices.Equal(got, want) {
		t.Fatalf("events:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	var devices []string
	for _, r := range readTopic(t, b, telemetry.TopicEnrichedSyslog) {
		var e telemetry.EnrichedLog
		json.Unmarshal(r.Value, &e)
		devices = append(devices, e.Device+" key "+string(r.Key))
	}
	slices.Sort(devices)
	if want := []string{"core9 key core9", "core9 key core9", "edge-x key edge-x"}; !slices.Equal(devices, want) {
		t.Fatalf("enriched.syslog devices %v, want %v", devices, want)
	}
}

// TestTrapWorkerCountsEveryUnknownTrap: a trap from a device the inventory
// does not know is counted whether or not it becomes an event (an
// enterprise trap, authenticationFailure), once: not again when a warm-up
// reads it back.
func TestTrapWorkerCountsEveryUnknownTrap(t *testing.T) {
	inv, _ := ParseInventory([]byte(testInventory))
	m := NewWorkerMetrics(nil)
	w := NewTrapWorker(nil, inv, WithWorkerMetrics(m))
	for _, tr := range []telemetry.Trap{
		{V: 1, Device: "198.51.100.1", TrapName: "authenticationFailure", SourceAddr: "198.51.100.1:50000", ReceivedAt: time.Now()},
		{V: 1, Device: "198.51.100.1", TrapOID: "1.3.6.1.4.1.9.9.41.2.0.1", SourceAddr: "198.51.100.1:50000", ReceivedAt: time.Now()},
		{V: 1, Device: "192.0.2.1", TrapName: "authenticationFailure", SourceAddr: "192.0.2.1:50000", ReceivedAt: time.Now()}, // edge1: known
	} {
		if _, ok := w.eventOf(&tr, &broker.Record{Topic: telemetry.TopicRawTraps}); ok {
			t.Fatalf("%+v became an event", tr)
		}
		w.warm(&broker.Record{Topic: telemetry.TopicRawTraps, Value: must(json.Marshal(&tr))}, time.Now())
	}
	if got := testutil.ToFloat64(m.m.unknown); got != 2 {
		t.Errorf("%v unknown counted, want 2", got)
	}
}

// TestTrapWarmupWaitsForInterfaceNames: after a restart the trap worker's
// warm-up ends long before the metrics worker's (at the device's next
// poll), so the RFC 2863 traps of a link flapping before the restart are
// read again before any poll has named ifIndex 3, or given the sysName the
// inventory lists the device by. They wait for the names: the flapping
// object is the device's Gi0/3, as it was raised, and is cleared as such,
// not as "ifIndex 3" of the target. Traps of a device no target polls, and
// those whose names never come, are remembered as they are named then.
func TestTrapWarmupWaitsForInterfaceNames(t *testing.T) {
	rows := func(target, agent, sysName string, at time.Time) []broker.Record {
		ms := []telemetry.Metric{{V: 1, Measurement: "snmp_interface", Device: target, Source: "snmp",
			Tags:   map[string]string{"ifIndex": "3", "ifName": "Gi0/3", "agent": agent},
			Fields: map[string]any{"ifOperStatus": int64(1)}, Time: at}}
		if sysName != "" { // the system row comes first in a poll
			ms = append([]telemetry.Metric{{V: 1, Measurement: "snmp_system", Device: target, Source: "snmp",
				Tags: map[string]string{"agent": agent}, Fields: map[string]any{"sysName": sysName}, Time: at}}, ms...)
		}
		var recs []broker.Record
		for _, m := range ms {
			v, _, err := m.AppendJSON(nil, nil)
			if err != nil {
				t.Fatal(err)
			}
			recs = append(recs, broker.Record{Key: []byte(target), Value: v})
		}
		return recs
	}
	flaps := func(from string) []broker.Record {
		var recs []broker.Record
		for i := range 4 {
			tr := rfc2863LinkDown(from, 3)
			if i%2 == 1 {
				tr.TrapName, tr.TrapOID = "linkUp", "1.3.6.1.6.3.1.1.5.4"
			}
			v, _ := json.Marshal(&tr)
			recs = append(recs, broker.Record{Key: []byte(tr.Device), Value: v})
		}
		return recs
	}
	for _, tc := range []struct {
		name                   string
		target, agent, sysName string // the polled target
		from                   string // the traps' source
		poll                   bool   // a poll after the restart names ifIndex 3 (and gives the sysName)
		nameWait               time.Duration
		want                   string // the flapping device and object after the restart
	}{
		{"named by the next poll", "edge1", "192.0.2.1", "", "192.0.2.1", true, time.Minute, "edge1 Gi0/3"},
		{"listed by its sysName", "fra-core1", "192.0.2.50", "core1.fra.example.net", "192.0.2.50", true, time.Minute, "core1.fra.example.net Gi0/3"},
		{"no poll names it", "edge1", "192.0.2.1", "", "192.0.2.1", false, 500 * time.Millisecond, "edge1 ifIndex 3"},
		{"not polled", "edge1", "192.0.2.1", "", "192.0.2.7", true, time.Minute, "edge7 ifIndex 3"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b, err := embedded.Open(t.TempDir())
			if err != nil {
				t.Fatal(err)
			}
			defer b.Close()
			ctx := context.Background()
			inv, _ := ParseInventory([]byte(testInventory + "  - {name: edge7, address: 192.0.2.7}\n"))
			// A new SNMPTargets for each process, as each learns sysNames.
			targets := func() WorkerOption {
				return WithSNMPTargets(NewSNMPTargets([]SNMPTarget{{Name: tc.target, Host: tc.agent}}))
			}
			poll := rows(tc.target, tc.agent, tc.sysName, time.Now())
			if err := b.Produce(ctx, telemetry.TopicRawSNMP, poll); err != nil {
				t.Fatal(err)
			}
			if err := b.Produce(ctx, telemetry.TopicRawTraps, flaps(tc.from)); err != nil {
				t.Fatal(err)
			}
			// Before the restart: the poll names ifIndex 3, then the traps.
			before, opt := NewEventRules(0, 3, 10*time.Minute), targets()
			stop := startRunner(NewMetricsWorker(b, inv, WithSharedEventRules(before), opt))
			waitUntil(t, "the poll", func() bool { return committedInput(b, telemetry.TopicRawSNMP) == len(poll) })
			stopTraps := startRunner(NewTrapWorker(b, inv, WithSharedEventRules(before), opt))
			waitUntil(t, "flapping", func() bool { return len(flappingObjects(before)) == 1 })
			stopTraps()
			stop()
			raised := flappingObjects(before)[0]

			// The restart: the trap worker warms up first.
			after, opt := NewEventRules(0, 3, 10*time.Minute), targets()
			tw := NewTrapWorker(b, inv, WithSharedEventRules(after), opt)
			tw.nameWait = tc.nameWait
			defer startRunner(tw)()
			waitUntil(t, "the trap warm-up", func() bool {
				after.d.mu.Lock()
				defer after.d.mu.Unlock()
				for tp := range after.d.read {
					if tp.Topic == telemetry.TopicRawTraps {
						return true
					}
				}
				return false
			})
			if tc.poll {
				next := rows(tc.target, tc.agent, tc.sysName, time.Now())
				if err := b.Produce(ctx, telemetry.TopicRawSNMP, next); err != nil {
					t.Fatal(err)
				}
				defer startRunner(NewMetricsWorker(b, inv, WithSharedEventRules(after), opt))()
			}
			waitUntil(t, "flapping after the restart", func() bool { return len(flappingObjects(after)) == 1 })
			if got := flappingObjects(after)[0]; got != tc.want {
				t.Errorf("flapping after the restart: %q, want %q (before it: %q)", got, tc.want, raised)
			}
		})
	}
}

// TestTrapsAndSyslogMatchedBySysName: an inventory that lists a device by
// the name it gives itself (its sysName), not by the target's name or
// address, names its traps and hostless syslog lines as it names its
// polls: from the sysName the polls read. One change seen by the poll, a
// trap and a syslog line is one event, with the inventory's tags.
func TestTrapsAndSyslogMatchedBySysName(t *testing.T) {
	t0 := time.Now().Add(-time.Minute)
	rows := append([]telemetry.Metric{{V: 1, Measurement: "snmp_system", Device: "fra-core1", Source: "snmp",
		Tags: map[string]string{"agent": "192.0.2.50"}, Fields: map[string]any{"sysName": "core1.fra.example.net", "sysUpTime": float64(1000)}, Time: t0}},
		interfaceDownRows("fra-core1", "192.0.2.50", t0)...)
	targets := []SNMPTarget{{Name: "fra-core1", Host: "192.0.2.50"}}
	t.Run("traps", func(t *testing.T) {
		coldStart := telemetry.Trap{V: 1, Device: "192.0.2.50", Version: "2c", TrapOID: "1.3.6.1.6.3.1.1.5.1", TrapName: "coldStart",
			SourceAddr: "192.0.2.50:50000", ReceivedAt: time.Now()}
		got := pollsThenTraps(t, targets, rows, []telemetry.Trap{rfc2863LinkDown("192.0.2.50", 3), coldStart}, 2)
		slices.Sort(got)
		want := []string{"device_rebooted core1.fra.example.net  site=fra2 from raw.traps", "interface_down core1.fra.example.net Gi0/3 site=fra2 from raw.snmp"}
		if !slices.Equal(got, want) {
			t.Fatalf("events:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
		}
	})
	t.Run("syslog", func(t *testing.T) {
		line := func(msg string) broker.Record {
			l := telemetry.Log{V: 1, Device: "192.0.2.50", SourceAddr: "192.0.2.50:514", Facility: 23, Severity: 3, Message: msg, ReceivedAt: time.Now()}
			return broker.Record{Key: []byte(l.Device), Value: l.AppendJSON(nil)}
		}
		recs := []broker.Record{
			line("%LINEPROTO-5-UPDOWN: Line protocol on Interface GigabitEthernet0/3, changed state to down"), // the polls' change
			line("%LINEPROTO-5-UPDOWN: Line protocol on Interface GigabitEthernet0/5, changed state to down"),
		}
		b := pollsThen(t, targets, rows, telemetry.TopicRawSyslog, recs, func(b broker.Broker, inv *Inventory, opts ...WorkerOption) runner {
			return NewWorker(b, inv, NewClassifier(), opts...)
		})
		got := eventLines(t, b, 2)
		slices.Sort(got)
		want := []string{"interface_down core1.fra.example.net Gi0/3 site=fra2 from raw.snmp",
			"interface_down core1.fra.example.net GigabitEthernet0/5 site=fra2 from raw.syslog"}
		if !slices.Equal(got, want) {
			t.Fatalf("events:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
		}
	})
}

// TestWarmupHoldsATrapOnce: a partition warmed up again in the process
// (taken back, or by another of its workers) does not hold its traps a
// second time, which would count their changes twice.
func TestWarmupHoldsATrapOnce(t *testing.T) {
	inv, _ := ParseInventory([]byte(testInventory))
	rules := NewEventRules(0, 3, 10*time.Minute)
	targets := WithSNMPTargets(NewSNMPTargets([]SNMPTarget{{Name: "edge1", Host: "192.0.2.1"}}))
	tr := rfc2863LinkDown("192.0.2.1", 3)
	v, _ := json.Marshal(&tr)
	r := broker.Record{Topic: telemetry.TopicRawTraps, Partition: 2, Offset: 5, Value: v, Timestamp: time.Now()}
	a, b := NewTrapWorker(nil, inv, WithSharedEventRules(rules), targets), NewTrapWorker(nil, inv, WithSharedEventRules(rules), targets)
	a.warm(&r, time.Now())
	b.warm(&r, time.Now())
	a.warm(&r, time.Now())
	if n := len(a.held) + len(b.held); n != 1 {
		t.Fatalf("the trap is held %d times, want once", n)
	}
}

// TestLinkTrapWithoutInterface: a linkDown without the varbinds RFC 2863
// gives it (a trap built by hand, a broken agent) is an interface_down
// of no object, saying so, and each one is published: two of them may
// be two interfaces.
func TestLinkTrapWithoutInterface(t *testing.T) {
	bare := func(at time.Time) telemetry.Trap {
		return telemetry.Trap{V: 1, Device: "192.0.2.1", Version: "2c", TrapOID: "1.3.6.1.6.3.1.1.5.3", TrapName: "linkDown",
			SourceAddr: "192.0.2.1:50000", ReceivedAt: at}
	}
	t0 := time.Now()
	var recs []broker.Record
	for _, tr := range []telemetry.Trap{bare(t0), bare(t0.Add(time.Second))} {
		v, _ := json.Marshal(&tr)
		recs = append(recs, broker.Record{Key: []byte(tr.Device), Value: v})
	}
	b := pollsThen(t, nil, nil, telemetry.TopicRawTraps, recs, func(b broker.Broker, inv *Inventory, opts ...WorkerOption) runner {
		return NewTrapWorker(b, inv, opts...)
	})
	got := eventsAs(t, b, func(ev telemetry.Event) string { return ev.Type + " " + ev.Object + " " + ev.Message })
	want := []string{"interface_down  linkDown trap naming no interface", "interface_down  linkDown trap naming no interface"}
	if !slices.Equal(got, want) {
		t.Errorf("events %q, want %q", got, want)
	}
}
