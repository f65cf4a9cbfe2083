package enrich

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/weirnet/weir/broker"
	"github.com/weirnet/weir/broker/embedded"
	"github.com/weirnet/weir/telemetry"
)

// TestWorkerStopsPromptlyWithBacklog: a worker asked to stop while
// raw.syslog holds a backlog returns within a second or so, leaving the
// rest for the next start, instead of enriching the whole backlog first
// (the embedded consumer's Poll did not look at its context: `weir run`'s
// SIGTERM took as long as the backlog, 13 s for 1.4 M records here).
func TestWorkerStopsPromptlyWithBacklog(t *testing.T) {
	eb, err := embedded.Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer eb.Close()
	ctx := context.Background()
	const total = 400_000
	batch := make([]broker.Record, 0, 1000)
	for i := range total {
		l := telemetry.Log{V: 1, Device: fmt.Sprintf("edge%d", i%1000), Hostname: "edge1", Format: "rfc3164", Facility: 23, Severity: 3,
			Message: "%LINK-3-UPDOWN: Interface Gi0/1, changed state to down", SourceAddr: "192.0.2.1:514", ReceivedAt: time.Now()}
		batch = append(batch, broker.Record{Key: []byte(l.Device), Value: l.AppendJSON(nil)})
		if len(batch) == cap(batch) {
			if err := eb.Produce(ctx, telemetry.TopicRawSyslog, batch); err != nil {
				t.Fatal(err)
			}
			batch = batch[:0]
		}
	}
	enriched := func() (n int64) {
		infos, err := eb.DescribeTopics(ctx, telemetry.TopicEnrichedSyslog)
		if err != nil || len(infos) == 0 {
			return 0
		}
		for _, p := range infos[0].Partitions {
			n += p.HighWatermark
		}
		return n
	}
	inv, _ := ParseInventory([]byte(testInventory))
	w := NewWorker(eb, inv, NewClassifier())
	wctx, cancel := context.WithCancel(ctx)
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- w.Run(wctx) }()
	deadline := time.Now().Add(20 * time.Second)
	for enriched() == 0 {
		if time.Now().After(deadline) {
			t.Fatal("nothing enriched")
		}
		time.Sleep(10 * time.Millisecond)
	}
	at := enriched()
	cancel()
	start := time.Now()
	<-done
	took := time.Since(start)
	after := enriched()
	t.Logf("cancelled with %d of %d enriched; Run returned after %v with %d enriched", at, total, took, after)
	if after == total || took > time.Second {
		t.Errorf("Run took %v to return after its context ended: it went on through the backlog (%d -> %d of %d enriched)", took, at, after, total)
	}
}
