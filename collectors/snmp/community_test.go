package snmp

import (
	"context"
	"strings"
	"testing"

	"github.com/weirnet/weir/collectors/snmp/snmptest"
	"github.com/weirnet/weir/configs"
)

// TestWrongCommunitySaysSo: an agent drops a request with a community it
// does not accept without an answer (Net-SNMP does; RFC 3584 lets it), so
// a typo in community reads as a dead agent. A v1/v2c poll of which nothing
// was answered says a community may be the cause. (One the agent answered
// part of does not: that case, a lossy path, is not made here.)
func TestWrongCommunitySaysSo(t *testing.T) {
	agent := snmptest.StartSNMPD(t)
	capture := snmptest.NewCapture()
	p, err := New(Config{
		Targets:  []configs.SNMPTarget{testTarget("typo", agent.Addr, func(tc *configs.SNMPTarget) { tc.Community = "pubilc" })},
		Profiles: loadProfiles(t), Broker: capture,
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := p.PollOnce(context.Background(), "typo"); err == nil {
		t.Fatal("a poll with a community the agent does not accept succeeded")
	}
	sts := statuses(t, capture.Records(), "typo")
	if len(sts) != 1 {
		t.Fatalf("%d status records, want 1", len(sts))
	}
	errText, _ := sts[0].Fields["error"].(string)
	if !strings.Contains(errText, "timeout") || !strings.Contains(errText, "community") {
		t.Errorf("error %q, want a timeout that names the community as a cause", errText)
	}
}
