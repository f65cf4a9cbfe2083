package enrich

import (
	"encoding/json"
	"slices"
	"testing"
	"time"

	gpb "github.com/openconfig/gnmi/proto/gnmi"

	"github.com/weirnet/weir/broker"
	"github.com/weirnet/weir/collectors/gnmi"
	"github.com/weirnet/weir/telemetry"
)

// TestGNMITargetNamesHostlessSyslogAndTraps: with no inventory, a syslog
// line without a hostname, or a trap, from the address an SNMP target
// polls took the target's name, but one from a gNMI target's address kept
// the address: one link down reported by gNMI (as spine1) and by syslog
// (as 10.0.0.1) was published twice, under two names, in two partitions.
// A gNMI target names its address as an SNMP target does (an SNMP target
// polling the same address first; an address several targets are dialed
// at, or a DNS name, names none), in the workers and in the collectors'
// keys alike, and the link down is one event.
func TestGNMITargetNamesHostlessSyslogAndTraps(t *testing.T) {
	inv, err := LoadInventory("", nil)
	if err != nil {
		t.Fatal(err)
	}
	gt := NewGNMITargets([]GNMITarget{
		{Name: "spine1", Address: "10.0.0.1:57400"},
		{Name: "leafA", Address: "10.0.0.2:6030"}, {Name: "leafB", Address: "10.0.0.2:6031"}, // one host, two targets
		{Name: "dns", Address: "leaf9.example.net:6030"},
		{Name: "behind-gw"}, // prefix_target: dialed at a gateway's address
		{Name: "both-gnmi", Address: "10.0.0.3:57400"},
		{Name: "v6", Address: "[2001:db8::7]:57400"},
	})
	snmp := NewSNMPTargets([]SNMPTarget{{Name: "both-snmp", Host: "10.0.0.3"}}) // polled too: SNMP's name
	rules := NewEventRules(30*time.Second, DefaultFlapThreshold, DefaultFlapWindow)
	opts := []WorkerOption{WithSharedEventRules(rules), WithSNMPTargets(snmp), WithGNMITargets(gt)}
	sw := NewWorker(nil, inv, NewClassifier(), opts...)
	gw := NewMetricsWorker(nil, inv, append(slices.Clone(opts), WithInputTopic(telemetry.TopicRawGNMI))...)
	tw := NewTrapWorker(nil, inv, opts...)
	namer := NewDeviceNamer(inv, snmp, gt)

	t0 := time.Now().Truncate(time.Second)
	var offset int64
	line := func(hostname, source, msg string, at time.Time) *broker.Record {
		offset++
		device := hostname
		if device == "" {
			device = senderAddr(source).String()
		}
		l := telemetry.Log{V: 1, Device: device, Hostname: hostname, SourceAddr: source, Facility: 23, Severity: 3,
			Message: msg, ReceivedAt: at, Time: &at}
		return &broker.Record{Topic: telemetry.TopicRawSyslog, Offset: offset, Value: l.AppendJSON(nil), Timestamp: at}
	}
	trap := func(name, source, ifDescr string, at time.Time) telemetry.Trap {
		return telemetry.Trap{V: 1, Device: senderAddr(source).String(), SourceAddr: source, Version: "2c",
			TrapName: name, ReceivedAt: at, Varbinds: []telemetry.Varbind{
				{Name: "ifIndex.3", Value: "3"}, {Name: "ifDescr.3", Value: ifDescr}}}
	}

	for _, c := range []struct{ hostname, source, want string }{
		{"", "10.0.0.1:514", "spine1"},
		{"", "[::ffff:10.0.0.1]:514", "spine1"},
		{"10.0.0.1", "198.51.100.1:514", "spine1"}, // a relay that fills in the device's address
		{"spine1-re0", "10.0.0.1:514", "spine1-re0"},
		{"", "10.0.0.2:514", "10.0.0.2"}, // two targets: neither
		{"", "10.0.0.3:514", "both-snmp"},
		{"", "[2001:db8::7]:514", "v6"},
		{"", "10.0.0.9:514", "10.0.0.9"},
	} {
		rec, _, _, ok := sw.enrichSyslog(line(c.hostname, c.source, "%SYS-5-RESTART: System restarted --", t0))
		if !ok {
			t.Fatalf("%q from %s: not enriched", c.hostname, c.source)
		}
		key := namer.Name(c.hostname, c.source)
		if key == "" {
			key = recordDevice(c.hostname, c.source)
		}
		if string(rec.Key) != c.want || key != c.want {
			t.Errorf("line %q from %s: enriched as %q, keyed %q by the collector; want %q", c.hostname, c.source, rec.Key, key, c.want)
		}
		if c.hostname != "" {
			continue // a trap names its device by its agent's address
		}
		tr := trap("linkDown", c.source, "Ethernet9", t0)
		if got, key := func() string { d, _ := tw.device(&tr); return d }(), namer.TrapDevice(&tr); got != c.want || key != c.want {
			t.Errorf("trap from %s: named %q, keyed %q by the collector; want %q", c.source, got, key, c.want)
		}
	}

	// One link down, by gNMI, syslog and a trap: one event.
	var got []string
	observe := func(evs []telemetry.Event, at time.Time) {
		t.Helper()
		for _, ev := range evs {
			for _, e := range rules.d.observe(ev, at) {
				got = append(got, e.Type+" "+e.Device+" "+e.Object+" "+e.Cause.Topic)
			}
		}
	}
	path := func(s string) *gpb.Path {
		p, err := gnmi.ParsePath(s, "")
		if err != nil {
			t.Fatal(err)
		}
		return p
	}
	oper := func(status string, at time.Time) {
		t.Helper()
		n := &gpb.Notification{Timestamp: at.UnixNano(), Prefix: path("/interfaces/interface[name=Ethernet1]/state"),
			Update: []*gpb.Update{{Path: path("oper-status"), Val: &gpb.TypedValue{Value: &gpb.TypedValue_StringVal{StringVal: status}}}}}
		for _, m := range gnmi.Flatten("spine1", n, at) {
			v, _, err := m.AppendJSON(nil, nil)
			if err != nil {
				t.Fatal(err)
			}
			offset++
			evs, ok := gw.enrich(&broker.Record{Topic: telemetry.TopicRawGNMI, Offset: offset, Value: v, Timestamp: at})
			if !ok {
				t.Fatalf("gNMI %s: not enriched", status)
			}
			observe(evs, at)
		}
	}
	syslog := func(state string, at time.Time) {
		t.Helper()
		r := line("", "10.0.0.1:514", "%LINK-3-UPDOWN: Interface Ethernet1, changed state to "+state, at)
		_, ev, _, ok := sw.enrichSyslog(r)
		if !ok || ev.Type == "" {
			t.Fatalf("syslog %s: no event", state)
		}
		observe([]telemetry.Event{ev}, at)
	}
	trapped := func(name string, at time.Time) {
		t.Helper()
		tr := trap(name, "10.0.0.1:40000", "Ethernet1", at)
		v, err := json.Marshal(&tr)
		if err != nil {
			t.Fatal(err)
		}
		offset++
		r := &broker.Record{Topic: telemetry.TopicRawTraps, Offset: offset, Value: v, Timestamp: at}
		ev, ok := tw.eventOf(&tr, r)
		if !ok {
			t.Fatalf("trap %s: no event", name)
		}
		observe([]telemetry.Event{ev}, at)
	}
	at := func(s int) time.Time { return t0.Add(time.Duration(s) * time.Second) }
	oper("UP", at(1)) // the subscription's first sample: its start
	syslog("down", at(2))
	oper("DOWN", at(3))
	trapped("linkDown", at(4))
	trapped("linkUp", at(20))
	syslog("up", at(21))
	oper("UP", at(22))
	want := []string{
		"interface_down spine1 Ethernet1 raw.syslog",
		"interface_up spine1 Ethernet1 raw.traps",
	}
	if !slices.Equal(got, want) {
		t.Errorf("events:\n%q\nwant:\n%q", got, want)
	}
}
