package sinks_test

import (
	"strings"
	"testing"

	"github.com/weirnet/weir/internal/syncbuf"
	"github.com/weirnet/weir/sinks/internal/sinktest"
	"github.com/weirnet/weir/telemetry"
)

// TestUndecodableLoggedThrottled: records that do not decode (a producer
// writing garbage under schema metric/1) are dead-lettered and counted,
// and the log says so, as it does for a record the destination refuses;
// a stream of them is one line per throttle period, not one per record.
// Seen live: 'not json' under metric/1 was dead-lettered with no log line.
func TestUndecodableLoggedThrottled(t *testing.T) {
	b := sinktest.Broker(t)
	junk := make([]string, 50)
	for i := range junk {
		junk[i] = "not a metric"
	}
	sinktest.Produce(t, b, "enriched.metrics", telemetry.SchemaMetric, func(int) string { return "junk" }, junk)
	var log syncbuf.Buffer
	r := sinktest.StartLogging(t, b, cfg("undec"), &fakeDest{}, &log)
	sinktest.Eventually(t, "50 decode errors dead-lettered", func() bool {
		return r.Counter("weir_sink_dead_letters_total", map[string]string{"sink": "undec", "reason": "decode"}) == 50
	})
	if err := r.Stop(); err != nil {
		t.Fatal(err)
	}
	var lines []string
	for _, l := range strings.Split(log.String(), "\n") {
		if strings.Contains(l, "decode") {
			lines = append(lines, l)
		}
	}
	if len(lines) == 0 {
		t.Fatalf("50 undecodable records dead-lettered, nothing in the log:\n%s", log.String())
	}
	if len(lines) > 2 {
		t.Errorf("%d log lines for 50 undecodable records, want them throttled:\n%s", len(lines), strings.Join(lines, "\n"))
	}
	if !strings.Contains(lines[0], "enriched.metrics") || !strings.Contains(lines[0], "sink=undec") {
		t.Errorf("log line does not name the sink and the record: %s", lines[0])
	}
}
