package enrich

import "testing"

// TestLinkLocalSenderMatchesItsZone: a link-local sender's zone is part of
// its address, as enrich/README says: an entry with the zone finds it, one
// without (or a range) does not.
func TestLinkLocalSenderMatchesItsZone(t *testing.T) {
	inv, err := ParseInventory([]byte("devices:\n  - {name: ll1, address: 'fe80::1%eth0'}\n  - {name: ll2, address: 'fe80::2'}\n  - {cidr: 'fe80::/64', site: lan}\n"))
	if err != nil {
		t.Fatal(err)
	}
	for sender, want := range map[string]string{"[fe80::1%eth0]:514": "ll1", "[fe80::1%eth1]:514": "", "[fe80::2%eth0]:514": "", "[fe80::2]:514": "ll2", "[fe80::3%eth0]:514": ""} {
		got := ""
		if d := inv.Lookup("", sender); d != nil {
			got = d.Name
			if !d.named() {
				got = "range"
			}
		}
		if got != want {
			t.Errorf("%s: found %q, want %q", sender, got, want)
		}
	}
}
