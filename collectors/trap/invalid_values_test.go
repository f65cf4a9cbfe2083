package trap

import (
	"bytes"
	"fmt"
	"net"
	"testing"
	"time"

	"github.com/gosnmp/gosnmp"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/weirnet/weir/collectors/snmp/snmptest"
	"github.com/weirnet/weir/configs"
	"github.com/weirnet/weir/telemetry"
)

// badValues are placeholder OCTET STRINGs a test re-tags on the wire to
// values no encoder of ours would write: an IpAddress of 5 octets, and a
// TimeTicks, INTEGER and Counter32 of more octets than their 32 bits.
var badValues = []struct {
	oid, placeholder string
	tag              byte
	typ, reason, hex string
}{
	{".1.3.6.1.4.1.99.1", "\x0a\x00\x00\x01\x05", 0x40, "ipaddress", InvalidWrongLength, "0a00000105"},
	{".1.3.6.1.4.1.99.2", "\x01\x00\x00\x00\x07", 0x43, "timeticks", InvalidOutOfRange, "0100000007"},
	{".1.3.6.1.4.1.99.3", "\x01\x00\x00\x00\x08", 0x02, "integer", InvalidOutOfRange, "0100000008"},
	{".1.3.6.1.4.1.99.4", "\x01\x00\x00\x00\x09", 0x41, "counter32", InvalidOutOfRange, "0100000009"},
}

// badVarbinds are a v2 notification's varbinds: the header, a good
// value, then badValues' placeholders.
func badVarbinds() []gosnmp.SnmpPDU {
	vars := []gosnmp.SnmpPDU{
		{Name: ".1.3.6.1.2.1.1.3.0", Type: gosnmp.TimeTicks, Value: uint32(42)},
		{Name: ".1.3.6.1.6.3.1.1.4.1.0", Type: gosnmp.ObjectIdentifier, Value: ".1.3.6.1.6.3.1.1.5.3"},
		{Name: ".1.3.6.1.2.1.2.2.1.1.3", Type: gosnmp.Integer, Value: 3},
	}
	for _, b := range badValues {
		vars = append(vars, gosnmp.SnmpPDU{Name: b.oid, Type: gosnmp.OctetString, Value: []byte(b.placeholder)})
	}
	return vars
}

// retag gives badValues' placeholders in pkt their tags.
func retag(t *testing.T, pkt []byte) {
	t.Helper()
	for _, b := range badValues {
		i := bytes.Index(pkt, append([]byte{0x04, byte(len(b.placeholder))}, b.placeholder...))
		if i < 0 {
			t.Fatalf("%s not found in the encoding", b.oid)
		}
		pkt[i] = b.tag
	}
}

// checkInvalidKept checks a trap with badValues was kept whole, each bad
// value marked invalid with its octets in hex, and counted.
func checkInvalidKept(t *testing.T, m *Metrics, tr telemetry.Trap, times float64) {
	t.Helper()
	got := map[string]telemetry.Varbind{}
	for _, v := range tr.Varbinds {
		got[v.OID] = v
	}
	if v := got["1.3.6.1.2.1.2.2.1.1.3"]; v.Type != "integer" || fmt.Sprint(v.Value) != "3" {
		t.Errorf("good varbind: %+v", v)
	}
	for _, b := range badValues {
		v := got[b.oid[1:]]
		if v.Type != b.typ+"_invalid_hex" || v.Value != b.hex {
			t.Errorf("%s published as type %q value %#v, want %s_invalid_hex %s", b.oid, v.Type, v.Value, b.typ, b.hex)
		}
		if n := testutil.ToFloat64(m.InvalidVarbinds.WithLabelValues(b.typ, b.reason)); n != times {
			t.Errorf("%s %s counted %v, want %v", b.typ, b.reason, n, times)
		}
	}
}

// TestInvalidValuesKept: one IpAddress of the wrong length dropped the
// whole notification as malformed (gosnmp fails the decode), and a
// TimeTicks of more octets than 32 bits was cut to its low 32 bits
// without a word (an INTEGER or Counter32 so came out past its range).
// Net-SNMP's decoder refuses such values; the notification's other
// varbinds are good, so the trap is kept: each bad value marked invalid
// with its octets, and counted by type and reason. v1, v2c and a signed
// v3 trap (its digest checked on what was received).
func TestInvalidValuesKept(t *testing.T) {
	m, _ := NewMetrics(nil)
	user := configs.SNMPv3{User: "signer", SecurityLevel: "authNoPriv", AuthProtocol: "SHA", AuthPassword: "signerpass1"}
	r, err := New(Config{Broker: snmptest.NewCapture(), Metrics: m, Users: []configs.SNMPv3{user}})
	if err != nil {
		t.Fatal(err)
	}
	from := &net.UDPAddr{IP: net.IPv4(192, 0, 2, 1), Port: 161}
	vars := badVarbinds()
	v2 := &gosnmp.SnmpPacket{Version: gosnmp.Version2c, Community: "public", PDUType: gosnmp.SNMPv2Trap, RequestID: 7, Variables: vars}
	v1 := &gosnmp.SnmpPacket{Version: gosnmp.Version1, Community: "public", PDUType: gosnmp.Trap,
		SnmpTrap: gosnmp.SnmpTrap{Variables: vars[2:], Enterprise: ".1.3.6.1.4.1.99", AgentAddress: "192.0.2.1", GenericTrap: 6, SpecificTrap: 1, Timestamp: 9}}
	v1.Variables = vars[2:]
	for i, p := range []*gosnmp.SnmpPacket{v2, v1} {
		pkt, err := p.MarshalMsg()
		if err != nil {
			t.Fatal(err)
		}
		retag(t, pkt)
		it, _, outcome := r.decode(pkt, from, time.Now())
		if outcome != "" {
			t.Fatalf("%v: dropped as %s", p.Version, outcome)
		}
		checkInvalidKept(t, m, it.trap, float64(i+1))
	}

	// v3, signed: re-tagged before signing, as a device would send it.
	engine := "\x80\x00\x1f\x88\x80\xaa\xbb\xcc\xdd"
	usm := &gosnmp.UsmSecurityParameters{UserName: user.User, AuthoritativeEngineID: engine, AuthenticationProtocol: gosnmp.SHA,
		AuthenticationPassphrase: user.AuthPassword, PrivacyProtocol: gosnmp.NoPriv}
	v3 := &gosnmp.SnmpPacket{Version: gosnmp.Version3, MsgFlags: gosnmp.AuthNoPriv, SecurityModel: gosnmp.UserSecurityModel,
		SecurityParameters: usm, ContextEngineID: engine, PDUType: gosnmp.SNMPv2Trap, RequestID: 8, MsgID: 8, MsgMaxSize: 65507, Variables: vars}
	pkt, err := v3.MarshalMsg()
	if err != nil {
		t.Fatal(err)
	}
	retag(t, pkt)
	h, ok := parseV3Header(pkt)
	if !ok {
		t.Fatal("v3 header")
	}
	u := r.access.Load().users[user.User][0]
	u.auth.sign(pkt, h)
	if !u.auth.authenticates(pkt, h) {
		t.Fatal("not signed")
	}
	it, _, outcome := r.decode(pkt, from, time.Now())
	if outcome != "" {
		t.Fatalf("v3: dropped as %s", outcome)
	}
	checkInvalidKept(t, m, it.trap, 3)

	// The same with its digest wrong is refused, re-tagged or not.
	pkt[len(pkt)-1] ^= 1
	if _, _, outcome := r.decode(pkt, from, time.Now()); outcome != OutcomeAuthFailure {
		t.Errorf("v3 with a wrong digest: outcome %q, want auth_failure", outcome)
	}
}

// TestInvalidValueInformAcknowledged: an inform with a bad value is
// published and acknowledged, not left to be sent again for ever.
func TestInvalidValueInformAcknowledged(t *testing.T) {
	h := start(t, Config{})
	p := &gosnmp.SnmpPacket{Version: gosnmp.Version2c, Community: "public", PDUType: gosnmp.InformRequest, RequestID: 77, Variables: badVarbinds()}
	pkt, err := p.MarshalMsg()
	if err != nil {
		t.Fatal(err)
	}
	retag(t, pkt)
	conn, err := net.Dial("udp", h.addr)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if _, err := conn.Write(pkt); err != nil {
		t.Fatal(err)
	}
	_ = conn.SetReadDeadline(time.Now().Add(10 * time.Second))
	buf := make([]byte, 65535)
	n, err := conn.Read(buf)
	if err != nil {
		t.Fatalf("no acknowledgement: %v", err)
	}
	resp, err := (&gosnmp.GoSNMP{}).SnmpDecodePacket(buf[:n])
	if err != nil || resp.PDUType != gosnmp.GetResponse || resp.RequestID != 77 {
		t.Fatalf("acknowledgement %+v, %v", resp, err)
	}
	checkInvalidKept(t, h.metrics, h.waitTraps(t, 1)[0], 1)
}
