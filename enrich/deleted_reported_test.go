package enrich

import (
	"testing"
	"time"

	"github.com/weirnet/weir/broker"
	"github.com/weirnet/weir/telemetry"
)

// TestDeletedObjectsOwnEventsForgotten: a port-channel (or a BGP
// neighbor) whose own gNMI updates raised events, then deleted and made
// again, starts over: its first state is a baseline (a port-channel made
// again comes up DOWN: no interface_down), not a change from the events
// it raised before its delete. Before, the detector still held the
// object's last reported state (from the same gNMI path, before the
// delete), firstMayChange took the new object's first state for another
// path's change, and the re-created port-channel coming up down raised
// interface_down (within the state hold, the flap window).
func TestDeletedObjectsOwnEventsForgotten(t *testing.T) {
	h := newPathsHarness(t, telemetry.TopicRawGNMI)
	const pc = "/interfaces/interface[name=Port-Channel5]"
	const nbr = "/network-instances/network-instance[name=default]/protocols/protocol[identifier=BGP][name=BGP]/bgp/neighbors/neighbor[neighbor-address=10.0.0.1]"
	oper := func(at time.Time, s string) broker.Record {
		return h.rec(telemetry.TopicRawGNMI, telemetry.Metric{V: 1, Measurement: "interfaces_interface_state", Device: "edge1",
			Tags: map[string]string{"name": "Port-Channel5", "path": pc + "/state"}, Fields: map[string]any{"oper-status": s}, Time: at, Source: "gnmi"})
	}
	session := func(at time.Time, s string) broker.Record {
		return h.rec(telemetry.TopicRawGNMI, telemetry.Metric{V: 1, Measurement: "network_instances_network_instance_protocols_protocol_bgp_neighbors_neighbor_state",
			Device: "edge1", Tags: map[string]string{"name": "default", "identifier": "BGP", "neighbor-address": "10.0.0.1", "path": nbr + "/state"},
			Fields: map[string]any{"session-state": s}, Time: at, Source: "gnmi"})
	}
	delIf := func(at time.Time) broker.Record {
		return h.rec(telemetry.TopicRawGNMI, telemetry.Metric{V: 1, Measurement: "interfaces_interface", Device: "edge1",
			Tags: map[string]string{"name": "Port-Channel5", "path": pc}, Fields: map[string]any{"deleted": true}, Time: at, Source: "gnmi"})
	}
	delNbr := func(at time.Time) broker.Record {
		return h.rec(telemetry.TopicRawGNMI, telemetry.Metric{V: 1, Measurement: "network_instances_network_instance_protocols_protocol_bgp_neighbors_neighbor",
			Device: "edge1", Tags: map[string]string{"name": "default", "identifier": "BGP", "neighbor-address": "10.0.0.1", "path": nbr},
			Fields: map[string]any{"deleted": true}, Time: at, Source: "gnmi"})
	}
	steps := []struct {
		what string
		rec  func(time.Time) broker.Record
		want string
	}{
		{"first states", func(at time.Time) broker.Record { return oper(at, "UP") }, ""},
		{"", func(at time.Time) broker.Record { return session(at, "ESTABLISHED") }, ""},
		{"port-channel down", func(at time.Time) broker.Record { return oper(at, "DOWN") }, "interface_down Port-Channel5"},
		{"port-channel up", func(at time.Time) broker.Record { return oper(at, "UP") }, "interface_up Port-Channel5"},
		{"peer down", func(at time.Time) broker.Record { return session(at, "IDLE") }, "bgp_peer_down 10.0.0.1"},
		{"port-channel removed", delIf, ""},
		{"peer removed", delNbr, ""},
		{"port-channel made again, down", func(at time.Time) broker.Record { return oper(at, "DOWN") }, ""},
		{"peer configured again, established", func(at time.Time) broker.Record { return session(at, "ESTABLISHED") }, ""},
		{"port-channel up", func(at time.Time) broker.Record { return oper(at, "UP") }, "interface_up Port-Channel5"},
		{"peer down", func(at time.Time) broker.Record { return session(at, "IDLE") }, "bgp_peer_down 10.0.0.1"},
	}
	for i, st := range steps {
		at := h.t0.Add(time.Duration(i) * 40 * time.Second)
		got := h.batch(at, st.rec(at))
		switch {
		case st.want == "" && len(got) > 0:
			t.Errorf("step %d (%s): events %q, want none", i, st.what, got)
		case st.want != "" && (len(got) != 1 || got[0] != st.want):
			t.Errorf("step %d (%s): events %q, want %q", i, st.what, got, st.want)
		}
	}
}
