package telemetry

import (
	"net/netip"
	"strings"
)

// ObjectID is an event's object in the one spelling every path's events
// of that object share, by the event's type: for an interface, its name
// with the type part abbreviated and lower-cased (IOS syslog and a
// linkDown's ifDescr say GigabitEthernet0/1, the SNMP poller's ifName
// Gi0/1: both gi0/1; NX-OS Ethernet1/1 and Eth1/1: et1/1); for a BGP or
// OSPF neighbor, its address as RFC 5952 writes it (IOS writes IPv6 in
// capitals, a trap's index and gNMI in lower case), a VRF kept as it is;
// other objects as they are. Enrichment de-duplicates on it and sets
// Event.ObjectID to it; a sink that pairs a down with its up keys on it.
func ObjectID(eventType, object string) string {
	var buf [64]byte
	if b := AppendObjectID(buf[:0], eventType, object); string(b) != object {
		return string(b)
	}
	return object // no allocation when it is spelt so already
}

// AppendObjectID appends the object's ObjectID to dst (what ObjectID returns), allocating
// nothing more.
func AppendObjectID(dst []byte, eventType, object string) []byte {
	switch {
	case strings.HasPrefix(eventType, "interface_"):
		if short, i, ok := interfaceAbbrev(object); ok {
			return append(append(dst, short...), object[i:]...)
		}
	case strings.HasPrefix(eventType, "bgp_peer_"), strings.HasPrefix(eventType, "ospf_neighbor_"):
		addr, vrf, hasVRF := strings.Cut(object, VRFSep)
		if strings.IndexByte(addr, ':') < 0 {
			break
		}
		a, err := netip.ParseAddr(addr)
		if err != nil {
			break
		}
		dst = a.AppendTo(dst)
		if hasVRF {
			dst = append(append(dst, VRFSep...), vrf...)
		}
		return dst
	}
	return append(dst, object...)
}

// VRFSep joins a BGP session's neighbor and its VRF in an event's object:
// "10.255.0.1 vrf CUST-A".
const VRFSep = " vrf "

// interfaceAbbrevs maps the type part of interface names, lowered, to
// one short spelling: Cisco's abbreviations, which IOS, NX-OS and EOS
// accept for the long names.
var interfaceAbbrevs = map[string]string{
	"gigabitethernet": "gi", "gi": "gi",
	"tengigabitethernet": "te", "tengige": "te", "te": "te",
	// Catalyst 9000 multigigabit and app-hosting ports.
	"twogigabitethernet": "tw", "tw": "tw",
	"fivegigabitethernet": "fi", "fi": "fi",
	"appgigabitethernet": "ap", "ap": "ap",
	"twentyfivegige": "twe", "twe": "twe",
	"fortygigabitethernet": "fo", "fortygige": "fo", "fo": "fo",
	"hundredgige": "hu", "hundredgigabitethernet": "hu", "hu": "hu",
	"fourhundredgige": "fh", "fh": "fh",
	"bundle-ether": "be", "be": "be",
	"fastethernet": "fa", "fa": "fa",
	"ethernet": "et", "eth": "et", "et": "et",
	"port-channel": "po", "portchannel": "po", "po": "po",
	"loopback": "lo", "lo": "lo",
	"vlan": "vl", "vl": "vl",
	"tunnel": "tu", "tu": "tu",
	"serial": "se", "se": "se",
	"management": "ma", "mgmt": "ma", "ma": "ma",
}

// interfaceAbbrev is the short spelling of name's type part, name[:i],
// and ok when it differs from it.
func interfaceAbbrev(name string) (short string, i int, ok bool) {
	for i < len(name) && (name[i] < '0' || name[i] > '9') {
		i++
	}
	if i == 0 || i == len(name) || i > 24 {
		return "", 0, false
	}
	var buf [24]byte
	typ := buf[:i]
	for j := range i {
		typ[j] = toLowerASCII(name[j])
	}
	short, found := interfaceAbbrevs[string(typ)]
	if !found || name[:i] == short {
		return "", 0, false
	}
	if string(typ) == "eth" && strings.IndexByte(name[i:], '/') < 0 {
		// NX-OS's (and Comware's) Eth1/1 has a slash; a Linux name
		// (eth0, eth0.100) cannot, and is its own: SONiC's management
		// eth0 is not its front-panel Ethernet0.
		return "", 0, false
	}
	return short, i, true
}

func toLowerASCII(c byte) byte {
	if c >= 'A' && c <= 'Z' {
		return c + 'a' - 'A'
	}
	return c
}

// TypeDeviceRenamed is the event that says a reload of the inventory
// renamed a device: Device is the new name, Object the old one. What was
// held under the old name (a de-duplication's state, a webhook sink's
// firing alerts) is then the new name's.
const TypeDeviceRenamed = "device_renamed"

// RenamedObjectID is the ObjectID an event of type eventType about object
// id of device from has once from is renamed to: the same, but for a
// device's reachability. Those name the SNMP target as their object,
// except when the device is named as its target (no object): renamed from
// its target's name, the object is that name; renamed to it, none.
func RenamedObjectID(eventType, id, from, to string) string {
	if !strings.HasPrefix(eventType, "device_reachable") && !strings.HasPrefix(eventType, "device_unreachable") {
		return id
	}
	switch id {
	case "":
		return from
	case to:
		return ""
	}
	return id
}
