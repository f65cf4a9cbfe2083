package trap

import "github.com/gosnmp/gosnmp"

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
