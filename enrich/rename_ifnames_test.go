package enrich

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/weirnet/weir/broker"
	"github.com/weirnet/weir/telemetry"
)

// TestTrapNamedByIfIndexAfterRename: a reload that renames a polled
// device (an inventory entry added for its address; its SNMP target
// renamed in the config; SIGHUP) renames the device of its polls, traps
// and hostless syslog at once. A linkDown trap that names the interface
// by ifIndex alone, arriving before the target's next poll, is still about
// the interface the polls named (Gi0/3): the device's name changed, not
// its interfaces. Named "ifIndex 3", its event's object_id is not that of
// the syslog line and the poll of the same change, which are then
// published again as another object.
func TestTrapNamedByIfIndexAfterRename(t *testing.T) {
	t.Run("inventory names the address", func(t *testing.T) {
		trapAfterRename(t, func(reload func(string), targets *SNMPTargets) {
			reload("devices:\n  - {name: edge1, address: 192.0.2.1, site: ams1}\n  - {name: labrouter, address: 192.0.2.50, site: lab}\n")
		}, "device_renamed labrouter lab1 site=lab from raw.traps", // the target's device renamed: see devicerename_test.go
			"interface_down labrouter Gi0/3 site=lab from raw.traps")
	})
	t.Run("target renamed", func(t *testing.T) {
		trapAfterRename(t, func(_ func(string), targets *SNMPTargets) {
			targets.Set([]SNMPTarget{{Name: "lab2", Host: "192.0.2.50"}})
		}, "interface_down lab2 Gi0/3 site= from raw.traps")
	})
}

// trapAfterRename runs rename (given the inventory's reload and the SNMP
// targets) between the polls of target lab1 (192.0.2.50) and a linkDown
// trap from it naming ifIndex 3 alone, and checks the events are want.
func trapAfterRename(t *testing.T, rename func(reload func(string), targets *SNMPTargets), want ...string) {
	inv, reload := renameInventory(t, "devices:\n  - {name: edge1, address: 192.0.2.1, site: ams1}\n")
	b := openBroker(t)

	t0 := time.Now().Add(-time.Minute)
	rows := []telemetry.Metric{{V: 1, Measurement: "snmp_status", Device: "lab1", Source: "snmp",
		Tags: map[string]string{"agent": "192.0.2.50"}, Fields: map[string]any{"snmp_up": int64(1)}, Time: t0}}
	for i := range 2 { // up, and up again: no event
		rows = append(rows, telemetry.Metric{V: 1, Measurement: "snmp_interface", Device: "lab1", Source: "snmp",
			Tags:   map[string]string{"ifIndex": "3", "ifName": "Gi0/3", "ifDescr": "GigabitEthernet0/3", "agent": "192.0.2.50"},
			Fields: map[string]any{"ifOperStatus": int64(1)}, Time: t0.Add(time.Duration(i) * 5 * time.Second)})
	}
	produceMetrics(t, b, rows)
	targets := NewSNMPTargets([]SNMPTarget{{Name: "lab1", Host: "192.0.2.50"}})
	opts := []WorkerOption{WithSharedEventRules(NewEventRules(30*time.Second, DefaultFlapThreshold, DefaultFlapWindow)),
		WithSNMPTargets(targets)}
	func() {
		defer startRunner(NewMetricsWorker(b, inv, opts...))()
		waitCommitted(t, b, telemetry.TopicRawSNMP, len(rows))
	}()

	rename(reload, targets) // SIGHUP
	tr := rfc2863LinkDown("192.0.2.50", 3)
	v, _ := json.Marshal(&tr)
	if err := b.Produce(context.Background(), telemetry.TopicRawTraps, []broker.Record{{Key: []byte(tr.Device), Value: v}}); err != nil {
		t.Fatal(err)
	}
	func() {
		defer startRunner(NewTrapWorker(b, inv, opts...))()
		waitCommitted(t, b, telemetry.TopicRawTraps, 1)
	}()
	wantEventLines(t, b, want)
}
