package enrich

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/weirnet/weir/broker"
	"github.com/weirnet/weir/telemetry"
)

// TestOutputTopicLimitLoweredAtRuntime: on a Kafka cluster, an operator
// lowers enriched.syslog's max.message.bytes while the worker runs. The
// worker's transactional producer kept the batch limit it took when it
// first wrote the topic, so its batches of small records were refused
// whole (MESSAGE_TOO_LARGE) and it retried the same transaction for ever.
// Now it joins the group again with a new client, which keeps to the new
// limit, and publishes every record, none left out.
func TestOutputTopicLimitLoweredAtRuntime(t *testing.T) {
	seeds, b := kafkaCluster(t, 1)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	for _, topic := range []string{telemetry.TopicRawSyslog, telemetry.TopicEnrichedSyslog, telemetry.TopicEvents} {
		if err := b.CreateTopic(ctx, topic, broker.TopicConfig{Partitions: 1}); err != nil {
			t.Fatal(err)
		}
	}
	const lines = 150          // 1.5 KiB each when enriched
	noise := make([]byte, 500) // letters snappy cannot shrink, as the cluster counts compressed bytes
	x := uint32(1)
	produce := func() {
		raw := make([]broker.Record, lines)
		for i := range raw {
			for j := range noise {
				x = x*1664525 + 1013904223
				noise[j] = 'a' + byte(x>>24)%26
			}
			l := telemetry.Log{V: 1, Device: "edge1", Hostname: "edge1", Facility: 23, Severity: 3, Format: "rfc3164",
				Message:    fmt.Sprintf("%%SEC-6-IPACCESSLOGP: list 101 denied tcp 10.1.%d.1(1234) -> 10.2.0.1(22), 1 packet %s", i, noise),
				SourceAddr: "192.0.2.1:514", ReceivedAt: time.Now()}
			raw[i] = broker.Record{Key: []byte("edge1"), Value: l.AppendJSON(nil)}
		}
		if err := b.Produce(ctx, telemetry.TopicRawSyslog, raw); err != nil {
			t.Fatal(err)
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
	produce()
	waitOut(lines)

	v := "65536"
	admin := kadm.NewClient(mustClient(t, kgo.SeedBrokers(seeds...)))
	res, err := admin.AlterTopicConfigs(ctx, []kadm.AlterConfig{{Name: "max.message.bytes", Value: &v}}, telemetry.TopicEnrichedSyslog)
	if err == nil {
		_, err = res.On(telemetry.TopicEnrichedSyslog, nil)
	}
	if err != nil {
		t.Fatal(err)
	}
	produce()
	waitOut(2 * lines)
	if d := testutil.ToFloat64(m.m.dropped.WithLabelValues(telemetry.TopicEnrichedSyslog, "too_large")); d != 0 {
		t.Fatalf("%v records left out as too large; each fits the new limit", d)
	}
}
