package enrich

import (
	"encoding/json"
	"fmt"
	"net/netip"
	"testing"
	"time"

	"github.com/weirnet/weir/broker"
	"github.com/weirnet/weir/telemetry"
)

// pollInterface enriches one SNMP interface row of edge1 on w.
func pollInterface(t *testing.T, w *MetricsWorker, index, name string, at time.Time) {
	t.Helper()
	m := telemetry.Metric{V: 1, Measurement: "snmp_interface", Device: "edge1", Source: "snmp",
		Tags:   map[string]string{"ifIndex": index, "ifName": name, "agent": "192.0.2.1"},
		Fields: map[string]any{"ifOperStatus": int64(1)}, Time: at}
	v, _ := json.Marshal(&m)
	if _, ok := w.enrich(&broker.Record{Topic: telemetry.TopicRawSNMP, Value: v}); !ok {
		t.Fatal("not enriched")
	}
}

// TestInterfaceNamesFollowTheLatestRow: two rows that name one ifIndex
// (a device renumbered its interfaces, and back, within the hour rows are
// kept) leave the table with the name the latest poll gave it, not the
// one the other row set in between: a linkDown about ifIndex 3 is about
// the interface that is ifIndex 3 now.
func TestInterfaceNamesFollowTheLatestRow(t *testing.T) {
	inv, _ := ParseInventory([]byte(testInventory))
	w := NewMetricsWorker(nil, inv)
	t0 := time.Date(2026, 11, 29, 14, 0, 0, 0, time.UTC)
	w.rates.setNow(t0)
	for i, name := range []string{"Gi0/3", "Gi0/4", "Gi0/3"} {
		pollInterface(t, w, "3", name, t0.Add(time.Duration(i)*time.Minute))
		if got, _ := w.det.names.name("edge1", "3"); got != name {
			t.Fatalf("poll %d: ifIndex 3 named %q, want %q", i, got, name)
		}
	}
}

// TestInterfaceNamesRefilledWhenFull: once the table is full and starts
// again, the next poll of a row it held puts its name back.
func TestInterfaceNamesRefilledWhenFull(t *testing.T) {
	inv, _ := ParseInventory([]byte(testInventory))
	w := NewMetricsWorker(nil, inv)
	w.det.names.limit = 8
	t0 := time.Date(2026, 11, 29, 14, 0, 0, 0, time.UTC)
	w.rates.setNow(t0)
	pollInterface(t, w, "3", "Gi0/3", t0)
	for i := range w.det.names.limit {
		w.det.names.set("other", fmt.Sprint(i), "x", 0, netip.Addr{}, true)
	}
	if _, ok := w.det.names.name("edge1", "3"); ok {
		t.Fatal("the table did not start again")
	}
	pollInterface(t, w, "3", "Gi0/3", t0.Add(time.Minute))
	if got, ok := w.det.names.name("edge1", "3"); !ok || got != "Gi0/3" {
		t.Errorf("after the table started again, ifIndex 3 named %q, %v; want Gi0/3", got, ok)
	}
}

// TestInterfaceNameDropped: a row forgotten (its device gone for an hour)
// takes its interface name with it, unless another row set the name
// since: the table does not keep the names of devices gone for good.
func TestInterfaceNameDropped(t *testing.T) {
	names := newInterfaceNames()
	a, b := names.newRowID(), names.newRowID()
	names.set("edge1", "3", "Gi0/3", a, netip.Addr{}, true)
	names.drop("edge1", "3", a)
	if _, ok := names.name("edge1", "3"); ok {
		t.Fatal("the name of a forgotten row is still there")
	}
	names.set("edge1", "4", "Gi0/4", a, netip.Addr{}, true)
	names.set("edge1", "4", "Gi0/4", b, netip.Addr{}, true) // another row of the same ifIndex, later
	names.drop("edge1", "4", a)
	if n, ok := names.name("edge1", "4"); !ok || n != "Gi0/4" {
		t.Fatal("a name another row set since went with the first row")
	}
}
