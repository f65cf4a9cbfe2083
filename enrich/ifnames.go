package enrich

import "sync"

// interfaceNames remembers each device's interface names by ifIndex, as
// the SNMP interface rows the metrics workers enrich give them, for the
// trap workers: a linkDown or linkUp trap as RFC 2863 defines it carries
// only ifIndex, ifAdminStatus and ifOperStatus, and an event about
// "ifIndex 3" is not the one syslog and polling raise about Gi0/3. The
// workers of one process share it (with their EventRules); a trap about
// a device whose rows this process does not enrich keeps "ifIndex N".
type interfaceNames struct {
	mu    sync.RWMutex
	names map[interfaceIndex]string
}

// interfaceIndex is an interface of a device (its name in events) by
// ifIndex.
type interfaceIndex struct{ device, index string }

// maxInterfaceNames bounds the table, whatever the network: when it is
// full it starts again, and polls fill it within an interval.
const maxInterfaceNames = 1 << 20

func newInterfaceNames() *interfaceNames {
	return &interfaceNames{names: map[interfaceIndex]string{}}
}

// set records that device's interface index is named name.
func (t *interfaceNames) set(device, index, name string) {
	k := interfaceIndex{device, index}
	t.mu.Lock()
	defer t.mu.Unlock()
	if len(t.names) >= maxInterfaceNames {
		if _, ok := t.names[k]; !ok {
			clear(t.names)
		}
	}
	t.names[k] = name
}

// name returns the name of device's interface index, if a poll gave it.
func (t *interfaceNames) name(device, index string) (string, bool) {
	t.mu.RLock()
	defer t.mu.RUnlock()
	n, ok := t.names[interfaceIndex{device, index}]
	return n, ok
}
