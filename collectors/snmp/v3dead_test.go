package snmp

import (
	"context"
	"net"
	"sync/atomic"
	"testing"
	"time"

	"github.com/weirnet/weir/collectors/snmp/snmptest"
	"github.com/weirnet/weir/configs"
)

// TestDeadV3TargetHoldsSlotOnlyItsTimeout: a dead authPriv target
// (timeout 1 s, no retries) holds its concurrency slot for the poll's
// timeout, `timeout x (retries+1)`; diagnosePriv's probe (another timeout)
// runs after the slot is released, and the reported duration counts it.
// Checked on the requests the agent had when the slot was released, not
// on how long it was held (1 s against a 1.5 s line, the bug 3 s here).
func TestDeadV3TargetHoldsSlotOnlyItsTimeout(t *testing.T) {
	conn, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	var requests atomic.Int64 // read, never answered
	go func() {
		buf := make([]byte, 65535)
		for {
			if _, _, err := conn.ReadFrom(buf); err != nil {
				return
			}
			requests.Add(1)
		}
	}()
	addr := conn.LocalAddr().String()
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
	var atRelease int64
	_ = tgt.pollAndPublish(context.Background(), time.Now().Add(30*time.Second), func() {
		held, atRelease = time.Since(start), requests.Load()
		<-p.sem
	})
	st := statuses(t, capture.Records(), "deadv3")[0]
	t.Logf("slot held %v, %d requests then, %d in all; status duration_seconds %v; error %v",
		held, atRelease, requests.Load(), st.Fields["duration_seconds"], st.Fields["error"])
	if d, _ := st.Fields["duration_seconds"].(float64); d < 1.5 {
		t.Errorf("duration_seconds %v leaves out the probe that followed the timeout", d)
	}
	// The probe's request, a timeout after the poll's, came after the
	// release (a request the reader has yet to count only lowers
	// atRelease: it cannot fail the test wrongly).
	if n := requests.Load(); n <= atRelease {
		t.Errorf("the agent had all %d requests (the probe's too) when the slot was released %v after the poll began: the probe held the concurrency slot", n, held.Round(time.Millisecond))
	}
}
