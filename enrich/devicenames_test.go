package enrich

import (
	"cmp"
	"os"
	"path/filepath"
	"testing"

	"github.com/weirnet/weir/telemetry"
)

// TestDeviceNamerNamesAsTheWorkers: the names a collector keys raw records
// by are those the workers give the records enriched from them: by the
// inventory's name (as sent, in another case, by its first label, by
// address), by the SNMP target polled at the sender, by a trap's
// snmpTrapAddress; "" where the record keeps its own.
func TestDeviceNamerNamesAsTheWorkers(t *testing.T) {
	inv, err := ParseInventory([]byte(testInventory))
	if err != nil {
		t.Fatal(err)
	}
	targets := NewSNMPTargets([]SNMPTarget{{Name: "pe9", Host: "198.51.100.9"}, {Name: "edge1-snmp", Host: "192.0.2.1"}})
	n := NewDeviceNamer(inv, targets, nil)
	for _, c := range []struct{ hostname, source, want string }{
		{"edge1", "192.0.2.1:514", "edge1"},
		{"EDGE1.ams.example.net", "127.0.0.1:514", "edge1"}, // first label, folded
		{"", "192.0.2.1:514", "edge1"},                      // by address
		{"Core1.FRA.example.net.", "127.0.0.1:514", "core1.fra.example.net"},
		{"", "198.51.100.9:514", "pe9"},          // the target polled at the sender
		{"198.51.100.9", "127.0.0.1:514", "pe9"}, // ... named by the hostname
		{"Unlisted-Router", "127.0.0.1:514", ""}, // not in the inventory
		{"", "10.1.2.3:514", ""},                 // only in a range: no device's name
		{"", "127.0.0.1:514", ""},
	} {
		if got := n.Name(c.hostname, c.source); got != c.want {
			t.Errorf("Name(%q, %q) = %q, want %q", c.hostname, c.source, got, c.want)
		}
		device := c.hostname
		if device == "" {
			device = senderAddr(c.source).String()
		}
		want, _ := nameDevice(inv, targets, nil, device, c.hostname, c.source)
		if got := n.Name(c.hostname, c.source); (got == "" && want != device) || (got != "" && got != want) {
			t.Errorf("Name(%q, %q) = %q; the syslog worker names it %q", c.hostname, c.source, got, want)
		}
	}
	relayed := &telemetry.Trap{Device: "203.0.113.5", SourceAddr: "203.0.113.5:162",
		Varbinds: []telemetry.Varbind{{OID: "1.3.6.1.6.3.18.1.3.0", Value: "192.0.2.1"}}}
	for _, c := range []struct {
		tr   *telemetry.Trap
		want string
	}{
		{&telemetry.Trap{Device: "192.0.2.1", SourceAddr: "192.0.2.1:40000"}, "edge1"},
		{&telemetry.Trap{Device: "198.51.100.9", SourceAddr: "198.51.100.9:40000"}, "pe9"},
		{&telemetry.Trap{Device: "203.0.113.7", SourceAddr: "203.0.113.7:40000"}, "203.0.113.7"},
		{relayed, "edge1"},
		{&telemetry.Trap{Device: "203.0.113.5", SourceAddr: "203.0.113.5:162",
			Varbinds: []telemetry.Varbind{{OID: ".1.3.6.1.6.3.18.1.3.0", Value: "203.0.113.8"}}}, "203.0.113.8"}, // the agent's address
	} {
		w := &TrapWorker{inv: inv, targets: targets, m: NewWorkerMetrics(nil).m, warming: true}
		want, _ := w.device(c.tr)
		if got := n.TrapDevice(c.tr); got != c.want || got != want {
			t.Errorf("TrapDevice(%s via %s) = %q, want %q (the trap worker: %q)", c.tr.Device, c.tr.SourceAddr, got, c.want, want)
		}
	}
	for _, c := range []struct{ target, agent, want string }{
		{"edge1", "192.0.2.1", "edge1"},
		{"edge1-snmp", "192.0.2.1", "edge1"}, // by address
		{"mx1", "mx1.example.net", "mx1"},
		{"pe9", "198.51.100.9", ""},
		{"lab9", "10.0.0.9", ""}, // a range names no device
	} {
		if got := n.SNMPTarget(c.target, c.agent); got != c.want {
			t.Errorf("SNMPTarget(%q, %q) = %q, want %q", c.target, c.agent, got, c.want)
		}
	}
	// A target the inventory lists by the sysName its polls gave, once
	// a metrics worker of the process read it.
	targets.setSysName("pe9", "mx1")
	if got := n.SNMPTarget("pe9", "198.51.100.9"); got != "mx1" {
		t.Errorf("SNMPTarget of a target whose sysName is listed: %q, want mx1", got)
	}
	if got := n.Name("", "198.51.100.9:514"); got != "mx1" {
		t.Errorf("Name of a line from that target: %q, want mx1", got)
	}
	if got := n.GNMITarget("EDGE1"); got != "edge1" {
		t.Errorf("GNMITarget(EDGE1) = %q, want edge1", got)
	}
	if got := n.GNMITarget("pe9"); got != "" {
		t.Errorf("GNMITarget(pe9) = %q, want \"\" (gNMI gives no sysName)", got)
	}
}

// TestDeviceNamerNamesByGNMITargetAddress: the collectors key a syslog
// line without a hostname, or a trap, from the address a gNMI target is
// dialed at by that target's name, as the syslog and trap workers name
// it: the inventory first (by address; a range names no device), then an
// SNMP target polling the address, then the gNMI target. Reloads of the
// targets (SIGHUP) apply at once, and nothing is allocated.
func TestDeviceNamerNamesByGNMITargetAddress(t *testing.T) {
	inv, err := ParseInventory([]byte(testInventory))
	if err != nil {
		t.Fatal(err)
	}
	snmp := NewSNMPTargets([]SNMPTarget{{Name: "pe9", Host: "198.51.100.9"}, {Name: "simA", Host: "127.0.0.1"}, {Name: "simB", Host: "127.0.0.1"}})
	gt := NewGNMITargets([]GNMITarget{
		{Name: "spine1", Address: "198.51.100.20:57400"},
		{Name: "edge1-gnmi", Address: "192.0.2.1:6030"}, // the inventory lists its address
		{Name: "lab5", Address: "10.0.0.5:6030"},        // inside a range
		{Name: "pe9-gnmi", Address: "198.51.100.9:57400"},
		{Name: "sim-gnmi", Address: "127.0.0.1:57400"}, // two SNMP targets poll that address
	})
	n := NewDeviceNamer(inv, snmp, gt)
	w := &TrapWorker{inv: inv, targets: snmp, gnmi: gt, m: NewWorkerMetrics(nil).m, warming: true}
	for _, c := range []struct{ hostname, source, want string }{
		{"", "198.51.100.20:514", "spine1"},
		{"198.51.100.20", "203.0.113.1:514", "spine1"},  // an address for a hostname
		{"spine1.example.net", "198.51.100.20:514", ""}, // a hostname is its own
		{"", "192.0.2.1:514", "edge1"},
		{"", "10.0.0.5:514", "lab5"},
		{"", "198.51.100.9:514", "pe9"},
		{"", "127.0.0.1:514", ""},
	} {
		got := n.Name(c.hostname, c.source)
		device := recordDevice(c.hostname, c.source)
		want, _ := nameDevice(inv, snmp, gt, device, c.hostname, c.source)
		if got != c.want || cmp.Or(got, device) != want {
			t.Errorf("Name(%q, %q) = %q, want %q (the syslog worker names it %q)", c.hostname, c.source, got, c.want, want)
		}
		if c.hostname != "" {
			continue
		}
		tr := &telemetry.Trap{Device: senderAddr(c.source).String(), SourceAddr: c.source}
		named, _ := w.device(tr)
		if key := n.TrapDevice(tr); key != cmp.Or(c.want, tr.Device) || key != named {
			t.Errorf("TrapDevice(%s) = %q, want %q (the trap worker: %q)", c.source, key, cmp.Or(c.want, tr.Device), named)
		}
		if a := testing.AllocsPerRun(100, func() { n.Name(c.hostname, c.source) }); a != 0 {
			t.Errorf("Name(%q, %q): %v allocations, want 0", c.hostname, c.source, a)
		}
	}
	gt.Set([]GNMITarget{{Name: "spine1", Address: "198.51.100.21:57400"}})
	if got, moved := n.Name("", "198.51.100.20:514"), n.Name("", "198.51.100.21:514"); got != "" || moved != "spine1" {
		t.Errorf("after the target moved: its old address named %q, its new one %q; want \"\", spine1", got, moved)
	}
}

// TestDeviceNamerFollowsReloads: an inventory reloaded (the file changed,
// SIGHUP) and targets Set anew name the next records.
func TestDeviceNamerFollowsReloads(t *testing.T) {
	path := filepath.Join(t.TempDir(), "inventory.yaml")
	if err := os.WriteFile(path, []byte("devices:\n  - {name: edge1, address: 127.0.0.1}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	inv, err := LoadInventory(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	targets := NewSNMPTargets(nil)
	n := NewDeviceNamer(inv, targets, nil)
	if got := n.Name("", "127.0.0.1:514"); got != "edge1" {
		t.Fatalf("before the reload: %q", got)
	}
	if err := os.WriteFile(path, []byte("devices:\n  - {name: edge2, address: 127.0.0.1}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := inv.Reload(); err != nil {
		t.Fatal(err)
	}
	if got := n.Name("", "127.0.0.1:514"); got != "edge2" {
		t.Errorf("after the reload: %q, want edge2", got)
	}
	targets.Set([]SNMPTarget{{Name: "r7", Host: "192.0.2.77"}})
	if got := n.Name("", "192.0.2.77:514"); got != "r7" {
		t.Errorf("after the targets were set: %q, want r7", got)
	}
}

// TestDeviceNamerAllocatesNothingForTheCommonLine: a syslog line whose
// hostname is the inventory's name, or that the inventory does not list
// (in whatever case), is named without an allocation: the collector asks
// for every line.
func TestDeviceNamerAllocatesNothingForTheCommonLine(t *testing.T) {
	inv, err := ParseInventory([]byte(testInventory))
	if err != nil {
		t.Fatal(err)
	}
	n := NewDeviceNamer(inv, NewSNMPTargets([]SNMPTarget{{Name: "pe9", Host: "198.51.100.9"}}), nil)
	for _, c := range []struct{ hostname, source string }{
		{"edge1", "192.0.2.1:514"},
		{"Unlisted-Router.ams.example.net", "203.0.113.1:514"},
		{"UNLISTED", "203.0.113.1:514"},
		{"", "203.0.113.1:514"},
		{"EDGE1.ams.example.net", "127.0.0.1:514"}, // renamed, by its first label folded
	} {
		if a := testing.AllocsPerRun(100, func() { n.Name(c.hostname, c.source) }); a != 0 {
			t.Errorf("Name(%q, %q): %v allocations, want 0", c.hostname, c.source, a)
		}
	}
	empty := NewDeviceNamer(nil, nil, nil)
	if a := testing.AllocsPerRun(100, func() { empty.Name("Router", "203.0.113.1:514") }); a != 0 {
		t.Errorf("without an inventory: %v allocations, want 0", a)
	}
}

// BenchmarkDeviceNamerName is the syslog collector's cost per line of
// keying by the inventory's names: a line from a listed device by its
// name, one by its FQDN in capitals (renamed), one the inventory does not
// list, one without hostname.
func BenchmarkDeviceNamerName(b *testing.B) {
	inv, err := ParseInventory([]byte(testInventory))
	if err != nil {
		b.Fatal(err)
	}
	n := NewDeviceNamer(inv, NewSNMPTargets([]SNMPTarget{{Name: "pe9", Host: "198.51.100.9"}}), nil)
	lines := []struct{ hostname, source string }{
		{"edge1", "192.0.2.1:514"}, {"EDGE1.ams.example.net", "192.0.2.1:514"},
		{"Unlisted-Router", "203.0.113.1:514"}, {"", "203.0.113.1:514"},
	}
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		l := &lines[i%len(lines)]
		n.Name(l.hostname, l.source)
	}
}
