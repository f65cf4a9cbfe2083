package enrich

import (
	"reflect"
	"strings"
	"testing"
	"time"

	gpb "github.com/openconfig/gnmi/proto/gnmi"

	"github.com/weirnet/weir/broker"
	"github.com/weirnet/weir/collectors/gnmi"
	"github.com/weirnet/weir/telemetry"
)

// TestGNMIOnChangeEvents: interface oper-status and BGP session-state
// updates, flattened by the gNMI collector as it publishes them (a leaf
// subscription and a container subscription with JSON values), raise
// interface and BGP events on changes only.
func TestGNMIOnChangeEvents(t *testing.T) {
	inv, _ := ParseInventory([]byte(testInventory))
	w := NewMetricsWorker(nil, inv, WithInputTopic(telemetry.TopicRawGNMI))
	t0 := time.Date(2026, 11, 29, 14, 0, 0, 0, time.UTC)
	path := func(s string) *gpb.Path {
		p, err := gnmi.ParsePath(s, "")
		if err != nil {
			t.Fatal(err)
		}
		return p
	}
	leaf := func(prefix, leaf, v string) *gpb.Notification {
		return &gpb.Notification{Prefix: path(prefix), Update: []*gpb.Update{{Path: path(leaf),
			Val: &gpb.TypedValue{Value: &gpb.TypedValue_StringVal{StringVal: v}}}}}
	}
	container := func(p, json string) *gpb.Notification {
		return &gpb.Notification{Update: []*gpb.Update{{Path: path(p),
			Val: &gpb.TypedValue{Value: &gpb.TypedValue_JsonIetfVal{JsonIetfVal: []byte(json)}}}}}
	}
	const (
		ifState = "/interfaces/interface[name=Ethernet1]/state"
		nbr     = "/network-instances/network-instance[name=default]/protocols/protocol[identifier=BGP][name=BGP]/bgp/neighbors/neighbor[neighbor-address=10.0.0.2]/state"
		nbr3    = "/network-instances/network-instance[name=default]/protocols/protocol[identifier=BGP][name=BGP]/bgp/neighbors/neighbor[neighbor-address=10.0.0.3]"
		nbrVRF  = "/network-instances/network-instance[name=CUST-A]/protocols/protocol[identifier=BGP][name=BGP]/bgp/neighbors/neighbor[neighbor-address=10.0.0.2]/state"
	)
	steps := []struct {
		n    *gpb.Notification
		want string // "type object", or "" for no event
	}{
		{leaf(ifState, "oper-status", "UP"), ""}, // the initial sync
		{leaf(ifState, "oper-status", "DOWN"), "interface_down Ethernet1"},
		{leaf(ifState, "oper-status", "DOWN"), ""},
		{leaf(ifState, "oper-status", "UP"), "interface_up Ethernet1"},
		{leaf(ifState, "oper-status", "TESTING"), ""},
		{container("/interfaces/interface[name=Ethernet2]", `{"state":{"oper-status":"UP","admin-status":"UP"}}`), ""},
		{container("/interfaces/interface[name=Ethernet2]", `{"state":{"oper-status":"LOWER_LAYER_DOWN"}}`), "interface_down Ethernet2"},
		{leaf(nbr, "session-state", "ESTABLISHED"), ""},
		{leaf(nbr, "session-state", "IDLE"), "bgp_peer_down 10.0.0.2"},
		{leaf(nbr, "session-state", "ACTIVE"), ""},
		{leaf(nbr, "session-state", "openconfig-bgp-types:ESTABLISHED"), "bgp_peer_up 10.0.0.2"},
		{container(nbr, `{"session-state":"ACTIVE","peer-as":65002}`), "bgp_peer_down 10.0.0.2"},
		{container("/interfaces/interface[name=Ethernet2]", `{"state":{"oper-status":"UP"}}`), "interface_up Ethernet2"},
		{container("/interfaces/interface[name=Ethernet2]", `{"state":{"oper-status":"DORMANT"}}`), ""},
		{container("/interfaces/interface[name=Ethernet2]", `{"state":{"oper-status":"NOT_PRESENT"}}`), "interface_down Ethernet2"},
		// The neighbor container: the leaf arrives as state/session-state.
		{container(nbr3, `{"state":{"session-state":"ESTABLISHED","peer-as":65003}}`), ""},
		{container(nbr3, `{"state":{"session-state":"IDLE","peer-as":65003}}`), "bgp_peer_down 10.0.0.3"},
		// Another VRF's session to the same address, as syslog names it.
		{leaf(nbrVRF, "session-state", "ESTABLISHED"), ""},
		{leaf(nbrVRF, "session-state", "IDLE"), "bgp_peer_down 10.0.0.2 vrf CUST-A"},
	}
	for i, st := range steps {
		st.n.Timestamp = t0.Add(time.Duration(i) * time.Second).UnixNano()
		var got []string
		for _, m := range gnmi.Flatten("spine1", st.n, t0) {
			v, _, err := m.AppendJSON(nil, nil)
			if err != nil {
				t.Fatal(err)
			}
			evs, ok := w.enrich(&broker.Record{Topic: telemetry.TopicRawGNMI, Value: v})
			if !ok {
				t.Fatalf("step %d: record not enriched: %s", i, v)
			}
			for _, ev := range evs {
				if ev.Device != "spine1" {
					t.Errorf("step %d: event device %q", i, ev.Device)
				}
				got = append(got, ev.Type+" "+ev.Object)
			}
		}
		switch {
		case st.want == "" && len(got) > 0:
			t.Errorf("step %d: events %q, want none", i, got)
		case st.want != "" && (len(got) != 1 || got[0] != st.want):
			t.Errorf("step %d: events %q, want %q", i, got, st.want)
		}
	}
}

// TestGNMIStateAcrossContainers: a target's initial sync sends the
// interface (or neighbor) container as one JSON object and its changes as
// single leaves, so one interface's oper-status comes under two
// measurements (interfaces_interface, then interfaces_interface_state).
// The first change after the sync is an event all the same, not a second
// baseline.
func TestGNMIStateAcrossContainers(t *testing.T) {
	inv, _ := ParseInventory([]byte(testInventory))
	w := NewMetricsWorker(nil, inv, WithInputTopic(telemetry.TopicRawGNMI))
	t0 := time.Date(2026, 11, 29, 14, 0, 0, 0, time.UTC)
	path := func(s string) *gpb.Path {
		p, err := gnmi.ParsePath(s, "")
		if err != nil {
			t.Fatal(err)
		}
		return p
	}
	leaf := func(prefix, leaf, v string) *gpb.Notification {
		return &gpb.Notification{Prefix: path(prefix), Update: []*gpb.Update{{Path: path(leaf),
			Val: &gpb.TypedValue{Value: &gpb.TypedValue_StringVal{StringVal: v}}}}}
	}
	container := func(p, json string) *gpb.Notification {
		return &gpb.Notification{Update: []*gpb.Update{{Path: path(p),
			Val: &gpb.TypedValue{Value: &gpb.TypedValue_JsonIetfVal{JsonIetfVal: []byte(json)}}}}}
	}
	const nbr = "/network-instances/network-instance[name=default]/protocols/protocol[identifier=BGP][name=BGP]/bgp/neighbors/neighbor[neighbor-address=10.0.0.2]"
	steps := []struct {
		n    *gpb.Notification
		want string
	}{
		{container("/interfaces/interface[name=Ethernet1]", `{"name":"Ethernet1","state":{"oper-status":"UP"}}`), ""},
		{leaf("/interfaces/interface[name=Ethernet1]/state", "oper-status", "DOWN"), "interface_down Ethernet1"},
		{container("/interfaces/interface[name=Ethernet1]", `{"state":{"oper-status":"UP"}}`), "interface_up Ethernet1"},
		{container(nbr, `{"state":{"session-state":"ESTABLISHED"}}`), ""},
		{leaf(nbr+"/state", "session-state", "IDLE"), "bgp_peer_down 10.0.0.2"},
	}
	for i, st := range steps {
		st.n.Timestamp = t0.Add(time.Duration(i) * time.Second).UnixNano()
		var got []string
		for _, m := range gnmi.Flatten("spine1", st.n, t0) {
			v, _, err := m.AppendJSON(nil, nil)
			if err != nil {
				t.Fatal(err)
			}
			evs, ok := w.enrich(&broker.Record{Topic: telemetry.TopicRawGNMI, Value: v})
			if !ok {
				t.Fatalf("step %d: record not enriched: %s", i, v)
			}
			for _, ev := range evs {
				got = append(got, ev.Type+" "+ev.Object)
			}
		}
		switch {
		case st.want == "" && len(got) > 0:
			t.Errorf("step %d: events %q, want none", i, got)
		case st.want != "" && (len(got) != 1 || got[0] != st.want):
			t.Errorf("step %d: events %q, want %q", i, got, st.want)
		}
	}
}

// TestGNMIDeleteForgetsState: a deleted interface or BGP neighbor (a
// port-channel or a peer removed from the config) leaves no state behind:
// re-created later, its first state is a baseline, not a change from the
// state it had before its delete (a new port-channel comes up DOWN, which
// is no interface_down). A delete and an update of the same object in one
// notification (a target replacing the container) are compared as ever.
func TestGNMIDeleteForgetsState(t *testing.T) {
	inv, _ := ParseInventory([]byte(testInventory))
	w := NewMetricsWorker(nil, inv, WithInputTopic(telemetry.TopicRawGNMI))
	t0 := time.Date(2026, 11, 29, 14, 0, 0, 0, time.UTC)
	path := func(s string) *gpb.Path {
		p, err := gnmi.ParsePath(s, "")
		if err != nil {
			t.Fatal(err)
		}
		return p
	}
	update := func(p, v string) *gpb.Update {
		return &gpb.Update{Path: path(p), Val: &gpb.TypedValue{Value: &gpb.TypedValue_StringVal{StringVal: v}}}
	}
	notif := func(dels []string, upds ...*gpb.Update) *gpb.Notification {
		n := &gpb.Notification{Update: upds}
		for _, d := range dels {
			n.Delete = append(n.Delete, path(d))
		}
		return n
	}
	const (
		eth1  = "/interfaces/interface[name=Ethernet1]"
		eth2  = "/interfaces/interface[name=Ethernet2]"
		eth3  = "/interfaces/interface[name=Ethernet3]"
		vrf   = "/network-instances/network-instance[name=CUST-A]"
		peer2 = vrf + "/protocols/protocol[identifier=BGP][name=BGP]/bgp/neighbors/neighbor[neighbor-address=10.0.0.2]"
		peer3 = vrf + "/protocols/protocol[identifier=BGP][name=BGP]/bgp/neighbors/neighbor[neighbor-address=10.0.0.3]"
	)
	steps := []struct {
		n    *gpb.Notification
		want string
	}{
		{notif(nil, update(eth1+"/state/oper-status", "UP"), update(eth2+"/state/oper-status", "UP"), update(eth3+"/state/oper-status", "UP")), ""},
		// Removed, and made again: it comes up DOWN, then UP.
		{notif([]string{eth1}), ""},
		{notif(nil, update(eth1+"/state/oper-status", "DOWN")), ""},
		{notif(nil, update(eth1+"/state/oper-status", "UP")), "interface_up Ethernet1"},
		// Its oper-status leaf deleted (a resync's snapshot without the
		// port deletes it leaf by leaf), and made again: the same.
		{notif([]string{eth1 + "/state/oper-status"}), ""},
		{notif(nil, update(eth1+"/state/oper-status", "DOWN")), ""},
		{notif(nil, update(eth1+"/state/oper-status", "UP")), "interface_up Ethernet1"},
		// Replaced in one notification: a change all the same.
		{notif([]string{eth2}, update(eth2+"/state/oper-status", "DOWN")), "interface_down Ethernet2"},
		// Every interface deleted.
		{notif([]string{"/interfaces"}), ""},
		{notif(nil, update(eth3+"/state/oper-status", "LOWER_LAYER_DOWN")), ""},
		// A BGP neighbor removed and configured again.
		{notif(nil, update(peer2+"/state/session-state", "ESTABLISHED"), update(peer3+"/state/session-state", "ESTABLISHED")), ""},
		{notif([]string{peer2}), ""},
		{notif(nil, update(peer2+"/state/session-state", "IDLE")), ""},
		{notif(nil, update(peer2+"/state/session-state", "ESTABLISHED")), "bgp_peer_up 10.0.0.2 vrf CUST-A"},
		// The whole VRF.
		{notif([]string{vrf}), ""},
		{notif(nil, update(peer3+"/state/session-state", "ACTIVE")), ""},
	}
	for i, st := range steps {
		st.n.Timestamp = t0.Add(time.Duration(i) * time.Second).UnixNano()
		var got []string
		for _, m := range gnmi.Flatten("spine1", st.n, t0) {
			v, _, err := m.AppendJSON(nil, nil)
			if err != nil {
				t.Fatal(err)
			}
			evs, ok := w.enrich(&broker.Record{Topic: telemetry.TopicRawGNMI, Value: v})
			if !ok {
				t.Fatalf("step %d: record not enriched: %s", i, v)
			}
			for _, ev := range evs {
				got = append(got, ev.Type+" "+ev.Object)
			}
		}
		switch {
		case st.want == "" && len(got) > 0:
			t.Errorf("step %d: events %q, want none", i, got)
		case st.want != "" && (len(got) != 1 || got[0] != st.want):
			t.Errorf("step %d: events %q, want %q", i, got, st.want)
		}
	}
}

// TestGNMIDeleteRemovesInterfaceView: a gNMI delete of an interface (or
// of its state, or of every interface) gives a delete of its
// source-independent "interface" record as well, which sinks that keep
// series (Prometheus) drop at once: else a removed port-channel would
// show up, with its last rates, until stale. A leaf's delete does not.
func TestGNMIDeleteRemovesInterfaceView(t *testing.T) {
	inv, _ := ParseInventory([]byte(testInventory))
	w := NewMetricsWorker(nil, inv, WithInputTopic(telemetry.TopicRawGNMI))
	t0 := time.Date(2026, 11, 29, 14, 0, 0, 0, time.UTC)
	const one = `"measurement":"interface","device":"mx1","tags":{"interface":"Port-Channel5","role":"core",`
	const all = `"measurement":"interface","device":"mx1","tags":{"role":"core",`
	for _, tc := range []struct{ path, want string }{
		{"/interfaces/interface[name=Port-Channel5]", one},
		{"/interfaces/interface[name=Port-Channel5]/state", one},
		{"/interfaces", all},
		{"/interfaces/interface[name=Port-Channel5]/state/counters/in-octets", ""},
		{"/interfaces/interface[name=Port-Channel5]/config/description", ""},
	} {
		p, err := gnmi.ParsePath(tc.path, "")
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range gnmi.Flatten("mx1", &gpb.Notification{Timestamp: t0.UnixNano(), Delete: []*gpb.Path{p}}, t0) {
			v, _, err := m.AppendJSON(nil, nil)
			if err != nil {
				t.Fatal(err)
			}
			if _, ok := w.enrich(&broker.Record{Topic: telemetry.TopicRawGNMI, Value: v}); !ok {
				t.Fatalf("%s: record not enriched: %s", tc.path, v)
			}
			var got string
			if w.interfaceView(&w.row, &w.view) {
				b, err := w.view.AppendJSON(nil)
				if err != nil {
					t.Fatal(err)
				}
				got = string(b)
			}
			switch {
			case tc.want == "" && got != "":
				t.Errorf("delete of %s: view %s, want none", tc.path, got)
			case tc.want != "" && (!strings.Contains(got, tc.want) || !strings.Contains(got, `"fields":{"deleted":true}`)):
				t.Errorf("delete of %s: view %s, want one with %s", tc.path, got, tc.want)
			}
		}
	}
}

// TestGNMIInterfacesContainerJSON: a target answering a subscription to
// /interfaces with the whole container as one JSON object gives, through
// the collector's records, each interface's rates and its oper-status
// changes, as the path form does.
func TestGNMIInterfacesContainerJSON(t *testing.T) {
	inv, _ := ParseInventory([]byte(testInventory))
	w := NewMetricsWorker(nil, inv, WithInputTopic(telemetry.TopicRawGNMI))
	t0 := time.Date(2026, 11, 29, 14, 0, 0, 0, time.UTC)
	rates := map[string]any{}
	var events []string
	for i, js := range []string{
		`{"openconfig-interfaces:interface":[{"name":"Ethernet1","state":{"oper-status":"UP","counters":{"in-octets":"1000"}}},{"name":"Ethernet2","state":{"oper-status":"UP","counters":{"in-octets":"0"}}}]}`,
		`{"openconfig-interfaces:interface":[{"name":"Ethernet1","state":{"oper-status":"DOWN","counters":{"in-octets":"2000"}}},{"name":"Ethernet2","state":{"oper-status":"UP","counters":{"in-octets":"500"}}}]}`,
	} {
		p, _ := gnmi.ParsePath("/interfaces", "")
		n := &gpb.Notification{Timestamp: t0.Add(time.Duration(i) * 10 * time.Second).UnixNano(),
			Update: []*gpb.Update{{Path: p, Val: &gpb.TypedValue{Value: &gpb.TypedValue_JsonIetfVal{JsonIetfVal: []byte(js)}}}}}
		for _, m := range gnmi.Flatten("mx1", n, t0) {
			v, _, err := m.AppendJSON(nil, nil)
			if err != nil {
				t.Fatal(err)
			}
			evs, ok := w.enrich(&broker.Record{Topic: telemetry.TopicRawGNMI, Value: v})
			if !ok {
				t.Fatalf("record not enriched: %s", v)
			}
			for _, ev := range evs {
				events = append(events, ev.Type+" "+ev.Object)
			}
			if f, ok := w.row.Field("in_octets_rate"); ok {
				name, _ := w.row.Tag("name")
				rates[name] = f.Value()
			}
		}
	}
	if want := map[string]any{"Ethernet1": 100.0, "Ethernet2": 50.0}; !reflect.DeepEqual(rates, want) {
		t.Errorf("in_octets_rate by interface %v, want %v", rates, want)
	}
	if len(events) != 1 || events[0] != "interface_down Ethernet1" {
		t.Errorf("events %q, want interface_down Ethernet1", events)
	}
}
