package enrich

import (
	"net/netip"
	"sync"
	"sync/atomic"
)

// polledNames is what the SNMP rows the metrics workers enrich tell the
// trap workers, so that a trap's event is the one syslog and polling raise
// for the same change:
//
//   - each device's interface names by ifIndex: a linkDown or linkUp trap
//     as RFC 2863 defines it carries only ifIndex, ifAdminStatus and
//     ifOperStatus, and an event about "ifIndex 3" is not one about Gi0/3;
//   - which target polls each address (the agent tag of its status rows):
//     a trap's device is its source address, while the device's polls and
//     their events carry the target's name.
//
// The workers of one process share it (with their EventRules); a trap
// from a device this process does not poll keeps its address and ifIndex.
type polledNames struct {
	mu    sync.RWMutex
	names map[interfaceIndex]string
	// devices are the targets' names by the address they poll; "" for an
	// address two targets poll (an agent per port, as in a simulator).
	devices map[netip.Addr]string
	// polling: devices has an entry, so a syslog line from an address the
	// inventory does not name is worth a look; without SNMP targets it
	// never has, and the syslog path takes no lock.
	polling atomic.Bool
}

// interfaceIndex is an interface of a device (its name in events) by
// ifIndex.
type interfaceIndex struct{ device, index string }

// maxPolledNames bounds the table, whatever the network: when it is
// full it starts again, and polls fill it within an interval.
const maxPolledNames = 1 << 20

func newPolledNames() *polledNames {
	return &polledNames{names: map[interfaceIndex]string{}, devices: map[netip.Addr]string{}}
}

// set records that device's interface index is named name.
func (t *polledNames) set(device, index, name string) {
	k := interfaceIndex{device, index}
	t.mu.Lock()
	defer t.mu.Unlock()
	if len(t.names) >= maxPolledNames {
		if _, ok := t.names[k]; !ok {
			clear(t.names)
		}
	}
	t.names[k] = name
}

// name returns the name of device's interface index, if a poll gave it.
func (t *polledNames) name(device, index string) (string, bool) {
	t.mu.RLock()
	defer t.mu.RUnlock()
	n, ok := t.names[interfaceIndex{device, index}]
	return n, ok
}

// setDevice records that the target named device polls address agent
// (the host it was configured with; a name, not an address, is left out,
// since traps come from addresses).
func (t *polledNames) setDevice(agent, device string) {
	a, err := netip.ParseAddr(agent)
	if err != nil {
		return
	}
	a = a.Unmap()
	t.mu.RLock()
	prev, ok := t.devices[a]
	t.mu.RUnlock()
	if ok && (prev == device || prev == "") {
		return // known, or already ambiguous: the usual case, read-locked
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if len(t.devices) >= maxPolledNames {
		clear(t.devices)
	}
	if prev, ok := t.devices[a]; ok && prev != device {
		device = "" // two targets poll it: a trap from it is neither's
	}
	t.devices[a] = device
	t.polling.Store(true)
}

// device returns the target that polls address a, if exactly one does.
func (t *polledNames) device(a netip.Addr) (string, bool) {
	if !a.IsValid() || !t.polling.Load() {
		return "", false
	}
	t.mu.RLock()
	defer t.mu.RUnlock()
	d := t.devices[a.Unmap()]
	return d, d != ""
}
