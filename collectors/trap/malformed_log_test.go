package trap

import (
	"encoding/hex"
	"log/slog"
	"net"
	"regexp"
	"testing"

	"github.com/weirnet/weir/collectors/snmp/snmptest"
	"github.com/weirnet/weir/configs"
	"github.com/weirnet/weir/internal/syncbuf"
)

// TestMalformedDropSaysWhy: a datagram dropped as malformed is logged
// with why, as a device's engineer needs to fix it: "trap dropped
// outcome=malformed" alone does not say whether the packet was cut short,
// not SNMP at all, or a notification missing snmpTrapOID.0.
func TestMalformedDropSaysWhy(t *testing.T) {
	// A v2c SNMPv2-Trap whose only varbind is sysUpTime.0: no snmpTrapOID.0.
	noTrapOID, err := hex.DecodeString("302702010104067075626c6963a71a020101020100020100300f300d" +
		"06082b06010201010300430164")
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name   string
		send   func(t *testing.T, h *harness)
		reason string
	}{
		{"garbage", func(t *testing.T, h *harness) { sendUDP(t, h.addr, []byte("hello, not SNMP")) }, `reason="[^"]+"`},
		{"truncated", func(t *testing.T, h *harness) { sendUDP(t, h.addr, noTrapOID[:20]) }, `reason="[^"]+"`},
		{"no snmpTrapOID.0", func(t *testing.T, h *harness) { sendUDP(t, h.addr, noTrapOID) }, `reason="[^"]*snmpTrapOID\.0[^"]*"`},
		{"v1 generic-trap 9", func(t *testing.T, h *harness) {
			snmptest.Require(t, "snmptrap")
			snmptest.Run(t, h.dir, "snmptrap", "-v1", "-c", "public", h.addr, "1.3.6.1.4.1.8072.2.3", "192.0.2.7", "9", "0", "")
		}, `reason="[^"]*generic-trap 9[^"]*"`},
	} {
		t.Run(c.name, func(t *testing.T) {
			logs := &syncbuf.Buffer{}
			h := start(t, Config{Logger: slog.New(slog.NewTextHandler(logs, nil))})
			c.send(t, h)
			waitCount(t, "malformed log line", func() bool {
				return regexp.MustCompile(`outcome=malformed`).MatchString(logs.String())
			})
			if !regexp.MustCompile(`msg="trap dropped" outcome=malformed version=\S+ from=127\.0\.0\.1:\d+ times=1 ` + c.reason).MatchString(logs.String()) {
				t.Errorf("the malformed drop's log line does not say why (want %s):\n%s", c.reason, logs.String())
			}
		})
	}
	// Other outcomes say why themselves: the decoder's words would
	// mislead (a wrong priv password reads "invalid packet length").
	t.Run("decryption_failure", func(t *testing.T) {
		snmptest.Require(t, "snmptrap")
		logs := &syncbuf.Buffer{}
		h := start(t, Config{Users: []configs.SNMPv3{testUser}, Logger: slog.New(slog.NewTextHandler(logs, nil))})
		snmptest.Run(t, h.dir, "snmptrap", "-v3", "-l", "authPriv", "-u", snmptest.V3User, "-a", snmptest.V3AuthProto,
			"-A", snmptest.V3AuthPass, "-x", snmptest.V3PrivProto, "-X", "wrongpriv123",
			"-e", "0x80001f8880aabbccdd", h.addr, "", "1.3.6.1.6.3.1.1.5.1")
		waitCount(t, "decryption_failure log line", func() bool {
			return regexp.MustCompile(`outcome=decryption_failure`).MatchString(logs.String())
		})
		if regexp.MustCompile(`reason=`).MatchString(logs.String()) {
			t.Errorf("a decryption_failure logged with the decoder's reason:\n%s", logs.String())
		}
	})
}

func sendUDP(t *testing.T, addr string, b []byte) {
	t.Helper()
	conn, err := net.Dial("udp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if _, err := conn.Write(b); err != nil {
		t.Fatal(err)
	}
}
