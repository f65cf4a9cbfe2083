package enrich

import (
	"strconv"
	"strings"
	"time"

	"github.com/weirnet/weir/telemetry"
)

// A gNMI interface's speed comes in its own rows (openconfig-if-ethernet's
// port-speed, a LAG's lag-speed), not with its counters: the metrics
// worker keeps it per device and interface, as a state, for the counter
// rows that follow to give speed_mbps and utilisation, as IF-MIB rows do
// from ifHighSpeed.

// speedWhat is the stateKey.what of an interface's speed, in Mbit/s.
const speedWhat = "speed"

// speedLeaves are where each OpenConfig row form holds the speed leaves:
// the negotiated speed (an auto-negotiating port's port-speed may be
// SPEED_UNKNOWN), the configured one, and a LAG's (Mbit/s, a number).
var speedLeaves = map[string]struct{ negotiated, port, lag string }{
	"interfaces_interface_ethernet_state":    {"negotiated-port-speed", "port-speed", ""},
	"interfaces_interface_ethernet":          {"state/negotiated-port-speed", "state/port-speed", ""},
	"interfaces_interface_aggregation_state": {"", "", "lag-speed"},
	"interfaces_interface_aggregation":       {"", "", "state/lag-speed"},
	"interfaces_interface":                   {"ethernet/state/negotiated-port-speed", "ethernet/state/port-speed", "aggregation/state/lag-speed"},
}

// openConfigSpeed is the speed in Mbit/s an OpenConfig interface row
// carries, and false when it carries none (or only SPEED_UNKNOWN).
func openConfigSpeed(p *telemetry.Point) (float64, bool) {
	leaves, ok := speedLeaves[p.Measurement]
	if !ok {
		return 0, false
	}
	for _, name := range [...]string{leaves.negotiated, leaves.port} {
		if name == "" {
			continue
		}
		if v, ok := openConfigLeaf(p, name); ok {
			if mbps, ok := portSpeedMbps(v); ok {
				return mbps, true
			}
		}
	}
	if leaves.lag != "" {
		// A uint32 of Mbit/s, as a Gauge32 is: a fraction or 1e300
		// (which converts to an integer as the CPU has it) is none.
		if mbps, ok := gauge32(p, leaves.lag); ok && mbps > 0 {
			return mbps, true
		}
	}
	return 0, false
}

// portSpeedMbps reads an openconfig-if-ethernet ETHERNET_SPEED identity,
// upper-cased and without its module prefix (SPEED_10GB, SPEED_2500MB,
// SPEED_100GB_2LANE), as Mbit/s.
func portSpeedMbps(v string) (float64, bool) {
	rest, ok := strings.CutPrefix(v, "SPEED_")
	if !ok {
		return 0, false
	}
	if speed, lanes, ok := strings.Cut(rest, "_"); ok {
		// The lanes it takes (a 100G port on 50G SerDes) change nothing
		// of the speed.
		n, ok := strings.CutSuffix(lanes, "LANE")
		if _, err := strconv.ParseUint(n, 10, 8); !ok || err != nil {
			return 0, false
		}
		rest = speed
	}
	scale := 1.0
	switch {
	case strings.HasSuffix(rest, "GB"):
		scale = 1000
	case strings.HasSuffix(rest, "MB"):
	default:
		return 0, false // SPEED_UNKNOWN
	}
	n, err := strconv.ParseUint(rest[:len(rest)-2], 10, 32)
	if err != nil || n == 0 {
		return 0, false
	}
	return float64(n) * scale, true
}

// speedKey is the state key of target's interface's speed.
func speedKey(target, iface string) stateKey {
	return stateKey{row: rowKey{device: target, measurement: "interface"}, what: speedWhat, object: iface}
}

// noteSpeed keeps the speed a gNMI interface row of target carries, at
// its time at.
func (w *MetricsWorker) noteSpeed(p *telemetry.Point, target string, at time.Time) {
	mbps, ok := openConfigSpeed(p)
	if !ok {
		return
	}
	name, _ := p.Tag("name")
	if name == "" {
		return
	}
	key := speedKey(target, name)
	if prev, ok := w.state[key]; ok && !w.newer(at, prev) {
		return
	}
	w.putState(key, stateSample{v: int64(mbps), at: at})
}

// gnmiSpeed is the speed of target's interface of a gNMI counter row, in
// Mbit/s (0: none known). Looking it up marks it seen: a speed sent once
// (on_change, with no heartbeat) is kept while the interface's counters
// come.
func (w *MetricsWorker) gnmiSpeed(p *telemetry.Point, target string) float64 {
	name, _ := p.Tag("name")
	if name == "" || p.IsDelete() {
		// A delete (of the counters, of the state) has no rates to
		// measure against the speed; a speed_mbps beside its deleted
		// field would make it a record like any other, which sinks
		// serve rather than drop the interface's series by.
		return 0
	}
	key := speedKey(target, name)
	s, ok := w.state[key]
	if !ok {
		return 0
	}
	if s.seen != w.rates.now {
		s.seen = w.rates.now
		w.state[key] = s
	}
	return float64(s.v.v)
}

// speedDeletes are the deletes (measurement as the collector names a
// delete's path) that take an interface's speed with them: of the
// interfaces or the interface, its ethernet or aggregation container or
// their state, or a speed leaf. A port-speed deleted while the negotiated
// one stays takes it too: the next row that carries a speed sets it again.
var speedDeletes = map[string]bool{
	"interfaces":                                                true,
	"interfaces_interface":                                      true,
	"interfaces_interface_ethernet":                             true,
	"interfaces_interface_ethernet_state":                       true,
	"interfaces_interface_aggregation":                          true,
	"interfaces_interface_aggregation_state":                    true,
	"interfaces_interface_ethernet_state_port_speed":            true,
	"interfaces_interface_ethernet_state_negotiated_port_speed": true,
	"interfaces_interface_aggregation_state_lag_speed":          true,
}

// deletedSpeed forgets the speeds of target that a gNMI delete p removes
// (speedDeletes), of its interface, or of every one when it names none: a
// port removed from the config and made again at another speed had its
// utilisation from the old one until a speed row came.
func (w *MetricsWorker) deletedSpeed(p *telemetry.Point, target string, at time.Time) {
	if !speedDeletes[p.Measurement] {
		return
	}
	gone := func(key stateKey) {
		if prev, ok := w.state[key]; ok && w.newer(at, prev) {
			w.deleteState(key)
		}
	}
	if name, _ := p.Tag("name"); name != "" {
		gone(speedKey(target, name))
		return
	}
	for key := range w.state {
		if key.what == speedWhat && key.row.device == target && key.row.measurement == "interface" {
			gone(key)
		}
	}
}
