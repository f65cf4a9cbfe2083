package profile

import (
	"testing"

	"github.com/gosnmp/gosnmp"
)

// FuzzNormalizeOID: an OID a profile may hold is one gosnmp can put in a
// request, and what the agent names in its answer (the OID read back
// from the wire) is the normalized text: the poller finds a scalar's
// value, and a column's rows, by that text.
func FuzzNormalizeOID(f *testing.F) {
	for _, s := range []string{"1.3.6.1.2.1.1.3.0", ".1.3.6.1", " 1.3.6 ", "1.3.06.1", "3.1", "1.40", "2.999.1", "0.0", "1.3.6.1.4294967295", "02.40", "01.40"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		norm, err := NormalizeOID(s)
		if err != nil {
			return
		}
		pkt := &gosnmp.SnmpPacket{Version: gosnmp.Version2c, Community: "public", PDUType: gosnmp.GetRequest, RequestID: 1,
			Variables: []gosnmp.SnmpPDU{{Name: "." + norm, Type: gosnmp.Null}}}
		wire, err := pkt.MarshalMsg()
		if err != nil {
			t.Fatalf("NormalizeOID(%q) = %q, which gosnmp cannot send: %v", s, norm, err)
		}
		back, err := (&gosnmp.GoSNMP{Version: gosnmp.Version2c, Logger: gosnmp.NewLogger(nil)}).SnmpDecodePacket(wire)
		if err != nil {
			t.Fatalf("NormalizeOID(%q) = %q, sent as % x, which does not decode: %v", s, norm, wire, err)
		}
		if got := back.Variables[0].Name; got != "."+norm {
			t.Fatalf("NormalizeOID(%q) = %q, but an answer names it %s", s, norm, got)
		}
	})
}
