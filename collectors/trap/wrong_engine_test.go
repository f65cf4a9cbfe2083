package trap

import (
	"os/exec"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/weirnet/weir/collectors/snmp/snmptest"
	"github.com/weirnet/weir/configs"
)

// TestWrongEngineInformReported: a v3 inform from a user pinned to
// another sending engine (wrong_engine) is answered with a Report of
// usmStatsUnknownEngineIDs, as every other refused reportable message is
// answered, so snmpinform says "Unknown engine ID" at once rather than
// retrying into a "Timeout" like an unreachable receiver; it sends it
// once, not once per retry.
func TestWrongEngineInformReported(t *testing.T) {
	snmptest.Require(t, "snmpinform")
	pinned := testUser
	pinned.EngineID = "0x80001F8880AABBCCDD"
	h := start(t, Config{Users: []configs.SNMPv3{pinned}})
	cmd := exec.Command("snmpinform", "-v3", "-l", "authPriv", "-u", snmptest.V3User, "-a", snmptest.V3AuthProto, "-A", snmptest.V3AuthPass,
		"-x", snmptest.V3PrivProto, "-X", snmptest.V3PrivPass, "-E", "0x80001f8880eeeeeeee", "-t", "1", "-r", "3", h.addr, "", "1.3.6.1.6.3.1.1.5.1")
	cmd.Env = snmptest.Env(h.dir)
	out, err := cmd.CombinedOutput()
	if err == nil {
		t.Fatal("inform from another engine acknowledged")
	}
	if !strings.Contains(string(out), "Unknown engine ID") {
		t.Errorf("snmpinform says %q, want %q", strings.TrimSpace(string(out)), "Unknown engine ID")
	}
	if n := testutil.ToFloat64(h.metrics.Received.WithLabelValues("3", OutcomeWrongEngine)); n != 1 {
		t.Errorf("wrong_engine counted %v, want 1", n)
	}
}
