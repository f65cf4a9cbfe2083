package trap

import (
	"encoding/binary"
	"net"
	"testing"
	"time"

	"github.com/gosnmp/gosnmp"

	"github.com/weirnet/weir/collectors/snmp/snmptest"
	"github.com/weirnet/weir/configs"
)

// forgedV3Trap is a v3 trap for user, signed with a password that is not
// its own, from engine ID number i: what anyone who saw the user name on
// the wire (it travels in clear) can send.
func forgedV3Trap(t *testing.T, user string, i uint64) []byte {
	t.Helper()
	eid := []byte{0x80, 0, 0, 0, 5, 0, 0, 0, 0, 0, 0, 0, 0}
	binary.BigEndian.PutUint64(eid[5:], i)
	p := &gosnmp.SnmpPacket{Version: gosnmp.Version3, MsgFlags: gosnmp.AuthNoPriv, SecurityModel: gosnmp.UserSecurityModel,
		SecurityParameters: &gosnmp.UsmSecurityParameters{UserName: user, AuthoritativeEngineID: string(eid),
			AuthoritativeEngineBoots: 1, AuthoritativeEngineTime: 1,
			AuthenticationProtocol: gosnmp.SHA256, AuthenticationPassphrase: "not-the-password", PrivacyProtocol: gosnmp.NoPriv},
		PDUType: gosnmp.SNMPv2Trap, Variables: []gosnmp.SnmpPDU{
			{Name: ".1.3.6.1.2.1.1.3.0", Type: gosnmp.TimeTicks, Value: uint32(42)},
			{Name: ".1.3.6.1.6.3.1.1.4.1.0", Type: gosnmp.ObjectIdentifier, Value: ".1.3.6.1.6.3.1.1.5.3"}}}
	if err := p.SecurityParameters.InitSecurityKeys(); err != nil {
		t.Fatal(err)
	}
	b, err := p.MarshalMsg()
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestForgedV3TrapsCheap: a v3 trap that does not authenticate costs the
// read loop microseconds whatever engine ID it names. gosnmp derives a
// user's privacy key for every new engine ID before it checks the digest,
// and for AES (and AES192C, AES256C: Reeder's key extension) that is a
// password-to-key over 1 MB, some milliseconds, kept in a cache that never
// shrinks: a few hundred forged datagrams a second, from anyone who saw a
// user name, took the whole read loop (genuine traps were dropped by the
// kernel) and grew the memory without bound.
func TestForgedV3TrapsCheap(t *testing.T) {
	for _, priv := range []string{"AES", "AES256C"} {
		t.Run(priv, func(t *testing.T) {
			u := testUser
			u.PrivProtocol = priv
			r, err := New(Config{Broker: snmptest.NewCapture(), Users: []configs.SNMPv3{u}})
			if err != nil {
				t.Fatal(err)
			}
			from := &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 9}
			const n = 100
			pkts := make([][]byte, n)
			base := uint64(time.Now().UnixNano()) // engine IDs gosnmp's process-wide cache has not seen
			for i := range pkts {
				pkts[i] = forgedV3Trap(t, u.User, base+uint64(i))
			}
			start := time.Now()
			for _, p := range pkts {
				if _, _, outcome := r.decode(p, from, time.Now()); outcome != OutcomeAuthFailure {
					t.Fatalf("forged trap: outcome %q, want %s", outcome, OutcomeAuthFailure)
				}
			}
			if d := time.Since(start); d > 100*time.Millisecond {
				t.Errorf("%d forged traps, each from a new engine ID, took %v (%v each): the read loop can be kept busy by anyone with a user name",
					n, d.Round(time.Millisecond), (d / n).Round(time.Microsecond))
			}
		})
	}
}
