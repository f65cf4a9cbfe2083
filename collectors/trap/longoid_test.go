package trap

import (
	"bytes"
	"fmt"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/gosnmp/gosnmp"

	"github.com/weirnet/weir/collectors/snmp/snmptest"
)

// TestLongOIDNamed: a varbind named by an OID far longer than any known
// one (60,000 sub-identifiers in one 60 KB datagram; RFC 2578 allows 128)
// once cost a lookup of each of its prefixes, each hashed whole: some
// 75 ms of the receiver's single read loop, so a few such datagrams a
// second made the kernel drop the devices' traps. Object now looks up no
// prefix longer than the known OIDs (BenchmarkDecodeLongOID: about what
// any 60 KB trap costs), and still names an OID under a known one.
func TestLongOIDNamed(t *testing.T) {
	r, err := New(Config{Broker: snmptest.NewCapture()})
	if err != nil {
		t.Fatal(err)
	}
	instance := strings.Repeat(".1", 60000)
	if got := r.cfg.Names.Object("1.3.6.1.2.1.2.2.1.2" + instance); got != "ifDescr"+instance {
		t.Errorf("ifDescr with a long instance named %.40q...", got)
	}
	// Looked up prefix by prefix, each hashed whole, an OID of a million
	// sub-identifiers took minutes; it takes microseconds.
	done := make(chan string, 1)
	huge := strings.Repeat(".1", 1_000_000)
	go func() { done <- r.cfg.Names.Object("1.3.6.1.2.1.2.2.1.2" + huge) }()
	select {
	case got := <-done:
		if got != "ifDescr"+huge {
			t.Errorf("ifDescr with a huge instance named %.40q...", got)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("naming an OID of a million sub-identifiers takes more than 10 s: each prefix is looked up")
	}
	if got := r.cfg.Names.Object("1.3" + instance); got != "" {
		t.Errorf("an OID under no known one named %.40q...", got)
	}
	pkt := v2cTrapWithOID(append([]byte{0x2b}, bytes.Repeat([]byte{1}, 60000)...)) // 1.3.1.1...
	it, _, outcome := r.decode(pkt, &net.UDPAddr{IP: net.IPv4(192, 0, 2, 1), Port: 161}, time.Now())
	if outcome != "" || len(it.trap.Varbinds) != 1 || strings.Count(it.trap.Varbinds[0].OID, ".") != 60001 {
		t.Fatalf("outcome %q, %d varbinds", outcome, len(it.trap.Varbinds))
	}
}

// BenchmarkDecodeLongOID decodes a trap with a varbind named by an OID of
// 60,000 sub-identifiers, beside BenchmarkDecodeManyVarbinds' trap of the
// same size made of ordinary varbinds: the long OID costs no more.
func BenchmarkDecodeLongOID(b *testing.B) {
	r, err := New(Config{Broker: snmptest.NewCapture()})
	if err != nil {
		b.Fatal(err)
	}
	pkt := v2cTrapWithOID(append([]byte{0x2b}, bytes.Repeat([]byte{1}, 60000)...))
	benchDecode(b, r, pkt)
}

// BenchmarkDecodeManyVarbinds is the baseline of BenchmarkDecodeLongOID:
// a 60 KB trap of 3,000 ifDescr varbinds.
func BenchmarkDecodeManyVarbinds(b *testing.B) {
	r, err := New(Config{Broker: snmptest.NewCapture()})
	if err != nil {
		b.Fatal(err)
	}
	vars := []gosnmp.SnmpPDU{
		{Name: ".1.3.6.1.2.1.1.3.0", Type: gosnmp.TimeTicks, Value: uint32(42)},
		{Name: ".1.3.6.1.6.3.1.1.4.1.0", Type: gosnmp.ObjectIdentifier, Value: ".1.3.6.1.6.3.1.1.5.3"},
	}
	for i := range 3000 {
		vars = append(vars, gosnmp.SnmpPDU{Name: fmt.Sprintf(".1.3.6.1.2.1.2.2.1.2.%d", i), Type: gosnmp.OctetString, Value: []byte("Ethernet1/1")})
	}
	p := &gosnmp.SnmpPacket{Version: gosnmp.Version2c, Community: "public", PDUType: gosnmp.SNMPv2Trap, RequestID: 7, Variables: vars}
	pkt, err := p.MarshalMsg()
	if err != nil {
		b.Fatal(err)
	}
	benchDecode(b, r, pkt)
}

func benchDecode(b *testing.B, r *Receiver, pkt []byte) {
	from := &net.UDPAddr{IP: net.IPv4(192, 0, 2, 1), Port: 161}
	b.SetBytes(int64(len(pkt)))
	for b.Loop() {
		if _, _, outcome := r.decode(pkt, from, time.Now()); outcome != "" {
			b.Fatal(outcome)
		}
	}
}

// v2cTrapWithOID encodes a v2c linkDown (community public) with one more
// varbind, INTEGER 1, named by the OID whose encoded contents are oid:
// gosnmp refuses to encode what it decodes.
func v2cTrapWithOID(oid []byte) []byte {
	tlv := func(tag byte, v ...[]byte) []byte {
		body := bytes.Join(v, nil)
		n := len(body)
		out := []byte{tag}
		switch {
		case n < 0x80:
			out = append(out, byte(n))
		case n < 0x100:
			out = append(out, 0x81, byte(n))
		default:
			out = append(out, 0x82, byte(n>>8), byte(n))
		}
		return append(out, body...)
	}
	integer := func(n byte) []byte { return tlv(0x02, []byte{n}) }
	vb := func(name []byte, value []byte) []byte { return tlv(0x30, tlv(0x06, name), value) }
	sysUpTime := []byte{0x2b, 6, 1, 2, 1, 1, 3, 0}
	trapOID := []byte{0x2b, 6, 1, 6, 3, 1, 1, 4, 1, 0}
	linkDown := []byte{0x2b, 6, 1, 6, 3, 1, 1, 5, 3}
	list := tlv(0x30, vb(sysUpTime, tlv(0x43, []byte{42})), vb(trapOID, tlv(0x06, linkDown)), vb(oid, integer(1)))
	pdu := tlv(0xa7, integer(7), integer(0), integer(0), list)
	return tlv(0x30, integer(1), tlv(0x04, []byte("public")), pdu)
}
