package gnmi

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/weirnet/weir/broker"
	"github.com/weirnet/weir/configs"
	"github.com/weirnet/weir/internal/syncbuf"
	"github.com/weirnet/weir/internal/targetfile"
)

// failingBroker keeps what is produced until fail is set, then fails every
// Produce at once with an error that is retried, as a full disk does.
type failingBroker struct {
	memBroker
	fail atomic.Bool
	// logs is the collector's log (manyDown's), whose lines tests count.
	logs syncbuf.Buffer
}

func (b *failingBroker) Produce(ctx context.Context, topic string, recs []broker.Record) error {
	if b.fail.Load() {
		return errors.New("disk full")
	}
	return b.memBroker.Produce(ctx, topic, recs)
}

// manyDown runs a collector of n targets that are down (a closed port),
// each told down once, with a state file; the broker is then made to
// fail. It returns the collector, its broker, the state file, the
// targets' configs, and stop, which cancels Run and says how long it
// took to return.
func manyDown(t *testing.T, n int) (c *Collector, b *failingBroker, state string, cfgs []configs.GNMITarget, stop func() time.Duration) {
	t.Helper()
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	down := lis.Addr().String()
	lis.Close()
	for i := range n {
		tc := simTarget(fmt.Sprintf("d%03d", i), down, sub(countersPath, "stream", "sample", time.Second))
		tc.Timeout = configs.Duration(time.Second)
		cfgs = append(cfgs, tc)
	}
	state = filepath.Join(t.TempDir(), "targets.json")
	m, err := NewMetrics(prometheus.NewRegistry())
	if err != nil {
		t.Fatal(err)
	}
	b = &failingBroker{}
	// One attempt each: retried only after a minute.
	cfg := configs.GNMI{RetryMin: configs.Duration(time.Minute), RetryMax: configs.Duration(time.Minute), Targets: cfgs}
	log := slog.New(slog.NewTextHandler(&b.logs, &slog.HandlerOptions{Level: slog.LevelInfo}))
	c, err = New(cfg, b, WithMetrics(m), WithLogger(log), WithStateFile(state))
	if err != nil {
		t.Fatal(err)
	}
	c.grace = time.Second
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { c.Run(ctx); close(done) }()
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
	waitFor(t, 30*time.Second, "every target told down", func() bool {
		told := map[string]bool{}
		for _, m := range b.where(t, isStatus) {
			told[m.Device] = true
		}
		return len(told) == n
	})
	b.fail.Store(true)
	return c, b, state, cfgs, stop
}

// memberNames are the names of the set's running members, sorted.
func memberNames(c *Collector) []string {
	ms, _ := c.set.Members()
	var names []string
	for _, m := range ms {
		names = append(names, m.Name)
	}
	slices.Sort(names)
	return names
}

// TestManyRemovedWhileTheBrokerFails: a reload takes out 200 targets that
// were down while the broker fails. Each removal's record was published
// alone, bounded at 5 s, one after the other: the reload's added target
// did not start for 1000 s. The removals share one bound: the added
// target starts within seconds; every removal not taken is kept in the
// state file for the next start, and the removed targets' series are
// forgotten; a target added back by a later reload runs.
func TestManyRemovedWhileTheBrokerFails(t *testing.T) {
	const n = 200
	c, b, state, cfgs, _ := manyDown(t, n)
	kept, added := cfgs[0], cfgs[0]
	added.Name = "added"
	start := time.Now()
	if err := c.Update([]configs.GNMITarget{kept, added}); err != nil {
		t.Fatal(err)
	}
	// removedGrace, the drain of the removed targets (their queues are
	// empty) and a loaded machine's pauses.
	const bound = 30 * time.Second
	for !slices.Equal(memberNames(c), []string{"added", kept.Name}) {
		if time.Since(start) > bound {
			t.Fatalf("the reload's added target has not started %v after the reload that took out %d targets (members %d)", bound, n-1, len(memberNames(c)))
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Logf("%d removals with a failing broker: the added target started after %v", n-1, time.Since(start).Round(time.Millisecond))

	known, err := readKnown(state)
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(known)
	want := []string{"added"}
	for _, tc := range cfgs {
		want = append(want, tc.Name)
	}
	slices.Sort(want)
	if !slices.Equal(known, want) {
		t.Errorf("state file lists %d targets, want %d: the two listed and every removal not told", len(known), len(want))
	}
	// One line for the lot, not one per removal.
	if lines := strings.Count(b.logs.String(), "last status was not published"); lines > 3 {
		t.Errorf("%d removals not published logged %d lines", n-1, lines)
	}
	gone := cfgs[n-1].Name
	if exportedTarget(t, c.m, gone) {
		t.Errorf("the series of %s, removed, are still exported", gone)
	}

	// Added back, with the broker taking records again: it runs, and it
	// is listed once.
	b.fail.Store(false)
	if err := c.Update([]configs.GNMITarget{kept, added, cfgs[n-1]}); err != nil {
		t.Fatal(err)
	}
	waitFor(t, bound, gone+" running again", func() bool { return slices.Contains(memberNames(c), gone) })
	waitFor(t, 10*time.Second, gone+"'s series again", func() bool { return exportedTarget(t, c.m, gone) })
	if known, err = readKnown(state); err != nil {
		t.Fatal(err)
	}
	if i := slices.Index(known, gone); i < 0 || slices.Index(known[i+1:], gone) >= 0 {
		t.Errorf("state file lists %s %d times, want once", gone, len(slices.DeleteFunc(known, func(s string) bool { return s != gone })))
	}
}

// exportedTarget reports whether target has a series among m's.
func exportedTarget(t *testing.T, m *Metrics, target string) bool {
	t.Helper()
	reg := prometheus.NewRegistry()
	for _, c := range []prometheus.Collector{m.Connected, m.Reconnects} {
		if err := reg.Register(c); err != nil {
			t.Fatal(err)
		}
	}
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		for _, s := range mf.GetMetric() {
			for _, l := range s.GetLabel() {
				if l.GetName() == "target" && l.GetValue() == target {
					return true
				}
			}
		}
	}
	return false
}

// TestStopDuringManyRemovals: weir stops while a reload's removals wait on
// a failing broker: Run returns within seconds, and the removals not told
// are kept in the state file.
func TestStopDuringManyRemovals(t *testing.T) {
	const n = 200
	c, _, state, cfgs, stop := manyDown(t, n)
	if err := c.Update(nil); err != nil {
		t.Fatal(err)
	}
	time.Sleep(time.Second) // the removals under way
	if took := stop(); took > 15*time.Second {
		t.Errorf("Run returned %v after it was stopped during %d removals, want within seconds", took, n)
	} else {
		t.Logf("Run returned %v after it was stopped during %d removals", took.Round(time.Millisecond), n)
	}
	known, err := readKnown(state)
	if err != nil {
		t.Fatal(err)
	}
	if len(known) != len(cfgs) {
		t.Errorf("state file lists %d targets, want the %d removals not told", len(known), len(cfgs))
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
	var k []string
	for i := range n {
		k = append(k, fmt.Sprintf("old%03d", i))
	}
	if err := targetfile.Write(state, k); err != nil {
		t.Fatal(err)
	}
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	down := lis.Addr().String()
	lis.Close()
	b := &failingBroker{}
	b.fail.Store(true)
	m, err := NewMetrics(prometheus.NewRegistry())
	if err != nil {
		t.Fatal(err)
	}
	c, err := New(configs.GNMI{RetryMin: configs.Duration(time.Minute), RetryMax: configs.Duration(time.Minute),
		Targets: []configs.GNMITarget{simTarget("a", down, sub(countersPath, "stream", "sample", time.Second))}},
		b, WithMetrics(m), WithLogger(testLogger(t)), WithStateFile(state))
	if err != nil {
		t.Fatal(err)
	}
	c.grace = time.Second
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	start := time.Now()
	go func() { c.Run(ctx); close(done) }()
	defer func() { cancel(); <-done }()
	const bound = 30 * time.Second
	for !slices.Equal(memberNames(c), []string{"a"}) {
		if time.Since(start) > bound {
			t.Fatalf("the configured target has not started %v after a start with %d removals to tell", bound, n)
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Logf("%d removals at the start with a failing broker: the target started after %v", n, time.Since(start).Round(time.Millisecond))
	known, err := readKnown(state)
	if err != nil {
		t.Fatal(err)
	}
	if len(known) != n+1 || !slices.Contains(known, "a") || !slices.Contains(known, "old199") {
		t.Errorf("state file lists %d targets, want a and the %d removals not told", len(known), n)
	}
}
