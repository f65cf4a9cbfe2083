package enrich

import (
	"fmt"
	"testing"
	"time"

	"github.com/weirnet/weir/telemetry"
)

// BenchmarkGNMIDeleteAmongManyRows is a gNMI delete of a leaf that is no
// counter (a BGP neighbor's, as route churn sends them) on a worker that
// keeps the rows of many devices: 200,000 SNMP interface rows of 2,000
// devices, and 500 gNMI rows of the deleting router. What it costs is
// what every such delete costs the worker.
func BenchmarkGNMIDeleteAmongManyRows(b *testing.B) {
	w := NewMetricsWorker(nil, nil, WithInputTopic(telemetry.TopicRawGNMI))
	w.rates.setNow(time.Now())
	for d := range 2000 {
		for i := range 100 {
			tags := []telemetry.Tag{{Key: "agent", Value: "192.0.2.1"}, {Key: "ifIndex", Value: fmt.Sprint(i)}}
			rc := w.rates.row(appendRowID(nil, fmt.Sprintf("sw%d", d), "snmp_interface", tags), maxMetricsObjects)
			rc.counters = append(rc.counters, counterSample{field: "ifHCInOctets", value: 1})
		}
	}
	for i := range 500 {
		tags := []telemetry.Tag{{Key: "name", Value: fmt.Sprintf("Ethernet%d", i)}, {Key: "path", Value: fmt.Sprintf("/interfaces/interface[name=Ethernet%d]/state/counters", i)}}
		rc := w.rates.row(appendRowID(nil, "mx1", "interfaces_interface_state_counters", tags), maxMetricsObjects)
		rc.counters = append(rc.counters, counterSample{field: "in-octets", value: 1})
	}
	del := telemetry.Point{Measurement: "network_instances_network_instance_protocols_protocol_bgp_neighbors_neighbor_state", Device: "mx1",
		Tags:   []telemetry.Tag{{Key: "neighbor-address", Value: "192.0.2.9"}, {Key: "path", Value: "/network-instances/network-instance[name=default]/protocols/protocol[identifier=BGP][name=BGP]/bgp/neighbors/neighbor[neighbor-address=192.0.2.9]/state/session-state"}},
		Fields: []telemetry.Field{telemetry.BoolField("deleted", true)}}
	b.ReportAllocs()
	for b.Loop() {
		w.deletedCounter(&del)
	}
}

// TestRowsByPathFollowsRows: the index of rows by path that container
// deletes use keeps what the rows are: a row forgotten leaves it, and a
// device with none left is gone from it.
func TestRowsByPathFollowsRows(t *testing.T) {
	r := newRates()
	now := time.Now()
	r.setNow(now.Add(-2 * time.Hour))
	for i := range 3 {
		tags := []telemetry.Tag{{Key: "path", Value: fmt.Sprintf("/interfaces/interface[name=Ethernet%d]/state/counters", i)}}
		r.row(appendRowID(nil, "mx1", "interfaces_interface_state_counters", tags), maxMetricsObjects)
	}
	r.row(appendRowID(nil, "sw1", "snmp_interface", []telemetry.Tag{{Key: "ifIndex", Value: "1"}}), maxMetricsObjects)
	if n := len(r.byPath["mx1"]); n != 3 || len(r.byPath) != 1 {
		t.Fatalf("indexed %d paths of mx1, %d devices; want 3 of mx1 alone", n, len(r.byPath))
	}
	r.setNow(now)
	keep := []telemetry.Tag{{Key: "path", Value: "/interfaces/interface[name=Ethernet1]/state/counters"}}
	r.row(appendRowID(nil, "mx1", "interfaces_interface_state_counters", keep), maxMetricsObjects) // seen again
	r.forget(now.Add(-time.Hour), nil)
	if paths := r.byPath["mx1"]; len(paths) != 1 || len(paths[keep[0].Value]) != 1 {
		t.Fatalf("after forgetting two rows: %v", paths)
	}
	r.forget(now.Add(time.Hour), nil)
	if len(r.byPath) != 0 || len(r.rows) != 0 {
		t.Fatalf("after forgetting every row: %d rows, index %v", len(r.rows), r.byPath)
	}
}
