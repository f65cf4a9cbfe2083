package enrich

import (
	"github.com/weirnet/weir/telemetry"
)

// DeviceNamer names devices as the enrichment workers do, for the
// collectors to key raw records by: a raw record's key is then the key of
// the records and events enriched from it, and the enrichment's writing of
// input partition P to output partition P puts each of them in the
// partition its key gives (one device's events in one events partition,
// in order, whichever path reported them). It reads the inventory and the
// SNMP and gNMI targets it is given at every call, so their reloads (the file
// changing, SIGHUP) apply to the keys at once; the targets' sysNames it
// knows are those the metrics workers of the process have read (none in a
// process running only the collect role). Its methods are safe for
// concurrent use, and allocate nothing when the name is the one the
// record carries or the inventory does not know the device.
type DeviceNamer struct {
	inv     *Inventory
	targets *SNMPTargets
	gnmi    *GNMITargets
}

// NewDeviceNamer names devices by inv and the SNMP and gNMI targets, as
// the workers given them do (any may be nil: none).
func NewDeviceNamer(inv *Inventory, targets *SNMPTargets, gnmi *GNMITargets) *DeviceNamer {
	if inv == nil {
		inv, _ = LoadInventory("", nil)
	}
	return &DeviceNamer{inv: inv, targets: targets, gnmi: gnmi}
}

// Name is the name the enrichment gives the device of a syslog line that
// carries hostname ("" for none) and came from source ("ip:port" or
// "ip"): the inventory's, or the SNMP target's polled at its address, or
// (none polled there) the gNMI target's dialed at it (see nameDevice).
// "" when it keeps the line's own (its hostname, else the sender's
// address).
func (n *DeviceNamer) Name(hostname, source string) string {
	name, _ := nameDevice(n.inv, n.targets, n.gnmi, "", hostname, source)
	return name
}

// TrapDevice is the name the enrichment gives the device a trap came from
// (see TrapWorker.device): never "".
func (n *DeviceNamer) TrapDevice(tr *telemetry.Trap) string {
	name, _ := trapDevice(n.inv, n.targets, n.gnmi, tr)
	return name
}

// SNMPTarget is the name the enrichment gives the records of the SNMP
// target named target, polled at agent (see MetricsWorker.enrich): the
// inventory's name for it, by the target's name or address or, when
// neither is listed, by the sysName its polls gave (once this process's
// metrics workers have read one). "" when the records keep the target's
// name.
func (n *DeviceNamer) SNMPTarget(target, agent string) string {
	if d := n.inv.LookupTarget(target, agent); d != nil {
		if d.named() {
			return d.Name
		}
		// A range: its name labels the range, and the sysName
		// is looked up (as lookupSysName is for any unnamed row).
	}
	if sn, ok := n.targets.sysName(target); ok {
		if d := n.inv.lookupNamed(sn); d != nil {
			return d.Name
		}
	}
	return ""
}

// GNMITarget is the name the enrichment gives the records of the gNMI
// target named target: the inventory's name for it, by the target's name
// or the address the config dials it at (as SNMPTarget's, with the gNMI
// targets given); "" when the records keep the target's name. gNMI gives
// no sysName, so none is looked up.
func (n *DeviceNamer) GNMITarget(target string) string {
	if d := n.inv.LookupTarget(target, n.gnmi.address(target)); d.named() {
		return d.Name
	}
	return ""
}
