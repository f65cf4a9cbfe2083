package main

import (
	"context"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/weirnet/weir/broker"
	"github.com/weirnet/weir/collectors/snmp/snmptest"
	"github.com/weirnet/weir/collectors/trap"
)

// TestTrapAccessReload: a reload applies the file's trap communities; one
// whose file turns the receiver off (the snmp section taken out) leaves
// the running receiver's as they were, not accepting any community until
// the restart stops it.
func TestTrapAccessReload(t *testing.T) {
	snmptest.Require(t, "snmptrap")
	m, err := trap.NewMetrics(prometheus.NewRegistry())
	if err != nil {
		t.Fatal(err)
	}
	capture := snmptest.NewCapture()
	r, err := trap.New(trap.Config{Listen: "127.0.0.1:0", Communities: []string{"secret"}, Broker: capture, Metrics: m})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- r.Run(ctx) }()
	defer func() { cancel(); <-done }()
	addr, err := r.Addr(ctx)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	send := func(community string) {
		snmptest.Run(t, dir, "snmptrap", "-v2c", "-c", community, addr.String(), "", "1.3.6.1.6.3.1.1.5.1")
	}
	refused := m.Received.WithLabelValues("2c", trap.OutcomeUnknownCommunity)
	waitRefused := func(want float64) {
		t.Helper()
		for deadline := time.Now().Add(3 * time.Second); testutil.ToFloat64(refused) < want && time.Now().Before(deadline); {
			time.Sleep(10 * time.Millisecond)
		}
		if got := testutil.ToFloat64(refused); got != want {
			t.Fatalf("unknown_community %v, want %v", got, want)
		}
	}
	apply := trapAccessReload(r)

	if err := apply(mustParse(t, "snmp:\n  traps: {communities: [rotated]}\n")); err != nil {
		t.Fatal(err)
	}
	send("secret")
	waitRefused(1)
	if err := apply(mustParse(t, "data_dir: /tmp/elsewhere\n")); err != nil {
		t.Fatal(err)
	}
	send("anything")
	waitRefused(2)
	send("rotated")
	// Ends at the first record: a long wait costs nothing but a failure.
	capture.WaitFor(30*time.Second, func(recs []broker.Record) bool { return len(recs) == 1 })
	if n := len(capture.Records()); n != 1 {
		t.Fatalf("%d traps published, want the one with the rotated community", n)
	}
}
