package trap

import (
	"net"
	"testing"
	"time"

	"github.com/gosnmp/gosnmp"

	"github.com/weirnet/weir/collectors/snmp/snmptest"
	"github.com/weirnet/weir/configs"
)

// TestNoRefusalReportForClearUnconfirmedPDU: RFC 3412 section 6.4:
// the reportableFlag decides only when the PDU cannot be read; a message
// whose PDU is in the clear and of the Unconfirmed Class (SNMPv2-Trap,
// Report, Response) is never answered with a Report, whatever its flag
// (Net-SNMP looks at the command when it has one): a noAuthNoPriv trap,
// Report or Response from an unknown user with the flag set gets none.
func TestNoRefusalReportForClearUnconfirmedPDU(t *testing.T) {
	r, err := New(Config{Broker: snmptest.NewCapture(), Users: []configs.SNMPv3{testUser}})
	if err != nil {
		t.Fatal(err)
	}
	for _, pt := range []gosnmp.PDUType{gosnmp.SNMPv2Trap, gosnmp.Report, gosnmp.GetResponse} {
		p := &gosnmp.SnmpPacket{Version: gosnmp.Version3, MsgFlags: gosnmp.NoAuthNoPriv | gosnmp.Reportable,
			SecurityModel: gosnmp.UserSecurityModel, MsgID: 99, RequestID: 7, PDUType: pt,
			SecurityParameters: &gosnmp.UsmSecurityParameters{UserName: "nobody", AuthoritativeEngineID: "\x80\x00\x1f\x88\x04abc",
				AuthenticationProtocol: gosnmp.NoAuth, PrivacyProtocol: gosnmp.NoPriv},
			Variables: []gosnmp.SnmpPDU{
				{Name: ".1.3.6.1.2.1.1.3.0", Type: gosnmp.TimeTicks, Value: uint32(42)},
				{Name: ".1.3.6.1.6.3.1.1.4.1.0", Type: gosnmp.ObjectIdentifier, Value: ".1.3.6.1.6.3.1.1.5.3"},
			}}
		pkt, err := p.MarshalMsg()
		if err != nil {
			t.Fatal(err)
		}
		_, version, outcome := r.decode(pkt, &net.UDPAddr{IP: net.IPv4(192, 0, 2, 1), Port: 161}, time.Now())
		if version != "3" || outcome == "" {
			t.Fatalf("%v: version %s outcome %q", pt, version, outcome)
		}
		if rep := r.refusalReport(pkt, outcome, &refusalReports{}, time.Now()); rep != nil {
			t.Errorf("%v in the clear (outcome %s) answered with a %d-byte Report: it is of the Unconfirmed Class", pt, outcome, len(rep))
		}
	}
}
