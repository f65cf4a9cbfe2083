package enrich

import (
	"strings"
	"sync"
)

// lineVendors remembers the devices whose syslog lines show a vendor that
// names an OSPF neighbor by its interface address (Junos, Huawei VRP; see
// neighborsByAddress), for the trap workers: an ospfNbrStateChange names
// the neighbor both ways, and takes the spelling of the device's lines so
// the line and the trap of one change are one event, also for a device
// whose inventory entry gives no vendor. The workers of one process share
// it with their detector; a warm-up rebuilds it from the lines it reads
// back. A trap before any line of its device keeps the router ID.
type lineVendors struct {
	mu      sync.RWMutex
	vendors map[string]string // device → vendor, of neighborsByAddress's
	limit   int               // devices at most: when full, the table starts again
}

func newLineVendors() *lineVendors {
	return &lineVendors{vendors: map[string]string{}, limit: maxDetectorObjects}
}

// note records the vendor of a line of device as the classifier detected
// it (from the line's header or body, not from a rule or the inventory),
// when it is one that names OSPF neighbors by address. A device whose
// lines show another vendor is left as it was: one stray line (a relay's)
// does not unlearn it.
func (v *lineVendors) note(device string, info SyslogInfo) {
	// The classifier's own names: no need of neighborsByAddress's
	// spellings of an inventory's.
	if (info.Vendor != VendorJunos && info.Vendor != VendorHuawei) || info.VendorByRule || device == "" {
		return
	}
	v.mu.RLock()
	known := v.vendors[device] == info.Vendor
	v.mu.RUnlock()
	if known {
		return
	}
	v.mu.Lock()
	defer v.mu.Unlock()
	if len(v.vendors) >= v.limit {
		clear(v.vendors)
	}
	v.vendors[strings.Clone(device)] = info.Vendor // device points into a record's bytes
}

// of is the vendor device's lines showed, "" when none noted.
func (v *lineVendors) of(device string) string {
	v.mu.RLock()
	defer v.mu.RUnlock()
	return v.vendors[device]
}

// move moves the vendor of each device renames names (old to new) to its
// new name, with the detector's other state (detector.moveDevices): the
// renamed device's traps keep naming its neighbors as its lines do.
func (v *lineVendors) move(renames map[string]string) {
	v.mu.Lock()
	defer v.mu.Unlock()
	rekey(v.vendors, func(device string) (string, bool) {
		to, ok := renames[device]
		return to, ok
	}, nil)
}
