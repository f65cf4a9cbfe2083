package trap

import (
	"strings"

	"github.com/weirnet/weir/collectors/snmp/profile"
	"github.com/weirnet/weir/internal/trapnames"
)

// Names maps OIDs to names: the standard ones (trapnames) plus every
// scalar and column of the profiles. It is read-only once built.
type Names = trapnames.Names

// NewNames builds the table; profiles may be nil.
func NewNames(profiles *profile.Set) *Names {
	extra := make(map[string]string, 256)
	if profiles != nil {
		for _, name := range profiles.Names() {
			p, _ := profiles.Get(name)
			for _, m := range p.Scalars {
				// Scalars are named without their .0 instance.
				extra[strings.TrimSuffix(m.OID, ".0")] = m.Name
			}
			for _, t := range p.Tables {
				for _, c := range t.Columns {
					extra[c.OID] = c.Name
				}
				for _, j := range t.Joins {
					for _, c := range j.Columns {
						extra[c.OID] = c.Name
					}
				}
			}
		}
	}
	return trapnames.New(extra)
}
