package snmp

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/weirnet/weir/broker"
	"github.com/weirnet/weir/collectors/snmp/snmptest"
	"github.com/weirnet/weir/configs"
	"github.com/weirnet/weir/internal/syncbuf"
	"github.com/weirnet/weir/internal/targetfile"
)

// failingCapture is a capture until fail is set; then every Produce fails
// at once with an error that is retried, as a full disk does.
type failingCapture struct {
	*snmptest.Capture
	fail atomic.Bool
	// logs is the poller's log (manyPolled's), whose lines tests count.
	logs syncbuf.Buffer
}

func (c *failingCapture) Produce(ctx context.Context, topic string, recs []broker.Record) error {
	if c.fail.Load() {
		return errors.New("disk full")
	}
	return c.Capture.Produce(ctx, topic, recs)
}

// manyPolled runs a poller of n targets with a state file, each polled
// once (an agent that does not answer), then makes the broker fail. stop
// cancels Run and says how long it took to return.
func manyPolled(t *testing.T, n int) (p *Poller, b *failingCapture, state string, cfgs []configs.SNMPTarget, stop func() time.Duration) {
	t.Helper()
	addr := fmt.Sprintf("127.0.0.1:%d", snmptest.FreeUDPPort(t))
	for i := range n {
		cfgs = append(cfgs, testTarget(fmt.Sprintf("d%03d", i), addr, func(tc *configs.SNMPTarget) {
			tc.Interval, tc.Timeout = time.Second, 200*time.Millisecond
			tc.Profiles.Names = []string{"system"}
		}))
	}
	state = filepath.Join(t.TempDir(), "targets.json")
	m, err := NewMetrics(prometheus.NewRegistry())
	if err != nil {
		t.Fatal(err)
	}
	b = &failingCapture{Capture: snmptest.NewCapture()}
	p, err = New(Config{Targets: cfgs, Profiles: loadProfiles(t), Broker: b, StateFile: state, Metrics: m,
		MaxConcurrency: n, Logger: slog.New(slog.NewTextHandler(&b.logs, &slog.HandlerOptions{Level: slog.LevelInfo}))})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { p.Run(ctx); close(done) }()
	var took time.Duration
	stopped := false
	stop = func() time.Duration {
		if !stopped {
			stopped = true
			start := time.Now()
			cancel()
			select {
			case <-done:
			case <-time.After(time.Minute):
				t.Fatal("Run did not return a minute after it was stopped")
			}
			took = time.Since(start)
		}
		return took
	}
	t.Cleanup(func() { stop() })
	if !b.WaitFor(30*time.Second, func(recs []broker.Record) bool {
		for _, tc := range cfgs {
			if countStatus(recs, tc.Name) == 0 {
				return false
			}
		}
		return true
	}) {
		t.Fatal("not every target polled")
	}
	b.fail.Store(true)
	return p, b, state, cfgs, stop
}

func memberNames(p *Poller) []string {
	ms, _ := p.set.Members()
	var names []string
	for _, m := range ms {
		names = append(names, m.Name)
	}
	slices.Sort(names)
	return names
}

func knownNames(t *testing.T, state string) []string {
	t.Helper()
	known, err := readKnown(state)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, k := range known {
		names = append(names, k.Name)
	}
	slices.Sort(names)
	return names
}

// TestManyRemovedWhileTheBrokerFails: a reload takes out 200 targets this
// process polled while the broker fails. Each removal's record was
// published alone, bounded at 5 s, one after the other: the reload's added
// target did not start for 1000 s. They share one bound now: the added
// target starts within seconds; every removal not taken is kept in the
// state file for the next start; the removed targets' series go; a target
// added back by a later reload is polled.
func TestManyRemovedWhileTheBrokerFails(t *testing.T) {
	const n = 200
	p, b, state, cfgs, _ := manyPolled(t, n)
	kept, added := cfgs[0], cfgs[0]
	added.Name = "added"
	start := time.Now()
	if err := p.Update([]configs.SNMPTarget{kept, added}); err != nil {
		t.Fatal(err)
	}
	// A poll's publish under way when a target stops (publishGrace), the
	// removals' bound, and a loaded machine's pauses.
	const bound = 30 * time.Second
	for !slices.Equal(memberNames(p), []string{"added", kept.Name}) {
		if time.Since(start) > bound {
			t.Fatalf("the reload's added target has not started %v after the reload that took out %d targets (members %d)", bound, n-1, len(memberNames(p)))
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Logf("%d removals with a failing broker: the added target started after %v", n-1, time.Since(start).Round(time.Millisecond))

	want := []string{"added"}
	for _, tc := range cfgs {
		want = append(want, tc.Name)
	}
	slices.Sort(want)
	if got := knownNames(t, state); !slices.Equal(got, want) {
		t.Errorf("state file lists %d targets, want %d: the two listed and every removal not told", len(got), len(want))
	}
	// One line for the lot, not one per removal.
	if lines := strings.Count(b.logs.String(), "last status was not published"); lines > 3 {
		t.Errorf("%d removals not published logged %d lines", n-1, lines)
	}
	gone := cfgs[n-1]
	series := func() int {
		return testutil.CollectAndCount(p.cfg.Metrics.Polls) // labelled by target and result
	}
	if s := series(); s > 2*2 {
		t.Errorf("%d weir_snmp_polls series after the reload, want those of the 2 targets left", s)
	}

	// Added back, with the broker taking records again: it is polled, and
	// listed once.
	b.fail.Store(false)
	if err := p.Update([]configs.SNMPTarget{kept, added, gone}); err != nil {
		t.Fatal(err)
	}
	at := countStatus(b.Records(), gone.Name)
	if !b.WaitFor(bound, func(recs []broker.Record) bool { return countStatus(recs, gone.Name) > at }) {
		t.Fatalf("%s, added back, not polled", gone.Name)
	}
	got := knownNames(t, state)
	if i := slices.Index(got, gone.Name); i < 0 || slices.Contains(got[i+1:], gone.Name) {
		t.Errorf("state file lists %v, want %s once", got, gone.Name)
	}
}

// TestStopDuringManyRemovals: weir stops while a reload's removals wait on
// a failing broker: Run returns within seconds, and the removals not told
// are kept in the state file.
func TestStopDuringManyRemovals(t *testing.T) {
	const n = 200
	p, _, state, cfgs, stop := manyPolled(t, n)
	if err := p.Update(nil); err != nil {
		t.Fatal(err)
	}
	time.Sleep(time.Second) // the removals under way
	if took := stop(); took > 15*time.Second {
		t.Errorf("Run returned %v after it was stopped during %d removals, want within seconds", took, n)
	} else {
		t.Logf("Run returned %v after it was stopped during %d removals", took.Round(time.Millisecond), n)
	}
	if got := knownNames(t, state); len(got) != len(cfgs) {
		t.Errorf("state file lists %d targets, want the %d removals not told", len(got), len(cfgs))
	}
}

// TestManyRemovedWhileStoppedWithTheBrokerFailing: weir starts with 200
// targets of the state file taken out of the config while it was stopped,
// and a broker that fails. Their removals were published one after the
// other, each bounded at 5 s, before any target started: the configured
// target waited 1000 s. They share one bound now; those not told stay in
// the state file.
func TestManyRemovedWhileStoppedWithTheBrokerFailing(t *testing.T) {
	const n = 200
	state := filepath.Join(t.TempDir(), "targets.json")
	var k []knownTarget
	for i := range n {
		k = append(k, knownTarget{Name: fmt.Sprintf("old%03d", i), Host: "192.0.2.1"})
	}
	if err := targetfile.Write(state, k); err != nil {
		t.Fatal(err)
	}
	b := &failingCapture{Capture: snmptest.NewCapture()}
	b.fail.Store(true)
	addr := fmt.Sprintf("127.0.0.1:%d", snmptest.FreeUDPPort(t))
	a := testTarget("a", addr, func(tc *configs.SNMPTarget) {
		tc.Interval, tc.Timeout = time.Second, 200*time.Millisecond
		tc.Profiles.Names = []string{"system"}
	})
	p, err := New(Config{Targets: []configs.SNMPTarget{a}, Profiles: loadProfiles(t), Broker: b, StateFile: state,
		Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	start := time.Now()
	go func() { p.Run(ctx); close(done) }()
	defer func() { cancel(); <-done }()
	const bound = 30 * time.Second
	for !slices.Equal(memberNames(p), []string{"a"}) {
		if time.Since(start) > bound {
			t.Fatalf("the configured target has not started %v after a start with %d removals to tell", bound, n)
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Logf("%d removals at the start with a failing broker: the target started after %v", n, time.Since(start).Round(time.Millisecond))
	if got := knownNames(t, state); len(got) != n+1 || !slices.Contains(got, "a") || !slices.Contains(got, "old199") {
		t.Errorf("state file lists %d targets, want a and the %d removals not told", len(got), n)
	}
}
