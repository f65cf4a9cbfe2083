package enrich

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"os"
	"testing"
	"time"

	"github.com/weirnet/weir/broker"
	"github.com/weirnet/weir/telemetry"
)

// TestLaterRebalanceTrapHeldForSysName: two processes (A, then B)
// share the enrich group. B's workers pass their start gate on the
// partitions A left them; then A stops, and B's trap worker takes the
// partition of traps (with ifName) from a target the inventory lists by
// its sysName only, which no poll gave B yet (B's metrics worker warms the
// target's raw.snmp partition at its next poll). The warm-up holds those
// traps until the poll gives the sysName, so the flapping object keeps the
// name it was raised under, with the start gate as without it.
func TestLaterRebalanceTrapHeldForSysName(t *testing.T) {
	// Each case waits some 6 s for rebalances, on a log of its own.
	t.Parallel()
	for _, gate := range []bool{false, true} {
		t.Run(fmt.Sprintf("gate=%v", gate), func(t *testing.T) { t.Parallel(); laterRebalance(t, gate) })
	}
}

func laterRebalance(t *testing.T, gate bool) {
	b, inv := openLog(t)
	ctx := context.Background()
	const sysName = "core1.fra.example.net"
	// A target and address whose partitions (of 6) are even: process A
	// (joined first) keeps them when B joins.
	var target, addr string
	for i := 0; target == "" || addr == ""; i++ {
		if n := fmt.Sprintf("fra-core%d", i); target == "" && broker.PartitionForKey([]byte(n), 6)%2 == 0 {
			target = n
		}
		if a := fmt.Sprintf("192.0.2.%d", 50+i); addr == "" && broker.PartitionForKey([]byte(a), 6)%2 == 0 {
			addr = a
		}
	}
	rows := func(at time.Time) []telemetry.Metric {
		return []telemetry.Metric{
			{V: 1, Measurement: "snmp_system", Device: target, Source: "snmp",
				Tags: map[string]string{"agent": addr}, Fields: map[string]any{"sysName": sysName}, Time: at},
			{V: 1, Measurement: "snmp_interface", Device: target, Source: "snmp",
				Tags:   map[string]string{"ifIndex": "3", "ifName": "Gi0/3", "agent": addr},
				Fields: map[string]any{"ifOperStatus": int64(1)}, Time: at}}
	}
	var traps []broker.Record
	for i := range 4 {
		tr := rfc2863LinkDown(addr, 3)
		tr.Varbinds = append(tr.Varbinds, telemetry.Varbind{OID: "1.3.6.1.2.1.31.1.1.1.1.3", Name: "ifName.3", Type: "octet_string", Value: "Gi0/3"})
		if i%2 == 1 {
			tr.TrapName, tr.TrapOID = "linkUp", "1.3.6.1.6.3.1.1.5.4"
		}
		v, _ := json.Marshal(&tr)
		traps = append(traps, broker.Record{Key: []byte(tr.Device), Value: v})
	}
	targets := func() WorkerOption { return WithSNMPTargets(NewSNMPTargets([]SNMPTarget{{Name: target, Host: addr}})) }
	logger := slog.New(slog.NewTextHandler(os.Stderr, nil))
	lg := WithWorkerLogger(logger)

	// History: the poll names the device by its sysName, then the traps flap.
	produceMetrics(t, b, rows(time.Now().Add(-20*time.Second)))
	if err := b.Produce(ctx, telemetry.TopicRawTraps, traps); err != nil {
		t.Fatal(err)
	}
	r0, o0 := NewEventRules(0, 3, 10*time.Minute), targets()
	stop := startRunner(NewMetricsWorker(b, inv, WithSharedEventRules(r0), o0, lg))
	waitCommitted(t, b, telemetry.TopicRawSNMP, 2)
	stopT := startRunner(NewTrapWorker(b, inv, WithSharedEventRules(r0), o0, lg))
	waitUntil(t, "flapping", func() bool { return len(flappingObjects(r0)) == 1 })
	stopT()
	stop()
	t.Logf("raised: %q (target %s, addr %s)", flappingObjects(r0), target, addr)

	// Process A.
	rA, oA := NewEventRules(0, 3, 10*time.Minute), targets()
	stopTA := startRunner(NewTrapWorker(b, inv, WithSharedEventRules(rA), oA, lg))
	stopMA := startRunner(NewMetricsWorker(b, inv, WithSharedEventRules(rA), oA, lg))
	time.Sleep(1500 * time.Millisecond)

	// Process B joins; its workers pass the gate on what A lets go.
	rB, oB := NewEventRules(0, 3, 10*time.Minute), targets()
	if gate {
		rB.HoldUntilWarm(2)
	}
	tb := NewTrapWorker(b, inv, WithSharedEventRules(rB), oB, lg)
	tb.nameWait = time.Minute
	defer startRunner(tb)()
	defer startRunner(NewMetricsWorker(b, inv, WithSharedEventRules(rB), oB, lg))()
	time.Sleep(3 * time.Second)

	// A stops: B takes everything.
	stopTA()
	stopMA()
	waitUntil(t, "B's trap warm-up of the target's partition", func() bool {
		rB.d.mu.Lock()
		defer rB.d.mu.Unlock()
		_, ok := rB.d.read[broker.TopicPartition{Topic: telemetry.TopicRawTraps, Partition: broker.PartitionForKey([]byte(addr), 6)}]
		return ok
	})
	time.Sleep(200 * time.Millisecond)
	// The target's next poll gives the sysName.
	produceMetrics(t, b, rows(time.Now()))
	waitCommitted(t, b, telemetry.TopicRawSNMP, 4)
	time.Sleep(1500 * time.Millisecond)
	got := flappingObjects(rB)
	if len(got) != 1 || got[0] != sysName+" Gi0/3" {
		t.Errorf("flapping in B after the rebalance: %q, want [%q]", got, sysName+" Gi0/3")
	}
}

// TestGateMissingInputTopic: weir run without gNMI targets (or SNMP,
// or a trap receiver) never has raw.gnmi: the gNMI worker, given no
// partition of a topic that does not exist, counts as warm at once, and
// the syslog worker does not wait gateEmptyWait (5 s) for it at every
// start.
func TestGateMissingInputTopic(t *testing.T) {
	b, inv := openLog(t)
	rules := NewEventRules(time.Minute, DefaultFlapThreshold, DefaultFlapWindow)
	rules.HoldUntilWarm(2)
	opts := []WorkerOption{WithSharedEventRules(rules)}
	produceLine(t, b, "%LINK-3-UPDOWN: Interface GigabitEthernet0/3, changed state to down")
	start := time.Now()
	defer startRunner(NewMetricsWorker(b, inv, append(opts, WithInputTopic(telemetry.TopicRawGNMI))...))()
	defer startRunner(NewWorker(b, inv, NewClassifier(), opts...))()
	waitCommitted(t, b, telemetry.TopicRawSyslog, 1)
	if el := time.Since(start); el > 2*time.Second {
		t.Errorf("first syslog line enriched %v after start (a worker with no input topic)", el)
	}
}
