package enrich

import (
	"net/netip"
	"sync"
	"sync/atomic"
)

// interfaceNames remembers each device's interface names by ifIndex, as
// the SNMP interface rows the metrics workers enrich give them, and the
// gNMI interface rows that carry OpenConfig's state/ifindex, for the trap
// workers: a linkDown or linkUp trap as RFC 2863 defines it carries only
// ifIndex, ifAdminStatus and ifOperStatus, and an event about "ifIndex 3"
// is not the one syslog, polling and gNMI raise about Gi0/3. The workers
// of one process share it (with their EventRules); a trap about a device
// whose rows this process does not enrich keeps "ifIndex N".
type interfaceNames struct {
	mu      sync.RWMutex
	names   map[interfaceIndex]*interfaceName
	devices map[netip.Addr]string // the device name the rows of each agent address last set names under
	limit   int                   // entries at most: when full, the table starts again
	ids     atomic.Uint64         // the last row id handed out (newRowID)
	version atomic.Uint64         // counts the names set, for who waits for one
	peak    shrinkable            // of names, for drop to rebuild it
}

// interfaceIndex is an interface of a device (its name in events) by
// ifIndex.
type interfaceIndex struct{ device, index string }

// interfaceName is an entry of the table: the name, which row set it
// last, and how many times it was set, so that a row tells without a lock
// whether the entry is as the row last saw it (another row, of the same
// ifIndex, may have set it since, or the table started again).
type interfaceName struct {
	name   string        // under interfaceNames.mu
	polled bool          // under interfaceNames.mu: name is an SNMP row's
	owner  atomic.Uint64 // the rowCounters.nameID of the row that set name; 0 once dropped
	sets   atomic.Uint64 // changed by each set that changes the entry
}

// maxInterfaceNames bounds the table, whatever the network: when it is
// full it starts again, and each row puts its name back at its next poll.
const maxInterfaceNames = 1 << 20

func newInterfaceNames() *interfaceNames {
	return &interfaceNames{names: map[interfaceIndex]*interfaceName{}, devices: map[netip.Addr]string{}, limit: maxInterfaceNames}
}

// newRowID numbers a row that sets names (rowCounters.nameID), never 0.
func (t *interfaceNames) newRowID() uint64 { return t.ids.Add(1) }

// set records that device's interface index is named name, by the row
// owner (a rowCounters.nameID) polled at agent (the zero Addr for none
// known), and returns the entry and its sets then. polled: the row is an
// SNMP poll's; else a gNMI update's. An entry another row set to the same
// name is taken over as it is (sets unchanged: a device both polled and
// streamed, whose two rows must not set it in turn at every poll and
// sample); one an SNMP row set to another name is left to it when this
// is a gNMI row's (a trap from an address an SNMP target polls is the
// SNMP target's), which sets it again once that is dropped.
func (t *interfaceNames) set(device, index, name string, owner uint64, agent netip.Addr, polled bool) (*interfaceName, uint64) {
	k := interfaceIndex{device, index}
	t.mu.Lock()
	defer t.mu.Unlock()
	if agent.IsValid() && t.devices[agent] != device {
		if len(t.devices) >= t.limit {
			clear(t.devices)
		}
		t.devices[agent] = device
	}
	e := t.names[k]
	if e != nil && e.owner.Load() != owner {
		switch {
		case e.name == name:
			// Taken over unchanged: a row of the name before still
			// finds it as it saw it, and the name stays while either
			// row is kept.
			e.polled = e.polled || polled
			e.owner.Store(owner)
			return e, e.sets.Load()
		case e.polled && !polled:
			return e, e.sets.Load()
		}
	}
	if e == nil {
		if len(t.names) >= t.limit {
			for _, old := range t.names {
				old.owner.Store(0) // its row sets it again at its next poll
			}
			clear(t.names)
		}
		e = &interfaceName{}
		t.names[k] = e
	}
	e.name, e.polled = name, polled
	e.owner.Store(owner)
	t.version.Add(1)
	return e, e.sets.Add(1)
}

// drop forgets device's interface index, if owner still holds it (no
// other row set it since), rebuilding the table once most is gone.
func (t *interfaceNames) drop(device, index string, owner uint64) {
	k := interfaceIndex{device, index}
	t.mu.Lock()
	defer t.mu.Unlock()
	if e := t.names[k]; e != nil && e.owner.Load() == owner {
		t.peak.note(len(t.names))
		e.owner.Store(0)
		delete(t.names, k)
		t.names = shrunk(t.names, &t.peak)
	}
}

// deviceAt is the device name the rows polled at agent last named
// interfaces under: until the next poll after a reload renamed the device
// (an inventory entry for it added, renamed or removed; its SNMP target
// renamed in the config), the name before it, under which the table still
// holds its interfaces.
func (t *interfaceNames) deviceAt(agent netip.Addr) (string, bool) {
	t.mu.RLock()
	defer t.mu.RUnlock()
	d, ok := t.devices[agent]
	return d, ok
}

// name returns the name of device's interface index, if a poll gave it.
func (t *interfaceNames) name(device, index string) (string, bool) {
	t.mu.RLock()
	defer t.mu.RUnlock()
	if e := t.names[interfaceIndex{device, index}]; e != nil {
		return e.name, true
	}
	return "", false
}
