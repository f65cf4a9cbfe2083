package snmp

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/weirnet/weir/collectors/snmp/snmptest"
	"github.com/weirnet/weir/configs"
)

// TestRefusedSaysNothingListens: a host that answers with ICMP port
// unreachable (no agent on that port, snmpd stopped) fails the poll at
// once with "recvfrom: connection refused", which for UDP does not say
// what is wrong. The error names the address and the likely cause.
func TestRefusedSaysNothingListens(t *testing.T) {
	addr := fmt.Sprintf("127.0.0.1:%d", snmptest.FreeUDPPort(t))
	capture := snmptest.NewCapture()
	p, err := New(Config{
		Targets:  []configs.SNMPTarget{testTarget("gone", addr, nil)},
		Profiles: loadProfiles(t), Broker: capture,
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := p.PollOnce(context.Background(), "gone"); err == nil {
		t.Fatal("a poll of a port nothing listens on succeeded")
	}
	sts := statuses(t, capture.Records(), "gone")
	if len(sts) != 1 {
		t.Fatalf("%d status records, want 1", len(sts))
	}
	errText, _ := sts[0].Fields["error"].(string)
	want := "nothing listens on udp " + addr
	if !strings.Contains(errText, "connection refused") || !strings.Contains(errText, want) {
		t.Errorf("error %q, want it to say connection refused and %q", errText, want)
	}
}

// TestNeverAnsweredTargetExportsZero: a target that has not answered since
// weir started (a typo in its address) had no
// weir_snmp_last_success_timestamp_seconds series, so the usual alert,
// time() - weir_snmp_last_success_timestamp_seconds > 300, never fired
// for it; weir_gnmi_last_update_timestamp_seconds is 0 in the same case.
// It is 0 until the first success.
func TestNeverAnsweredTargetExportsZero(t *testing.T) {
	addr := fmt.Sprintf("127.0.0.1:%d", snmptest.FreeUDPPort(t))
	metrics, err := NewMetrics(prometheus.NewRegistry())
	if err != nil {
		t.Fatal(err)
	}
	p, err := New(Config{
		Targets:  []configs.SNMPTarget{testTarget("typo", addr, nil)},
		Profiles: loadProfiles(t), Broker: snmptest.NewCapture(), Metrics: metrics,
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := p.PollOnce(context.Background(), "typo"); err == nil {
		t.Fatal("a poll of a port nothing listens on succeeded")
	}
	if n := testutil.CollectAndCount(metrics.LastSuccess); n != 1 {
		t.Fatalf("%d last-success series for a target that never answered, want 1", n)
	}
	if v := testutil.ToFloat64(metrics.LastSuccess.WithLabelValues("typo")); v != 0 {
		t.Errorf("last success %v, want 0", v)
	}
}
