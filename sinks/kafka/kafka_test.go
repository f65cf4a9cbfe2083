package kafka_test

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/weirnet/weir/broker"
	"github.com/weirnet/weir/configs"
	"github.com/weirnet/weir/sinks"
	"github.com/weirnet/weir/sinks/internal/sinktest"
	"github.com/weirnet/weir/sinks/kafka"
	"github.com/weirnet/weir/telemetry"
)

func TestMirrorToKafka(t *testing.T) {
	kf, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.SeedTopics(3, "weir.events", "weir.enriched.metrics"))
	if err != nil {
		t.Fatal(err)
	}
	defer kf.Close()
	b := sinktest.Broker(t)
	key := func(i int) string { return fmt.Sprintf("r%d", i%7) }
	evs := make([]telemetry.Event, 300)
	for i := range evs {
		evs[i] = telemetry.Event{V: 1, Type: "interface_down", Device: key(i), Object: fmt.Sprintf("Ethernet%d", i)}
	}
	sinktest.Produce(t, b, "events", telemetry.SchemaEvent, key, evs)
	sinktest.Produce(t, b, "enriched.metrics", telemetry.SchemaMetric, key, []telemetry.Metric{{V: 1, Measurement: "m", Device: "r1"}})
	c := configs.Sink{Type: "kafka", Name: "mirror", Topics: []string{"events", "enriched.metrics"}, Brokers: kf.ListenAddrs(),
		TopicPrefix: "weir.", FlushInterval: configs.Duration(20 * time.Millisecond), BatchSize: 100}
	d, err := kafka.New(c, sinks.Env{})
	if err != nil {
		t.Fatal(err)
	}
	r := sinktest.Start(t, b, c, d)
	sinktest.Eventually(t, "301 records mirrored", func() bool {
		return r.Counter("weir_sink_records_total", map[string]string{"sink": "mirror"}) == 301
	})

	// Read the mirror back: same keys, values, headers, and the same
	// partition per key as in weir (both murmur2).
	src := map[string]int32{}
	for _, rec := range sinktest.ReadAll(t, b, "events") {
		src[string(rec.Key)] = rec.Partition
	}
	cl, err := kgo.NewClient(kgo.SeedBrokers(kf.ListenAddrs()...), kgo.ConsumeTopics("weir.events"),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	seen := map[string]bool{}
	ctx, cancel := context.WithTimeout(context.Background(), sinktest.Timeout)
	defer cancel()
	for len(seen) < 300 {
		fs := cl.PollFetches(ctx)
		if err := fs.Err0(); err != nil {
			t.Fatalf("after %d: %v", len(seen), err)
		}
		fs.EachRecord(func(kr *kgo.Record) {
			seen[string(kr.Value)] = true
			if p, ok := src[string(kr.Key)]; !ok || p != kr.Partition {
				t.Errorf("key %s in partition %d, weir has %d", kr.Key, kr.Partition, p)
			}
			schema := ""
			for _, h := range kr.Headers {
				if h.Key == telemetry.HeaderSchema {
					schema = string(h.Value)
				}
			}
			if schema != telemetry.SchemaEvent {
				t.Errorf("headers %v", kr.Headers)
			}
		})
	}
}

// Mirrored records keep their timestamps, so a backlog (a sink started on a
// topic that already holds data, or catching up after an outage) has
// records far older than the sink's timeout. They must still be mirrored,
// also once the mirror topic, missing at first, has been created.
func TestMirrorOldRecords(t *testing.T) {
	kf, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.SeedTopics(3, "weir.events"))
	if err != nil {
		t.Fatal(err)
	}
	defer kf.Close()
	b := sinktest.Broker(t)
	old := time.Now().Add(-time.Hour).Truncate(time.Millisecond)
	produce := func(topic string, n int) {
		recs := make([]broker.Record, n)
		for i := range recs {
			recs[i] = broker.Record{Key: []byte(fmt.Sprintf("r%d", i%5)), Value: []byte(fmt.Sprintf(`{"i":%d}`, i)), Timestamp: old}
		}
		if err := b.Produce(context.Background(), topic, recs); err != nil {
			t.Fatal(err)
		}
	}
	produce("events", 50)
	produce("late", 20)
	c := configs.Sink{Type: "kafka", Name: "mirror", Topics: []string{"events", "late"}, Brokers: kf.ListenAddrs(),
		TopicPrefix: "weir.", Timeout: configs.Duration(2 * time.Second), FlushInterval: configs.Duration(20 * time.Millisecond),
		Retry: configs.SinkRetry{Initial: configs.Duration(50 * time.Millisecond), Max: configs.Duration(200 * time.Millisecond)}}
	d, err := kafka.New(c, sinks.Env{})
	if err != nil {
		t.Fatal(err)
	}
	r := sinktest.Start(t, b, c, d)
	sinktest.Eventually(t, "a delivery of weir.late failed", func() bool {
		return r.Counter("weir_sink_retries_total", map[string]string{"sink": "mirror"}) > 0
	})
	admCl, err := kgo.NewClient(kgo.SeedBrokers(kf.ListenAddrs()...))
	if err != nil {
		t.Fatal(err)
	}
	defer admCl.Close()
	if _, err := kadm.NewClient(admCl).CreateTopic(context.Background(), 3, 1, nil, "weir.late"); err != nil {
		t.Fatal(err)
	}
	sinktest.Eventually(t, "70 hour-old records mirrored", func() bool {
		return r.Counter("weir_sink_records_total", map[string]string{"sink": "mirror"}) == 70
	})

	cl, err := kgo.NewClient(kgo.SeedBrokers(kf.ListenAddrs()...), kgo.ConsumeTopics("weir.events", "weir.late"),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), sinktest.Timeout)
	defer cancel()
	for n := 0; n < 70; {
		fs := cl.PollFetches(ctx)
		if err := fs.Err0(); err != nil {
			t.Fatalf("after %d: %v", n, err)
		}
		fs.EachRecord(func(kr *kgo.Record) {
			n++
			if !kr.Timestamp.Equal(old) {
				t.Errorf("%s: timestamp %v, want the original %v", kr.Topic, kr.Timestamp, old)
			}
		})
	}
}

// TestMirrorTopicOfSmallBatches: a mirror topic whose max.message.bytes is
// below the sink's batch limit. The cluster refused the sink's batches
// whole, and the sink sent each again record by record to find the one
// refused, every batch; batches now keep to the topic's limit.
func TestMirrorTopicOfSmallBatches(t *testing.T) {
	kf, adm := clusterWithAdmin(t)
	limit := "16384"
	if _, err := adm.CreateTopic(context.Background(), 1, 1, map[string]*string{"max.message.bytes": &limit}, "weir.events"); err != nil {
		t.Fatal(err)
	}
	b := sinktest.Broker(t)
	noise := make([]byte, 1<<10)
	evs := make([]telemetry.Event, 200)
	for i := range evs {
		rand.Read(noise) // the cluster counts compressed bytes
		evs[i] = telemetry.Event{V: 1, Type: "interface_down", Device: "r1", Object: fmt.Sprintf("Ethernet%d", i), Message: hex.EncodeToString(noise)}
	}
	sinktest.Produce(t, b, "events", telemetry.SchemaEvent, func(int) string { return "r1" }, evs)
	c := configs.Sink{Type: "kafka", Name: "mirror", Topics: []string{"events"}, Brokers: kf.ListenAddrs(),
		TopicPrefix: "weir.", FlushInterval: configs.Duration(20 * time.Millisecond), BatchSize: 200}
	d, err := kafka.New(c, sinks.Env{})
	if err != nil {
		t.Fatal(err)
	}
	r := sinktest.Start(t, b, c, d)
	sinktest.Eventually(t, "200 records mirrored", func() bool {
		return r.Counter("weir_sink_records_total", map[string]string{"sink": "mirror"}) == 200
	})
	if n := r.Counter("weir_sink_errors_total", map[string]string{"sink": "mirror", "kind": "rejected"}); n != 0 {
		t.Fatalf("%v batches rejected", n)
	}
}

// TestUnreachableClusterSaysWhy: a batch to a cluster that refuses
// connections fails after the timeout as retryable, saying it cannot
// connect and why, not only that nothing was acknowledged.
func TestUnreachableClusterSaysWhy(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close() // nothing listens there now
	c := configs.Sink{Type: "kafka", Name: "mirror", Topics: []string{"events"}, Brokers: []string{addr}, Timeout: configs.Duration(time.Second)}
	d, err := kafka.New(c, sinks.Env{})
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	err = d.Write(context.Background(), []sinks.Item{{Record: broker.Record{Topic: "events", Key: []byte("r1"), Value: []byte(`{"v":1}`)}}})
	var re *sinks.RetryableError
	if !errors.As(err, &re) || !strings.Contains(err.Error(), "cannot connect to "+addr) || !strings.Contains(err.Error(), "refused") {
		t.Fatalf("write to %s: %v", addr, err)
	}
}

// TestMirrorTopicLimitLoweredAtRuntime: a mirror topic's max.message.bytes
// lowered while the sink runs. The client kept the limit it took at its
// first batch, so every batch was refused whole and sent again record by
// record (one round trip a record: a busy sink fell behind for good); the
// sink now replaces its client, which keeps to the new limit, and sends
// the refused records again with it, batches rejected none.
func TestMirrorTopicLimitLoweredAtRuntime(t *testing.T) {
	kf, adm := clusterWithAdmin(t)
	if _, err := adm.CreateTopic(context.Background(), 1, 1, nil, "weir.events"); err != nil {
		t.Fatal(err)
	}
	b := sinktest.Broker(t)
	noise := make([]byte, 1<<10)
	produce := func(from int) {
		evs := make([]telemetry.Event, 200)
		for i := range evs {
			rand.Read(noise) // the cluster counts compressed bytes
			evs[i] = telemetry.Event{V: 1, Type: "interface_down", Device: "r1", Object: fmt.Sprintf("Ethernet%d", from+i), Message: hex.EncodeToString(noise)}
		}
		sinktest.Produce(t, b, "events", telemetry.SchemaEvent, func(int) string { return "r1" }, evs)
	}
	c := configs.Sink{Type: "kafka", Name: "mirror", Topics: []string{"events"}, Brokers: kf.ListenAddrs(),
		TopicPrefix: "weir.", FlushInterval: configs.Duration(20 * time.Millisecond), BatchSize: 200}
	d, err := kafka.New(c, sinks.Env{})
	if err != nil {
		t.Fatal(err)
	}
	r := sinktest.Start(t, b, c, d)
	mirrored := func(n float64) func() bool {
		return func() bool { return r.Counter("weir_sink_records_total", map[string]string{"sink": "mirror"}) == n }
	}
	produce(0)
	sinktest.Eventually(t, "200 records mirrored", mirrored(200))
	limit := "16384"
	res, err := adm.AlterTopicConfigs(context.Background(), []kadm.AlterConfig{{Name: "max.message.bytes", Value: &limit}}, "weir.events")
	if err == nil {
		_, err = res.On("weir.events", nil)
	}
	if err != nil {
		t.Fatal(err)
	}
	produce(200)
	sinktest.Eventually(t, "400 records mirrored", mirrored(400))
	if n := r.Counter("weir_sink_errors_total", map[string]string{"sink": "mirror", "kind": "rejected"}); n != 0 {
		t.Fatalf("%v batches rejected", n)
	}
}

// clusterWithAdmin is a one-broker kfake cluster and an admin client of
// it, both closed when the test ends.
func clusterWithAdmin(t *testing.T) (*kfake.Cluster, *kadm.Client) {
	t.Helper()
	kf, err := kfake.NewCluster(kfake.NumBrokers(1))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(kf.Close)
	cl, err := kgo.NewClient(kgo.SeedBrokers(kf.ListenAddrs()...))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(cl.Close)
	return kf, kadm.NewClient(cl)
}
