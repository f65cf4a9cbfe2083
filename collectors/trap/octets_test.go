package trap

import (
	"testing"

	"github.com/weirnet/weir/collectors/snmp/snmptest"
)

// TestBinaryOctetStringsKept: an octet string is text only when its bytes
// are text; binary values whose bytes are zeros (bgpPeerLastError 0x0000,
// "no error", in every bgpEstablished) or a zero-padded address
// (InetAddress 10.0.0.0 is 0a000000) are kept whole as hex, not cut to ""
// or "\n" by trimming their NUL bytes.
func TestBinaryOctetStringsKept(t *testing.T) {
	snmptest.Require(t, "snmptrap")
	h := start(t, Config{})
	snmptest.Run(t, h.dir, "snmptrap", "-v2c", "-c", "public", h.addr, "", "1.3.6.1.2.1.15.0.1",
		"1.3.6.1.2.1.15.3.1.14.10.9.9.9", "x", "0000",
		"1.3.6.1.4.1.9.9.187.1.2.5.1.6.1", "x", "0A000000")
	tr := h.waitTraps(t, 1)[0]
	for i, want := range []struct{ typ, value string }{{"octet_string_hex", "0000"}, {"octet_string_hex", "0a000000"}} {
		if vb := tr.Varbinds[i]; vb.Type != want.typ || vb.Value != want.value {
			t.Errorf("%s: %s %q, want %s %q", vb.OID, vb.Type, vb.Value, want.typ, want.value)
		}
	}
}
