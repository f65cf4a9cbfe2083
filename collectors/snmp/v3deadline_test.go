package snmp

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/weirnet/weir/broker"
	"github.com/weirnet/weir/collectors/snmp/snmptest"
	"github.com/weirnet/weir/configs"
)

// TestPrivDiagnosedWhenThePollFillsTheInterval: a wrong priv password,
// which Net-SNMP answers with silence, is diagnosed when the target's
// timeouts fill its interval too, so the poll runs to its deadline. The
// probes ran on the poll's expired deadline, failed at once, and the
// target was reported as timing out for ever (TestTargetsAreIsolated
// failed so on a loaded machine).
func TestPrivDiagnosedWhenThePollFillsTheInterval(t *testing.T) {
	agent := snmptest.StartSNMPD(t)
	capture := snmptest.NewCapture()
	p, err := New(Config{
		Targets: []configs.SNMPTarget{testTarget("bad-priv", agent.Addr, func(tc *configs.SNMPTarget) {
			tc.Interval, tc.Timeout, tc.Retries = time.Second, 500*time.Millisecond, 1
			v3(snmptest.V3User, snmptest.V3AuthPass, "wrongpriv123")(tc)
		})},
		Profiles: loadProfiles(t), Broker: capture,
	})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- p.Run(ctx) }()
	defer func() { cancel(); <-done }()
	var first string
	capture.WaitFor(15*time.Second, func(recs []broker.Record) bool {
		sts := statuses(t, recs, "bad-priv")
		if len(sts) == 0 {
			return false
		}
		first, _ = sts[0].Fields["error"].(string)
		return true
	})
	if !strings.Contains(first, "decryption") {
		t.Fatalf("the first poll's status says %q, want the priv password diagnosed (decryption)", first)
	}
}
