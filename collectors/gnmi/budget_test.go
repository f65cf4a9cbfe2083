package gnmi

import (
	"context"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/weirnet/weir/collectors/gnmi/sim"
	"github.com/weirnet/weir/configs"
	"github.com/weirnet/weir/internal/syncbuf"
)

// TestQueueMemoryShares: two targets' queues on one queue_memory of 1000
// bytes (a share of 500 each). The first fills until it is over its
// share with three quarters held, the second takes the rest; when the
// budget is full both are refused and nothing queued is lost; the memory
// the first frees by publishing goes to the second, not back to it.
func TestQueueMemoryShares(t *testing.T) {
	b := testBudget(1000)
	b.join()
	b.join()
	hog, other := newQueue(1000, 1<<20, b), newQueue(1000, 1<<20, b)
	push := func(q *queue) pushResult { return q.push(item{size: 100}) }
	for i := range 7 {
		if r := push(hog); r != pushed {
			t.Fatalf("hog's push %d: %v", i, r)
		}
	}
	if r := push(hog); r != memoryFull {
		t.Fatalf("hog's push over its share with 3/4 held: %v, want memoryFull", r)
	}
	for i := range 3 {
		if r := push(other); r != pushed {
			t.Fatalf("other's push %d (under its share): %v", i, r)
		}
	}
	if r := push(other); r != memoryFull {
		t.Fatalf("other's push past queue_memory: %v, want memoryFull", r)
	}
	if n, bytes := hog.state(); n != 7 || bytes != 700 {
		t.Fatalf("hog holds %d items, %d bytes; want 7, 700 (nothing queued dropped)", n, bytes)
	}
	// The hog publishes three of its notifications.
	batch, _ := hog.take(t.Context(), nil, nil)
	if len(batch) != 7 {
		t.Fatalf("took %d", len(batch))
	}
	hog.release(300)
	if r := push(hog); r != pushed {
		t.Fatalf("hog's push back at its share: %v", r)
	}
	if r := push(hog); r != memoryFull {
		t.Fatalf("hog's push over its share again: %v, want memoryFull", r)
	}
	if r := push(other); r != pushed {
		t.Fatalf("other's push into what the hog freed: %v", r)
	}
	if used, _, _ := b.state(); used != 900 {
		t.Fatalf("budget holds %d, want 900", used)
	}
	hog.release(400)
	other.release(400)
	hog.discard()
	other.discard()
	if used, _, _ := b.state(); used != 0 || testutil.ToFloat64(b.gauge) != 0 {
		t.Fatalf("budget holds %d (gauge %v) with both queues empty", used, testutil.ToFloat64(b.gauge))
	}
	// With nothing held, one notification larger than the whole budget
	// is taken, as an empty queue takes one; not a second.
	if r := hog.push(item{size: 5000}); r != pushed {
		t.Fatalf("a notification larger than queue_memory, nothing held: %v", r)
	}
	if r := other.push(item{size: 1}); r != memoryFull {
		t.Fatalf("a push with queue_memory overdrawn: %v", r)
	}
}

// TestQueueMemoryAcrossTargets: three simulated targets, one flooding,
// while the broker holds every publish. The queues together never hold
// more than queue_memory; the flood is stopped at three quarters of it
// (over its share), the two slow targets still queue, the drops are
// counted (memory_full) and logged; once the broker takes records every
// target's queue drains and publishes again.
func TestQueueMemoryAcrossTargets(t *testing.T) {
	const budget = 1 << 20
	targets := []configs.GNMITarget{}
	for _, tg := range []struct {
		name       string
		interfaces int
		every      time.Duration
	}{{"flood", 16, 5 * time.Millisecond}, {"slow1", 2, 100 * time.Millisecond}, {"slow2", 2, 100 * time.Millisecond}} {
		_, addr, _ := startSim(t, "127.0.0.1:0", sim.Config{Interfaces: tg.interfaces})
		targets = append(targets, simTarget(tg.name, addr, sub(countersPath, "stream", "sample", tg.every)))
	}
	reg := prometheus.NewRegistry()
	m, _ := NewMetrics(reg)
	var logs syncbuf.Buffer
	b := &gatedBroker{open: make(chan struct{})}
	c, err := New(configs.GNMI{QueueSize: 1_000_000, QueueBytes: budget, QueueMemory: budget, RetryMin: configs.Duration(50 * time.Millisecond),
		Targets: targets}, b, WithMetrics(m), WithLogger(slog.New(slog.NewTextHandler(&logs, nil))))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan struct{})
	go func() { c.Run(ctx); close(done) }()
	defer func() { cancel(); <-done }()

	queued := func(i int) int { _, bytes := c.targets[i].queue.state(); return bytes }
	dropped := func(name string) float64 { return testutil.ToFloat64(m.Dropped.WithLabelValues(name, DropMemoryFull)) }
	over := 0
	waitFor(t, 60*time.Second, "queue_memory full: the flood refused, both slow targets queued", func() bool {
		if used, _, _ := c.budget.state(); used > budget {
			over = int(used)
		}
		return dropped("flood") > 0 && queued(1) > 0 && queued(2) > 0 && dropped("slow1") > 0
	})
	if over > 0 {
		t.Fatalf("the queues held %d bytes together, past queue_memory (%d)", over, budget)
	}
	// The flood went past its share (a third) only while less than three
	// quarters were held: one notification past them at most.
	if f := queued(0); f > budget*3/4+64<<10 {
		t.Errorf("the flood holds %d bytes, more than 3/4 of queue_memory (%d) and its share", f, budget)
	}
	if g := testutil.ToFloat64(m.QueueMemory); g < budget/2 || g > budget {
		t.Errorf("weir_gnmi_queue_memory_bytes = %v, want the queues' %d bytes or so", g, budget)
	}
	waitFor(t, 30*time.Second, "the memory_full line", func() bool {
		return strings.Contains(logs.String(), "gnmi queue memory full") && strings.Contains(logs.String(), "queue_memory=1048576")
	})

	close(b.open)
	published := func(name string) float64 { return testutil.ToFloat64(m.Published.WithLabelValues(name)) }
	waitFor(t, 60*time.Second, "every target published", func() bool {
		return published("flood") > 0 && published("slow1") > 0 && published("slow2") > 0
	})
	// Drained: the slow targets send far less than the broker takes.
	waitFor(t, 60*time.Second, "the queues drained", func() bool {
		used, _, _ := c.budget.state()
		return used < budget/4
	})
	before := published("slow1")
	waitFor(t, 60*time.Second, "slow1 publishing again", func() bool { return published("slow1") > before })
}
