package enrich

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/weirnet/weir/broker"
	"github.com/weirnet/weir/telemetry"
)

// TestOneObjectOneObjectID: a link reported down by an IOS syslog line
// (GigabitEthernet0/1) and up by the next SNMP poll (ifName Gi0/1) is one
// object to the detector; both events keep their path's spelling in
// object and carry the one spelling in object_id, which a consumer pairing
// a down with its up (the Alertmanager sink; a dashboard joining on it)
// matches on.
func TestOneObjectOneObjectID(t *testing.T) {
	inv, _ := ParseInventory([]byte(testInventory))
	rules := NewEventRules(30*time.Second, 5, 10*time.Minute)
	t0 := time.Date(2026, 11, 29, 14, 0, 0, 0, time.UTC)
	w := NewMetricsWorker(nil, inv, WithSharedEventRules(rules))
	w.out = newOutputs(nil, telemetry.TopicRawSNMP, w.logger, w.m, false)
	w.rates.setNow(t0)
	row := func(off int64, at time.Time, st int64) broker.Record {
		m := telemetry.Metric{V: 1, Measurement: "snmp_interface", Device: "edge1", Tags: map[string]string{"ifName": "Gi0/1", "ifIndex": "1", "agent": "192.0.2.1"},
			Fields: map[string]any{"ifOperStatus": st}, Time: at, Source: "snmp"}
		v, _ := json.Marshal(&m)
		return broker.Record{Topic: telemetry.TopicRawSNMP, Offset: off, Timestamp: at, Value: v}
	}
	// baseline poll: up
	w.enrichBatch([]broker.Record{row(0, t0, 1)}, nil, nil)
	// the syslog line: down
	down := rules.d.observe(telemetry.Event{Type: "interface_down", Device: "edge1", Object: "GigabitEthernet0/1", Time: t0.Add(10 * time.Second),
		Cause: telemetry.Cause{Topic: telemetry.TopicRawSyslog, Offset: 0}}, t0.Add(10*time.Second))
	if len(down) != 1 {
		t.Fatalf("syslog down: %v", down)
	}
	// two polls later the link is up again
	w.rates.setNow(t0.Add(2 * time.Minute))
	_, events := w.enrichBatch([]broker.Record{row(1, t0.Add(time.Minute), 2), row(2, t0.Add(2*time.Minute), 1)}, nil, nil)
	var ups []telemetry.Event
	for _, out := range events {
		var ev telemetry.Event
		json.Unmarshal(out.rec.Value, &ev)
		ups = append(ups, ev)
	}
	if len(ups) != 1 || ups[0].Type != "interface_up" {
		t.Fatalf("events from the polls: %+v", ups)
	}
	if down[0].Object != "GigabitEthernet0/1" || ups[0].Object != "Gi0/1" {
		t.Errorf("objects %q and %q, want each path's own spelling", down[0].Object, ups[0].Object)
	}
	if ups[0].ObjectID != down[0].ObjectID || ups[0].ObjectID != "gi0/1" {
		t.Errorf("interface_down's object_id %q, its interface_up's %q: want both gi0/1", down[0].ObjectID, ups[0].ObjectID)
	}
	// An IPv6 neighbor: IOS writes capitals, traps and gNMI RFC 5952.
	bgp := rules.d.observe(telemetry.Event{Type: "bgp_peer_down", Device: "edge1", Object: "2001:DB8::1", Time: t0.Add(3 * time.Minute),
		Cause: telemetry.Cause{Topic: telemetry.TopicRawSyslog, Offset: 1}}, t0.Add(3*time.Minute))
	if len(bgp) != 1 || bgp[0].Object != "2001:DB8::1" || bgp[0].ObjectID != "2001:db8::1" {
		t.Errorf("bgp_peer_down: %+v", bgp)
	}
}

// TestLinuxEthIsNotEthernet: SONiC has a management port eth0 beside its
// front-panel Ethernet0 (and Linux hosts name ports eth0, eth1, ...). eth
// with no slash after it is no Cisco abbreviation (NX-OS's Eth1/1 always
// has one; a Linux interface name cannot), so eth0 going down and then
// Ethernet0 going down are two changes, not a repeat.
func TestLinuxEthIsNotEthernet(t *testing.T) {
	rules := NewEventRules(30*time.Second, 5, 10*time.Minute)
	t0 := time.Date(2026, 12, 5, 19, 20, 0, 0, time.UTC)
	for i, object := range []string{"eth0", "Ethernet0"} {
		at := t0.Add(time.Duration(i) * time.Second)
		got := rules.d.observe(telemetry.Event{Type: "interface_down", Device: "sonic1", Object: object, Time: at,
			Cause: telemetry.Cause{Topic: telemetry.TopicRawSyslog, Offset: int64(i)}}, at)
		if len(got) != 1 {
			t.Fatalf("%s down after the other port's: %+v, want its own interface_down", object, got)
		}
	}
	// NX-OS's abbreviation is still its long name.
	nx := rules.d.observe(telemetry.Event{Type: "interface_down", Device: "nx1", Object: "Ethernet1/1", Time: t0,
		Cause: telemetry.Cause{Topic: telemetry.TopicRawSyslog, Offset: 2}}, t0)
	again := rules.d.observe(telemetry.Event{Type: "interface_down", Device: "nx1", Object: "Eth1/1", Time: t0.Add(time.Second),
		Cause: telemetry.Cause{Topic: telemetry.TopicRawTraps, Offset: 0}}, t0.Add(time.Second))
	if len(nx) != 1 || len(again) != 0 {
		t.Errorf("Ethernet1/1 then Eth1/1 down: %+v, then %+v; want one event", nx, again)
	}
}
