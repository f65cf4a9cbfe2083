package trap

import (
	"slices"

	"github.com/gosnmp/gosnmp"
)

// keepUnknownValues gives the varbinds of p whose type gosnmp does not
// decode (an NsapAddress, a BER BOOLEAN or BIT STRING from a buggy agent:
// gosnmp makes them UnknownType and drops the value) their tag and
// contents from the datagram, so they are published as what the agent
// sent ("0x45_hex"), not as a null of type 0x00. An encrypted scoped PDU,
// or a datagram whose varbinds do not line up with p's, leaves them as
// they are.
func keepUnknownValues(pkt []byte, p *gosnmp.SnmpPacket) {
	unknown := false
	for _, v := range p.Variables {
		unknown = unknown || v.Type == gosnmp.UnknownType
	}
	if !unknown {
		return
	}
	list, ok := rawVarbindList(pkt)
	if !ok {
		return
	}
	for i := range p.Variables {
		vb, rest, ok := berTLV(list, 0x30)
		if !ok {
			return
		}
		list = rest
		_, value, ok := berTLV(vb, 0x06) // the name
		if !ok {
			return
		}
		tag, contents, _, ok := berAny(value)
		if !ok {
			return
		}
		if v := &p.Variables[i]; v.Type == gosnmp.UnknownType && tag != byte(gosnmp.UnknownType) {
			v.Type, v.Value = gosnmp.Asn1BER(tag), contents
		}
	}
}

// rawVarbindList finds the contents of the variable-bindings list of an
// SNMP message whose PDU is in the clear.
func rawVarbindList(pkt []byte) ([]byte, bool) {
	tag, body, ok := rawPDU(pkt)
	if !ok {
		return nil, false
	}
	// The fields before the list: request-id, error-status and
	// error-index; a v1 Trap-PDU's enterprise, agent-addr, generic and
	// specific trap and time-stamp.
	fields := 3
	if tag == 0xa4 {
		fields = 5
	}
	for range fields {
		if _, _, body, ok = berAny(body); !ok {
			return nil, false
		}
	}
	list, _, ok := berTLV(body, 0x30)
	return list, ok
}

// rawPDU finds the PDU of an SNMP message, if it is in the clear: its tag
// (0xa0 GetRequest ... 0xa7 SNMPv2-Trap, 0xa8 Report) and contents.
func rawPDU(pkt []byte) (tag byte, body []byte, ok bool) {
	msg, _, ok := berTLV(pkt, 0x30)
	if !ok {
		return 0, nil, false
	}
	version, rest, ok := berTLV(msg, 0x02)
	if !ok || len(version) != 1 {
		return 0, nil, false
	}
	var pdu []byte
	switch version[0] {
	case 0, 1: // community
		if _, pdu, ok = berTLV(rest, 0x04); !ok {
			return 0, nil, false
		}
	case 3:
		h, ok := parseV3Header(pkt)
		if !ok || h.flags&0x02 != 0 { // privFlag: the scoped PDU is encrypted
			return 0, nil, false
		}
		// msgGlobalData, msgSecurityParameters, then the scoped PDU:
		// contextEngineID, contextName and the PDU.
		if _, rest, ok = berTLV(rest, 0x30); !ok {
			return 0, nil, false
		}
		if _, rest, ok = berTLV(rest, 0x04); !ok {
			return 0, nil, false
		}
		scoped, _, ok := berTLV(rest, 0x30)
		if !ok {
			return 0, nil, false
		}
		for range 2 {
			if _, scoped, ok = berTLV(scoped, 0x04); !ok {
				return 0, nil, false
			}
		}
		pdu = scoped
	default:
		return 0, nil, false
	}
	tag, body, _, ok = berAny(pdu)
	if !ok || tag&0xe0 != 0xa0 { // a context-specific constructed PDU
		return 0, nil, false
	}
	return tag, body, true
}

// berAny splits b into its first element's tag and contents and what
// follows it.
func berAny(b []byte) (tag byte, contents, rest []byte, ok bool) {
	if len(b) == 0 {
		return 0, nil, nil, false
	}
	contents, rest, ok = berTLV(b, b[0])
	return b[0], contents, rest, ok
}

// Reasons a varbind's value is invalid, the "reason" label of
// weir_trap_varbinds_invalid_total.
const (
	// InvalidWrongLength: an IpAddress of other than 4 octets (or 16,
	// or none, which gosnmp takes), or an integer of no octets at all.
	InvalidWrongLength = "wrong_length"
	// InvalidOutOfRange: an INTEGER, Counter32, Gauge32, TimeTicks,
	// Unsigned32 or Counter64 of more octets than its type's range needs
	// (RFC 2578 section 7.1): gosnmp cut a TimeTicks to its low 32 bits,
	// gave a Counter32 or INTEGER past its range, or failed the decode.
	InvalidOutOfRange = "out_of_range"
)

// invalidValue is the value of a varbind whose contents do not fit its
// type (see invalidValues): published with its octets in hex, its type
// suffixed "_invalid_hex", never cut or widened into a number it is not.
type invalidValue struct {
	raw    []byte
	reason string
}

// badValue is one invalid value in a datagram.
type badValue struct {
	index  int // in the varbind list
	at     int // the offset of its tag in the datagram
	tag    byte
	raw    []byte
	reason string
}

// invalidValues finds the varbinds of a datagram whose PDU is in the
// clear (not an encrypted v3 one) that gosnmp would refuse, and with them
// the whole notification (an IpAddress of the wrong length, an empty or
// over-long INTEGER), or would cut (a TimeTicks of 5 octets or more). A
// real decoder refuses them (Net-SNMP's asn_parse_* log an error for a
// wrong length); weir keeps the notification, the good varbinds as they
// are and these marked invalid.
func invalidValues(pkt []byte) []badValue {
	list, ok := rawVarbindList(pkt)
	if !ok {
		return nil
	}
	var bad []badValue
	for i := 0; len(list) > 0; i++ {
		vb, rest, ok := berTLV(list, 0x30)
		if !ok {
			return bad
		}
		list = rest
		_, value, ok := berTLV(vb, 0x06) // the name
		if !ok {
			return bad
		}
		tag, contents, _, ok := berAny(value)
		if !ok {
			return bad
		}
		if reason := checkValue(tag, contents); reason != "" {
			// A copy: pkt is the read loop's buffer.
			bad = append(bad, badValue{index: i, at: cap(pkt) - cap(value), tag: tag, raw: slices.Clone(contents), reason: reason})
		}
	}
	return bad
}

// checkValue says why a value's contents do not fit its tag, "" if they
// do (or weir does not check that type).
func checkValue(tag byte, c []byte) string {
	switch gosnmp.Asn1BER(tag) {
	case gosnmp.IPAddress:
		if n := len(c); n != 0 && n != 4 && n != 16 {
			return InvalidWrongLength
		}
		return ""
	case gosnmp.Integer:
		if len(c) == 0 {
			return InvalidWrongLength
		}
		// Octets that only extend the sign are not the value's.
		for len(c) > 1 && (c[0] == 0 && c[1]&0x80 == 0 || c[0] == 0xff && c[1]&0x80 != 0) {
			c = c[1:]
		}
		if len(c) > 4 {
			return InvalidOutOfRange
		}
		return ""
	case gosnmp.Counter32, gosnmp.Gauge32, gosnmp.TimeTicks, gosnmp.Uinteger32, gosnmp.Counter64:
		if len(c) == 0 {
			return InvalidWrongLength
		}
		for len(c) > 1 && c[0] == 0 {
			c = c[1:]
		}
		limit := 4
		if gosnmp.Asn1BER(tag) == gosnmp.Counter64 {
			limit = 8
		}
		if len(c) > limit {
			return InvalidOutOfRange
		}
	}
	return ""
}

// withoutInvalid is pkt with the tags of bad's values made one gosnmp
// takes whatever the contents (UnknownType: see applyInvalid), so that it
// decodes the rest; a signed v3 message is signed again with the key
// that signed it as received (and is not patched if none did: it fails
// authentication as it is). ok false leaves pkt as it is.
func (a *access) withoutInvalid(pkt []byte, bad []badValue) ([]byte, bool) {
	out := slices.Clone(pkt)
	for _, b := range bad {
		out[b.at] = byte(gosnmp.UnknownType)
	}
	if communityMessage(pkt) {
		return out, true
	}
	h, ok := parseV3Header(pkt)
	if !ok {
		return nil, false
	}
	if h.flags&byte(gosnmp.AuthNoPriv) == 0 {
		return out, true
	}
	for _, u := range a.users[h.user] {
		if u.keyed && u.auth.authenticates(pkt, h) {
			hOut, ok := parseV3Header(out)
			return out, ok && u.auth.sign(out, hOut)
		}
	}
	return nil, false
}

// applyInvalid gives bad's varbinds of p, decoded from the datagram
// withoutInvalid made, their type and an invalidValue.
func applyInvalid(p *gosnmp.SnmpPacket, bad []badValue) {
	for _, b := range bad {
		if b.index < len(p.Variables) {
			v := &p.Variables[b.index]
			v.Type, v.Value = gosnmp.Asn1BER(b.tag), invalidValue{raw: b.raw, reason: b.reason}
		}
	}
}
