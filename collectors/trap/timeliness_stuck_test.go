package trap

import (
	"net"
	"testing"
	"time"

	"github.com/gosnmp/gosnmp"

	"github.com/weirnet/weir/collectors/snmp/snmptest"
	"github.com/weirnet/weir/configs"
)

// TestV3TrapClockNotAdvancing: a v3 sender whose engine clock does not
// move (gosnmp's SendTrap sends snmpEngineBoots 0 and snmpEngineTime 0 in
// every trap unless its caller fills them in) has its first trap
// published, and every trap after it refused as not_in_time_window once
// 150 s have passed, until weir restarts: inTime takes the clock it
// learnt to have advanced with weir's, and a time not ahead of it by then
// as a replay. Net-SNMP's snmptrapd (usm_check_and_update_timeliness)
// refuses a message only when its time is below the latest one received
// from that engine AND more than 150 s off; a time equal to the latest is
// fresh. Same user, same keys, a new message each time: the second trap
// here, 200 s later, must be published.
func TestV3TrapClockNotAdvancing(t *testing.T) {
	r, err := New(Config{Broker: snmptest.NewCapture(), Users: []configs.SNMPv3{testUser}})
	if err != nil {
		t.Fatal(err)
	}
	conn, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	port := uint16(conn.LocalAddr().(*net.UDPAddr).Port)
	capture := func(trapOID string) []byte {
		t.Helper()
		g := &gosnmp.GoSNMP{Target: "127.0.0.1", Port: port, Version: gosnmp.Version3, Timeout: time.Second,
			SecurityModel: gosnmp.UserSecurityModel, MsgFlags: gosnmp.AuthPriv,
			SecurityParameters: &gosnmp.UsmSecurityParameters{UserName: snmptest.V3User, AuthoritativeEngineID: "\x80\x00\x1f\x88\x80\xaa\xbb\xcc\xdd",
				AuthenticationProtocol: gosnmp.SHA256, AuthenticationPassphrase: snmptest.V3AuthPass,
				PrivacyProtocol: gosnmp.AES, PrivacyPassphrase: snmptest.V3PrivPass}}
		if err := g.Connect(); err != nil {
			t.Fatal(err)
		}
		defer g.Conn.Close()
		if _, err := g.SendTrap(gosnmp.SnmpTrap{Variables: []gosnmp.SnmpPDU{
			{Name: ".1.3.6.1.6.3.1.1.4.1.0", Type: gosnmp.ObjectIdentifier, Value: trapOID}}}); err != nil {
			t.Fatal(err)
		}
		buf := make([]byte, 65535)
		conn.SetReadDeadline(time.Now().Add(3 * time.Second))
		n, _, err := conn.ReadFrom(buf)
		if err != nil {
			t.Fatal(err)
		}
		return buf[:n]
	}
	from := &net.UDPAddr{IP: net.IPv4(192, 0, 2, 7), Port: 50000}
	now := time.Now()
	if _, _, outcome := r.decode(capture(".1.3.6.1.6.3.1.1.5.3"), from, now); outcome != "" {
		t.Fatalf("first trap dropped as %s", outcome)
	}
	if _, _, outcome := r.decode(capture(".1.3.6.1.6.3.1.1.5.4"), from, now.Add(200*time.Second)); outcome != "" {
		t.Errorf("a new trap from the same engine 200 s later, its clock where it was, dropped as %s", outcome)
	}
}
