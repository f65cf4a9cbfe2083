package trap

import (
	"os/exec"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/weirnet/weir/broker"
	"github.com/weirnet/weir/collectors/snmp/snmptest"
)

// TestInformRetransmissionsPublishedOnce: an inform received while the
// broker is failing (3 s) is not acknowledged, so its sender sends it
// again each timeout, with the same request-id. Once the broker is back,
// the inform is one record in raw.traps, not one per retransmission.
func TestInformRetransmissionsPublishedOnce(t *testing.T) {
	snmptest.Require(t, "snmpinform")
	fb := &failingBroker{Capture: snmptest.NewCapture()}
	h := start(t, Config{Broker: fb})
	cmd := exec.Command("snmpinform", "-v2c", "-c", "public", "-t", "1", "-r", "10", h.addr, "", "1.3.6.1.6.3.1.1.5.3",
		"1.3.6.1.2.1.2.2.1.1.3", "i", "3")
	cmd.Env = snmptest.Env(h.dir)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	time.Sleep(3500 * time.Millisecond)
	fb.ok.Store(true)
	if err := cmd.Wait(); err != nil {
		t.Fatalf("inform not acknowledged once the broker was back: %v", err)
	}
	// The wait ends at the first record: a long one costs nothing, and a
	// loaded machine may take seconds to publish it.
	fb.WaitFor(30*time.Second, func(r []broker.Record) bool { return len(r) >= 1 })
	time.Sleep(500 * time.Millisecond)
	if n := len(fb.Records()); n != 1 {
		t.Errorf("one inform, retransmitted while the broker failed, published as %d records", n)
	}
	if n := testutil.ToFloat64(h.metrics.Received.WithLabelValues("2c", OutcomeRetransmission)); n < 2 {
		t.Errorf("%v retransmissions counted, want the 3 or so of 3.5 s", n)
	}
}
