package trap

import (
	"encoding/json"
	"net"
	"testing"
	"time"

	"github.com/gosnmp/gosnmp"

	"github.com/weirnet/weir/collectors/snmp/snmptest"
	"github.com/weirnet/weir/configs"
)

// seedPackets encodes real notifications of each version to start the
// fuzzer from datagrams that get deep into the decoder.
func seedPackets(f *testing.F) [][]byte {
	vars := []gosnmp.SnmpPDU{
		{Name: ".1.3.6.1.2.1.1.3.0", Type: gosnmp.TimeTicks, Value: uint32(42)},
		{Name: ".1.3.6.1.6.3.1.1.4.1.0", Type: gosnmp.ObjectIdentifier, Value: ".1.3.6.1.6.3.1.1.5.3"},
		{Name: ".1.3.6.1.2.1.2.2.1.8.3", Type: gosnmp.Integer, Value: 2},
		{Name: ".1.3.6.1.2.1.31.1.1.1.1.3", Type: gosnmp.OctetString, Value: []byte("ge-0/0/3")},
		{Name: ".1.3.6.1.2.1.31.1.1.1.6.3", Type: gosnmp.Counter64, Value: uint64(1 << 40)},
	}
	var out [][]byte
	for _, pt := range []gosnmp.PDUType{gosnmp.SNMPv2Trap, gosnmp.InformRequest} {
		p := &gosnmp.SnmpPacket{Version: gosnmp.Version2c, Community: "public", PDUType: pt, RequestID: 7, Variables: vars}
		b, err := p.MarshalMsg()
		if err != nil {
			f.Fatal(err)
		}
		out = append(out, b)
	}
	v1 := &gosnmp.SnmpPacket{Version: gosnmp.Version1, Community: "public", PDUType: gosnmp.Trap,
		SnmpTrap: gosnmp.SnmpTrap{Variables: vars[2:], Enterprise: ".1.3.6.1.4.1.8072", AgentAddress: "192.0.2.1", GenericTrap: 6, SpecificTrap: 3, Timestamp: 9}}
	v1.Variables = vars[2:]
	if b, err := v1.MarshalMsg(); err == nil {
		out = append(out, b)
	}
	return out
}

// FuzzDecode feeds arbitrary datagrams to the receiver's decode path: it
// must never panic, whatever arrives on the port.
func FuzzDecode(f *testing.F) {
	for _, p := range seedPackets(f) {
		f.Add(p)
	}
	f.Add([]byte{0x30, 0x03, 0x02, 0x01, 0x03})
	// gosnmp v1.47.0 panics on this v3 header (nil dereference in
	// getTrapIdentifier); decode must recover and count it malformed.
	f.Add([]byte("0'\x02\x01\x03000000000000000000000000000000000000"))
	f.Add([]byte{})
	r, err := New(Config{Broker: snmptest.NewCapture(), Users: []configs.SNMPv3{testUser}})
	if err != nil {
		f.Fatal(err)
	}
	from := &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 9}
	now := time.Unix(0, 0)
	f.Fuzz(func(t *testing.T, pkt []byte) {
		before := r.decodePanics.Load()
		it, _, outcome := r.decode(pkt, from, now)
		if r.decodePanics.Load() != before && outcome != OutcomeMalformed {
			t.Fatalf("recovered panic on % x reported as %q", pkt, outcome)
		}
		// A trap taken is published: it must encode (publish drops one
		// that does not, as "cannot happen").
		if outcome == "" {
			if _, err := json.Marshal(&it.trap); err != nil {
				t.Fatalf("trap from % x does not encode: %v", pkt, err)
			}
		}
		// decode recovers from panics, which would hide one in weir's
		// own BER walking: run it where a panic fails the test, on
		// what gosnmp decodes without panicking.
		rawVarbindList(pkt)
		if p := unmarshalNoPanic(pkt); p != nil {
			keepUnknownValues(pkt, p)
		}
		// The read loop answers a refused reportable v3 message from
		// its header alone: that parse too takes anything.
		r.refusalReport(pkt, OutcomeUnknownUser, &refusalReports{}, now)
	})
}

// unmarshalNoPanic is gosnmp's decoding of pkt, nil if it fails or panics.
func unmarshalNoPanic(pkt []byte) (p *gosnmp.SnmpPacket) {
	defer func() {
		if recover() != nil {
			p = nil
		}
	}()
	g := &gosnmp.GoSNMP{Version: gosnmp.Version2c}
	p, err := g.SnmpDecodePacket(pkt)
	if err != nil {
		return nil
	}
	return p
}
