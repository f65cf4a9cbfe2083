package trap

import (
	"sync/atomic"
	"time"

	"github.com/gosnmp/gosnmp"
)

// usmStats counters a refusal Report names (RFC 3414 section 5).
const (
	oidUsmStatsUnsupportedSecLevels = ".1.3.6.1.6.3.15.1.1.1.0"
	oidUsmStatsUnknownUserNames     = ".1.3.6.1.6.3.15.1.1.3.0"
	oidUsmStatsWrongDigests         = ".1.3.6.1.6.3.15.1.1.5.0"
	oidUsmStatsDecryptionErrors     = ".1.3.6.1.6.3.15.1.1.6.0"
)

// maxRefusalReports bounds the refusal Reports sent a second, all senders
// together: the datagram they answer may come from a forged address, and
// the receiver must not be a reflector. One a second per sender is plenty
// for the engineer at a device (snmpinform stops at the first).
const maxRefusalReports = 50

// refusalReports limits the Reports sent, maxRefusalReports a second;
// the read loop alone uses it.
type refusalReports struct {
	second int64
	sent   int
}

func (l *refusalReports) allow(now time.Time) bool {
	if s := now.Unix(); s != l.second {
		l.second, l.sent = s, 0
	}
	l.sent++
	return l.sent <= maxRefusalReports
}

// refusalReport answers a reportable v3 message refused for its user, its
// keys or its security level with the Report RFC 3414 section 3.2 (steps
// 4, 5 and 6) gives it, and one from an engine its user is not pinned to
// with usmStatsUnknownEngineIDs (step 3's counter), unauthenticated: the
// sender then says "Unknown user name", "Authentication failure" or
// "Unknown engine ID" rather than a timeout, which
// looks like a firewall. nil for any other outcome, a message that is not
// reportable (a trap), or one whose header does not parse, and past the
// rate limit's Reports a second.
func (r *Receiver) refusalReport(pkt []byte, outcome string, limit *refusalReports, now time.Time) []byte {
	var oid string
	var stat *atomic.Uint32
	switch outcome {
	case OutcomeUnknownUser:
		oid, stat = oidUsmStatsUnknownUserNames, &r.unknownUsers
	case OutcomeAuthFailure:
		oid, stat = oidUsmStatsWrongDigests, &r.wrongDigests
	case OutcomeDecryptionFailure:
		oid, stat = oidUsmStatsDecryptionErrors, &r.decryptionErrors
	case OutcomeLowSecurityLevel:
		oid, stat = oidUsmStatsUnsupportedSecLevels, &r.lowLevels
	case OutcomeWrongEngine:
		// A user pinned to other sending engines: the sender's engine
		// ID is not one weir knows for it. The Report carries weir's
		// own, which the sender already has, so it does not loop;
		// snmpinform says "Unknown engine ID", pointing at the mismatch.
		oid, stat = oidUsmStatsUnknownEngineIDs, &r.reports
	default:
		return nil
	}
	h, ok := parseV3Header(pkt)
	if !ok || !h.msgIDOK || h.flags&reportableFlag == 0 || h.user == "" {
		return nil
	}
	// The flag decides only for a PDU that cannot be read (RFC 3412
	// section 6.4): one in the clear is answered only if it is of the
	// confirmed class.
	if tag, _, ok := rawPDU(pkt); ok && !confirmedPDU(tag) {
		return nil
	}
	if !limit.allow(now) {
		return nil
	}
	sec := &gosnmp.UsmSecurityParameters{
		AuthoritativeEngineID:    r.engineID,
		AuthoritativeEngineBoots: r.boots,
		AuthoritativeEngineTime:  r.engineTime(),
		UserName:                 h.user,
		AuthenticationProtocol:   gosnmp.NoAuth,
		PrivacyProtocol:          gosnmp.NoPriv,
	}
	// The request ID may be encrypted: senders match a Report by msgID.
	rep, err := r.reportPacket(&gosnmp.SnmpPacket{MsgID: h.msgID}, gosnmp.NoAuthNoPriv, sec, oid, stat.Add(1))
	if err != nil {
		return nil
	}
	return rep
}

// confirmedPDU reports whether a PDU tag is of the confirmed class (RFC
// 3411 section 2.8): Get, GetNext, Set, GetBulk, Inform. Traps,
// Responses and Reports are never answered.
func confirmedPDU(tag byte) bool {
	switch tag {
	case 0xa0, 0xa1, 0xa3, 0xa5, 0xa6:
		return true
	}
	return false
}

// reportableFlag is msgFlags' reportableFlag (RFC 3412 section 6.4):
// set on informs, clear on traps.
const reportableFlag = 0x04

// v3Header is what a refusal Report and the pre-check of a message's
// digest (preAuthenticate) need of an SNMPv3 message.
type v3Header struct {
	msgID uint32
	// msgIDOK: msgID is in 0..2^31-1, as RFC 3412 has it; a Report
	// answers no other.
	msgIDOK  bool
	flags    byte
	engineID string
	user     string
	// authParams is msgAuthenticationParameters, a slice of the message
	// (see authenticates).
	authParams []byte
}

// parseV3Header reads the header of an SNMPv3 message (RFC 3412 section
// 6, RFC 3414 section 2.4): version, msgGlobalData and the USM security
// parameters. Lengths may be in a longer form than needed, as gosnmp
// takes them, but each of msgGlobalData, msgSecurityParameters and the
// USM parameters must hold its fields and nothing else: gosnmp reads the
// fields one after the other whatever the lengths around them say, and
// what is read here is what gosnmp reads (the user whose keys it derives,
// the digest it checks).
func parseV3Header(pkt []byte) (v3Header, bool) {
	var h v3Header
	msg, _, ok := berTLV(pkt, 0x30)
	if !ok {
		return h, false
	}
	version, rest, ok := berTLV(msg, 0x02)
	if !ok || !berIntIs(version, 3) {
		return h, false
	}
	global, rest, ok := berTLV(rest, 0x30)
	if !ok {
		return h, false
	}
	id, g, ok := berTLV(global, 0x02)
	if !ok {
		return h, false
	}
	h.msgIDOK = len(id) > 0 && len(id) <= 5 && id[0]&0x80 == 0
	for _, b := range id {
		h.msgID = h.msgID<<8 | uint32(b)
	}
	if _, g, ok = berTLV(g, 0x02); !ok { // msgMaxSize
		return h, false
	}
	flags, g, ok := berTLV(g, 0x04)
	if !ok || len(flags) != 1 {
		return h, false
	}
	h.flags = flags[0]
	if _, g, ok = berTLV(g, 0x02); !ok || len(g) != 0 { // msgSecurityModel, last
		return h, false
	}
	secParams, _, ok := berTLV(rest, 0x04)
	if !ok {
		return h, false
	}
	usm, after, ok := berTLV(secParams, 0x30)
	if !ok || len(after) != 0 {
		return h, false
	}
	// engine ID, boots, time, the user name, the digest, the salt.
	engineID, usm, ok := berTLV(usm, 0x04)
	if !ok {
		return h, false
	}
	h.engineID = string(engineID)
	for _, tag := range []byte{0x02, 0x02} {
		if _, usm, ok = berTLV(usm, tag); !ok {
			return h, false
		}
	}
	user, usm, ok := berTLV(usm, 0x04)
	if !ok {
		return h, false
	}
	h.user = string(user)
	if h.authParams, usm, ok = berTLV(usm, 0x04); !ok {
		return h, false
	}
	if _, usm, ok = berTLV(usm, 0x04); !ok || len(usm) != 0 { // msgPrivacyParameters, last
		return h, false
	}
	return h, true
}

// berIntIs reports whether the contents of a non-negative INTEGER are n,
// in however many octets (gosnmp reads 00 03 as 3).
func berIntIs(contents []byte, n byte) bool {
	if len(contents) == 0 {
		return false
	}
	for _, b := range contents[:len(contents)-1] {
		if b != 0 {
			return false
		}
	}
	return contents[len(contents)-1] == n
}

// berTLV splits b into the contents of its first element, which must have
// tag, and what follows it.
func berTLV(b []byte, tag byte) (contents, rest []byte, ok bool) {
	if len(b) < 2 || b[0] != tag {
		return nil, nil, false
	}
	n, i := int(b[1]), 2
	if n&0x80 != 0 {
		// The long form, in as many octets as it takes (gosnmp takes
		// leading zeros).
		k := n & 0x7f
		if k == 0 || len(b) < 2+k {
			return nil, nil, false
		}
		n, i = 0, 2+k
		for _, c := range b[2 : 2+k] {
			if n = n<<8 | int(c); n > len(b) {
				return nil, nil, false
			}
		}
	}
	if n < 0 || n > len(b)-i {
		return nil, nil, false
	}
	return b[i : i+n], b[i+n:], true
}
