package snmp

import (
	"context"
	"fmt"
	"log/slog"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/weirnet/weir/broker"
	"github.com/weirnet/weir/collectors/snmp/sim"
	"github.com/weirnet/weir/collectors/snmp/snmptest"
	"github.com/weirnet/weir/configs"
	"github.com/weirnet/weir/internal/syncbuf"
)

func startSim(t *testing.T, ctx context.Context, opts sim.Options) (string, *sim.Agent) {
	t.Helper()
	a, err := sim.Listen("127.0.0.1:0", opts)
	if err != nil {
		t.Fatal(err)
	}
	go a.Serve(ctx)
	return a.Addr().String(), a
}

// TestSlowAndDeadSimulatedAgents runs healthy, slow and dead simulated
// agents together: the healthy ones are polled on schedule with all their
// interfaces; the slow ones overrun, are cut at their interval and skip
// the slots they overran; the dead ones time out.
func TestSlowAndDeadSimulatedAgents(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	// Interval 3 s and timeout 1 s: a healthy poll of 48 interfaces,
	// eight side by side, took over 1 s under -race on a loaded machine
	// and was cut off at the slot, and one request took over 300 ms;
	// the slow agent (100 ms an answer) still needs about 10 s a poll.
	interval := 3 * time.Second
	var targets []configs.SNMPTarget
	agents := map[string]*sim.Agent{}
	add := func(name string, opts sim.Options) {
		opts.Name, opts.Community = name, "public"
		addr, a := startSim(t, ctx, opts)
		agents[name] = a
		targets = append(targets, testTarget(name, addr, func(tc *configs.SNMPTarget) {
			tc.Interval, tc.Timeout = interval, time.Second
		}))
	}
	for i := 0; i < 8; i++ {
		add(fmt.Sprintf("healthy%d", i), sim.Options{Interfaces: 48, Seed: uint64(i)})
	}
	add("slow", sim.Options{Interfaces: 48, Delay: 100 * time.Millisecond})
	add("dead", sim.Options{Interfaces: 48, Dead: true})

	reg := prometheus.NewRegistry()
	metrics, _ := NewMetrics(reg)
	capture := snmptest.NewCapture()
	p, err := New(Config{Targets: targets, Profiles: loadProfiles(t), Broker: capture, Metrics: metrics})
	if err != nil {
		t.Fatal(err)
	}
	runCtx, stop := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() { p.Run(runCtx); close(done) }()
	capture.WaitFor(30*time.Second, func(recs []broker.Record) bool {
		for i := 0; i < 8; i++ {
			if countStatus(recs, fmt.Sprintf("healthy%d", i)) < 3 {
				return false
			}
		}
		return countStatus(recs, "dead") >= 2 && countStatus(recs, "slow") >= 1
	})
	stop()
	<-done
	recs := capture.Records()
	all := decode(t, recs)
	for i := 0; i < 8; i++ {
		name := fmt.Sprintf("healthy%d", i)
		st := statuses(t, recs, name)
		if len(st) < 3 {
			t.Fatalf("%s polled %d times", name, len(st))
		}
		// On the grid, each poll started at most 700 ms late: one held
		// behind the dead agent's 1 s timeout, a slot skipped or a poll
		// too many would be off by a second or more. Lateness is
		// measured from the grid of the least late poll, not between
		// neighbours: one poll started 400 ms late on a loaded machine
		// made a gap of 2.6 s with the next, on time.
		late := make([]time.Duration, len(st))
		for j, s := range st {
			if s.Fields["snmp_up"] != float64(1) {
				t.Errorf("%s poll %d: %v", name, j, s.Fields)
			}
			late[j] = s.Time.Sub(st[0].Time) - time.Duration(j)*interval
		}
		least := slices.Min(late)
		for j := range late {
			if l := late[j] - least; l > 700*time.Millisecond {
				t.Errorf("%s poll %d started %v late (lateness from the first poll's grid: %v)", name, j, l, late)
			}
		}
		rows := 0
		for _, m := range all {
			if m.Device == name && m.Measurement == "snmp_interface" && m.Time.Equal(st[0].Time) {
				rows++
			}
		}
		if rows != 48 {
			t.Errorf("%s: %d interface rows in the first poll, want 48", name, rows)
		}
		// One session, one socket, across all the polls.
		if n := agents[name].Sources(); n != 1 {
			t.Errorf("%s: requests came from %d sockets over %d polls, want 1", name, n, len(st))
		}
	}
	if st := statuses(t, recs, "dead"); st[0].Fields["snmp_up"] != float64(0) {
		t.Errorf("dead: %v", st[0].Fields)
	}
	slow := statuses(t, recs, "slow")
	if slow[0].Fields["snmp_up"] != float64(0) || testutil.ToFloat64(metrics.Skipped.WithLabelValues("slow")) < 1 {
		t.Errorf("slow: %v, skipped %v", slow[0].Fields, testutil.ToFloat64(metrics.Skipped.WithLabelValues("slow")))
	}
}

// TestConcurrencyIsBounded gives three slow agents one slot: at most one
// poll runs at a time, and polls that cannot get the slot within their
// interval are counted as skipped.
func TestConcurrencyIsBounded(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var targets []configs.SNMPTarget
	for i := 0; i < 3; i++ {
		addr, _ := startSim(t, ctx, sim.Options{Name: "s", Interfaces: 4, Delay: 30 * time.Millisecond})
		targets = append(targets, testTarget(fmt.Sprintf("t%d", i), addr, func(tc *configs.SNMPTarget) {
			tc.Interval, tc.Timeout = 500*time.Millisecond, 200*time.Millisecond
			tc.Profiles.Names = []string{"if-mib"}
		}))
	}
	metrics, _ := NewMetrics(nil)
	capture := snmptest.NewCapture()
	p, err := New(Config{Targets: targets, Profiles: loadProfiles(t), Broker: capture, Metrics: metrics, MaxConcurrency: 1})
	if err != nil {
		t.Fatal(err)
	}
	runCtx, stop := context.WithTimeout(ctx, 2500*time.Millisecond)
	defer stop()
	p.Run(runCtx)
	// Each poll holds the slot for about 25 requests x 30ms; with
	// three targets and one slot, polls never overlap.
	var spans [][2]time.Time
	for i := 0; i < 3; i++ {
		for _, s := range statuses(t, capture.Records(), fmt.Sprintf("t%d", i)) {
			spans = append(spans, [2]time.Time{s.Time, s.ReceivedAt})
		}
	}
	for i := range spans {
		for j := range spans {
			if i != j && spans[i][0].Before(spans[j][0]) && spans[j][0].Before(spans[i][1]) {
				t.Fatalf("polls overlap with max_concurrency 1: %v and %v", spans[i], spans[j])
			}
		}
	}
	skipped := 0.0
	for i := 0; i < 3; i++ {
		skipped += testutil.ToFloat64(metrics.Skipped.WithLabelValues(fmt.Sprintf("t%d", i)))
	}
	if len(spans) == 0 || skipped == 0 {
		t.Errorf("%d polls, %v skipped", len(spans), skipped)
	}
}

// TestOwnerSharesTargets runs two pollers over the same targets, as two
// weir processes sharing them: each polls only what its Owner says, and
// when every target moves to the first (the second process died), each
// target is still polled once per interval, at its own slot, by whichever
// process owned it then: never twice, never skipped.
func TestOwnerSharesTargets(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	interval := 400 * time.Millisecond
	var targets []configs.SNMPTarget
	for i := 0; i < 6; i++ {
		addr, _ := startSim(t, ctx, sim.Options{Name: "s", Interfaces: 2, Seed: uint64(i)})
		targets = append(targets, testTarget(fmt.Sprintf("t%d", i), addr, func(tc *configs.SNMPTarget) {
			tc.Interval, tc.Timeout = interval, 300*time.Millisecond
			tc.Profiles.Names = []string{"system"}
		}))
	}
	var moved atomic.Bool
	owner := func(process int) func(string) bool {
		return func(name string) bool {
			if moved.Load() {
				return process == 0
			}
			n, _ := strconv.Atoi(strings.TrimPrefix(name, "t"))
			return n%2 == process
		}
	}
	capture := snmptest.NewCapture()
	var metrics [2]*Metrics
	runCtx, stop := context.WithCancel(ctx)
	var wg sync.WaitGroup
	for i := range 2 {
		metrics[i], _ = NewMetrics(nil)
		p, err := New(Config{Targets: targets, Profiles: loadProfiles(t), Broker: capture, Metrics: metrics[i], Owner: owner(i)})
		if err != nil {
			t.Fatal(err)
		}
		wg.Go(func() { p.Run(runCtx) })
	}
	time.Sleep(3 * interval)
	moved.Store(true)
	movedAt := time.Now()
	time.Sleep(3 * interval)
	stop()
	wg.Wait()

	for i, tc := range targets {
		off := Offset(tc.Name, interval)
		slot := func(at time.Time) int64 { return (at.UnixNano() - int64(off)) / int64(interval) }
		// The test's hand-over is one flag set between the two
		// processes' checks of a slot when it falls on one, which both
		// or neither may then poll (on a cluster, the group's
		// assignment hands a target over); every other slot is polled
		// once, by one of them.
		handover := map[int64]bool{}
		if i%2 == 1 {
			handover[slot(movedAt)], handover[slot(movedAt)+1] = true, true
		}
		slots := map[int64]int{}
		for _, s := range statuses(t, capture.Records(), tc.Name) {
			slots[slot(s.Time)]++
		}
		var first, last int64 = 1 << 62, 0
		for k, n := range slots {
			first, last = min(first, k), max(last, k)
			if n != 1 && !(handover[k] && n == 2) {
				t.Errorf("%s polled %d times in one interval", tc.Name, n)
			}
		}
		missed := last - first + 1 - int64(len(slots))
		for k := range handover {
			if _, ok := slots[k]; !ok && k > first && k < last {
				missed--
			}
		}
		// A slot a poll skipped on its own (it overran, or its turn
		// came too late: a loaded machine) is counted as skipped; any
		// other missing one fell between the two processes.
		skipped := int64(testutil.ToFloat64(metrics[0].Skipped.WithLabelValues(tc.Name)) +
			testutil.ToFloat64(metrics[1].Skipped.WithLabelValues(tc.Name)))
		if int64(len(slots))+skipped < 5 || missed > skipped {
			t.Errorf("%s: polls in %d slots from %d to %d, %d skipped: %d missing", tc.Name, len(slots), first, last, skipped, missed)
		}
	}
	if testutil.ToFloat64(metrics[0].NotOwned) == 0 || testutil.ToFloat64(metrics[1].NotOwned) == 0 {
		t.Errorf("slots left to the other process: %v and %v", testutil.ToFloat64(metrics[0].NotOwned), testutil.ToFloat64(metrics[1].NotOwned))
	}
	// Process 1 handed its targets over: it no longer says when they last
	// answered (a frozen time reads as a dead target), process 0 does.
	if n := testutil.CollectAndCount(metrics[1].LastSuccess); n != 0 {
		t.Errorf("process 1 exports the last success of %d targets it no longer polls", n)
	}
	if n := testutil.CollectAndCount(metrics[0].LastSuccess); n != len(targets) {
		t.Errorf("process 0 exports the last success of %d targets, want %d", n, len(targets))
	}
}

// TestSlowAgentOverrunLoggedOnce: a slow agent cut off at the end of every
// interval skips the next slot each time (counted in
// weir_snmp_polls_skipped_total), but the log says it overran once, when it
// starts, not at every other slot: 1,000 slow devices at a 60 s interval
// logged eight lines a second.
func TestSlowAgentOverrunLoggedOnce(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	addr, _ := startSim(t, ctx, sim.Options{Name: "slow", Community: "public", Interfaces: 48, Delay: 100 * time.Millisecond})
	metrics, _ := NewMetrics(nil)
	var logs syncbuf.Buffer
	p, err := New(Config{
		Targets: []configs.SNMPTarget{testTarget("slow", addr, func(tc *configs.SNMPTarget) {
			tc.Interval, tc.Timeout = 400*time.Millisecond, 300*time.Millisecond
		})},
		Profiles: loadProfiles(t), Broker: snmptest.NewCapture(), Metrics: metrics,
		Logger: slog.New(slog.NewTextHandler(&logs, nil)),
	})
	if err != nil {
		t.Fatal(err)
	}
	runCtx, stop := context.WithTimeout(ctx, 3500*time.Millisecond)
	defer stop()
	p.Run(runCtx)
	skipped := testutil.ToFloat64(metrics.Skipped.WithLabelValues("slow"))
	if n := strings.Count(logs.String(), "overran its interval"); skipped < 3 || n != 1 {
		t.Errorf("%v polls skipped, %d logged as overrunning; want 3 or more and 1:\n%s", skipped, n, logs.String())
	}
}
