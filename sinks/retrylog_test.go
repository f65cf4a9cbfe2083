package sinks_test

import (
	"strings"
	"testing"
	"time"

	"github.com/weirnet/weir/configs"
	"github.com/weirnet/weir/internal/syncbuf"
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
