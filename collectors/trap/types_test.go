package trap

import (
	"bytes"
	"net"
	"testing"
	"time"

	"github.com/gosnmp/gosnmp"

	"github.com/weirnet/weir/collectors/snmp/snmptest"
	"github.com/weirnet/weir/telemetry"
)

// TestUnknownValueTypeKept: a varbind of a type gosnmp does not decode
// (SNMPv1's NsapAddress, APPLICATION 5; a BER BOOLEAN from a buggy agent)
// was published as type "0x00" with value null, gosnmp having made it
// UnknownType and dropped the value. It keeps its wire tag and its
// contents in hex, in v1 and v2c notifications alike.
func TestUnknownValueTypeKept(t *testing.T) {
	r, err := New(Config{Broker: snmptest.NewCapture()})
	if err != nil {
		t.Fatal(err)
	}
	vars := []gosnmp.SnmpPDU{
		{Name: ".1.3.6.1.2.1.1.3.0", Type: gosnmp.TimeTicks, Value: uint32(42)},
		{Name: ".1.3.6.1.6.3.1.1.4.1.0", Type: gosnmp.ObjectIdentifier, Value: ".1.3.6.1.4.1.99.0.1"},
		{Name: ".1.3.6.1.4.1.99.1", Type: gosnmp.OctetString, Value: []byte("NSAPX")},
	}
	v2 := &gosnmp.SnmpPacket{Version: gosnmp.Version2c, Community: "public", PDUType: gosnmp.SNMPv2Trap, RequestID: 7, Variables: vars}
	v1 := &gosnmp.SnmpPacket{Version: gosnmp.Version1, Community: "public", PDUType: gosnmp.Trap,
		SnmpTrap: gosnmp.SnmpTrap{Variables: vars[2:], Enterprise: ".1.3.6.1.4.1.99", AgentAddress: "192.0.2.1", GenericTrap: 6, SpecificTrap: 1, Timestamp: 9}}
	v1.Variables = vars[2:]
	for _, p := range []*gosnmp.SnmpPacket{v2, v1} {
		checkNsapKept(t, r, p)
	}
}

func checkNsapKept(t *testing.T, r *Receiver, p *gosnmp.SnmpPacket) {
	t.Helper()
	pkt, err := p.MarshalMsg()
	if err != nil {
		t.Fatal(err)
	}
	i := bytes.Index(pkt, []byte("\x04\x05NSAPX"))
	if i < 0 {
		t.Fatal("value not found in the encoding")
	}
	pkt[i] = 0x45 // NsapAddress
	it, _, outcome := r.decode(pkt, &net.UDPAddr{IP: net.IPv4(192, 0, 2, 1), Port: 161}, time.Now())
	if outcome != "" {
		t.Fatalf("dropped as %s", outcome)
	}
	var vb telemetry.Varbind
	for _, v := range it.trap.Varbinds {
		if v.OID == "1.3.6.1.4.1.99.1" {
			vb = v
		}
	}
	if vb.Type != "0x45_hex" || vb.Value != "4e53415058" {
		t.Errorf("%v: NsapAddress varbind published as type %q value %#v, want 0x45_hex 4e53415058", p.Version, vb.Type, vb.Value)
	}
}
