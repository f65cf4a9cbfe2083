package sinks_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/weirnet/weir/configs"
	"github.com/weirnet/weir/internal/syncbuf"
	"github.com/weirnet/weir/sinks"
	"github.com/weirnet/weir/sinks/internal/sinktest"
	"github.com/weirnet/weir/telemetry"
)

// TestRetryLogThrottled: a destination down for a long time under a short
// retry.max (seen live: retry.max 100ms, one ERROR line per attempt and
// sink, 127 lines in two minutes for each of four sinks) logs its first
// failures and then a line per throttle period with how many attempts,
// not one per attempt; every attempt is still counted in
// weir_sink_retries_total, and the recovery is logged.
func TestRetryLogThrottled(t *testing.T) {
	b := sinktest.Broker(t)
	sinktest.Produce(t, b, "enriched.metrics", telemetry.SchemaMetric, devKey, metrics(10, func(int) string { return "ifTable" }))
	const failures = 300
	d := &fakeDest{failN: failures}
	c := cfg("retrylog")
	c.Retry = configs.SinkRetry{Initial: configs.Duration(time.Microsecond), Max: configs.Duration(time.Microsecond)}
	var logs syncbuf.Buffer
	r := sinktest.StartLogging(t, b, c, d, &logs)
	sinktest.Eventually(t, "10 records delivered after the outage", func() bool { n, _ := d.seen(); return n == 10 })
	sinktest.Eventually(t, "recovery logged", func() bool { return strings.Contains(logs.String(), "sink delivering again") })
	if got := r.Counter("weir_sink_retries_total", map[string]string{"sink": "retrylog"}); got != failures {
		t.Errorf("retries counted = %v, want %d", got, failures)
	}
	n := strings.Count(logs.String(), "sink delivery failed")
	if n == 0 {
		t.Fatalf("the outage is not in the log:\n%s", logs.String())
	}
	// The first attempts, then one line per 10 s: far fewer than the
	// attempts even if the test machine is slow.
	if n > failures/10 {
		t.Errorf("%d log lines for %d failed attempts, want them throttled", n, failures)
	}
}

// flakyDest takes records one at a time, as the webhook sink posts them,
// and fails every other post after the first record of a Write: a
// receiver that answers some posts with a 500. Each failure comes after
// progress, so the sink starts a fresh batch at attempt 1 every time.
type flakyDest struct {
	mu    sync.Mutex
	n     int
	posts int
}

func (d *flakyDest) Write(ctx context.Context, items []sinks.Item) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	for i := range items {
		d.posts++
		if i > 0 && d.posts%2 == 0 {
			return &sinks.PartialError{Done: i, Err: &sinks.RetryableError{Err: errors.New("HTTP 500")}}
		}
		d.n++
	}
	return nil
}

func (d *flakyDest) Close() error { return nil }

func (d *flakyDest) delivered() int { d.mu.Lock(); defer d.mu.Unlock(); return d.n }

// TestRetryLogThrottledFlaky: a destination that fails now and then
// between records it takes (seen in a soak: a webhook receiver answering
// one post in ten with a 500 logged 677 lines in 90 s, one per failure
// and a "delivering again" after most) is throttled as an outage is: the
// first failures, then a line per throttle period, not a line per
// failure; each failure is still counted in weir_sink_retries_total.
func TestRetryLogThrottledFlaky(t *testing.T) {
	b := sinktest.Broker(t)
	const n = 200
	sinktest.Produce(t, b, "enriched.metrics", telemetry.SchemaMetric, devKey, metrics(n, func(int) string { return "ifTable" }))
	d := &flakyDest{}
	c := cfg("flaky")
	c.Retry = configs.SinkRetry{Initial: configs.Duration(time.Microsecond), Max: configs.Duration(time.Microsecond)}
	var logs syncbuf.Buffer
	r := sinktest.StartLogging(t, b, c, d, &logs)
	sinktest.Eventually(t, "every record delivered", func() bool { return d.delivered() == n })
	retries := r.Counter("weir_sink_retries_total", map[string]string{"sink": "flaky"})
	if retries < n/4 {
		t.Fatalf("retries counted = %v, want about %d", retries, n/2)
	}
	failed := strings.Count(logs.String(), "sink delivery failed")
	again := strings.Count(logs.String(), "sink delivering again")
	if failed == 0 {
		t.Fatalf("the failures are not in the log:\n%s", logs.String())
	}
	if failed+again > int(retries)/10 {
		t.Errorf("%d failure and %d recovery lines for %v failed posts, want them throttled", failed, again, retries)
	}
}

// TestRetryLogOutageEndAfterGivingUp: with retry.max_attempts, an outage
// longer than a batch's attempts gives batches up (dead-lettered); when
// the destination is back, the batch that goes through may do so at its
// first attempt. The outage's end is still logged: its failures were, and
// "gave up" is no end of it.
func TestRetryLogOutageEndAfterGivingUp(t *testing.T) {
	b := sinktest.Broker(t)
	d := &fakeDest{failN: 4}
	c := cfg("giveup")
	c.Retry = configs.SinkRetry{Initial: configs.Duration(time.Microsecond), Max: configs.Duration(time.Microsecond), MaxAttempts: 2}
	var logs syncbuf.Buffer
	sinktest.StartLogging(t, b, c, d, &logs)
	writes := func() int { d.mu.Lock(); defer d.mu.Unlock(); return d.writes }
	for i, w := range []int{2, 4} {
		sinktest.Produce(t, b, "enriched.metrics", telemetry.SchemaMetric, devKey, metrics(1, func(int) string { return "ifTable" }))
		sinktest.Eventually(t, fmt.Sprintf("batch %d given up", i+1), func() bool { return writes() == w })
		sinktest.Eventually(t, fmt.Sprintf("batch %d's give-up logged", i+1), func() bool {
			return strings.Count(logs.String(), "sink gave up on a batch") == i+1
		})
	}
	sinktest.Produce(t, b, "enriched.metrics", telemetry.SchemaMetric, devKey, metrics(1, func(int) string { return "ifTable" }))
	sinktest.Eventually(t, "a record delivered after the outage", func() bool { n, _ := d.seen(); return n == 1 })
	sinktest.Eventually(t, "recovery logged", func() bool { return strings.Contains(logs.String(), "sink delivering again") })
}

// steadyFlakyLanes is a Concurrent destination taking records one at a
// time (100 µs each, as a webhook posts them) and failing every 5th post
// until failing posts have failed; it notes when the first and the last
// failure came and how many recoveries the log held at the last.
type steadyFlakyLanes struct {
	logs    *syncbuf.Buffer
	failing int
	mu      sync.Mutex
	posts   int
	failed  int
	n       int
	first   time.Time
	last    time.Time
	againAt int // "delivering again" lines at the last failure
}

func (d *steadyFlakyLanes) Lanes() int { return 4 }

func (d *steadyFlakyLanes) WriteLane(ctx context.Context, lane int, items []sinks.Item) error {
	for i := range items {
		time.Sleep(100 * time.Microsecond)
		d.mu.Lock()
		d.posts++
		if d.failed < d.failing && d.posts%5 == 0 {
			d.failed++
			if d.failed == 1 {
				d.first = time.Now()
			}
			if d.failed == d.failing {
				d.last = time.Now()
				d.againAt = strings.Count(d.logs.String(), "sink delivering again")
			}
			d.mu.Unlock()
			return &sinks.PartialError{Done: i, Err: &sinks.RetryableError{Err: errors.New("HTTP 503")}}
		}
		d.n++
		d.mu.Unlock()
	}
	return nil
}

func (d *steadyFlakyLanes) Write(ctx context.Context, items []sinks.Item) error {
	return errors.New("Write called on a destination with lanes")
}

func (d *steadyFlakyLanes) Close() error { return nil }

// TestLanesRecoveryLoggedWhenFailuresStop: lanes failing one post in five
// with a backlog (seen in a soak: at a steady 10% the recovery was logged
// with failing_for=4m43s while posts went on failing, whenever no lane
// happened to be retrying) log no recovery while failures go on; once
// they stop for a flush interval, one, whose failing_for spans them.
func TestLanesRecoveryLoggedWhenFailuresStop(t *testing.T) {
	b := sinktest.Broker(t)
	const n = 3000
	ms := metrics(n, func(int) string { return "ifTable" })
	key := func(i int) string { return fmt.Sprintf("dev%d", i%40) }
	for i := range ms {
		ms[i].Device = key(i)
	}
	sinktest.Produce(t, b, "enriched.metrics", telemetry.SchemaMetric, key, ms)
	var logs syncbuf.Buffer
	d := &steadyFlakyLanes{logs: &logs, failing: 300}
	c := cfg("steady")
	c.FlushInterval = configs.Duration(200 * time.Millisecond)
	// Retried at once: lanes are seldom all failing at the same time.
	c.Retry = configs.SinkRetry{Initial: configs.Duration(time.Microsecond), Max: configs.Duration(time.Microsecond)}
	sinktest.StartLogging(t, b, c, d, &logs)
	sinktest.Eventually(t, "every record delivered", func() bool { d.mu.Lock(); defer d.mu.Unlock(); return d.n == n })
	sinktest.Eventually(t, "recovery logged", func() bool { return strings.Contains(logs.String(), "sink delivering again") })
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.againAt != 0 {
		t.Fatalf("%d recoveries logged while posts went on failing:\n%s", d.againAt, logs.String())
	}
	lines := strings.Split(logs.String(), "\n")
	var again []string
	for _, l := range lines {
		if strings.Contains(l, "sink delivering again") {
			again = append(again, l)
		}
	}
	if len(again) != 1 {
		t.Fatalf("%d recoveries logged, want 1:\n%s", len(again), strings.Join(again, "\n"))
	}
	_, v, _ := strings.Cut(again[0], "failing_for=")
	v, _, _ = strings.Cut(v, " ")
	ff, err := time.ParseDuration(v)
	if err != nil {
		t.Fatalf("no failing_for in %q: %v", again[0], err)
	}
	// failing_for is rounded to the millisecond, and the sink notes the
	// first failure when the post returns, a little after this fake noted
	// it: a millisecond less is the same.
	if span := d.last.Sub(d.first).Round(time.Millisecond); ff+time.Millisecond < span {
		t.Errorf("failing_for=%v, want at least the %v from the first failure to the last", ff, span)
	}
	if !strings.Contains(again[0], "lane=") {
		t.Errorf("no lane in %q", again[0])
	}
}
