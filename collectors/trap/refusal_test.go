package trap

import (
	"os/exec"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/weirnet/weir/collectors/snmp/snmptest"
	"github.com/weirnet/weir/configs"
)

// TestV3InformRefusalReported: a v3 inform (reportable) from a user weir
// does not know, or signed with a wrong password, is counted and logged
// on weir's side, but the sender is told nothing: snmpinform retries until
// it gives up with "Timeout", the same as an unreachable receiver, so the
// engineer at the device cannot tell a wrong key from a firewall. RFC 3414
// section 3.2 steps 4 and 6 answer a reportable message with a Report of
// usmStatsUnknownUserNames or usmStatsWrongDigests (Net-SNMP's snmptrapd
// does), which snmpinform prints as "Unknown user name" or "Authentication
// failure".
func TestV3InformRefusalReported(t *testing.T) {
	snmptest.Require(t, "snmpinform")
	h := start(t, Config{Users: []configs.SNMPv3{testUser}})
	for _, c := range []struct{ user, auth, want string }{
		{"nobody", snmptest.V3AuthPass, "Unknown user name"},
		{snmptest.V3User, "wrongpass123", "Authentication failure"},
	} {
		cmd := exec.Command("snmpinform", "-v3", "-l", "authPriv", "-u", c.user, "-a", snmptest.V3AuthProto, "-A", c.auth,
			"-x", snmptest.V3PrivProto, "-X", snmptest.V3PrivPass, "-t", "1", "-r", "0", h.addr, "", "1.3.6.1.6.3.1.1.5.1")
		cmd.Env = snmptest.Env(h.dir)
		out, err := cmd.CombinedOutput()
		if err == nil {
			t.Errorf("user %s: inform acknowledged", c.user)
			continue
		}
		if !strings.Contains(string(out), c.want) {
			t.Errorf("user %s: snmpinform says %q, want %q", c.user, strings.TrimSpace(string(out)), c.want)
		}
	}
}

// TestSignedForUserWithoutKeys: a user listed without passwords
// (noAuthNoPriv) whose sender signs its notifications is a security level
// the user does not support, as RFC 3414 section 3.2 step 5 has it
// (usmStatsUnsupportedSecLevels): counted as unsupported_security_level,
// and an inform is told so ("Unsupported security level"), not told its
// password is wrong when weir has none for it.
func TestSignedForUserWithoutKeys(t *testing.T) {
	snmptest.Require(t, "snmptrap", "snmpinform")
	h := start(t, Config{Users: []configs.SNMPv3{{User: "open", SecurityLevel: "noAuthNoPriv", LevelGiven: true}}})
	trap := exec.Command("snmptrap", "-v3", "-l", "authNoPriv", "-u", "open", "-a", "SHA", "-A", "whatever123",
		"-e", "0x80001f8880aabbccdd", h.addr, "", "1.3.6.1.6.3.1.1.5.1")
	trap.Env = snmptest.Env(h.dir)
	if out, err := trap.CombinedOutput(); err != nil {
		t.Fatalf("snmptrap: %v: %s", err, out)
	}
	h.waitOutcome(t, "3", OutcomeLowSecurityLevel, 1)
	inform := exec.Command("snmpinform", "-v3", "-l", "authNoPriv", "-u", "open", "-a", "SHA", "-A", "whatever123",
		"-t", "1", "-r", "0", h.addr, "", "1.3.6.1.6.3.1.1.5.1")
	inform.Env = snmptest.Env(h.dir)
	out, err := inform.CombinedOutput()
	if err == nil {
		t.Fatal("inform acknowledged")
	}
	if !strings.Contains(string(out), "Unsupported security level") {
		t.Errorf("snmpinform says %q, want %q", strings.TrimSpace(string(out)), "Unsupported security level")
	}
	if n := testutil.ToFloat64(h.metrics.Received.WithLabelValues("3", OutcomeAuthFailure)); n != 0 {
		t.Errorf("%v counted as auth_failure", n)
	}
}
