package enrich

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/weirnet/weir/broker"
	"github.com/weirnet/weir/collectors/syslog"
	"github.com/weirnet/weir/telemetry"
)

// trapEvent is the event the worker makes of a trap as the trap collector
// writes it (read back from JSON, as the worker reads it).
func trapEvent(t *testing.T, w *TrapWorker, tr telemetry.Trap) (telemetry.Event, bool) {
	t.Helper()
	tr.V, tr.Version, tr.ReceivedAt = 1, "2c", time.Now()
	if tr.SourceAddr == "" {
		tr.SourceAddr = tr.Device + ":50000"
	}
	v, _ := json.Marshal(&tr)
	var back telemetry.Trap
	if err := json.Unmarshal(v, &back); err != nil {
		t.Fatal(err)
	}
	return w.eventOf(&back, &broker.Record{Topic: telemetry.TopicRawTraps})
}

// TestTrapLinkDownEmptyIfName: an agent whose ifName is empty for an
// interface (ifXTable rows left blank) sends linkDown with ifName.N "" and
// ifDescr.N set; the event names the interface by its ifDescr, not
// "ifIndex N".
func TestTrapLinkDownEmptyIfName(t *testing.T) {
	inv, _ := ParseInventory([]byte(testInventory))
	w := NewTrapWorker(nil, inv)
	ev, ok := trapEvent(t, w, telemetry.Trap{Device: "192.0.2.1", TrapOID: "1.3.6.1.6.3.1.1.5.3", TrapName: "linkDown",
		Varbinds: []telemetry.Varbind{
			{OID: "1.3.6.1.2.1.2.2.1.1.3", Name: "ifIndex.3", Type: "integer", Value: 3},
			{OID: "1.3.6.1.2.1.31.1.1.1.1.3", Name: "ifName.3", Type: "octet_string", Value: ""},
			{OID: "1.3.6.1.2.1.2.2.1.2.3", Name: "ifDescr.3", Type: "octet_string", Value: "GigabitEthernet0/3"},
		}})
	if !ok || ev.Object != "GigabitEthernet0/3" {
		t.Errorf("event %v %+v, want interface_down of GigabitEthernet0/3", ok, ev)
	}
}

// TestTrapRoutingNeighborNotifications: the routing-protocol notifications
// routers send besides BGP4-MIB's raise the events their syslog lines
// raise: OSPF-TRAP-MIB ospfNbrStateChange (ospf_neighbor_down/up, as
// %OSPF-5-ADJCHG does), and CISCO-BGP4-MIB's (cbgpPeer2* the only BGP
// traps IOS sends for an IPv6 peer), named as the trap collector names
// them.
func TestTrapRoutingNeighborNotifications(t *testing.T) {
	inv, _ := ParseInventory([]byte(testInventory))
	w := NewTrapWorker(nil, inv)
	const v6Index = "2.16.32.1.13.184.0.0.0.0.0.0.0.0.0.0.0.1" // ipv6(2), 16 octets: 2001:db8::1
	const v6Index1 = "1." + v6Index                            // instance 1, then the address
	// instance 0; local ipv6(2) 2001:d88:1::1; remote ipv6(2) 2001:d88:1::2
	const jnxV6Index = "0.2.32.1.13.136.0.1.0.0.0.0.0.0.0.0.0.1.2.32.1.13.136.0.1.0.0.0.0.0.0.0.0.0.2"
	ospf := func(state int) telemetry.Trap {
		return telemetry.Trap{Device: "192.0.2.1", TrapOID: "1.3.6.1.2.1.14.16.2.2", TrapName: "ospfNbrStateChange", Varbinds: []telemetry.Varbind{
			{OID: "1.3.6.1.2.1.14.1.1.0", Name: "ospfRouterId.0", Type: "ipaddress", Value: "1.1.1.1"},
			{OID: "1.3.6.1.2.1.14.10.1.3.10.8.8.8.0", Name: "ospfNbrRtrId.10.8.8.8.0", Type: "ipaddress", Value: "8.8.8.8"},
			{OID: "1.3.6.1.2.1.14.10.1.6.10.8.8.8.0", Name: "ospfNbrState.10.8.8.8.0", Type: "integer", Value: state},
		}}
	}
	for _, c := range []struct {
		what        string
		tr          telemetry.Trap
		typ, object string
	}{
		{"ospfNbrStateChange to down(1)", ospf(1), "ospf_neighbor_down", "8.8.8.8"},
		{"ospfNbrStateChange to init(3)", ospf(3), "ospf_neighbor_down", "8.8.8.8"},
		{"ospfNbrStateChange to full(8)", ospf(8), "ospf_neighbor_up", "8.8.8.8"},
		{"ospfNbrStateChange to twoWay(4)", ospf(4), "", ""},
		{"cbgpBackwardTransition", telemetry.Trap{Device: "192.0.2.1", TrapOID: "1.3.6.1.4.1.9.9.187.0.2", TrapName: "cbgpBackwardTransition", Varbinds: []telemetry.Varbind{
			{OID: "1.3.6.1.2.1.15.3.1.14.10.7.7.7", Name: "bgpPeerLastError.10.7.7.7", Type: "octet_string_hex", Value: "0604"},
			{OID: "1.3.6.1.2.1.15.3.1.2.10.7.7.7", Name: "bgpPeerState.10.7.7.7", Type: "integer", Value: 1},
		}}, "bgp_peer_down", "10.7.7.7"},
		{"cbgpPeer2BackwardTransition (IPv6 peer)", telemetry.Trap{Device: "192.0.2.1", TrapOID: "1.3.6.1.4.1.9.9.187.0.8", TrapName: "cbgpPeer2BackwardTransition", Varbinds: []telemetry.Varbind{
			{OID: "1.3.6.1.4.1.9.9.187.1.2.5.1.3." + v6Index, Name: "cbgpPeer2State." + v6Index, Type: "integer", Value: 1},
		}}, "bgp_peer_down", "2001:db8::1"},
		{"cbgpPeer2FsmStateChange into established", telemetry.Trap{Device: "192.0.2.1", TrapOID: "1.3.6.1.4.1.9.9.187.0.7", TrapName: "cbgpPeer2FsmStateChange", Varbinds: []telemetry.Varbind{
			{OID: "1.3.6.1.4.1.9.9.187.1.2.5.1.3.1.4.10.9.9.9", Name: "cbgpPeer2State.1.4.10.9.9.9", Type: "integer", Value: 6},
			{OID: "1.3.6.1.4.1.9.9.187.1.2.5.1.29.1.4.10.9.9.9", Name: "cbgpPeer2PrevState.1.4.10.9.9.9", Type: "integer", Value: 5},
		}}, "bgp_peer_up", "10.9.9.9"},
		{"cbgpPeer2FsmStateChange out of established", telemetry.Trap{Device: "192.0.2.1", TrapOID: "1.3.6.1.4.1.9.9.187.0.7", TrapName: "cbgpPeer2FsmStateChange", Varbinds: []telemetry.Varbind{
			{OID: "1.3.6.1.4.1.9.9.187.1.2.5.1.3.1.4.10.9.9.9", Name: "cbgpPeer2State.1.4.10.9.9.9", Type: "integer", Value: 1},
			{OID: "1.3.6.1.4.1.9.9.187.1.2.5.1.29.1.4.10.9.9.9", Name: "cbgpPeer2PrevState.1.4.10.9.9.9", Type: "integer", Value: 6},
		}}, "bgp_peer_down", "10.9.9.9"},
		// Junos: jnxBgpM2PeerTable indexed by instance, local and remote
		// address, each a type and its octets (no length).
		{"jnxBgpM2BackwardTransition (IPv6 peer)", telemetry.Trap{Device: "192.0.2.1", TrapOID: "1.3.6.1.4.1.2636.5.1.1.1.0.2", TrapName: "jnxBgpM2BackwardTransition", Varbinds: []telemetry.Varbind{
			{OID: "1.3.6.1.4.1.2636.5.1.1.2.1.1.1.11." + jnxV6Index, Name: "jnxBgpM2PeerRemoteAddr." + jnxV6Index, Type: "octet_string_hex", Value: "20010d88000100000000000000000002"},
			{OID: "1.3.6.1.4.1.2636.5.1.1.2.1.1.1.2." + jnxV6Index, Name: "jnxBgpM2PeerState." + jnxV6Index, Type: "integer", Value: 1},
		}}, "bgp_peer_down", "2001:d88:1::2"},
		{"jnxBgpM2Established (IPv4 peer)", telemetry.Trap{Device: "192.0.2.1", TrapOID: "1.3.6.1.4.1.2636.5.1.1.1.0.1", TrapName: "jnxBgpM2Established", Varbinds: []telemetry.Varbind{
			{OID: "1.3.6.1.4.1.2636.5.1.1.2.1.1.1.2.0.1.10.0.0.1.1.10.0.0.4", Name: "jnxBgpM2PeerState.0.1.10.0.0.1.1.10.0.0.4", Type: "integer", Value: 6},
		}}, "bgp_peer_up", "10.0.0.4"},
		// EOS: aristaBgp4V2PeerTable indexed by instance and the remote
		// address, its type, length and octets.
		{"aristaBgp4V2BackwardTransitionNotification (IPv6 peer)", telemetry.Trap{Device: "192.0.2.1", TrapOID: "1.3.6.1.4.1.30065.4.1.0.2", TrapName: "aristaBgp4V2BackwardTransitionNotification", Varbinds: []telemetry.Varbind{
			{OID: "1.3.6.1.4.1.30065.4.1.1.2.1.13." + v6Index1, Name: "aristaBgp4V2PeerState." + v6Index1, Type: "integer", Value: 1},
			{OID: "1.3.6.1.4.1.30065.4.1.1.2.1.6." + v6Index1, Type: "gauge32", Value: 179},
			{OID: "1.3.6.1.4.1.30065.4.1.1.3.1.1." + v6Index1, Type: "octet_string_hex", Value: "06"},
		}}, "bgp_peer_down", "2001:db8::1"},
		{"aristaBgp4V2BackwardTransitionNotification (link-local peer, ipv6z)", telemetry.Trap{Device: "192.0.2.1", TrapOID: "1.3.6.1.4.1.30065.4.1.0.2", TrapName: "aristaBgp4V2BackwardTransitionNotification", Varbinds: []telemetry.Varbind{
			{OID: "1.3.6.1.4.1.30065.4.1.1.2.1.13.1.4.20.254.128.0.0.0.0.0.0.0.0.0.0.0.0.0.1.0.0.0.7", Type: "integer", Value: 1},
		}}, "bgp_peer_down", "fe80::1"},
		{"aristaBgp4V2EstablishedNotification (IPv4 peer)", telemetry.Trap{Device: "192.0.2.1", TrapOID: "1.3.6.1.4.1.30065.4.1.0.1", TrapName: "aristaBgp4V2EstablishedNotification", Varbinds: []telemetry.Varbind{
			{OID: "1.3.6.1.4.1.30065.4.1.1.2.1.13.1.1.4.10.9.9.9", Name: "aristaBgp4V2PeerState.1.1.4.10.9.9.9", Type: "integer", Value: 6},
		}}, "bgp_peer_up", "10.9.9.9"},
		{"cbgpPeer2FsmStateChange idle to connect", telemetry.Trap{Device: "192.0.2.1", TrapOID: "1.3.6.1.4.1.9.9.187.0.7", TrapName: "cbgpPeer2FsmStateChange", Varbinds: []telemetry.Varbind{
			{OID: "1.3.6.1.4.1.9.9.187.1.2.5.1.3.1.4.10.9.9.9", Name: "cbgpPeer2State.1.4.10.9.9.9", Type: "integer", Value: 2},
			{OID: "1.3.6.1.4.1.9.9.187.1.2.5.1.29.1.4.10.9.9.9", Name: "cbgpPeer2PrevState.1.4.10.9.9.9", Type: "integer", Value: 1},
		}}, "", ""},
	} {
		ev, ok := trapEvent(t, w, c.tr)
		if ok != (c.typ != "") || ok && (ev.Type != c.typ || ev.Object != c.object) {
			t.Errorf("%s: event %v %q %q, want %q %q", c.what, ok, ev.Type, ev.Object, c.typ, c.object)
		}
	}
}

// TestOSPFTrapObjectMatchesSyslog: IOS's %OSPF-5-ADJCHG names the
// neighbor by its router ID ("Nbr 8.8.8.8"); the ospfNbrStateChange IOS
// sends for the same change carries ospfNbrRtrId 8.8.8.8 and is indexed by
// the neighbor's interface address 10.8.8.8. The two are one object, so
// one event.
func TestOSPFTrapObjectMatchesSyslog(t *testing.T) {
	inv, _ := ParseInventory([]byte(testInventory))
	w := NewTrapWorker(nil, inv)
	ev, ok := trapEvent(t, w, ospfNbrDownTrap("192.0.2.1", "10.8.8.8", "8.8.8.8"))
	c := NewClassifier()
	var p syslog.Parser
	var l telemetry.Log
	p.ParseCopy([]byte("<189>162: Nov 29 14:02:11.123: %OSPF-5-ADJCHG: Process 1, Nbr 8.8.8.8 on GigabitEthernet0/1 from FULL to DOWN, Neighbor Down: Dead timer expired"), &l)
	info := c.Classify(&l)
	if !ok || ev.Object != ObjectOf(info) {
		t.Errorf("trap event %v object %q; the syslog line's event %q object %q", ok, ev.Object, info.Event, ObjectOf(info))
	}
}

// ospfNbrDownTrap is the ospfNbrStateChange a device sends when its
// neighbor at address addr (router ID rid, a numbered link) goes down.
func ospfNbrDownTrap(device, addr, rid string) telemetry.Trap {
	idx := addr + ".0" // the neighbor's address and its address-less index
	return telemetry.Trap{Device: device, TrapOID: "1.3.6.1.2.1.14.16.2.2", TrapName: "ospfNbrStateChange", Varbinds: []telemetry.Varbind{
		{OID: "1.3.6.1.2.1.14.1.1.0", Name: "ospfRouterId.0", Type: "ipaddress", Value: "1.1.1.1"},
		{OID: "1.3.6.1.2.1.14.10.1.1." + idx, Name: "ospfNbrIpAddr." + idx, Type: "ipaddress", Value: addr},
		{OID: "1.3.6.1.2.1.14.10.1.2." + idx, Name: "ospfNbrAddressLessIndex." + idx, Type: "integer", Value: 0},
		{OID: "1.3.6.1.2.1.14.10.1.3." + idx, Name: "ospfNbrRtrId." + idx, Type: "ipaddress", Value: rid},
		{OID: "1.3.6.1.2.1.14.10.1.6." + idx, Name: "ospfNbrState." + idx, Type: "integer", Value: 1},
	}}
}

// TestOSPFTrapObjectMatchesJunosSyslog: Junos's RPD_OSPF_NBRDOWN names the
// neighbor by its interface address, where the Cisco family names its
// router ID: the ospfNbrStateChange of a device the inventory says is
// Junos (or Huawei) names it by ospfNbrIpAddr, so the line and the trap of
// one change are one event; a device of another vendor, or none, keeps the
// router ID.
func TestOSPFTrapObjectMatchesJunosSyslog(t *testing.T) {
	inv, _ := ParseInventory([]byte(testInventory + "  - {name: vrp1, address: 192.0.2.7, vendor: huawei_vrp}\n"))
	w := NewTrapWorker(nil, inv)
	c := NewClassifier()
	var p syslog.Parser
	var l telemetry.Log
	p.ParseCopy([]byte("<28>Nov 29 14:02:11 mx1 rpd[1234]: RPD_OSPF_NBRDOWN: OSPF neighbor 10.0.0.6 (realm ospf-v2 ge-0/0/2.0 area 0.0.0.0) state changed from Full to Down due to InActiveTimer (event reason: neighbor was inactive)"), &l)
	info := c.Classify(&l)
	if info.Event != "ospf_neighbor_down" || ObjectOf(info) != "10.0.0.6" {
		t.Fatalf("Junos line: %q about %q", info.Event, ObjectOf(info))
	}
	for device, want := range map[string]string{"mx1": "10.0.0.6", "192.0.2.7": "10.0.0.6", "192.0.2.1": "2.2.2.2", "192.0.2.99": "2.2.2.2"} {
		if ev, ok := trapEvent(t, w, ospfNbrDownTrap(device, "10.0.0.6", "2.2.2.2")); !ok || ev.Object != want {
			t.Errorf("trap of %s: event %v about %q, want %q", device, ok, ev.Object, want)
		}
	}
}

// TestCbgpBackwardFromActive: cbgpPeer2BackwardTransition is sent for any
// move to a lower state (active -> idle of a peer never established); its
// cbgpPeer2PrevState says whether the session was up.
func TestCbgpBackwardFromActive(t *testing.T) {
	inv, _ := ParseInventory([]byte(testInventory))
	w := NewTrapWorker(nil, inv)
	ev, ok := trapEvent(t, w, telemetry.Trap{Device: "192.0.2.1", TrapOID: "1.3.6.1.4.1.9.9.187.0.8", TrapName: "cbgpPeer2BackwardTransition", Varbinds: []telemetry.Varbind{
		{OID: "1.3.6.1.4.1.9.9.187.1.2.5.1.3.1.4.10.9.9.9", Name: "cbgpPeer2State.1.4.10.9.9.9", Type: "integer", Value: 1},
		{OID: "1.3.6.1.4.1.9.9.187.1.2.5.1.29.1.4.10.9.9.9", Name: "cbgpPeer2PrevState.1.4.10.9.9.9", Type: "integer", Value: 3},
	}})
	if ok {
		t.Errorf("active(3) -> idle(1) of a peer never established: event %q %q", ev.Type, ev.Object)
	}
}

// TestNULIfNameEvent: an ifName of NUL bytes, as the trap collector writes
// it (hex, octet_string_hex), is no name: the ifDescr is.
func TestNULIfNameEvent(t *testing.T) {
	inv, _ := ParseInventory([]byte(testInventory))
	w := NewTrapWorker(nil, inv)
	ev, ok := trapEvent(t, w, telemetry.Trap{Device: "192.0.2.1", TrapOID: "1.3.6.1.6.3.1.1.5.3", TrapName: "linkDown",
		Varbinds: []telemetry.Varbind{
			{OID: "1.3.6.1.2.1.2.2.1.1.3", Name: "ifIndex.3", Type: "integer", Value: 3},
			{OID: "1.3.6.1.2.1.31.1.1.1.1.3", Name: "ifName.3", Type: "octet_string_hex", Value: "00000000"},
			{OID: "1.3.6.1.2.1.2.2.1.2.3", Name: "ifDescr.3", Type: "octet_string", Value: "GigabitEthernet0/3"},
		}})
	if !ok || ev.Object != "GigabitEthernet0/3" {
		t.Errorf("event %v object %q, want GigabitEthernet0/3", ok, ev.Object)
	}
}

// TestBGPDownTrapSaysWhy: a BGP backward transition names why the session
// went down, as the syslog line does (%BGP-5-ADJCHANGE ... Down BGP
// Notification sent, hold time expired): the text IOS puts in
// cbgpPeer2LastErrorTxt, else the code and subcode of bgpPeerLastError
// (RFC 4271 section 4.5, RFC 4486), worded.
func TestBGPDownTrapSaysWhy(t *testing.T) {
	inv, _ := ParseInventory([]byte(testInventory))
	w := NewTrapWorker(nil, inv)
	for _, c := range []struct {
		varbinds []telemetry.Varbind
		message  string
	}{
		{[]telemetry.Varbind{
			{OID: "1.3.6.1.4.1.9.9.187.1.2.5.1.17.1.4.10.9.9.9", Name: "cbgpPeer2LastError.1.4.10.9.9.9", Type: "octet_string_hex", Value: "0400"},
			{OID: "1.3.6.1.4.1.9.9.187.1.2.5.1.28.1.4.10.9.9.9", Name: "cbgpPeer2LastErrorTxt.1.4.10.9.9.9", Type: "octet_string", Value: "hold time expired"},
			{OID: "1.3.6.1.4.1.9.9.187.1.2.5.1.29.1.4.10.9.9.9", Name: "cbgpPeer2PrevState.1.4.10.9.9.9", Type: "integer", Value: 6},
		}, "cbgpPeer2BackwardTransition trap: hold time expired"},
		{[]telemetry.Varbind{
			{OID: "1.3.6.1.4.1.9.9.187.1.2.5.1.17.1.4.10.9.9.9", Name: "cbgpPeer2LastError.1.4.10.9.9.9", Type: "octet_string_hex", Value: "0604"},
			{OID: "1.3.6.1.4.1.9.9.187.1.2.5.1.29.1.4.10.9.9.9", Name: "cbgpPeer2PrevState.1.4.10.9.9.9", Type: "integer", Value: 6},
		}, "cbgpPeer2BackwardTransition trap: Cease (administrative reset)"},
		{[]telemetry.Varbind{
			{OID: "1.3.6.1.4.1.9.9.187.1.2.5.1.17.1.4.10.9.9.9", Name: "cbgpPeer2LastError.1.4.10.9.9.9", Type: "octet_string_hex", Value: "0000"},
			{OID: "1.3.6.1.4.1.9.9.187.1.2.5.1.29.1.4.10.9.9.9", Name: "cbgpPeer2PrevState.1.4.10.9.9.9", Type: "integer", Value: 6},
		}, "cbgpPeer2BackwardTransition trap"},
	} {
		ev, ok := trapEvent(t, w, telemetry.Trap{Device: "192.0.2.1", TrapOID: "1.3.6.1.4.1.9.9.187.0.8", TrapName: "cbgpPeer2BackwardTransition", Varbinds: c.varbinds})
		if !ok || ev.Type != "bgp_peer_down" || ev.Message != c.message {
			t.Errorf("event %v %q message %q, want bgp_peer_down %q", ok, ev.Type, ev.Message, c.message)
		}
	}
	ev, ok := trapEvent(t, w, telemetry.Trap{Device: "192.0.2.1", TrapOID: "1.3.6.1.2.1.15.7.2", TrapName: "bgpBackwardTransition", Varbinds: []telemetry.Varbind{
		{OID: "1.3.6.1.2.1.15.3.1.14.10.7.7.7", Name: "bgpPeerLastError.10.7.7.7", Type: "octet_string_hex", Value: "0201"},
		{OID: "1.3.6.1.2.1.15.3.1.2.10.7.7.7", Name: "bgpPeerState.10.7.7.7", Type: "integer", Value: 1},
	}})
	if want := "bgpBackwardTransition trap: OPEN message error (unsupported version number)"; !ok || ev.Message != want {
		t.Errorf("event %v message %q, want %q", ok, ev.Message, want)
	}
}

// TestCbgpPeer2IndexWithoutLength: an agent that leaves the address's
// length out of the cbgpPeer2Table index (TYPE.OCTETS) names an IPv4 peer
// whose first octet is 3 (3.3.3.3) as well as any other: the 3 is the
// address's, not a length, as ipv4(1)'s four octets tell.
func TestCbgpPeer2IndexWithoutLength(t *testing.T) {
	inv, _ := ParseInventory([]byte(testInventory))
	w := NewTrapWorker(nil, inv)
	for index, want := range map[string]string{
		"1.3.3.3.3":                          "3.3.3.3", // ipv4(1), no length
		"1.4.3.3.3.3":                        "3.3.3.3", // with it
		"1.10.9.9.9":                         "10.9.9.9",
		"2.15.0.0.0.0.0.0.0.0.0.0.0.0.0.0.1": "f00::1", // ipv6(2), no length, first octet 15
	} {
		ev, ok := trapEvent(t, w, telemetry.Trap{Device: "192.0.2.1", TrapOID: "1.3.6.1.4.1.9.9.187.0.5", TrapName: "cbgpPeer2EstablishedNotification", Varbinds: []telemetry.Varbind{
			{OID: "1.3.6.1.4.1.9.9.187.1.2.5.1.3." + index, Name: "cbgpPeer2State." + index, Type: "integer", Value: 6},
		}})
		if !ok || ev.Type != "bgp_peer_up" || ev.Object != want {
			t.Errorf("cbgpPeer2State.%s: event %v %q %q, want bgp_peer_up %q", index, ok, ev.Type, ev.Object, want)
		}
	}
}

// TestOSPFTrapObjectFollowsTheDevicesLines: a device the inventory gives
// no vendor (or does not list) whose syslog lines are Junos's or Huawei's
// names its OSPF neighbors by address in its trap too, once a line of it
// came through the syslog worker or a warm-up read one back: the line and
// the trap of one change are then one event. A device whose lines are
// another vendor's, or that sent none, keeps the router ID; the
// inventory's vendor wins over the lines'.
func TestOSPFTrapObjectFollowsTheDevicesLines(t *testing.T) {
	inv, _ := ParseInventory([]byte(testInventory + "  - {name: ios9, address: 192.0.2.9, vendor: cisco_ios}\n"))
	rules := NewEventRules(DefaultDedupWindow, DefaultFlapThreshold, DefaultFlapWindow)
	sw := NewWorker(nil, inv, NewClassifier(), WithSharedEventRules(rules))
	sw.out = newOutputs(nil, telemetry.TopicRawSyslog, sw.logger, sw.m, false)
	sw.out.useArenas(&sw.arena, &sw.evEnc.arena)
	tw := NewTrapWorker(nil, inv, WithSharedEventRules(rules))
	var p syslog.Parser
	line := func(raw string, from string) broker.Record {
		r := receivedRecord(&p, raw)
		var l telemetry.Log
		if err := json.Unmarshal(r.Value, &l); err != nil {
			t.Fatal(err)
		}
		l.SourceAddr, l.Device = from+":514", ""
		r.Value, r.Topic = l.AppendJSON(nil), telemetry.TopicRawSyslog
		return r
	}
	const (
		junosCommit = "<29>Nov 29 14:02:11 mx9 mgd[4321]: UI_COMMIT: User 'netops' requested 'commit' operation (comment: none)"
		vrpLine     = "<189>Nov 29 2026 14:02:11 vrp9 %%01OSPF/3/NBR_DOWN_REASON(l)[1]:Neighbor state leaves full or changed to Down. (ProcessId=1, NeighborRouterId=2.2.2.2, NeighborAreaId=0, NeighborInterface=GigabitEthernet0/0/1, NeighborDownImmediate reason=Neighbor Down Due to Inactivity, NeighborDownPrimeReason=Interface Parameter Mismatch, NeighborChangeTime=2026-11-29 14:02:11)"
		iosLine     = "<189>Nov 29 14:02:11 ios8: %SYS-5-CONFIG_I: Configured from console by netops on vty0 (10.1.1.1)"
	)
	for _, c := range []struct {
		name, device, from string
		lines              []string
		warm               bool // the lines read back by a warm-up, not enriched
		want               string
	}{
		{"junos line first", "mx9", "198.51.100.9", []string{junosCommit}, false, "10.0.0.6"},
		{"junos line read back by a warm-up", "mx9", "198.51.100.9", []string{junosCommit}, true, "10.0.0.6"},
		{"huawei line first", "vrp9", "198.51.100.10", []string{vrpLine}, false, "10.0.0.6"},
		{"no line", "mx9", "198.51.100.9", nil, false, "2.2.2.2"},
		{"cisco line", "ios8", "198.51.100.8", []string{iosLine}, false, "2.2.2.2"},
		{"inventory says cisco", "ios9", "192.0.2.9", []string{strings.Replace(junosCommit, "mx9", "ios9", 1)}, false, "2.2.2.2"},
	} {
		t.Run(c.name, func(t *testing.T) {
			rules.d.vendors = newLineVendors() // each case from a fresh start
			for _, raw := range c.lines {
				r := line(raw, c.from)
				if c.warm {
					sw.warmSyslog(&r, time.Now())
				} else {
					sw.enrichSyslogBatch([]broker.Record{r}, nil, nil)
				}
			}
			tr := ospfNbrDownTrap(c.device, "10.0.0.6", "2.2.2.2")
			tr.SourceAddr = c.from + ":50000"
			if ev, ok := trapEvent(t, tw, tr); !ok || ev.Object != c.want {
				t.Errorf("trap: event %v about %q, want %q", ok, ev.Object, c.want)
			}
		})
	}
}

// TestOSPFTrapEndsTheDownUnderItsSpelling: the spelling a device's
// ospfNbrStateChange takes (router ID, or address once its lines showed
// Junos or VRP) may change while a neighbor is down: its first line comes
// between the trap down and the trap up, or the learned vendor is lost (the
// table cleared when full). The trap up must still end the down its trap
// raised, under the spelling the down was raised under: else the neighbor's
// alert stays open for good, since no later event of the device names it so.
func TestOSPFTrapEndsTheDownUnderItsSpelling(t *testing.T) {
	inv, _ := ParseInventory([]byte(testInventory + "  - {name: mx9, address: 198.51.100.9}\n"))
	const junosCommit = "<29>Nov 29 14:02:11 mx9 mgd[4321]: UI_COMMIT: User 'netops' requested 'commit' operation (comment: none)"
	for _, c := range []struct {
		name       string
		steps      []string // "line", "down", "up", "forget"
		downUnder  string
		wantUpOver string
	}{
		{"line between the trap down and up", []string{"down", "line", "up"}, "2.2.2.2", "2.2.2.2"},
		{"learned vendor lost between the trap down and up", []string{"line", "down", "forget", "up"}, "10.0.0.6", "10.0.0.6"},
	} {
		t.Run(c.name, func(t *testing.T) {
			rules := NewEventRules(DefaultDedupWindow, DefaultFlapThreshold, DefaultFlapWindow)
			sw := NewWorker(nil, inv, NewClassifier(), WithSharedEventRules(rules))
			sw.out = newOutputs(nil, telemetry.TopicRawSyslog, sw.logger, sw.m, false)
			sw.out.useArenas(&sw.arena, &sw.evEnc.arena)
			tw := NewTrapWorker(nil, inv, WithSharedEventRules(rules))
			var p syslog.Parser
			var downs, ups []string
			for _, step := range c.steps {
				switch step {
				case "line":
					r := receivedRecord(&p, junosCommit)
					var l telemetry.Log
					if err := json.Unmarshal(r.Value, &l); err != nil {
						t.Fatal(err)
					}
					l.SourceAddr, l.Device = "198.51.100.9:514", ""
					r.Value = l.AppendJSON(nil)
					sw.enrichSyslogBatch([]broker.Record{r}, nil, nil)
				case "forget":
					rules.d.vendors = newLineVendors()
				case "down", "up":
					tr := ospfNbrDownTrap("198.51.100.9", "10.0.0.6", "2.2.2.2")
					if step == "up" {
						tr.Varbinds[4].Value = 8 // full
					}
					ev, ok := trapEvent(t, tw, tr)
					if !ok {
						t.Fatalf("%s trap: no event", step)
					}
					for _, out := range tw.det.observe(ev, time.Now()) {
						switch out.Type {
						case "ospf_neighbor_down":
							downs = append(downs, out.Object)
						case "ospf_neighbor_up":
							ups = append(ups, out.Object)
						}
					}
				}
			}
			if len(downs) != 1 || downs[0] != c.downUnder {
				t.Fatalf("downs %q, want one about %q", downs, c.downUnder)
			}
			if !slices.Contains(ups, c.wantUpOver) {
				t.Errorf("ups %q: the down about %q is never ended", ups, c.wantUpOver)
			}
			if st, _, ok := tw.det.reportedState("mx9", "ospf_neighbor_up", c.downUnder); !ok || st != "ospf_neighbor_up" {
				t.Errorf("%s's state %q (%v), want ospf_neighbor_up", c.downUnder, st, ok)
			}
		})
	}
}

// TestOSPFTrapSpellingFollowsARename: a reload that renames a device (same
// address, another name) moves what the detector holds of it to the new
// name, and the vendor its lines showed goes with it: the renamed device's
// next ospfNbrStateChange, the first event after the reload, names the
// neighbor by address as its lines do, not by router ID (a second event of
// the change its line reports).
func TestOSPFTrapSpellingFollowsARename(t *testing.T) {
	inv, reload := renameInventory(t, "devices:\n  - {name: mx9, address: 198.51.100.9}\n")
	rules := NewEventRules(DefaultDedupWindow, DefaultFlapThreshold, DefaultFlapWindow)
	sw := NewWorker(nil, inv, NewClassifier(), WithSharedEventRules(rules))
	sw.out = newOutputs(nil, telemetry.TopicRawSyslog, sw.logger, sw.m, false)
	sw.out.useArenas(&sw.arena, &sw.evEnc.arena)
	tw := NewTrapWorker(nil, inv, WithSharedEventRules(rules))
	var p syslog.Parser
	r := receivedRecord(&p, "<29>Nov 29 14:02:11 mx9 mgd[4321]: UI_COMMIT: User 'netops' requested 'commit' operation (comment: none)")
	var l telemetry.Log
	if err := json.Unmarshal(r.Value, &l); err != nil {
		t.Fatal(err)
	}
	l.SourceAddr, l.Device = "198.51.100.9:514", ""
	r.Value = l.AppendJSON(nil)
	sw.enrichSyslogBatch([]broker.Record{r}, nil, nil)
	if ev, ok := trapEvent(t, tw, ospfNbrDownTrap("198.51.100.9", "10.0.0.6", "2.2.2.2")); !ok || ev.Device != "mx9" || ev.Object != "10.0.0.6" {
		t.Fatalf("before the reload: event %v of %q about %q, want mx9's about 10.0.0.6", ok, ev.Device, ev.Object)
	}
	reload("devices:\n  - {name: mx9-new, address: 198.51.100.9}\n")
	tw.det.reportClock(tw, nil, time.Now()) // as Run does for each poll: the detector follows the reload
	if ev, ok := trapEvent(t, tw, ospfNbrDownTrap("198.51.100.9", "10.0.0.6", "2.2.2.2")); !ok || ev.Device != "mx9-new" || ev.Object != "10.0.0.6" {
		t.Errorf("after the reload: event %v of %q about %q, want mx9-new's about 10.0.0.6", ok, ev.Device, ev.Object)
	}
}
