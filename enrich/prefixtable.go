package enrich

import (
	"net/netip"
	"slices"
)

// prefixTable finds the inventory's longest CIDR holding an address. It
// keeps one map per prefix length in use, tried longest first, so a
// lookup costs a probe per length (a handful in any real inventory), not
// a test per range: an inventory of thousands of site subnets, and every
// record of a device it does not know, would otherwise scan them all.
type prefixTable struct {
	v4, v6 []prefixLength // longest first
}

// prefixLength holds the ranges of one family and prefix length.
type prefixLength struct {
	bits   int
	ranges map[netip.Prefix]*Device // by masked prefix
}

// add adds d, whose prefix is masked; of two entries with one prefix the
// last added is kept, as the inventory keeps the last of a name or an
// address listed twice.
func (t *prefixTable) add(d *Device) {
	lengths := &t.v6
	if d.prefix.Addr().Is4() {
		lengths = &t.v4
	}
	bits := d.prefix.Bits()
	i, found := slices.BinarySearchFunc(*lengths, bits, func(l prefixLength, bits int) int { return bits - l.bits })
	if !found {
		*lengths = slices.Insert(*lengths, i, prefixLength{bits: bits, ranges: map[netip.Prefix]*Device{}})
	}
	(*lengths)[i].ranges[d.prefix] = d // a range listed again: the last, as names and addresses
}

// lookup returns the entry of the longest prefix holding a, as
// netip.Prefix.Contains matches (an IPv4 address only IPv4 prefixes, a
// zoned address none); nil when none does.
func (t *prefixTable) lookup(a netip.Addr) *Device {
	if a.Zone() != "" {
		return nil
	}
	lengths := t.v6
	if a.Is4() {
		lengths = t.v4
	}
	for _, l := range lengths {
		p, err := a.Prefix(l.bits)
		if err != nil {
			continue
		}
		if d, ok := l.ranges[p]; ok {
			return d
		}
	}
	return nil
}
