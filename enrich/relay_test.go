package enrich

import (
	"strings"
	"testing"
)

// TestInventoryRelayNamesOnlyItsOwnLines: a syslog relay listed by its
// address named every line it relayed from a device the inventory does
// not list (or lists only inside a range) as itself, with its tags: the
// objects of many devices became one, real changes were dropped as
// repeats and false flapping raised. An entry with relay: true names the
// relay's own lines (no hostname) and no line that names another host;
// such a line is an unknown device's, or its address's range's.
func TestInventoryRelayNamesOnlyItsOwnLines(t *testing.T) {
	inv, err := ParseInventory([]byte(`devices:
  - {name: relay1, address: 10.9.0.1, site: dc, relay: true}
  - {cidr: 10.9.0.0/24, site: relays, relay: true}
  - {cidr: 10.1.0.0/16, site: lab}
  - {name: edge1, address: 192.0.2.1, site: ams1}
  - {name: noisy, address: 10.8.0.1, site: plain}
`))
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ name, addr, want string }{
		{"", "10.9.0.1:514", "relay1"},              // the relay's own line
		{"edge1", "10.9.0.1:514", "edge1"},          // a listed device, by name
		{"mystery", "10.9.0.1:514", ""},             // unknown, not the relay
		{"10.1.1.1", "10.9.0.1:514", "10.1.0.0/16"}, // an address hostname in a range: the range
		{"10.77.0.1", "10.9.0.1:514", ""},           // an address nothing lists
		{"mystery", "10.9.0.7:514", ""},             // through a relay of the relays' range
		{"", "10.9.0.7:514", "10.9.0.0/24"},         // that relay's own line
		{"mystery", "10.8.0.1:514", "noisy"},        // no relay: the sender's entry, as before
	} {
		got := ""
		if d := inv.Lookup(tc.name, tc.addr); d != nil {
			got = entryName(d)
		}
		if got != tc.want {
			t.Errorf("Lookup(%q, %q) = %q, want %q", tc.name, tc.addr, got, tc.want)
		}
	}
	if _, err := ParseInventory([]byte("devices:\n  - {name: r, relay: true}\n")); err == nil || !strings.Contains(err.Error(), "relay") {
		t.Errorf("a relay without an address or cidr: %v", err)
	}
}
