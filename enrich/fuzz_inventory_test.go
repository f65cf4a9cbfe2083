package enrich

import (
	"net/netip"
	"os"
	"path/filepath"
	"testing"
)

// FuzzParseInventory reads arbitrary bytes as an inventory file: no panic;
// what is accepted finds each named device by its name and each device
// with an address by that address, unless a later entry took it (warned).
func FuzzParseInventory(f *testing.F) {
	for _, p := range []string{"../configs/inventory.yaml", "../deploy/inventory.yaml",
		"../examples/gnmi-and-snmp/inventory.yaml", "../examples/syslog-events/inventory.yaml"} {
		if b, err := os.ReadFile(filepath.FromSlash(p)); err == nil {
			f.Add(b)
		}
	}
	f.Add([]byte("devices:\n  - {name: edge1, address: 10.0.0.1, site: ams1}\n  - {cidr: 10.1.0.0/16, site: fra1}\n"))
	f.Add([]byte("devices:\n  - {name: edge1, address: 10.0.0.1}\n  - {name: EDGE1., address: '::1'}\n"))
	f.Add([]byte("devices: []\n"))
	f.Add([]byte("# nothing\n"))
	f.Add([]byte("devices:\n  - {name: a, tags: {device: x}}\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		inv, err := ParseInventory(data)
		if err != nil {
			if inv != nil {
				t.Fatalf("refused (%v) with an inventory", err)
			}
			return
		}
		idx := inv.idx.Load()
		for n, d := range idx.byName {
			if got := inv.Lookup(n, ""); got != d {
				t.Fatalf("device %q: lookup by name found %v", n, got)
			}
		}
		for a, d := range idx.byAddr {
			if got := inv.LookupAddr("", a); got != d {
				t.Fatalf("address %v: lookup found %v, want %v", a, got, d)
			}
			if got := inv.Lookup("", a.String()); got != d {
				t.Fatalf("address %v: lookup by text found %v, want %v", a, got, d)
			}
		}
		_ = inv.LookupAddr("", netip.MustParseAddr("192.0.2.1"))
		_ = inv.Warnings()
	})
}
