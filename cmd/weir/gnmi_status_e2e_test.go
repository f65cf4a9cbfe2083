package main

import (
	"context"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	gnmisim "github.com/weirnet/weir/collectors/gnmi/sim"
	"github.com/weirnet/weir/collectors/snmp/snmptest"
)

// TestGNMIInterfaceStatusEndToEnd: a gNMI target's interface oper-status,
// subscribed on change as weir-sim's written config does, gives the
// interface measurement its oper_up (as an SNMP poll's ifOperStatus does),
// and an interface going DOWN raises interface_down for it.
func TestGNMIInterfaceStatusEndToEnd(t *testing.T) {
	target, lis := serveGNMISim(t)

	cfg := filepath.Join(t.TempDir(), "weir.yaml")
	os.WriteFile(cfg, []byte(fmt.Sprintf("gnmi:\n  subscriptions:\n"+
		"    oper: {path: /interfaces/interface/state/oper-status, mode: stream, stream_mode: on_change}\n"+
		"  targets:\n    - {name: spine9, address: %q, encoding: proto, insecure: true, subscriptions: [oper]}\n",
		lis)), 0o644)
	p := startWeir(t, t.TempDir(), "-c", cfg)

	p.waitRecord(t, "enriched.metrics", `"measurement":"interface"`, `"interface":"Ethernet2"`, `"oper_up":true`)
	target.Flap(1)
	p.waitRecord(t, "events", `"type":"interface_down"`, `"device":"spine9"`, `"object":"Ethernet2"`)
	p.waitRecord(t, "enriched.metrics", `"measurement":"interface"`, `"interface":"Ethernet2"`, `"oper_up":false`)
}

// TestGNMITargetNamedByInventoryAddress: an inventory entry that lists a
// device by its address named its syslog lines, but not the records of a
// gNMI target dialed at that address, looked up by the target's name
// alone: one link down was published twice, as rv1 (gNMI) and as spine9
// (syslog). The target's records are keyed and enriched as spine9 (with
// their target's name in a target tag), and the link down both paths
// report is one event.
func TestGNMITargetNamedByInventoryAddress(t *testing.T) {
	// The device's syslog line, from its address with a hostname the
	// inventory does not list.
	gnmiAndSyslogOneEvent(t, "devices:\n  - {name: spine9, address: 127.0.0.1, site: lab1}\n",
		"<189>Dec  3 07:00:01 rv1 Ebra: %LINEPROTO-5-UPDOWN: Line protocol on Interface Ethernet2, changed state to down",
		"spine9", `"target":"rv1"`, `"site":"lab1"`)
}

// TestGNMITargetNamesHostlessSyslog: with no inventory, a syslog line
// without a hostname (as IOS sends them) from the address a gNMI target is
// dialed at kept the address as its device (127.0.0.1), and the link down
// it and gNMI report (as rv1) was published twice, under two keys. It
// takes the target's name, in the collector's key and the enrichment
// alike, as it would an SNMP target's: one event.
func TestGNMITargetNamesHostlessSyslog(t *testing.T) {
	gnmiAndSyslogOneEvent(t, "",
		"<189>45: *Dec  3 07:00:01.123: %LINEPROTO-5-UPDOWN: Line protocol on Interface Ethernet2, changed state to down",
		"rv1", `"unknown":"true"`)
}

// gnmiAndSyslogOneEvent runs weir with the gNMI target rv1 dialed at
// 127.0.0.1 and inventory (none: "") and checks that its records, and the
// syslog line sent from 127.0.0.1, are keyed and enriched as device, and
// that the link down the line and then gNMI report is one event.
// enrichedTags are more of what the target's enriched records have.
func gnmiAndSyslogOneEvent(t *testing.T, inventory, line, device string, enrichedTags ...string) {
	target, lis := serveGNMISim(t)

	dir := t.TempDir()
	var enrich string
	if inventory != "" {
		inv := filepath.Join(dir, "inventory.yaml")
		os.WriteFile(inv, []byte(inventory), 0o644)
		enrich = fmt.Sprintf("enrich:\n  inventory: %s\n", inv)
	}
	cfg := filepath.Join(dir, "weir.yaml")
	os.WriteFile(cfg, []byte(fmt.Sprintf(enrich+"gnmi:\n  subscriptions:\n"+
		"    oper: {path: /interfaces/interface/state/oper-status, mode: stream, stream_mode: on_change}\n"+
		"  targets:\n    - {name: rv1, address: %q, encoding: proto, insecure: true, subscriptions: [oper]}\n",
		lis)), 0o644)
	p := startWeir(t, t.TempDir(), "-c", cfg)

	dev := fmt.Sprintf(`"device":%q`, device)
	p.waitRecord(t, "enriched.metrics", append([]string{dev, `"interface":"Ethernet2"`, `"oper_up":true`}, enrichedTags...)...)
	for _, r := range consumeAll(t, p, "raw.gnmi", func(r []consumedKeyed) bool { return len(r) > 0 }) {
		if r.Key != device {
			t.Errorf("raw.gnmi record keyed %q, want %s", r.Key, device)
		}
	}
	udp, _ := p.SyslogAddrs(t)
	conn, err := net.Dial("udp", udp)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	conn.Write([]byte(line))
	consumeAll(t, p, "events", func(r []consumedKeyed) bool { return downs(r) > 0 })
	for _, r := range consumeAll(t, p, "raw.syslog", func(r []consumedKeyed) bool { return len(r) > 0 }) {
		if r.Key != device {
			t.Errorf("raw.syslog record keyed %q, want %s", r.Key, device)
		}
	}
	target.Flap(1) // the same link down, by gNMI
	p.waitRecord(t, "enriched.metrics", dev, `"interface":"Ethernet2"`, `"oper_up":false`)
	events := consumeAll(t, p, "events", func(r []consumedKeyed) bool { return downs(r) > 0 })
	if downs(events) != 1 {
		t.Errorf("%d interface_down events, want 1: %+v", downs(events), events)
	}
	for _, ev := range events {
		if ev.Value.Device != device || ev.Key != device {
			t.Errorf("%s of %s: device %q keyed %q, want %s", ev.Value.Type, ev.Value.Object, ev.Value.Device, ev.Key, device)
		}
	}
}

// TestGNMIIfIndexNamesNetSNMPTrap: a device streamed by gNMI (weir-sim's
// target, subscribed to state/ifindex as collectors/gnmi/README.md's
// example does) and not polled sends a linkDown that Net-SNMP's snmptrap
// makes as RFC 2863 defines it (ifIndex, ifAdminStatus, ifOperStatus)
// from the address the target is dialed at. The event names the device
// and the interface as gNMI does (rv1, Ethernet2), not "ifIndex 2", and
// the same link down reported by gNMI after it is no second event.
func TestGNMIIfIndexNamesNetSNMPTrap(t *testing.T) {
	snmptest.Require(t, "snmptrap")
	target, lis := serveGNMISim(t)

	trapPort := snmptest.FreeUDPPort(t)
	cfg := filepath.Join(t.TempDir(), "weir.yaml")
	os.WriteFile(cfg, []byte(fmt.Sprintf("snmp:\n  traps:\n    listen: 127.0.0.1:%d\n"+
		"gnmi:\n  subscriptions:\n"+
		"    oper: {path: /interfaces/interface/state/oper-status, mode: stream, stream_mode: on_change}\n"+
		"    ifindex: {path: /interfaces/interface/state/ifindex, mode: stream, stream_mode: on_change, heartbeat_interval: 60s}\n"+
		"  targets:\n    - {name: rv1, address: %q, encoding: proto, insecure: true, subscriptions: [oper, ifindex]}\n",
		trapPort, lis)), 0o644)
	p := startWeir(t, t.TempDir(), "-c", cfg)

	// The interface's ifindex row, enriched (so the trap workers know it).
	p.waitRecord(t, "enriched.metrics", `"ifindex":2`)
	snmptest.Run(t, t.TempDir(), "snmptrap", "-v2c", "-c", "public", fmt.Sprintf("127.0.0.1:%d", trapPort), "",
		"1.3.6.1.6.3.1.1.5.3", // linkDown
		"1.3.6.1.2.1.2.2.1.1.2", "i", "2", "1.3.6.1.2.1.2.2.1.7.2", "i", "1", "1.3.6.1.2.1.2.2.1.8.2", "i", "2")
	consumeAll(t, p, "events", func(r []consumedKeyed) bool { return downs(r) > 0 })
	target.Flap(1) // the same link down, by gNMI
	p.waitRecord(t, "enriched.metrics", `"oper_up":false`)
	events := consumeAll(t, p, "events", func(r []consumedKeyed) bool { return downs(r) > 0 })
	if downs(events) != 1 {
		t.Errorf("%d interface_down events, want 1: %+v", downs(events), events)
	}
	for _, ev := range events {
		if ev.Value.Type == "interface_down" && (ev.Value.Device != "rv1" || ev.Value.Object != "Ethernet2") {
			t.Errorf("interface_down of %s's %q, want rv1's Ethernet2", ev.Value.Device, ev.Value.Object)
		}
	}
}

// serveGNMISim serves weir-sim's gNMI target (two interfaces, one BGP
// neighbor that never toggles) on a free loopback port until the test ends.
func serveGNMISim(t *testing.T) (*gnmisim.Server, net.Addr) {
	t.Helper()
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	target := gnmisim.New(gnmisim.Config{Interfaces: 2, Neighbors: 1, ToggleEvery: -1})
	served := make(chan error, 1)
	go func() { served <- target.Serve(ctx, lis) }()
	t.Cleanup(func() { cancel(); <-served })
	return target, lis.Addr()
}

// waitRecord consumes topic until a record has all of want, for 20 s.
func (p *weirProc) waitRecord(t *testing.T, topic string, want ...string) {
	t.Helper()
	var out string
	for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(200 * time.Millisecond) {
		out, _, _ = p.cli(t, "", "consume", topic, "--from-beginning")
		for line := range strings.Lines(out) {
			all := true
			for _, w := range want {
				all = all && strings.Contains(line, w)
			}
			if all {
				return
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("no record on %s with %q:\n%s\n%s", topic, want, out, p.Logs())
		}
	}
}

// downs counts the interface_down events among r.
func downs(r []consumedKeyed) (n int) {
	for _, ev := range r {
		if ev.Value.Type == "interface_down" {
			n++
		}
	}
	return n
}

// TestGNMIReachabilityEndToEnd: a gNMI target that is not there when
// weir starts is device_unreachable, with the failed attempt's error in
// the event; once it serves, device_reachable. Before, a gNMI-only device
// had no reachability event at all (weir_gnmi_connected said it, the
// events topic did not).
func TestGNMIReachabilityEndToEnd(t *testing.T) {
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := lis.Addr().String()
	lis.Close() // nothing there until the target starts below
	cfg := filepath.Join(t.TempDir(), "weir.yaml")
	os.WriteFile(cfg, []byte(fmt.Sprintf("gnmi:\n  retry_min: 100ms\n  retry_max: 500ms\n  subscriptions:\n"+
		"    oper: {path: /interfaces/interface/state/oper-status, mode: stream, stream_mode: on_change, heartbeat_interval: 60s}\n"+
		"  targets:\n    - {name: spine9, address: %q, encoding: proto, insecure: true, subscriptions: [oper]}\n",
		addr)), 0o644)
	p := startWeir(t, t.TempDir(), "-c", cfg)
	p.waitRecord(t, "events", `"type":"device_unreachable"`, `"device":"spine9"`, `gNMI subscription failed: gnmi spine9`)
	p.waitRecord(t, "enriched.metrics", `"measurement":"gnmi_status"`, `"gnmi_up":0`)

	lis, err = net.Listen("tcp", addr)
	if err != nil {
		t.Skipf("the target's port was taken meanwhile: %v", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	target := gnmisim.New(gnmisim.Config{Interfaces: 2, ToggleEvery: -1})
	served := make(chan error, 1)
	go func() { served <- target.Serve(ctx, lis) }()
	t.Cleanup(func() { cancel(); <-served })
	p.waitRecord(t, "events", `"type":"device_reachable"`, `"device":"spine9"`, `gNMI subscription answered again`)
	p.waitRecord(t, "enriched.metrics", `"measurement":"gnmi_status"`, `"gnmi_up":1`)
}
