package enrich

import (
	"net/netip"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// SNMPTargets are the devices the config polls by SNMP, by the address
// each is polled at. A trap, or a syslog line without a hostname, names
// its device by the address it came from; when the inventory does not
// name that address (not listed, or only inside a CIDR range), the
// target polling it does, so the device's syslog, traps and polls carry
// one name, and one change seen by several paths is one event, with no
// inventory at all. The targets come from the config, not from the rows a
// worker happens to enrich, so every process of a cluster names alike
// whichever partitions it holds; only the targets' sysNames (which the
// inventory may list a device by) are learned from rows, by the process
// whose metrics workers hold the target's raw.snmp partition. The workers
// of a process share one (WithSNMPTargets); Set replaces its targets
// while they run (SIGHUP).
type SNMPTargets struct {
	byAddr  atomic.Pointer[map[netip.Addr]string] // "" where several targets poll one address
	longest atomic.Int64                          // the longest poll interval, in nanoseconds
	// was is the longest interval before a reload shortened it, until
	// wasUntil (Unix nanoseconds, wall clock): see Set.
	was, wasUntil atomic.Int64
	// sysNames are the targets' sysNames, as the metrics workers of the
	// process read them from the targets' system rows: the name the
	// inventory may list the device by (see nameDevice).
	mu          sync.RWMutex
	sysNames    map[string]string
	sysVersions atomic.Uint64 // counts the changes of sysNames
}

// maxSysNames bounds SNMPTargets.sysNames, whatever the records say:
// when full it starts again, and each target's next system row puts its
// name back.
const maxSysNames = 1 << 16

// SNMPTarget is a polled device: its name, the host it is polled at (an
// address; a DNS name is left out, since records come from addresses)
// and how often.
type SNMPTarget struct {
	Name, Host string
	Interval   time.Duration
}

// NewSNMPTargets returns the targets given.
func NewSNMPTargets(targets []SNMPTarget) *SNMPTargets {
	t := &SNMPTargets{}
	t.Set(targets)
	return t
}

// Set replaces the targets. An address several targets poll (agents on
// one host, by port) names none of them.
func (t *SNMPTargets) Set(targets []SNMPTarget) {
	byAddr := map[netip.Addr]string{}
	var longest time.Duration
	for _, tg := range targets {
		longest = max(longest, tg.Interval)
		a, err := netip.ParseAddr(tg.Host)
		if err != nil {
			continue
		}
		a = a.Unmap()
		if prev, ok := byAddr[a]; ok && prev != tg.Name {
			byAddr[a] = ""
			continue
		}
		byAddr[a] = tg.Name
	}
	t.byAddr.Store(&byAddr)
	// A shorter longest interval counts only once the polls under the
	// old one are past: the first poll after the reload may report a
	// change (a restart) an old interval after another path did, which
	// must still be held then. Twice the old interval, as it was held.
	if old := time.Duration(max(t.longest.Load(), t.heldWas())); longest < old {
		t.was.Store(int64(old))
		t.wasUntil.Store(time.Now().Add(2 * old).UnixNano())
	}
	t.longest.Store(int64(longest))
}

// heldWas is was while it holds (see Set), else 0.
func (t *SNMPTargets) heldWas() int64 {
	if time.Now().UnixNano() < t.wasUntil.Load() {
		return t.was.Load()
	}
	return 0
}

// addresses are the targets by address ("" where several poll one; nil
// for a nil t).
func (t *SNMPTargets) addresses() *map[netip.Addr]string {
	if t == nil {
		return nil
	}
	return t.byAddr.Load()
}

// maxInterval is the longest poll interval of the targets; 0 for none
// (or a nil t).
func (t *SNMPTargets) maxInterval() time.Duration {
	if t == nil {
		return 0
	}
	l := t.longest.Load()
	if w := t.was.Load(); w > l {
		l = max(l, t.heldWas())
	}
	return time.Duration(l)
}

// device returns the target polled at a, if exactly one is; none for a
// nil t (a worker given no targets).
func (t *SNMPTargets) device(a netip.Addr) (string, bool) {
	if t == nil || !a.IsValid() {
		return "", false
	}
	byAddr := t.byAddr.Load()
	if byAddr == nil || len(*byAddr) == 0 {
		return "", false
	}
	d := (*byAddr)[a.Unmap()]
	return d, d != ""
}

// polls says whether any target is polled at a: one, or several, which
// name none (false for a nil t).
func (t *SNMPTargets) polls(a netip.Addr) bool {
	if t == nil || !a.IsValid() {
		return false
	}
	byAddr := t.byAddr.Load()
	if byAddr == nil {
		return false
	}
	_, ok := (*byAddr)[a.Unmap()]
	return ok
}

// setSysName records that target's agent calls itself sysName; nil t
// records nothing. Told at every system row, it costs a read lock when
// nothing changed, and puts a name back after the table started again.
func (t *SNMPTargets) setSysName(target, sysName string) {
	if t == nil {
		return
	}
	t.mu.RLock()
	known, ok := t.sysNames[target]
	t.mu.RUnlock()
	if ok && known == sysName {
		return
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.sysNames == nil || len(t.sysNames) >= maxSysNames {
		t.sysNames = map[string]string{}
	}
	t.sysNames[strings.Clone(target)] = strings.Clone(sysName)
	t.sysVersions.Add(1)
}

// sysNamesVersion changes whenever a sysName does (0 for a nil t).
func (t *SNMPTargets) sysNamesVersion() uint64 {
	if t == nil {
		return 0
	}
	return t.sysVersions.Load()
}

// sysName returns the sysName a poll of target gave, if any did.
func (t *SNMPTargets) sysName(target string) (string, bool) {
	if t == nil {
		return "", false
	}
	t.mu.RLock()
	defer t.mu.RUnlock()
	n, ok := t.sysNames[target]
	return n, ok
}

// nameDevice names the device of a record that says it comes from
// hostname (empty for none) at source ("ip:port"), known to the world as
// device until found otherwise: the inventory's name for it, else, when
// the inventory does not name it (not listed, or only inside a CIDR range)
// and the record names its device by an address (hostname is one, or is
// empty and source is used), the SNMP target polled at that address, else
// (no SNMP target is polled there) the gNMI target dialed at it. It
// returns the name and the inventory entry (nil: unknown); an SNMP target
// the inventory does not name may be listed by its sysName, as its polls
// are matched (MetricsWorker.lookupSysName); a gNMI target is looked up
// as its records are (DeviceNamer.GNMITarget). The syslog and trap workers
// name devices so, as the device's polls, gNMI updates and their events
// do.
func nameDevice(inv *Inventory, targets *SNMPTargets, gnmi *GNMITargets, device, hostname, source string) (string, *Device) {
	d := inv.Lookup(hostname, source)
	if !d.named() && (targets.any() || gnmi.any()) {
		at := senderAddr(source)
		if hostname != "" {
			at = netip.Addr{} // the zero Addr for a name
			if maybeAddr(hostname) {
				at, _ = netip.ParseAddr(hostname)
			}
		}
		if target, ok := gnmi.device(at); ok && !targets.polls(at) {
			// An address SNMP polls is SNMP's to name (one target:
			// its name; several: none).
			device, d = target, inv.LookupTarget(target, gnmi.address(target))
		} else if target, ok := targets.device(at); ok {
			device, d = target, inv.Lookup(target, source)
			if !d.named() {
				// The inventory may list the device by the name it
				// gives itself, as the target's polls are matched.
				if sn, ok := targets.sysName(target); ok {
					if d2 := inv.lookupNamed(sn); d2 != nil {
						d = d2
					}
				}
			}
		}
	}
	if d.named() {
		device = d.Name
	}
	return device, d
}

// any says whether any target has an address, so a record's address is
// worth parsing.
func (t *SNMPTargets) any() bool {
	if t == nil {
		return false
	}
	byAddr := t.byAddr.Load()
	return byAddr != nil && len(*byAddr) > 0
}

// GNMITargets are the addresses of the gNMI targets of the config, by
// target name: a raw.gnmi record names its target, not the address it was
// dialed at, and an inventory entry that lists the device by its address
// names its records, as it names an SNMP target's polls (LookupTarget). As
// SNMPTargets, they come from the config, so every process of a cluster
// names a target's records alike whichever process subscribes to it; the
// collector keys them by the same (DeviceNamer.GNMITarget). The workers
// and the namer of a process share one (WithGNMITargets); Set replaces its
// targets while they run (SIGHUP).
//
// They also name the devices of hostless syslog lines and traps by
// address, as SNMPTargets do (see nameDevice): a record from the address
// exactly one target is dialed at, that the inventory does not name, takes
// the target's name, so its syslog, traps and gNMI updates raise events
// under one name with no inventory at all. An address an SNMP target polls
// is the SNMP target's.
type GNMITargets struct {
	idx atomic.Pointer[gnmiIndex]
}

// gnmiIndex is what GNMITargets.Set makes of the targets, replaced whole.
type gnmiIndex struct {
	byName map[string]string     // the address each target is dialed at
	byAddr map[netip.Addr]string // and the target dialed at each address; "" where several are
}

// GNMITarget is a gNMI target of the config: its name and the address it
// is dialed at ("host:port"). A target reached through a gateway (its
// prefix_target set) is dialed at the gateway's address, which is not the
// device's: give it no Address.
type GNMITarget struct {
	Name, Address string
}

// NewGNMITargets returns the targets given.
func NewGNMITargets(targets []GNMITarget) *GNMITargets {
	t := &GNMITargets{}
	t.Set(targets)
	return t
}

// Set replaces the targets. An address several targets are dialed at (a
// host serving several, by port) names none of them, and a DNS name names
// no address.
func (t *GNMITargets) Set(targets []GNMITarget) {
	byName := make(map[string]string, len(targets))
	byAddr := map[netip.Addr]string{}
	for _, tg := range targets {
		if tg.Address == "" {
			continue
		}
		byName[tg.Name] = tg.Address
		// As the inventory looks the address up (LookupTarget).
		a := senderAddr(tg.Address)
		if !a.IsValid() {
			continue
		}
		if prev, ok := byAddr[a]; ok && prev != tg.Name {
			byAddr[a] = ""
			continue
		}
		byAddr[a] = tg.Name
	}
	t.idx.Store(&gnmiIndex{byName: byName, byAddr: byAddr})
}

// addresses are the targets' addresses by name (nil for a nil t).
func (t *GNMITargets) addresses() *map[string]string {
	if t == nil {
		return nil
	}
	idx := t.idx.Load()
	if idx == nil {
		return nil
	}
	return &idx.byName
}

// address is the address target is dialed at; "" for none (not a target
// of the config, one behind a gateway, or a nil t).
func (t *GNMITargets) address(target string) string {
	if t == nil {
		return ""
	}
	idx := t.idx.Load()
	if idx == nil {
		return ""
	}
	return idx.byName[target]
}

// device returns the target dialed at a, if exactly one is; none for a
// nil t (a worker given no gNMI targets).
func (t *GNMITargets) device(a netip.Addr) (string, bool) {
	if t == nil || !a.IsValid() {
		return "", false
	}
	idx := t.idx.Load()
	if idx == nil || len(idx.byAddr) == 0 {
		return "", false
	}
	d := idx.byAddr[a.Unmap()]
	return d, d != ""
}

// any says whether any target has an address, so a record's address is
// worth parsing.
func (t *GNMITargets) any() bool {
	if t == nil {
		return false
	}
	idx := t.idx.Load()
	return idx != nil && len(idx.byAddr) > 0
}
