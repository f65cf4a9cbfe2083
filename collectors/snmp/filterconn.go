package snmp

import (
	"net"
	"slices"

	"github.com/gosnmp/gosnmp"
)

// Reasons a datagram read from an agent's socket was dropped before gosnmp
// saw it: the "reason" label of weir_snmp_datagrams_dropped_total.
const (
	// Not an SNMP message: the BER header (SEQUENCE, version, community
	// or SNMPv3 header, PDU and its request ID) does not decode.
	DropMalformed = "malformed"
	// An SNMP message of another version than the target is polled with.
	DropVersion = "wrong_version"
	// SNMPv1/v2c: a request ID that no try of the request under way
	// carried, 0 included (which gosnmp takes for the answer to any
	// request), or no request ID at all (an SNMPv1 Trap).
	DropRequestID = "unknown_request_id"
	// SNMPv3: a msgID (in the clear header, RFC 3412) that no try of the
	// request under way carried.
	DropMsgID = "unknown_msg_id"
	// An answer that came after its request was done with (a request
	// sent again, both tries answered; an answer after the timeout):
	// waiting in the socket when the session's next poll began.
	DropLate = "late"
)

// filterConn is the UDP socket of a gosnmp session, which it reads and
// writes through (gosnmp takes any net.Conn as GoSNMP.Conn). It drops the
// datagrams gosnmp would mishandle before gosnmp sees them, and reads on
// until one passes or the deadline gosnmp set comes:
//
//   - gosnmp v1.47.0 (sendOneRequest) sends the request again at the first
//     datagram it cannot decode: a stray datagram before the agent's answer
//     cost a retry, or failed the poll with retries 0; and with
//     use_unconnected_udp_socket any host can send one.
//   - it takes a message with request ID 0 for the answer to any request.
//
// So a datagram must look like an SNMP message (a cheap check of its BER
// header, not a decode) of the target's version, and carry an ID that one
// of the last tries sent carried: the request ID for SNMPv1/v2c; for
// SNMPv3 the msgID, which is in the clear where the request ID may be
// encrypted, and which an agent's Report carries too, when its request ID
// is 0 (RFC 3412 section 7.1: a report of a PDU it could not read).
//
// It embeds the socket, so it is a net.PacketConn as the socket is, which
// gosnmp reads with (ReadFrom) on connected sockets too. Only the target's
// goroutine reads and writes it; Close may come from
// another (a poll cancelled), and touches no state of its own.
type filterConn struct {
	*net.UDPConn
	v3 bool
	// sent holds the IDs of the last len(sent) messages written (-1: none
	// yet): as many as gosnmp's tries of one request (retries+1), each
	// with an ID of its own. next is where the next goes; anyID is set
	// while the last message written was one this could not read (then
	// IDs pass).
	sent  []int64
	next  int
	anyID bool
	// dropped counts a datagram dropped, by reason (the metric); onDrop,
	// when set, is told too (the poll under way).
	dropped func(reason string)
	onDrop  func()
}

// connect opens the session's socket (gosnmp's Connect) and puts a
// filterConn in front of it, which tells dropped of what it drops.
func connect(s *gosnmp.GoSNMP, dropped func(reason string)) error {
	if err := s.Connect(); err != nil {
		return err
	}
	if udp, ok := s.Conn.(*net.UDPConn); ok {
		s.Conn = newFilterConn(udp, s.Version == gosnmp.Version3, s.Retries, dropped)
	}
	return nil
}

// newFilterConn wraps conn for a session of SNMP version v3 (else v1/v2c)
// that tries each request retries+1 times.
func newFilterConn(conn *net.UDPConn, v3 bool, retries int, dropped func(reason string)) *filterConn {
	c := &filterConn{UDPConn: conn, v3: v3, sent: make([]int64, max(retries, 0)+1), dropped: dropped}
	for i := range c.sent {
		c.sent[i] = -1 // gosnmp's IDs are 0 to 2^31-1
	}
	return c
}

// Write notes the ID of the message it sends.
func (c *filterConn) Write(b []byte) (int, error) {
	c.wrote(b)
	return c.UDPConn.Write(b)
}

// WriteTo is Write on an unconnected socket.
func (c *filterConn) WriteTo(b []byte, addr net.Addr) (int, error) {
	c.wrote(b)
	return c.UDPConn.WriteTo(b, addr)
}

func (c *filterConn) wrote(b []byte) {
	h, ok := parseHeader(b)
	if !ok || !h.hasID {
		c.anyID = true // not ours to judge: let gosnmp match the answers
		return
	}
	c.anyID = false
	c.sent[c.next] = h.id(c.v3)
	c.next = (c.next + 1) % len(c.sent)
}

// Read returns the next datagram that passes (see filterConn).
func (c *filterConn) Read(b []byte) (int, error) {
	for {
		n, err := c.UDPConn.Read(b)
		if err != nil || c.pass(b[:n]) {
			return n, err
		}
	}
}

// ReadFrom is Read on an unconnected socket (gosnmp reads so on both).
func (c *filterConn) ReadFrom(b []byte) (int, net.Addr, error) {
	for {
		n, addr, err := c.UDPConn.ReadFrom(b)
		if err != nil || c.pass(b[:n]) {
			return n, addr, err
		}
	}
}

// pass tells whether gosnmp is to see the datagram b, and counts it if not.
func (c *filterConn) pass(b []byte) bool {
	reason := c.judge(b)
	if reason == "" {
		return true
	}
	if c.dropped != nil {
		c.dropped(reason)
	}
	if c.onDrop != nil {
		c.onDrop()
	}
	return false
}

func (c *filterConn) judge(b []byte) string {
	h, ok := parseHeader(b)
	switch {
	case !ok:
		return DropMalformed
	case (h.version == 3) != c.v3:
		return DropVersion
	case c.anyID:
		return ""
	}
	reason := DropRequestID
	if c.v3 {
		reason = DropMsgID
	}
	if !h.hasID {
		return reason
	}
	// 0 passes only where it was sent (gosnmp's counter wraps to it once
	// in 2^31 requests).
	if id := h.id(c.v3); id >= 0 && slices.Contains(c.sent, id) {
		return ""
	}
	return reason
}

// header is what parseHeader reads of an SNMP message.
type header struct {
	version int64
	// msgID (SNMPv3) and requestID (SNMPv1/v2c, and SNMPv3 with the
	// scopedPDU in the clear); hasID: the one the version matches by was
	// read.
	msgID, requestID int64
	hasID            bool
}

func (h header) id(v3 bool) int64 {
	if v3 {
		return h.msgID
	}
	return h.requestID
}

// parseHeader reads the header of the SNMP message b: a SEQUENCE filling
// the datagram, an INTEGER version, then for SNMPv1/v2c an OCTET STRING
// community and a PDU filling the rest, whose first field is the request
// ID; for SNMPv3 the msgGlobalData SEQUENCE (msgID first), the
// msgSecurityParameters OCTET STRING, and the scopedPDU filling the rest:
// an OCTET STRING (encrypted) or a SEQUENCE. ok is false where b is not
// one; varbinds are not looked at (gosnmp decodes them).
func parseHeader(b []byte) (h header, ok bool) {
	msg, rest, ok := berTLV(b, 0x30)
	if !ok || len(rest) != 0 {
		return h, false
	}
	v, msg, ok := berTLV(msg, 0x02)
	if !ok {
		return h, false
	}
	if h.version, ok = berInt(v); !ok {
		return h, false
	}
	switch h.version {
	case 0, 1: // SNMPv1, SNMPv2c
		if _, msg, ok = berTLV(msg, 0x04); !ok {
			return h, false
		}
		return pduHeader(h, msg)
	case 3:
		global, rest, ok := berTLV(msg, 0x30)
		if !ok {
			return h, false
		}
		id, _, ok := berTLV(global, 0x02)
		if !ok {
			return h, false
		}
		if h.msgID, ok = berInt(id); !ok {
			return h, false
		}
		h.hasID = true
		if _, rest, ok = berTLV(rest, 0x04); !ok { // msgSecurityParameters
			return h, false
		}
		if _, tail, ok := berTLV(rest, 0x04); ok { // encrypted scopedPDU
			return h, len(tail) == 0
		}
		scoped, tail, ok := berTLV(rest, 0x30)
		if !ok || len(tail) != 0 {
			return h, false
		}
		for range 2 { // contextEngineID, contextName
			if _, scoped, ok = berTLV(scoped, 0x04); !ok {
				return h, false
			}
		}
		h3, ok := pduHeader(h, scoped)
		h3.hasID = true // by msgID, read above
		return h3, ok
	}
	return h, false
}

// pduHeader reads the PDU that fills b: a PDU tag (GetRequest to Report)
// and, but for SNMPv1's Trap, the request ID.
func pduHeader(h header, b []byte) (header, bool) {
	if len(b) == 0 || b[0] < 0xa0 || b[0] > 0xa8 {
		return h, false
	}
	pdu, rest, ok := berTLV(b, b[0])
	if !ok || len(rest) != 0 {
		return h, false
	}
	if b[0] == 0xa4 { // SNMPv1 Trap: no request ID
		return h, true
	}
	id, _, ok := berTLV(pdu, 0x02)
	if !ok {
		return h, false
	}
	if h.requestID, ok = berInt(id); !ok {
		return h, false
	}
	h.hasID = true
	return h, true
}

// berTLV reads a TLV of tag from b (definite length, as SNMP allows) and
// returns its value and what follows it.
func berTLV(b []byte, tag byte) (value, rest []byte, ok bool) {
	if len(b) < 2 || b[0] != tag {
		return nil, nil, false
	}
	n, i := int(b[1]), 2
	if n >= 0x80 {
		octets := n & 0x7f
		if octets == 0 || len(b) < 2+octets {
			return nil, nil, false // indefinite (which SNMP forbids), or cut
		}
		n = 0
		for _, o := range b[2 : 2+octets] {
			if n > len(b) {
				return nil, nil, false // no overflow: past b already
			}
			n = n<<8 | int(o)
		}
		i += octets
	}
	if n > len(b)-i {
		return nil, nil, false
	}
	return b[i : i+n], b[i+n:], true
}

// berInt is the value of an INTEGER's contents (one to eight octets).
func berInt(b []byte) (int64, bool) {
	if len(b) == 0 || len(b) > 8 {
		return 0, false
	}
	v := int64(int8(b[0]))
	for _, o := range b[1:] {
		v = v<<8 | int64(o)
	}
	return v, true
}
