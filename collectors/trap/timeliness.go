package trap

import (
	"time"

	"github.com/gosnmp/gosnmp"
)

// timeWindow is RFC 3414's: an authenticated SNMPv3 message more than 150
// seconds older than its authoritative engine's clock is refused, so a
// captured trap or inform cannot be replayed later.
const timeWindow = 150

// maxBoots is snmpEngineBoots at its maximum: an engine there is refused
// until it is given new keys (RFC 3414 section 2.2.2).
const maxBoots = 2147483647

// maxEngineClocks bounds the senders' clocks kept; past it, one is
// forgotten for each new sender (only authenticated messages add one).
const maxEngineClocks = 65536

// engineClock is what a receiver knows of a sender engine's clock: the
// latest boots and time it sent, and when that arrived here.
type engineClock struct {
	boots, time uint32
	at          time.Time
}

// inTime applies RFC 3414's timeliness check (section 3.2, step 7) to an
// authenticated message whose authoritative engine is the sender (a v3
// trap), as Net-SNMP's snmptrapd does (usm_check_and_update_timeliness):
// it is refused if the engine has rebooted since a message seen here
// (fewer boots), or if its time is behind the latest one received and
// more than timeWindow seconds behind the engine's clock as that message
// set it and the time here has advanced it. A time at or past the latest
// is fresh: senders whose clock does not move (gosnmp's SendTrap sends
// boots and time 0 unless told) are not refused from 150 s on. A message
// that moves the clock forward updates it. Unauthenticated messages carry
// no trustworthy time and pass.
func (r *Receiver) inTime(p *gosnmp.SnmpPacket, usm *gosnmp.UsmSecurityParameters, now time.Time) bool {
	if p.MsgFlags&gosnmp.AuthNoPriv == 0 {
		return true
	}
	if usm.AuthoritativeEngineBoots >= maxBoots {
		return false
	}
	id := usm.AuthoritativeEngineID
	c, known := r.clocks[id]
	if known {
		elapsed := uint32(max(now.Sub(c.at), 0) / time.Second)
		switch {
		case usm.AuthoritativeEngineBoots < c.boots:
			return false
		case usm.AuthoritativeEngineBoots == c.boots && usm.AuthoritativeEngineTime < c.time &&
			int64(usm.AuthoritativeEngineTime) < int64(c.time)+int64(elapsed)-timeWindow:
			return false
		}
		if usm.AuthoritativeEngineBoots == c.boots && usm.AuthoritativeEngineTime <= c.time {
			return true // not newer: the clock stays
		}
	} else if len(r.clocks) >= maxEngineClocks {
		for k := range r.clocks {
			delete(r.clocks, k)
			break
		}
	}
	r.clocks[id] = engineClock{boots: usm.AuthoritativeEngineBoots, time: usm.AuthoritativeEngineTime, at: now}
	return true
}

// informInTime is the same check for an authenticated inform, whose
// authoritative engine is this receiver: boots must be this engine's
// and time within timeWindow seconds of this engine's.
func (r *Receiver) informInTime(p *gosnmp.SnmpPacket, usm *gosnmp.UsmSecurityParameters) bool {
	if p.MsgFlags&gosnmp.AuthNoPriv == 0 {
		return true
	}
	d := int64(usm.AuthoritativeEngineTime) - int64(r.engineTime())
	return usm.AuthoritativeEngineBoots == r.boots && d >= -timeWindow && d <= timeWindow
}
