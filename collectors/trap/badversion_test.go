package trap

import (
	"log/slog"
	"regexp"
	"testing"

	"github.com/gosnmp/gosnmp"

	"github.com/weirnet/weir/internal/syncbuf"
)

// TestUnknownVersionDropped: a notification whose version field is none
// of SNMP's (0 v1, 1 v2c, 3 v3: 2, the historic v2u, or 99) was decoded
// as if it were v2c, skipped the community check (which runs for "1" and
// "2c" only) and was published with version "unknown", so a sender with
// the wrong community got its traps into raw.traps by changing one byte.
// RFC 3412 (section 7.2, step 2) drops such a message (snmpInBadVersions);
// weir counts it as malformed and says why.
func TestUnknownVersionDropped(t *testing.T) {
	logs := &syncbuf.Buffer{}
	h := start(t, Config{Communities: []string{"public"}, Logger: slog.New(slog.NewTextHandler(logs, nil))})
	trap := func(community string, version byte) []byte {
		t.Helper()
		p := &gosnmp.SnmpPacket{Version: gosnmp.Version2c, Community: community, PDUType: gosnmp.SNMPv2Trap,
			Variables: []gosnmp.SnmpPDU{
				{Name: ".1.3.6.1.2.1.1.3.0", Type: gosnmp.TimeTicks, Value: uint32(1)},
				{Name: ".1.3.6.1.6.3.1.1.4.1.0", Type: gosnmp.ObjectIdentifier, Value: ".1.3.6.1.6.3.1.1.5.1"},
			}}
		b, err := p.MarshalMsg()
		if err != nil {
			t.Fatal(err)
		}
		if b[0] != 0x30 || b[1]&0x80 != 0 || b[2] != 0x02 || b[3] != 1 || b[4] != 1 {
			t.Fatalf("unexpected encoding % x", b[:5])
		}
		b[4] = version
		return b
	}
	for _, v := range []byte{2, 99} {
		sendUDP(t, h.addr, trap("wrong", v))
		sendUDP(t, h.addr, trap("public", v))
	}
	h.waitOutcome(t, "unknown", OutcomeMalformed, 4)
	sendUDP(t, h.addr, trap("public", 1)) // a v2c one after them is published
	trs := h.waitTraps(t, 1)
	if trs[0].Version != "2c" || trs[0].Community != "public" {
		t.Errorf("published %+v, want the v2c trap only", trs[0])
	}
	h.waitOutcome(t, "unknown", OutcomePublished, 0)
	if !regexp.MustCompile(`outcome=malformed version=unknown .*reason="SNMP version 2 `).MatchString(logs.String()) {
		t.Errorf("the drop is not logged with the version:\n%s", logs.String())
	}
}
