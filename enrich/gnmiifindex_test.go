package enrich

import (
	"encoding/json"
	"fmt"
	"slices"
	"testing"
	"time"

	gpb "github.com/openconfig/gnmi/proto/gnmi"

	"github.com/weirnet/weir/broker"
	"github.com/weirnet/weir/collectors/gnmi"
	"github.com/weirnet/weir/telemetry"
)

// gnmiIfIndexFixture is a gNMI target spine1 dialed at 10.0.0.1 (no SNMP
// target polls it), its raw.gnmi metrics worker, a trap worker and the
// detector they share.
type gnmiIfIndexFixture struct {
	t      *testing.T
	rules  *EventRules
	gw     *MetricsWorker
	tw     *TrapWorker
	offset int64
	got    []string
}

func newGNMIIfIndexFixture(t *testing.T, snmp *SNMPTargets) *gnmiIfIndexFixture {
	inv, err := LoadInventory("", nil)
	if err != nil {
		t.Fatal(err)
	}
	gt := NewGNMITargets([]GNMITarget{{Name: "spine1", Address: "10.0.0.1:57400"}})
	rules := NewEventRules(30*time.Second, DefaultFlapThreshold, DefaultFlapWindow)
	opts := []WorkerOption{WithSharedEventRules(rules), WithSNMPTargets(snmp), WithGNMITargets(gt)}
	return &gnmiIfIndexFixture{t: t, rules: rules,
		gw: NewMetricsWorker(nil, inv, append(slices.Clone(opts), WithInputTopic(telemetry.TopicRawGNMI))...),
		tw: NewTrapWorker(nil, inv, opts...)}
}

func (f *gnmiIfIndexFixture) observe(evs []telemetry.Event, at time.Time) {
	for _, ev := range evs {
		for _, e := range f.rules.d.observe(ev, at) {
			f.got = append(f.got, e.Type+" "+e.Device+" "+e.Object+" "+e.Cause.Topic)
		}
	}
}

func (f *gnmiIfIndexFixture) path(s string) *gpb.Path {
	p, err := gnmi.ParsePath(s, "")
	if err != nil {
		f.t.Fatal(err)
	}
	return p
}

// notify enriches the rows of a notification of spine1's.
func (f *gnmiIfIndexFixture) notify(n *gpb.Notification, at time.Time) {
	f.t.Helper()
	n.Timestamp = at.UnixNano()
	for _, m := range gnmi.Flatten("spine1", n, at) {
		v, _, err := m.AppendJSON(nil, nil)
		if err != nil {
			f.t.Fatal(err)
		}
		f.offset++
		evs, ok := f.gw.enrich(&broker.Record{Topic: telemetry.TopicRawGNMI, Offset: f.offset, Value: v, Timestamp: at})
		if !ok {
			f.t.Fatalf("gNMI %s: not enriched", m.Measurement)
		}
		f.observe(evs, at)
	}
}

// state sends leaves of the interface's state container: its oper-status,
// and its ifindex unless index is 0.
func (f *gnmiIfIndexFixture) state(name string, index uint64, status string, at time.Time) {
	f.t.Helper()
	n := &gpb.Notification{Prefix: f.path("/interfaces/interface[name=" + name + "]/state")}
	if index != 0 {
		n.Update = append(n.Update, &gpb.Update{Path: f.path("ifindex"), Val: &gpb.TypedValue{Value: &gpb.TypedValue_UintVal{UintVal: index}}})
	}
	if status != "" {
		n.Update = append(n.Update, &gpb.Update{Path: f.path("oper-status"), Val: &gpb.TypedValue{Value: &gpb.TypedValue_StringVal{StringVal: status}}})
	}
	f.notify(n, at)
}

// bareTrap is a linkDown or linkUp with RFC 2863's varbinds alone, as EOS
// sends it, from spine1's address.
func bareTrap(name, index string, at time.Time) telemetry.Trap {
	oper := "2"
	if name == "linkUp" {
		oper = "1"
	}
	return telemetry.Trap{V: 1, Device: "10.0.0.1", SourceAddr: "10.0.0.1:40000", Version: "2c",
		TrapName: name, ReceivedAt: at, Varbinds: []telemetry.Varbind{
			{Name: "ifIndex." + index, Value: index}, {Name: "ifAdminStatus." + index, Value: "1"},
			{Name: "ifOperStatus." + index, Value: oper}}}
}

func (f *gnmiIfIndexFixture) trap(name, index string, at time.Time) telemetry.Event {
	f.t.Helper()
	tr := bareTrap(name, index, at)
	v, err := json.Marshal(&tr)
	if err != nil {
		f.t.Fatal(err)
	}
	f.offset++
	ev, ok := f.tw.eventOf(&tr, &broker.Record{Topic: telemetry.TopicRawTraps, Offset: f.offset, Value: v, Timestamp: at})
	if !ok {
		f.t.Fatalf("trap %s: no event", name)
	}
	f.observe([]telemetry.Event{ev}, at)
	return ev
}

// TestGNMIIfIndexNamesBareTraps: a linkDown or linkUp trap naming its
// interface by ifIndex alone (RFC 2863's varbinds, as Arista sends them)
// was named from the SNMP polls' ifIndex table only, so from a device
// streamed by gNMI and not polled it was "ifIndex 3", another object than
// gNMI's Ethernet3, and one link down was published twice. The gNMI
// interface rows that carry OpenConfig's state/ifindex name it too.
func TestGNMIIfIndexNamesBareTraps(t *testing.T) {
	t0 := time.Now().Truncate(time.Second)
	at := func(s int) time.Time { return t0.Add(time.Duration(s) * time.Second) }

	f := newGNMIIfIndexFixture(t, nil)
	f.state("Ethernet3", 3, "UP", at(1)) // the subscription's sync: a start
	f.state("Ethernet3", 0, "DOWN", at(2))
	f.trap("linkDown", "3", at(3))
	f.trap("linkUp", "3", at(20))
	f.state("Ethernet3", 0, "UP", at(21))
	if ev := f.trap("linkDown", "4", at(30)); ev.Object != "ifIndex 4" {
		t.Errorf("a trap of an ifIndex gNMI named none: object %q, want ifIndex 4", ev.Object)
	}
	want := []string{
		"interface_down spine1 Ethernet3 raw.gnmi",
		"interface_up spine1 Ethernet3 raw.traps",
		"interface_down spine1 ifIndex 4 raw.traps",
	}
	if !slices.Equal(f.got, want) {
		t.Errorf("events:\n%q\nwant:\n%q", f.got, want)
	}

	// The interface container in one JSON object (state/ifindex), and
	// the trap first.
	f = newGNMIIfIndexFixture(t, nil)
	js := `{"name":"Ethernet7","state":{"ifindex":7,"oper-status":"UP"}}`
	f.notify(&gpb.Notification{Update: []*gpb.Update{{Path: f.path("/interfaces/interface[name=Ethernet7]"),
		Val: &gpb.TypedValue{Value: &gpb.TypedValue_JsonIetfVal{JsonIetfVal: []byte(js)}}}}}, at(1))
	f.trap("linkDown", "7", at(2))
	f.state("Ethernet7", 0, "DOWN", at(3))
	if want := []string{"interface_down spine1 Ethernet7 raw.traps"}; !slices.Equal(f.got, want) {
		t.Errorf("JSON interface: events %q, want %q", f.got, want)
	}

	// An interface renumbered (the ifindex of another now): the index
	// names the interface that has it last.
	f = newGNMIIfIndexFixture(t, nil)
	f.state("Ethernet3", 3, "UP", at(1))
	f.state("Ethernet5", 3, "UP", at(2))
	if ev := f.trap("linkDown", "3", at(3)); ev.Object != "Ethernet5" {
		t.Errorf("ifindex 3 moved to Ethernet5: trap's object %q", ev.Object)
	}
	f.state("Ethernet5", 5, "", at(4))
	if ev := f.trap("linkDown", "3", at(5)); ev.Object != "ifIndex 3" {
		t.Errorf("Ethernet5 moved off ifindex 3: trap's object %q, want ifIndex 3", ev.Object)
	}
	if ev := f.trap("linkDown", "5", at(6)); ev.Object != "Ethernet5" {
		t.Errorf("Ethernet5 at ifindex 5: trap's object %q", ev.Object)
	}
}

// TestGNMIIfIndexTellsTableOnChange: a gNMI row tells the shared table
// only when its name or index is new, and an SNMP row and a gNMI row of
// one device naming one ifIndex alike do not take it from each other at
// every poll and sample; where they name it differently, the SNMP poll's
// name is kept, as the trap's device is the SNMP target's.
func TestGNMIIfIndexTellsTableOnChange(t *testing.T) {
	t0 := time.Now().Truncate(time.Second)
	at := func(s int) time.Time { return t0.Add(time.Duration(s) * time.Second) }
	snmp := NewSNMPTargets([]SNMPTarget{{Name: "spine1", Host: "10.0.0.1"}})
	f := newGNMIIfIndexFixture(t, snmp)
	sw := NewMetricsWorker(nil, f.gw.inv, WithSharedEventRules(f.rules), WithSNMPTargets(snmp))
	poll := func(index, name string, s int) {
		t.Helper()
		m := telemetry.Metric{V: 1, Measurement: "snmp_interface", Device: "spine1", Time: at(s),
			Tags:   map[string]string{"agent": "10.0.0.1", "ifIndex": index, "ifName": name},
			Fields: map[string]any{"ifOperStatus": int64(1)}}
		v, _, err := m.AppendJSON(nil, nil)
		if err != nil {
			t.Fatal(err)
		}
		if _, ok := sw.enrich(&broker.Record{Topic: telemetry.TopicRawSNMP, Value: v, Timestamp: at(s)}); !ok {
			t.Fatal("SNMP row not enriched")
		}
	}
	iface := func(name string, index, s int) { // the interface container, in one JSON object
		t.Helper()
		js := fmt.Sprintf(`{"name":%q,"state":{"ifindex":%d,"oper-status":"UP"}}`, name, index)
		f.notify(&gpb.Notification{Update: []*gpb.Update{{Path: f.path("/interfaces/interface[name=" + name + "]"),
			Val: &gpb.TypedValue{Value: &gpb.TypedValue_JsonIetfVal{JsonIetfVal: []byte(js)}}}}}, at(s))
	}
	names := f.rules.d.names
	f.state("Ethernet3", 3, "UP", at(1))
	iface("Ethernet3", 3, 1)
	v := names.version.Load()
	for s := 2; s < 5; s++ {
		f.state("Ethernet3", 3, "UP", at(s))
		iface("Ethernet3", 3, s)
	}
	if n := names.version.Load() - v; n != 0 {
		t.Errorf("the same name from two gNMI rows: set %d times more", n)
	}
	poll("3", "Ethernet3", 2)
	v = names.version.Load()
	for s := 3; s < 10; s++ {
		f.state("Ethernet3", 3, "UP", at(s))
		iface("Ethernet3", 3, s)
		poll("3", "Ethernet3", s)
	}
	if n := names.version.Load() - v; n != 0 {
		t.Errorf("the same name from two gNMI rows and an SNMP row: set %d times more", n)
	}
	poll("4", "Et4", 10) // SNMP names it otherwise
	f.state("Ethernet4", 4, "UP", at(11))
	v = names.version.Load()
	for s := 12; s < 16; s++ {
		f.state("Ethernet4", 4, "UP", at(s))
		poll("4", "Et4", s)
	}
	if n := names.version.Load() - v; n != 0 {
		t.Errorf("two names from a gNMI and an SNMP row: set %d times more", n)
	}
	if name, _ := names.name("spine1", "4"); name != "Et4" {
		t.Errorf("ifIndex 4 named %q, want the SNMP poll's Et4", name)
	}
}

// TestGNMIIfIndexWarmupHolds: after a restart, a bare-ifIndex trap from a
// gNMI target's address waits, as one from a polled address does, for a
// gNMI row to name the interface, and is then remembered by that name.
func TestGNMIIfIndexWarmupHolds(t *testing.T) {
	t0 := time.Now().Truncate(time.Second)
	f := newGNMIIfIndexFixture(t, nil)
	tr := bareTrap("linkDown", "3", t0)
	v, err := json.Marshal(&tr)
	if err != nil {
		t.Fatal(err)
	}
	f.tw.warm(&broker.Record{Topic: telemetry.TopicRawTraps, Offset: 1, Value: v, Timestamp: t0}, t0.Add(time.Second))
	if len(f.tw.held) != 1 {
		t.Fatalf("held %d warm-up traps, want 1", len(f.tw.held))
	}
	f.state("Ethernet3", 3, "DOWN", t0.Add(time.Second))
	f.tw.releaseWarm()
	if len(f.tw.held) != 0 {
		t.Fatalf("still held: %d", len(f.tw.held))
	}
	// The trap was remembered as Ethernet3's link down: gNMI's (a first
	// state, DOWN) is not a second one.
	f.state("Ethernet3", 0, "DOWN", t0.Add(2*time.Second))
	ev := f.trap("linkDown", "3", t0.Add(3*time.Second))
	if ev.Object != "Ethernet3" || len(f.got) != 0 {
		t.Errorf("trap object %q, events %q; want Ethernet3 and none", ev.Object, f.got)
	}
}
