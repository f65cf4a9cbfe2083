package trap

import (
	"os/exec"
	"strings"
	"testing"

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
