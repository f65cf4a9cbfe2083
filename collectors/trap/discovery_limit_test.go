package trap

import (
	"net"
	"testing"
	"time"

	"github.com/gosnmp/gosnmp"

	"github.com/weirnet/weir/configs"
)

// TestDiscoveryReportsLimited: an engine discovery probe needs no key and
// its Report is about twice its size, so probes from a forged address
// made weir reflect (and amplify) them at whatever rate they came. Its
// Reports are limited as the refusal Reports are.
func TestDiscoveryReportsLimited(t *testing.T) {
	h := start(t, Config{Users: []configs.SNMPv3{testUser}})
	probe, err := (&gosnmp.SnmpPacket{Version: gosnmp.Version3, MsgFlags: gosnmp.Reportable, SecurityModel: gosnmp.UserSecurityModel,
		MsgID: 1, MsgMaxSize: 65507, RequestID: 1, PDUType: gosnmp.GetRequest,
		SecurityParameters: &gosnmp.UsmSecurityParameters{AuthenticationProtocol: gosnmp.NoAuth, PrivacyProtocol: gosnmp.NoPriv}}).MarshalMsg()
	if err != nil {
		t.Fatal(err)
	}
	conn, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	to, err := net.ResolveUDPAddr("udp", h.addr)
	if err != nil {
		t.Fatal(err)
	}
	const sent = 400
	for range sent {
		if _, err := conn.WriteTo(probe, to); err != nil {
			t.Fatal(err)
		}
	}
	replies := 0
	buf := make([]byte, 65535)
	for {
		conn.SetReadDeadline(time.Now().Add(500 * time.Millisecond))
		if _, _, err := conn.ReadFrom(buf); err != nil {
			break
		}
		replies++
	}
	// The probes may span the start of a second: two seconds' worth.
	if replies == 0 || replies > 2*maxRefusalReports {
		t.Errorf("%d discovery probes got %d Reports, want 1 to %d", sent, replies, 2*maxRefusalReports)
	}
}
