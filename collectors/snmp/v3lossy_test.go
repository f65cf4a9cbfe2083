package snmp

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/weirnet/weir/collectors/snmp/snmptest"
	"github.com/weirnet/weir/configs"
)

// lossyRelay relays UDP datagrams between its clients and upstream (one
// upstream socket per client), dropping the client datagrams whose
// 1-based sequence numbers drop says: packet loss on some PDUs only.
func lossyRelay(t *testing.T, upstream string, drop func(n int64) bool) string {
	return udpRelay(t, upstream, drop, nil)
}

// TestV3LostPacketNotDiagnosedAsWrongPrivPassword: an authPriv target
// whose agent answers every request but one mid-walk (one lost datagram,
// or a PDU the agent is slow on) fails that poll with a timeout, and that
// is what weir reports: not a wrong priv password (diagnosePriv asking the
// agent without privacy and getting an answer), which would send the
// engineer after credentials that are right. The priv settings are
// suspected only when nothing of the poll was answered.
func TestV3LostPacketNotDiagnosedAsWrongPrivPassword(t *testing.T) {
	agent := snmptest.StartSNMPD(t)
	// Datagram 1 is engine discovery, 2 the GET of the scalars, 3 the
	// first GETBULK of the walk: lost.
	relay := lossyRelay(t, agent.Addr, func(n int64) bool { return n == 3 })
	capture := snmptest.NewCapture()
	metrics, _ := NewMetrics(nil)
	p, err := New(Config{
		Targets: []configs.SNMPTarget{testTarget("wan1", relay, func(tc *configs.SNMPTarget) {
			v3(snmptest.V3User, snmptest.V3AuthPass, snmptest.V3PrivPass)(tc)
			tc.Timeout, tc.Retries = 500*time.Millisecond, 0
			tc.Profiles.Names = []string{"if-mib"}
		})},
		Profiles: loadProfiles(t), Broker: capture, Metrics: metrics,
	})
	if err != nil {
		t.Fatal(err)
	}
	err = p.PollOnce(context.Background(), "wan1")
	if err == nil {
		t.Fatal("the poll with a lost request succeeded: the relay dropped nothing that mattered")
	}
	t.Logf("poll error: %v", err)
	if strings.Contains(err.Error(), "priv_password") || classify(err) == ResultAuth {
		t.Errorf("a lost datagram is reported as wrong priv credentials (result %q): %v", classify(err), err)
	}
	// With the right credentials the same target polls fine.
	if err := p.PollOnce(context.Background(), "wan1"); err != nil {
		t.Errorf("next poll: %v", err)
	}
}
