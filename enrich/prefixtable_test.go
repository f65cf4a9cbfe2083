package enrich

import (
	"fmt"
	"math/rand/v2"
	"net/netip"
	"slices"
	"strings"
	"testing"
)

// linearRanges is how the inventory matched CIDRs before prefixTable:
// every range tested, longest prefix first, the last of equal ones in
// file order (as for names and addresses). The tests hold prefixTable to
// it.
type linearRanges []*Device

func newLinearRanges(ds []*Device) linearRanges {
	r := slices.Clone(ds)
	slices.Reverse(r) // of one range listed twice, the last
	slices.SortStableFunc(r, func(a, b *Device) int { return b.prefix.Bits() - a.prefix.Bits() })
	return r
}

func (r linearRanges) lookup(a netip.Addr) *Device {
	for _, d := range r {
		if d.prefix.Contains(a) {
			return d
		}
	}
	return nil
}

// TestPrefixTableMatchesLinearScan: for random nested, overlapping and
// repeated ranges of both families, and addresses in and around them
// (IPv4-mapped and zoned ones too), the table finds what testing every
// range longest first finds.
func TestPrefixTableMatchesLinearScan(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for round := 0; round < 200; round++ {
		var ds []*Device
		var table prefixTable
		var seeds []netip.Addr
		for i := 0; i < 1+rng.IntN(40); i++ {
			a, bitLen := randomAddr(rng)
			p := netip.PrefixFrom(a, rng.IntN(bitLen+1)).Masked()
			if i > 0 && rng.IntN(5) == 0 {
				p = ds[rng.IntN(len(ds))].prefix // the same range twice
			}
			d := &Device{Name: fmt.Sprintf("range%d", i), prefix: p}
			ds = append(ds, d)
			table.add(d)
			seeds = append(seeds, a)
		}
		linear := newLinearRanges(ds)
		for i := 0; i < 200; i++ {
			var a netip.Addr
			switch rng.IntN(5) {
			case 0:
				a, _ = randomAddr(rng)
			case 1:
				a = netip.AddrFrom16(seeds[rng.IntN(len(seeds))].As16()) // IPv4-mapped
			case 2:
				if s := seeds[rng.IntN(len(seeds))]; s.Is6() {
					a = s.WithZone("eth0")
				} else {
					a = s
				}
			default:
				a = nearby(rng, seeds[rng.IntN(len(seeds))])
			}
			if got, want := table.lookup(a), linear.lookup(a); got != want {
				t.Fatalf("round %d: %s: table %s, linear scan %s", round, a, name(got), name(want))
			}
		}
	}
}

// randomAddr is an IPv4 or IPv6 address, with its bit length.
func randomAddr(rng *rand.Rand) (netip.Addr, int) {
	if rng.IntN(2) == 0 {
		return netip.AddrFrom4([4]byte{byte(rng.IntN(4)), byte(rng.IntN(256)), byte(rng.IntN(256)), byte(rng.IntN(256))}), 32
	}
	var b [16]byte
	b[0], b[1] = 0x20, 0x01
	for i := 2; i < 16; i++ {
		b[i] = byte(rng.IntN(4)) // few distinct values, so ranges nest
	}
	return netip.AddrFrom16(b), 128
}

// nearby is a with some of its low bits changed.
func nearby(rng *rand.Rand, a netip.Addr) netip.Addr {
	b := a.As16()
	i := 15 - rng.IntN(4)
	b[i] ^= byte(1 << rng.IntN(8))
	if a.Is4() {
		return netip.AddrFrom16(b).Unmap()
	}
	return netip.AddrFrom16(b)
}

func name(d *Device) string {
	if d == nil {
		return "none"
	}
	return d.Name
}

// TestInventoryManyRanges: an inventory of a few thousand site subnets
// and the supernets above them finds each address's narrowest range,
// by address or through Lookup's "ip:port".
func TestInventoryManyRanges(t *testing.T) {
	inv, err := ParseInventory([]byte(manyRangesInventory(2000)))
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ addr, site string }{
		{"10.7.7.9:514", "site-1799"},   // 10.7.7.0/24, the 1,800th subnet
		{"10.0.0.1", "site-0000"},       // the first
		{"10.7.207.200", "site-1999"},   // the last
		{"10.7.208.1", "region-10.7"},   // past the subnets, inside the /16
		{"10.200.0.1", "everything-10"}, // only the /8
	} {
		d := inv.Lookup("", c.addr)
		if d == nil || d.Site != c.site {
			t.Errorf("%s: got %+v, want site %s", c.addr, d, c.site)
		}
	}
	if d := inv.Lookup("", "192.0.2.1"); d != nil {
		t.Errorf("192.0.2.1 is in no range, got %s", d.Name)
	}
}

// manyRangesInventory lists n /24 site subnets of 10.0.0.0/8 in order,
// the /16s above them and 10.0.0.0/8 itself.
func manyRangesInventory(n int) string {
	var b strings.Builder
	b.WriteString("devices:\n")
	for i := 0; i < n; i++ {
		fmt.Fprintf(&b, "  - {cidr: 10.%d.%d.0/24, site: site-%04d}\n", i/256, i%256, i)
	}
	for i := 0; i <= (n-1)/256; i++ {
		fmt.Fprintf(&b, "  - {cidr: 10.%d.0.0/16, site: region-10.%d}\n", i, i)
	}
	b.WriteString("  - {cidr: 10.0.0.0/8, site: everything-10}\n")
	return b.String()
}

// BenchmarkInventoryRanges: finding a sender's range in an inventory of
// 2,000 site subnets, against the linear scan the table replaced, for an
// address in a subnet and one in no range (a device the inventory does
// not know, which the scan tested against every range).
func BenchmarkInventoryRanges(b *testing.B) {
	inv, err := ParseInventory([]byte(manyRangesInventory(2000)))
	if err != nil {
		b.Fatal(err)
	}
	idx := inv.idx.Load()
	var ds []*Device
	for _, l := range idx.ranges.v4 {
		for _, d := range l.ranges {
			ds = append(ds, d)
		}
	}
	linear := newLinearRanges(ds)
	for _, c := range []struct{ name, addr string }{{"subnet", "10.3.7.9"}, {"unknown", "192.0.2.1"}} {
		a := netip.MustParseAddr(c.addr)
		b.Run(c.name+"/table", func(b *testing.B) {
			for i := 0; i < b.N; i++ {
				idx.ranges.lookup(a)
			}
		})
		b.Run(c.name+"/linear", func(b *testing.B) {
			for i := 0; i < b.N; i++ {
				linear.lookup(a)
			}
		})
	}
}
