package trap

import (
	"os/exec"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/weirnet/weir/collectors/snmp/snmptest"
	"github.com/weirnet/weir/configs"
)

// TestWrongPrivacyKey: a v3 notification signed with the user's right
// authentication key but encrypted with another privacy key (a wrong priv
// password, or a privacy protocol that differs: DES for AES, Cisco's
// AES256C key extension for Net-SNMP's AES-256) is a decryption failure,
// as RFC 3414 section 3.2 step 8 has it (usmStatsDecryptionErrors), not
// a wrong digest: counted as decryption_failure, and an inform is told
// "Decryption error", so the engineer checks the priv password and
// protocol rather than the auth password, which is right.
func TestWrongPrivacyKey(t *testing.T) {
	snmptest.Require(t, "snmptrap", "snmpinform")
	h := start(t, Config{Users: []configs.SNMPv3{testUser}})
	trap := exec.Command("snmptrap", "-v3", "-l", "authPriv", "-u", snmptest.V3User, "-a", snmptest.V3AuthProto,
		"-A", snmptest.V3AuthPass, "-x", snmptest.V3PrivProto, "-X", "wrongpriv123",
		"-e", "0x80001f8880aabbccdd", h.addr, "", "1.3.6.1.6.3.1.1.5.1")
	trap.Env = snmptest.Env(h.dir)
	if out, err := trap.CombinedOutput(); err != nil {
		t.Fatalf("snmptrap: %v: %s", err, out)
	}
	h.waitOutcome(t, "3", OutcomeDecryptionFailure, 1)
	for _, c := range []struct{ priv, pass string }{
		{snmptest.V3PrivProto, "wrongpriv123"},
		{"DES", snmptest.V3PrivPass},
	} {
		inform := exec.Command("snmpinform", "-v3", "-l", "authPriv", "-u", snmptest.V3User, "-a", snmptest.V3AuthProto,
			"-A", snmptest.V3AuthPass, "-x", c.priv, "-X", c.pass, "-t", "1", "-r", "0", h.addr, "", "1.3.6.1.6.3.1.1.5.1")
		inform.Env = snmptest.Env(h.dir)
		out, err := inform.CombinedOutput()
		if err == nil {
			t.Errorf("%s %s: inform acknowledged", c.priv, c.pass)
			continue
		}
		if !strings.Contains(string(out), "Decryption error") {
			t.Errorf("%s %s: snmpinform says %q, want %q", c.priv, c.pass, strings.TrimSpace(string(out)), "Decryption error")
		}
	}
	h.waitOutcome(t, "3", OutcomeDecryptionFailure, 3)
	if n := testutil.ToFloat64(h.metrics.Received.WithLabelValues("3", OutcomeAuthFailure)); n != 0 {
		t.Errorf("%v counted as auth_failure", n)
	}
	if trs := h.traps(t); len(trs) != 0 {
		t.Errorf("published %+v", trs)
	}
}
