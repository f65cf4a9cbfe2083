package enrich

import (
	"testing"
	"time"

	gpb "github.com/openconfig/gnmi/proto/gnmi"

	"github.com/weirnet/weir/broker"
	"github.com/weirnet/weir/collectors/gnmi"
	"github.com/weirnet/weir/telemetry"
)

// TestGNMITargetNamedByAddress: an inventory entry that lists a device by
// its address named its syslog lines, traps and SNMP polls, but not its
// gNMI records, looked up by the target's name alone: one link-down was
// published twice, once under the gNMI target's name tagged unknown and
// once under the inventory's. A gNMI target is found by its name or the
// address it is dialed at, as an SNMP target is, and the collector keys
// its records (DeviceNamer.GNMITarget) by the name the worker gives them.
func TestGNMITargetNamedByAddress(t *testing.T) {
	inv, err := ParseInventory([]byte(`devices:
  - {name: spine9, address: 127.0.0.1, site: lab1}
  - {name: edge1, address: 192.0.2.1, site: ams1}
  - {name: relay1, address: 10.9.0.1, site: dc, relay: true}
  - {name: lab, cidr: 10.0.0.0/8, site: lab}
`))
	if err != nil {
		t.Fatal(err)
	}
	targets := NewGNMITargets([]GNMITarget{
		{Name: "rv1", Address: "127.0.0.1:57400"},
		{Name: "edge1-gnmi", Address: "[::ffff:192.0.2.1]:6030"},
		{Name: "relay1-gnmi", Address: "10.9.0.1:57400"}, // weir dials the relay itself
		{Name: "lab9", Address: "10.0.0.9:6030"},         // a range names no device
		{Name: "behind-gw"},                              // prefix_target: the address is a gateway's
		{Name: "dns", Address: "spine9.example.net:6030"},
		{Name: "unlisted", Address: "203.0.113.1:6030"},
	})
	namer := NewDeviceNamer(inv, nil, targets)
	w := NewMetricsWorker(nil, inv, WithInputTopic(telemetry.TopicRawGNMI), WithGNMITargets(targets))
	t0 := time.Date(2026, 11, 29, 14, 0, 0, 0, time.UTC)
	path := func(s string) *gpb.Path {
		p, err := gnmi.ParsePath(s, "")
		if err != nil {
			t.Fatal(err)
		}
		return p
	}
	step := 0
	// enrich enriches target's oper-status of Ethernet1, returning the
	// events.
	enrich := func(target, status string) []telemetry.Event {
		t.Helper()
		step++
		n := &gpb.Notification{Timestamp: t0.Add(time.Duration(step) * time.Second).UnixNano(),
			Prefix: path("/interfaces/interface[name=Ethernet1]/state"),
			Update: []*gpb.Update{{Path: path("oper-status"), Val: &gpb.TypedValue{Value: &gpb.TypedValue_StringVal{StringVal: status}}}}}
		var evs []telemetry.Event
		for _, m := range gnmi.Flatten(target, n, t0) {
			v, _, err := m.AppendJSON(nil, nil)
			if err != nil {
				t.Fatal(err)
			}
			e, ok := w.enrich(&broker.Record{Topic: telemetry.TopicRawGNMI, Value: v})
			if !ok {
				t.Fatalf("%s: not enriched: %s", target, v)
			}
			evs = append(evs, e...)
		}
		return evs
	}
	for _, c := range []struct{ target, device, site string }{
		{"rv1", "spine9", "lab1"},
		{"edge1-gnmi", "edge1", "ams1"},
		{"relay1-gnmi", "relay1", "dc"},
		{"lab9", "lab9", "lab"},
		{"behind-gw", "behind-gw", ""},
		{"dns", "dns", ""},
		{"unlisted", "unlisted", ""},
		{"edge1", "edge1", "ams1"}, // by name, not a target of the config
	} {
		enrich(c.target, "UP")
		site, _ := w.row.Tag("site")
		unknown, _ := w.row.Tag("unknown")
		if w.row.Device != c.device || site != c.site || (unknown != "") != (c.site == "") {
			t.Errorf("%s: enriched as device %q, site %q, unknown %q; want %q, %q", c.target, w.row.Device, site, unknown, c.device, c.site)
		}
		if tag, _ := w.row.Tag("target"); c.device != c.target && tag != c.target {
			t.Errorf("%s: renamed %s with target tag %q", c.target, c.device, tag)
		}
		key := namer.GNMITarget(c.target)
		if key == "" {
			key = c.target
		}
		if key != w.row.Device {
			t.Errorf("%s: keyed %q by the collector, enriched as %q", c.target, key, w.row.Device)
		}
	}
	evs := enrich("rv1", "DOWN")
	if len(evs) != 1 || evs[0].Type != "interface_down" || evs[0].Device != "spine9" || evs[0].Tags["site"] != "lab1" {
		t.Errorf("rv1's link down: %+v, want interface_down of spine9", evs)
	}
	// A reload that moves the target elsewhere names it by its name.
	targets.Set([]GNMITarget{{Name: "rv1", Address: "192.0.2.99:57400"}})
	enrich("rv1", "UP")
	if w.row.Device != "rv1" || namer.GNMITarget("rv1") != "" {
		t.Errorf("rv1 moved: enriched as %q, keyed %q; want rv1", w.row.Device, namer.GNMITarget("rv1"))
	}
}
