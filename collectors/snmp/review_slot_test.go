package snmp

import (
	"context"
	"testing"
	"time"

	"github.com/gosnmp/gosnmp"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/weirnet/weir/collectors/snmp/snmptest"
	"github.com/weirnet/weir/configs"
)

// TestBrokerOutageKeepsPollSchedule: while the broker cannot take a
// target's records, its publish is retried until the target's next slot
// and then given up "so the next poll starts on time" (README). The give
// up happens at the slot, not before it, so the schedule check after the
// poll always finds the slot passed: the next poll is skipped, counted in
// weir_snmp_polls_skipped_total and logged as an overrun, and a broker
// outage halves every target's polling.
func TestBrokerOutageKeepsPollSchedule(t *testing.T) {
	addr := tableAgent(t, func(from int, _ uint32) *gosnmp.SnmpPacket {
		return &gosnmp.SnmpPacket{Variables: []gosnmp.SnmpPDU{{Name: ".1.3.6.1.4.1.9999.2", Type: gosnmp.Integer, Value: 1}}}
	})
	metrics, _ := NewMetrics(nil)
	target := testTarget("stuck", addr, func(tc *configs.SNMPTarget) {
		tc.Profiles = configs.SNMPProfiles{Names: []string{"t1"}}
		tc.Interval, tc.Timeout = 500*time.Millisecond, 200*time.Millisecond
	})
	p, err := New(Config{Targets: []configs.SNMPTarget{target}, Profiles: oneColumnProfile(t),
		Broker: stuckFor{snmptest.NewCapture(), "stuck"}, Metrics: metrics})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3100*time.Millisecond)
	defer cancel()
	p.Run(ctx)
	polls := testutil.ToFloat64(metrics.Polls.WithLabelValues("stuck", ResultPublishError))
	skipped := testutil.ToFloat64(metrics.Skipped.WithLabelValues("stuck"))
	if skipped > 0 || polls < 5 {
		t.Errorf("in 3.1 s at a 500ms interval with the broker down: %v polls, %v skipped; want a poll at every slot (5 or more), none skipped", polls, skipped)
	}
}
