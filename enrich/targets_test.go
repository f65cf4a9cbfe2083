package enrich

import (
	"net/netip"
	"testing"
)

// TestSNMPTargets: a target names the address it is polled at; an address
// two targets poll names neither, a DNS name no address, and Set replaces
// what was there (SIGHUP). A nil SNMPTargets names nothing.
func TestSNMPTargets(t *testing.T) {
	tg := NewSNMPTargets([]SNMPTarget{{Name: "core9", Host: "192.0.2.9"}, {Name: "simA", Host: "127.0.0.1"}, {Name: "simB", Host: "127.0.0.1"},
		{Name: "dns", Host: "router.example.net"}, {Name: "v6", Host: "2001:DB8::9"}})
	for _, c := range []struct{ addr, want string }{
		{"192.0.2.9", "core9"}, {"::ffff:192.0.2.9", "core9"}, {"2001:db8::9", "v6"},
		{"127.0.0.1", ""}, {"192.0.2.10", ""},
	} {
		if got, _ := tg.device(netip.MustParseAddr(c.addr)); got != c.want {
			t.Errorf("%s: %q, want %q", c.addr, got, c.want)
		}
	}
	if !tg.any() {
		t.Error("any: false with targets")
	}
	tg.Set([]SNMPTarget{{Name: "core10", Host: "192.0.2.9"}})
	if got, _ := tg.device(netip.MustParseAddr("192.0.2.9")); got != "core10" {
		t.Errorf("after Set: %q, want core10", got)
	}
	if got, ok := tg.device(netip.MustParseAddr("2001:db8::9")); ok {
		t.Errorf("after Set: a removed target still names its address: %q", got)
	}
	tg.Set(nil)
	var none *SNMPTargets
	if tg.any() || none.any() {
		t.Error("any: true without targets")
	}
	if got, ok := none.device(netip.MustParseAddr("192.0.2.9")); ok {
		t.Errorf("nil targets named %q", got)
	}
}

// TestGNMITargetsByAddress: a gNMI target names the address it is dialed
// at (the host of its "host:port"); an address two targets are dialed at
// names neither, a DNS name or a target behind a gateway (no address) no
// address, and Set replaces what was there (SIGHUP). A nil GNMITargets
// names nothing.
func TestGNMITargetsByAddress(t *testing.T) {
	tg := NewGNMITargets([]GNMITarget{{Name: "spine1", Address: "192.0.2.9:57400"}, {Name: "a", Address: "127.0.0.1:6030"},
		{Name: "b", Address: "127.0.0.1:6031"}, {Name: "dns", Address: "router.example.net:6030"}, {Name: "gw"},
		{Name: "v6", Address: "[2001:DB8::9]:57400"}, {Name: "mapped", Address: "[::ffff:192.0.2.10]:57400"}})
	for _, c := range []struct{ addr, want string }{
		{"192.0.2.9", "spine1"}, {"::ffff:192.0.2.9", "spine1"}, {"2001:db8::9", "v6"}, {"192.0.2.10", "mapped"},
		{"127.0.0.1", ""}, {"192.0.2.11", ""},
	} {
		if got, _ := tg.device(netip.MustParseAddr(c.addr)); got != c.want {
			t.Errorf("%s: %q, want %q", c.addr, got, c.want)
		}
	}
	if !tg.any() {
		t.Error("any: false with targets")
	}
	if got := tg.address("dns"); got != "router.example.net:6030" {
		t.Errorf("address(dns) = %q: a DNS name names no address, but is the target's still", got)
	}
	tg.Set([]GNMITarget{{Name: "spine2", Address: "192.0.2.9:57400"}})
	if got, _ := tg.device(netip.MustParseAddr("192.0.2.9")); got != "spine2" {
		t.Errorf("after Set: %q, want spine2", got)
	}
	if got, ok := tg.device(netip.MustParseAddr("2001:db8::9")); ok {
		t.Errorf("after Set: a removed target still names its address: %q", got)
	}
	tg.Set([]GNMITarget{{Name: "gw"}})
	var none *GNMITargets
	if tg.any() || none.any() {
		t.Error("any: true without addresses")
	}
	if got, ok := none.device(netip.MustParseAddr("192.0.2.9")); ok {
		t.Errorf("nil targets named %q", got)
	}
}

// TestHostnameAddressNamesTheDevice: a line relayed by a syslog server
// (its source: the relay) whose hostname is the device's address is the
// device the inventory lists at that address, not the relay.
func TestHostnameAddressNamesTheDevice(t *testing.T) {
	inv, _ := ParseInventory([]byte(testInventory))
	for _, tc := range []struct{ hostname, source, name, site string }{
		{"192.0.2.1", "198.51.100.9:514", "edge1", "ams1"},
		{"10.9.9.9", "198.51.100.9:514", "10.9.9.9", "lab"}, // in a CIDR entry, which names no device
		{"198.51.100.7", "192.0.2.1:514", "edge1", "ams1"},  // not listed: the sender is
		{"edge1", "198.51.100.9:514", "edge1", "ams1"},      // a name, as before
		{"10.9.9.9", "192.0.2.1:514", "edge1", "ams1"},      // the sender's own entry before the name's range
	} {
		name, d := nameDevice(inv, nil, nil, tc.hostname, tc.hostname, tc.source)
		if d == nil || name != tc.name || d.Site != tc.site {
			t.Errorf("hostname %s via %s: device %q (entry %+v), want %s at %s", tc.hostname, tc.source, name, d, tc.name, tc.site)
		}
	}
}
