package snmp

import (
	"context"
	"testing"
	"time"

	"github.com/gosnmp/gosnmp"

	"github.com/weirnet/weir/collectors/snmp/snmptest"
	"github.com/weirnet/weir/configs"
)

// TestDeadV3TargetHoldsSlotOnlyItsTimeout: a dead authPriv target
// (timeout 1 s, no retries) holds its concurrency slot for the poll's
// timeout, `timeout x (retries+1)`; diagnosePriv's probe (another timeout)
// runs after the slot is released, and the reported duration counts it.
func TestDeadV3TargetHoldsSlotOnlyItsTimeout(t *testing.T) {
	addr := fakeAgent(t, func(*gosnmp.SnmpPacket) *gosnmp.SnmpPacket { return nil })
	capture := snmptest.NewCapture()
	p, err := New(Config{
		Targets: []configs.SNMPTarget{testTarget("deadv3", addr, func(tc *configs.SNMPTarget) {
			v3("weir", "authpass123", "privpass123")(tc)
			tc.Timeout, tc.Retries = time.Second, 0
			tc.Profiles.Names = []string{"system"}
		})},
		Profiles: loadProfiles(t), Broker: capture,
	})
	if err != nil {
		t.Fatal(err)
	}
	tgt := p.targets[0]
	p.sem <- struct{}{} // the slot the scheduler would take
	start := time.Now()
	var held time.Duration
	_ = tgt.pollAndPublish(context.Background(), time.Now().Add(30*time.Second), func() { held = time.Since(start); <-p.sem })
	st := statuses(t, capture.Records(), "deadv3")[0]
	t.Logf("slot held %v; status duration_seconds %v; error %v", held, st.Fields["duration_seconds"], st.Fields["error"])
	if d, _ := st.Fields["duration_seconds"].(float64); d < 1.5 {
		t.Errorf("duration_seconds %v leaves out the probe that followed the timeout", d)
	}
	if held > 1500*time.Millisecond {
		t.Errorf("a dead target with timeout 1s x (retries 0 + 1) held the concurrency slot %v (reported duration %vs)", held.Round(time.Millisecond), st.Fields["duration_seconds"])
	}
}
