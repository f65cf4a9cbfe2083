package enrich

import (
	"slices"
	"strings"
	"time"

	"github.com/weirnet/weir/telemetry"
)

// An OSPF neighbor is one object, its router ID, for the Cisco family's
// lines and ospfNbrStateChange traps alike: the traps name no interface,
// so keying the object by the interface a line names would make a line
// and its trap two events. A device may have several adjacencies to one
// neighbor (parallel links, two processes or VRFs), and a line names the
// one it is about ("Nbr 10.0.0.2 on Gi0/2"): the neighbor is down while
// any adjacency a line reported down has not come back. So the first adjacency down says ospf_neighbor_down, and the last
// one back ospf_neighbor_up; the ones between change nothing. Without it,
// the first back said up and ended the alert the other still deserved.

// maxAdjacencyLinks bounds the adjacencies kept down per neighbor: a line
// naming a new interface each time (a sender inventing them) past it is
// judged as if it named none.
const maxAdjacencyLinks = 64

// adjacencyKey is an OSPF neighbor (its object ID) of a device.
type adjacencyKey struct{ device, neighbor string }

// adjacenciesDown are a neighbor's adjacencies that lines reported down
// and have not reported up since, by the facility and interface they name
// (in its object ID spelling: Gi0/2 and GigabitEthernet0/2 are one).
type adjacenciesDown struct {
	links []string
	// heldUp is when an up was last held back for another adjacency
	// still down: a trap of the same up (naming no interface) within
	// the de-duplication window is held back too.
	heldUp time.Time
}

// adjacency is the OSPF adjacency a line names: its local interface, and
// the line's facility, which tells OSPFv2's adjacency from OSPFv3's on one
// link (%OSPF-, %OSPFV3-), both to the router ID of a dual-stack
// neighbor. The zero value names none (a trap, an EOS or Huawei line).
// Kept apart, not joined into one string: joined only where the detector
// keeps it or compares it with those kept (a neighbor with an adjacency
// down), not for every OSPF line.
type adjacency struct{ facility, iface string }

// adjacencyOf is the adjacency an OSPF event's line names.
func adjacencyOf(info SyslogInfo) adjacency {
	if !strings.HasPrefix(info.Event, "ospf_neighbor_") {
		return adjacency{}
	}
	return adjacency{info.Facility, info.Fields["interface"]}
}

// adjacencyHolds takes an OSPF neighbor event of device's neighbor id at
// at, naming adjacency adj (the zero one: none), into the adjacencies
// down, and reports whether it changes nothing of the neighbor's state because of
// another adjacency: a down while another is down already, an up while
// another is still down. It is then left out, neither a change nor a
// repeat. A path naming no adjacency (a trap) cannot say which it is
// about: its down while one is down is no change, and its up is held
// back while two or more are down, or while one is, within the
// de-duplication window of an up held back (the trap of that up). An up
// it lets through says every adjacency is up (the device says the
// neighbor is), which forgets those held down. d.mu is held.
func (d *detector) adjacencyHolds(ev telemetry.Event, id string, adj adjacency, at time.Time) bool {
	if !strings.HasPrefix(ev.Type, "ospf_neighbor_") || d.dedup <= 0 {
		return false
	}
	down := ev.Type == "ospf_neighbor_down"
	named := adj.iface != ""
	if down && named {
		if st := d.stateOf(ev.Device, id, ev.Type); st != nil && st.typ == "ospf_neighbor_up" && at.Before(st.at) {
			// Down before the neighbor was last said up (a warm-up or
			// worker of the traps ahead of the lines'): back since, and
			// kept, it would hold the neighbor's next down back.
			return false
		}
	}
	k := adjacencyKey{ev.Device, id}
	a := d.adjacencies[k]
	if a == nil && (!down || !named) {
		return false // no adjacency known down: judged as any change
	}
	var link string // the adjacency as kept: facility, space, interface's object ID
	if named {
		link = adj.facility + " " + telemetry.ObjectID("interface_down", adj.iface)
	}
	switch {
	case a == nil:
		if len(d.adjacencies) >= d.maxObjects {
			// Entries live until their adjacencies come back, past
			// the states settle forgets: bounded as the states are.
			return false
		}
		if d.adjacencies == nil {
			d.adjacencies = map[adjacencyKey]*adjacenciesDown{}
		}
		k.device, k.neighbor = strings.Clone(k.device), strings.Clone(k.neighbor)
		d.adjacencies[k] = &adjacenciesDown{links: []string{strings.Clone(link)}}
		return false
	case link == "" && down:
		return true
	case link == "":
		if len(a.links) > 1 || at.Sub(a.heldUp).Abs() <= d.dedup {
			return true
		}
		delete(d.adjacencies, k)
		return false
	}
	i := slices.Index(a.links, link)
	if down {
		if i >= 0 {
			return len(a.links) > 1 // a repeat of its down: judged as one, unless another is down
		}
		if len(a.links) < maxAdjacencyLinks {
			a.links = append(a.links, strings.Clone(link))
		}
		return true
	}
	if i >= 0 {
		a.links = slices.Delete(a.links, i, i+1)
	}
	if len(a.links) > 0 {
		a.heldUp = at
		return true
	}
	delete(d.adjacencies, k)
	return false
}
