package enrich

import "testing"

// TestInventoryTrailingDot: a fully qualified name written with its
// root dot (edge1.example.net., as DNS tools, zone files and some
// devices print it) is the same host as without it. The README says
// names match "ignoring case, and with or without the domain", and
// EDGE1.example.net finds edge1.example.net, but core1.fra.example.net.
// finds nothing, nor does an entry written with the dot find its name
// without it: the record is tagged unknown and keeps the sender's name,
// so its events and series split from the device's.
func TestInventoryTrailingDot(t *testing.T) {
	inv, err := ParseInventory([]byte(`devices:
  - {name: core1.fra.example.net, site: fra1}
  - {name: edge2.example.net., site: ams2}
`))
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ name, site string }{
		{"CORE1.fra.example.net", "fra1"},  // documented: case ignored
		{"core1.fra.example.net.", "fra1"}, // the same name, absolute
		{"CORE1.FRA.EXAMPLE.NET.", "fra1"}, //
		{"edge2.example.net", "ams2"},      // the entry is written absolute
		{"edge2", "ams2"},                  // already found by its first label
		{"core1.ams.example.net.", ""},     // another domain stays another device
	} {
		if got := siteOf(inv, tc.name); got != tc.site {
			t.Errorf("Lookup(%q): site %q, want %q", tc.name, got, tc.site)
		}
	}
}
