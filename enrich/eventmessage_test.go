package enrich

import (
	"strings"
	"testing"
	"time"

	"github.com/weirnet/weir/telemetry"
)

// TestMetricEventsSayWhy: the events a poll or a gNMI update raises carry
// a message, as a syslog line's and a trap's do: the Alertmanager form of
// the webhook sink posts it as the alert's summary, and a device_unreachable
// whose summary is empty tells the on-call engineer nothing of the poll's
// error (a timeout, a port unreachable, an authentication failure), which
// the snmp_status record beside it has.
func TestMetricEventsSayWhy(t *testing.T) {
	w := loneMetricsWorker()
	off := int64(0)
	enrich := func(m telemetry.Metric) []telemetry.Event {
		off++
		_, evs := enrichAt(t, w, m, off)
		return evs
	}
	one := func(what string, evs []telemetry.Event, typ string, says ...string) {
		t.Helper()
		if len(evs) != 1 || evs[0].Type != typ {
			t.Fatalf("%s: events %+v, want one %s", what, evs, typ)
		}
		for _, s := range says {
			if !strings.Contains(evs[0].Message, s) {
				t.Errorf("%s: %s message %q, want it to say %q", what, typ, evs[0].Message, s)
			}
		}
	}
	at := func(sec int) time.Time { return casesT0.Add(time.Duration(sec) * time.Second) }
	status := func(sec int, up int64, err string) telemetry.Metric {
		return telemetry.Metric{V: 1, Measurement: "snmp_status", Device: "r9", Tags: map[string]string{"agent": "198.51.100.9"},
			Fields: map[string]any{"snmp_up": up, "error": err}, Time: at(sec), Uptime: uint32(100 * sec), Source: "snmp"}
	}
	const why = "request timeout (after 1 retries)"
	enrich(status(0, 1, ""))
	one("a poll failing", enrich(status(60, 0, why)), "device_unreachable", why)
	one("a poll answering again", enrich(status(120, 1, "")), "device_reachable", "answered")
	removed := status(130, 0, "")
	removed.Fields = map[string]any{"removed": true}
	enrich(status(125, 0, why))
	one("the target taken out of the config", enrich(removed), "device_unreachable_cleared", "removed")

	row := func(sec int, oper int64, uptime uint32) telemetry.Metric {
		return telemetry.Metric{V: 1, Measurement: "snmp_interface", Device: "r8",
			Tags:   map[string]string{"agent": "198.51.100.8", "ifIndex": "3", "ifName": "Gi0/3"},
			Fields: map[string]any{"ifOperStatus": oper}, Time: at(sec), Uptime: uptime, Source: "snmp"}
	}
	enrich(row(0, 1, 100000))
	one("a poll finding the port down", enrich(row(60, 7, 106000)), "interface_down", "ifOperStatus", "lowerLayerDown(7)")
	one("a poll finding it up", enrich(row(120, 1, 112000)), "interface_up", "ifOperStatus", "up(1)")
	one("a poll after a restart", enrich(row(180, 1, 500)), "device_rebooted", "sysUpTime")

	leaf := func(sec int, measurement, leaf, v string, tags map[string]string) telemetry.Metric {
		return telemetry.Metric{V: 1, Measurement: measurement, Device: "spine9", Tags: tags,
			Fields: map[string]any{leaf: v}, Time: at(sec), Source: "gnmi"}
	}
	ifTags := map[string]string{"name": "Ethernet1", "path": "/interfaces/interface[name=Ethernet1]/state"}
	enrich(leaf(0, "interfaces_interface_state", "oper-status", "UP", ifTags))
	one("gNMI oper-status", enrich(leaf(10, "interfaces_interface_state", "oper-status", "LOWER_LAYER_DOWN", ifTags)), "interface_down", "oper-status", "LOWER_LAYER_DOWN")
	bgp := "network_instances_network_instance_protocols_protocol_bgp_neighbors_neighbor_state"
	bgpTags := map[string]string{"name": "default", "neighbor-address": "10.0.0.1", "identifier": "BGP", "protocol_name": "BGP"}
	enrich(leaf(0, bgp, "session-state", "ESTABLISHED", bgpTags))
	one("gNMI session-state", enrich(leaf(10, bgp, "session-state", "ACTIVE", bgpTags)), "bgp_peer_down", "session-state", "ACTIVE")
}
