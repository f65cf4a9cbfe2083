package enrich

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/weirnet/weir/broker"
	"github.com/weirnet/weir/telemetry"
)

// TestOutputTopicRecreatedOnKafka is TestWorkerOutputTopicRecreated with
// transactions: enriched.syslog deleted and made again with fewer
// partitions than raw.syslog while the worker runs. The worker kept
// producing input partition P's outputs to output partition P, every
// transaction aborted, and the replay memo gave the polled-again records
// the same outputs: "publishing failed" every second for ever.
func TestOutputTopicRecreatedOnKafka(t *testing.T) {
	_, b := kafkaCluster(t, 1)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	for _, topic := range []string{telemetry.TopicRawSyslog, telemetry.TopicEnrichedSyslog, telemetry.TopicEvents} {
		if err := b.CreateTopic(ctx, topic, broker.TopicConfig{Partitions: 2}); err != nil {
			t.Fatal(err)
		}
	}
	produce := func(from, n int) {
		t.Helper()
		for i := from; i < from+n; i++ {
			l := telemetry.Log{V: 1, Device: "edge1", Hostname: "edge1", Format: "rfc3164", Facility: 23, Severity: 6,
				Message: fmt.Sprintf("message %d", i), SourceAddr: "192.0.2.1:514", ReceivedAt: time.Now()}
			rec := broker.Record{Key: []byte("edge1"), Value: l.AppendJSON(nil)}
			if err := b.ProducePartition(ctx, telemetry.TopicRawSyslog, int32(i%2), []broker.Record{rec}); err != nil {
				t.Fatal(err)
			}
		}
	}
	inv, _ := ParseInventory([]byte(testInventory))
	m := NewWorkerMetrics(nil)
	w := NewWorker(b, inv, NewClassifier(), WithWorkerMetrics(m))
	wctx, stop := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() { w.Run(wctx); close(done) }()
	defer func() { stop(); <-done }()
	out := func() float64 { return testutil.ToFloat64(m.m.out.WithLabelValues(telemetry.TopicEnrichedSyslog)) }
	waitOut := func(n float64) {
		t.Helper()
		for deadline := time.Now().Add(30 * time.Second); out() < n; time.Sleep(20 * time.Millisecond) {
			if time.Now().After(deadline) {
				t.Fatalf("%v records in enriched.syslog, want %v", out(), n)
			}
		}
	}
	produce(0, 10)
	waitOut(10)
	if err := b.DeleteTopic(ctx, telemetry.TopicEnrichedSyslog); err != nil {
		t.Fatal(err)
	}
	if err := b.CreateTopic(ctx, telemetry.TopicEnrichedSyslog, broker.TopicConfig{Partitions: 1}); err != nil {
		t.Fatal(err)
	}
	produce(10, 6)
	waitOut(16)
}
