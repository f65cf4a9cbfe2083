package prometheus_test

import (
	"fmt"
	"testing"
	"time"

	promsink "github.com/weirnet/weir/sinks/prometheus"
	"github.com/weirnet/weir/telemetry"
)

// manySets is a collector serving 200,000 series sets: 100 interfaces of
// each of 2,000 devices, with a path label as gNMI's records have.
func manySets(now time.Time) *promsink.Collector {
	c := promsink.NewCollector("", 5*time.Minute, func() time.Time { return now })
	p := telemetry.Point{V: telemetry.Version, Measurement: "interfaces_interface_state_counters", Time: now, ReceivedAt: now, Source: "gnmi",
		Fields: []telemetry.Field{telemetry.UintField("in-octets", 1)}}
	for d := range 2000 {
		p.Device = fmt.Sprintf("sw%d", d)
		for i := range 100 {
			p.Tags = []telemetry.Tag{{Key: "name", Value: fmt.Sprintf("Ethernet%d", i)}, {Key: "path", Value: fmt.Sprintf("/interfaces/interface[name=Ethernet%d]/state/counters", i)}}
			c.UpdatePoint(&p)
		}
	}
	return c
}

// BenchmarkDeleteAmongManySets is a gNMI delete of a leaf that is no
// series' (a BGP neighbor's, as route churn sends them), and enrich's
// delete of an interface's view records, on a sink serving 200,000 series
// sets: what each such record costs the sink, under the lock its scrapes
// take too.
func BenchmarkDeleteAmongManySets(b *testing.B) {
	now := time.Now()
	c := manySets(now)
	deleted := []telemetry.Field{telemetry.BoolField("deleted", true)}
	for _, d := range []struct {
		name string
		p    telemetry.Point
	}{
		{"gnmi_leaf", telemetry.Point{Measurement: "network_instances_network_instance_protocols_protocol_bgp_neighbors_neighbor_state", Device: "sw7",
			Tags:   []telemetry.Tag{{Key: "neighbor-address", Value: "192.0.2.9"}, {Key: "path", Value: "/network-instances/network-instance[name=default]/protocols/protocol[identifier=BGP][name=BGP]/bgp/neighbors/neighbor[neighbor-address=192.0.2.9]/state/session-state"}},
			Fields: deleted, Time: now, ReceivedAt: now, Source: "gnmi"}},
		{"enrich_view", telemetry.Point{Measurement: "interface_in_octets_rate", Device: "sw7",
			Tags: []telemetry.Tag{{Key: "interface", Value: "Ethernet3"}}, Fields: deleted, Time: now, ReceivedAt: now, Source: "enrich"}},
	} {
		b.Run(d.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				c.UpdatePoint(&d.p)
			}
		})
	}
}
