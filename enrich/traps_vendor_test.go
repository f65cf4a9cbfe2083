package enrich

import (
	"testing"

	"github.com/weirnet/weir/collectors/trap"
	"github.com/weirnet/weir/telemetry"
)

// vendorTrap is a trap as the collector writes it: the notification and
// its varbinds named by the collector's table, from their OIDs alone.
func vendorTrap(names *trap.Names, device, oid string, vbs ...telemetry.Varbind) telemetry.Trap {
	for i := range vbs {
		vbs[i].Name = names.Object(vbs[i].OID)
	}
	return telemetry.Trap{Device: device, TrapOID: oid, TrapName: names.Notification(oid), Varbinds: vbs}
}

// TestTrapVendorNotifications: the vendor notifications engineers rely on
// raise the events the same change raises from syslog, named as the trap
// collector names them (OIDs and varbinds from the MIBs, as pysnmp's
// compiled CISCO-CONFIG-MAN-MIB, JUNIPER-CFGMGMT-MIB,
// CISCO-IF-EXTENSION-MIB and OSPFV3-MIB give them); those whose change the
// design has no event for (a save, a show, a rescue config, a power supply)
// raise none.
func TestTrapVendorNotifications(t *testing.T) {
	inv, _ := ParseInventory([]byte(testInventory))
	w := NewTrapWorker(nil, inv)
	names := trap.NewNames(nil)
	i := func(oid string, v int) telemetry.Varbind {
		return telemetry.Varbind{OID: oid, Type: "integer", Value: v}
	}
	s := func(oid, v string) telemetry.Varbind {
		return telemetry.Varbind{OID: oid, Type: "octet_string", Value: v}
	}
	// CISCO-CONFIG-MAN-MIB ccmHistoryEventEntry (1.3.6.1.4.1.9.9.43.1.1.6.1)
	// columns CommandSource (3: commandLine(1), snmp(2)), ConfigSource (4)
	// and ConfigDestination (5), HistoryEventMedium: erase(1),
	// commandSource(2), running(3), startup(4), ...; TerminalUser (8).
	const ccm = "1.3.6.1.4.1.9.9.43.1.1.6.1."
	ccmEvent := func(src, dst int, extra ...telemetry.Varbind) telemetry.Trap {
		return vendorTrap(names, "edge1", "1.3.6.1.4.1.9.9.43.2.0.1",
			append([]telemetry.Varbind{i(ccm+"3.42", 1), i(ccm+"4.42", src), i(ccm+"5.42", dst)}, extra...)...)
	}
	// JUNIPER-CFGMGMT-MIB jnxCmCfgChgEventEntry (1.3.6.1.4.1.2636.3.18.1.7.1):
	// Time (2), Date (3), Source (4: cli(1), junoscript(2), ...), User (5), Log (6).
	const jnxCm = "1.3.6.1.4.1.2636.3.18.1.7.1."
	// OSPFV3-MIB ospfv3NbrState (1.3.6.1.2.1.191.1.9.1.8), indexed by
	// ospfv3NbrIfIndex, ospfv3NbrIfInstId, ospfv3NbrRtrId (an Unsigned32:
	// 167772169 is 10.0.0.9).
	const v3Nbr = ".5.0.167772169"
	for _, c := range []struct {
		name       string
		tr         telemetry.Trap
		typ, obj   string
		wantsEvent bool
	}{
		// "configure terminal": commandSource -> running, as
		// %SYS-5-CONFIG_I reports it.
		{"ciscoConfigManEvent cli to running", ccmEvent(2, 3), "config_changed", "", true},
		{"ciscoConfigManEvent with the user", ccmEvent(2, 3, s(ccm+"8.42", "netops")), "config_changed", "netops", true},
		// "copy tftp: running-config".
		{"ciscoConfigManEvent tftp to running", ccmEvent(6, 3), "config_changed", "", true},
		// "show running-config" (running -> commandSource) and "write
		// memory" (running -> startup) change nothing that runs.
		{"ciscoConfigManEvent show running", ccmEvent(3, 2), "", "", false},
		{"ciscoConfigManEvent write memory", ccmEvent(3, 4), "", "", false},
		// ccmCLIRunningConfigChanged (IOS-XE, NX-OS): ccmHistoryRunningLastChanged
		// (1.3.6.1.4.1.9.9.43.1.1.1.0), ccmHistoryEventTerminalType.
		{"ccmCLIRunningConfigChanged", vendorTrap(names, "edge1", "1.3.6.1.4.1.9.9.43.2.0.2",
			telemetry.Varbind{OID: "1.3.6.1.4.1.9.9.43.1.1.1.0", Type: "timeticks", Value: 123456}, i(ccm+"6.7", 5)), "config_changed", "", true},
		// Junos "commit" by netops, as UI_COMMIT reports it: one event.
		{"jnxCmCfgChange", vendorTrap(names, "edge1", "1.3.6.1.4.1.2636.4.5.0.1",
			telemetry.Varbind{OID: jnxCm + "2.7", Type: "timeticks", Value: 12345}, i(jnxCm+"4.7", 1),
			s(jnxCm+"5.7", "netops"), s(jnxCm+"6.7", "commit")), "config_changed", "netops", true},
		// jnxCmRescueChange: the rescue configuration saved, not the
		// running one changed.
		{"jnxCmRescueChange", vendorTrap(names, "edge1", "1.3.6.1.4.1.2636.4.5.0.2"), "", "", false},
		// NX-OS cieLinkDown/cieLinkUp (CISCO-IF-EXTENSION-MIB
		// 1.3.6.1.4.1.9.9.276.0.1 and .0.2): ifIndex, ifAdminStatus,
		// ifOperStatus, ifName, ifType.
		{"cieLinkDown", vendorTrap(names, "edge1", "1.3.6.1.4.1.9.9.276.0.1",
			i("1.3.6.1.2.1.2.2.1.1.436207616", 436207616), i("1.3.6.1.2.1.2.2.1.7.436207616", 1), i("1.3.6.1.2.1.2.2.1.8.436207616", 2),
			s("1.3.6.1.2.1.31.1.1.1.1.436207616", "Ethernet1/1"), i("1.3.6.1.2.1.2.2.1.3.436207616", 6)), "interface_down", "Ethernet1/1", true},
		{"cieLinkUp", vendorTrap(names, "edge1", "1.3.6.1.4.1.9.9.276.0.2",
			i("1.3.6.1.2.1.2.2.1.1.436207616", 436207616), i("1.3.6.1.2.1.2.2.1.7.436207616", 1), i("1.3.6.1.2.1.2.2.1.8.436207616", 1),
			s("1.3.6.1.2.1.31.1.1.1.1.436207616", "Ethernet1/1"), i("1.3.6.1.2.1.2.2.1.3.436207616", 6)), "interface_up", "Ethernet1/1", true},
		// IOS linkDown with OLD-CISCO-INTERFACES-MIB locIfReason
		// (1.3.6.1.4.1.9.2.2.1.1.20) after ifIndex, ifDescr, ifType.
		{"IOS linkDown with locIfReason", vendorTrap(names, "edge1", "1.3.6.1.6.3.1.1.5.3",
			i("1.3.6.1.2.1.2.2.1.1.2", 2), s("1.3.6.1.2.1.2.2.1.2.2", "GigabitEthernet0/2"), i("1.3.6.1.2.1.2.2.1.3.2", 6),
			s("1.3.6.1.4.1.9.2.2.1.1.20.2", "administratively down")), "interface_down", "GigabitEthernet0/2", true},
		// OSPFV3-MIB ospfv3NbrStateChange (1.3.6.1.2.1.191.0.2):
		// ospfv3RouterId, ospfv3NbrState; the neighbor's router ID is in
		// the index, as %OSPFV3-5-ADJCHG names it ("Nbr 10.0.0.9").
		{"ospfv3NbrStateChange down", vendorTrap(names, "edge1", "1.3.6.1.2.1.191.0.2",
			telemetry.Varbind{OID: "1.3.6.1.2.1.191.1.1.1.0", Type: "gauge32", Value: 16843009}, i("1.3.6.1.2.1.191.1.9.1.8"+v3Nbr, 1)),
			"ospf_neighbor_down", "10.0.0.9", true},
		{"ospfv3NbrStateChange full", vendorTrap(names, "edge1", "1.3.6.1.2.1.191.0.2",
			telemetry.Varbind{OID: "1.3.6.1.2.1.191.1.1.1.0", Type: "gauge32", Value: 16843009}, i("1.3.6.1.2.1.191.1.9.1.8"+v3Nbr, 8)),
			"ospf_neighbor_up", "10.0.0.9", true},
		// Junos's OSPFV3-MIB-JUNIPER copy: jnxOspfv3NbrStateChange
		// (1.3.6.1.4.1.2636.5.4.1.0.2), jnxOspfv3NbrState
		// (1.3.6.1.4.1.2636.5.4.1.1.9.1.8), indexed alike.
		{"jnxOspfv3NbrStateChange", vendorTrap(names, "edge1", "1.3.6.1.4.1.2636.5.4.1.0.2",
			i("1.3.6.1.4.1.2636.5.4.1.1.9.1.8"+v3Nbr, 1)), "ospf_neighbor_down", "10.0.0.9", true},
		// FRR's BGP4V2-MIB (bgpd/bgp_snmp_bgp4v2.h: the draft's MIB under
		// 1.3.6.1.4.1.7336.4.2.1), as SONiC, Cumulus and VyOS send it:
		// bgp4V2PeerState (1.2.1.13) indexed by instance 1, the address
		// type and the address, with no length.
		{"FRR bgp4V2EstablishedNotification", vendorTrap(names, "edge1", "1.3.6.1.4.1.7336.4.2.1.0.1",
			i("1.3.6.1.4.1.7336.4.2.1.1.2.1.13.1.1.10.0.0.9", 6)), "bgp_peer_up", "10.0.0.9", true},
		{"FRR bgp4V2BackwardTransitionNotification IPv6", vendorTrap(names, "edge1", "1.3.6.1.4.1.7336.4.2.1.0.2",
			i("1.3.6.1.4.1.7336.4.2.1.1.2.1.13.1.2.32.1.13.184.0.0.0.0.0.0.0.0.0.0.0.1", 1)), "bgp_peer_down", "2001:db8::1", true},
		// JUNIPER-MIB jnxPowerSupplyFailure (1.3.6.1.4.1.2636.4.1.1): no
		// event type in the design for hardware.
		{"jnxPowerSupplyFailure", vendorTrap(names, "edge1", "1.3.6.1.4.1.2636.4.1.1"), "", "", false},
	} {
		ev, ok := trapEvent(t, w, c.tr)
		if ok != c.wantsEvent || ev.Type != c.typ || (ok && ev.Object != c.obj) {
			t.Errorf("%s (named %q): event %v %q object %q, want %v %q object %q", c.name, c.tr.TrapName, ok, ev.Type, ev.Object, c.wantsEvent, c.typ, c.obj)
		}
	}
}
