package kafka_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/weirnet/weir/configs"
	"github.com/weirnet/weir/sinks"
	"github.com/weirnet/weir/sinks/internal/sinktest"
	"github.com/weirnet/weir/sinks/kafka"
	"github.com/weirnet/weir/telemetry"
)

// A record too large for the mirror in a batch of one device's records:
// the cluster took the others, and they must be in the mirror once each,
// in their order, with the large one dead-lettered. The sink used to
// return the rejection for the whole batch, which the sinks halved to find
// the refused record, sending the acknowledged records again: 10 records
// landed 30 times, a device's records out of order.
func TestTooLargeRecordMirrorsTheOthersOnce(t *testing.T) {
	kf, adm := clusterWithAdmin(t)
	if _, err := adm.CreateTopic(context.Background(), 1, 1, nil, "weir.events"); err != nil {
		t.Fatal(err)
	}
	b := sinktest.Broker(t)
	evs := make([]telemetry.Event, 11)
	for i := range evs {
		evs[i] = telemetry.Event{V: 1, Type: "interface_down", Device: "r1", Object: fmt.Sprintf("Ethernet%d", i)}
	}
	evs[5].Message = strings.Repeat("x", 3<<19) // 1.5 MiB: over the sink's 1 MiB
	sinktest.Produce(t, b, "events", telemetry.SchemaEvent, func(int) string { return "r1" }, evs)
	c := configs.Sink{Type: "kafka", Name: "mirror", Topics: []string{"events"}, Brokers: kf.ListenAddrs(),
		TopicPrefix: "weir.", FlushInterval: configs.Duration(20 * time.Millisecond), BatchSize: 100}
	d, err := kafka.New(c, sinks.Env{})
	if err != nil {
		t.Fatal(err)
	}
	r := sinktest.Start(t, b, c, d)
	sinktest.Eventually(t, "the large record dead-lettered", func() bool {
		return len(sinktest.ReadAll(t, b, "dead.letter")) == 1
	})
	sinktest.Eventually(t, "the batch committed", func() bool {
		return r.Counter("weir_sink_records_total", map[string]string{"sink": "mirror"}) == 10
	})
	got := mirrored(t, kf, adm, "weir.events")
	var want []string
	for _, rec := range sinktest.ReadAll(t, b, "events") {
		if len(rec.Value) < 1<<20 {
			want = append(want, string(rec.Value))
		}
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("mirror holds %d records, want the %d small ones once each, in order:\n%s", len(got), len(want), strings.Join(got, "\n"))
	}
}

// A mirror topic that takes records larger than the sink's default 1 MiB
// batches gets them when max_batch_bytes says so: they were dead-lettered,
// though weir's own log takes 8 MiB records and the mirror took them too.
func TestMaxBatchBytesMirrorsLargeRecords(t *testing.T) {
	kf, adm := clusterWithAdmin(t)
	tenMiB := "10485760"
	if _, err := adm.CreateTopic(context.Background(), 1, 1, map[string]*string{"max.message.bytes": &tenMiB}, "weir.events"); err != nil {
		t.Fatal(err)
	}
	b := sinktest.Broker(t)
	evs := make([]telemetry.Event, 5)
	for i := range evs {
		evs[i] = telemetry.Event{V: 1, Type: "interface_down", Device: "r1", Object: fmt.Sprintf("Ethernet%d", i)}
	}
	evs[2].Message = strings.Repeat("x", 2<<20)
	sinktest.Produce(t, b, "events", telemetry.SchemaEvent, func(int) string { return "r1" }, evs)
	c := configs.Sink{Type: "kafka", Name: "mirror", Topics: []string{"events"}, Brokers: kf.ListenAddrs(),
		TopicPrefix: "weir.", FlushInterval: configs.Duration(20 * time.Millisecond), BatchSize: 100,
		MaxBatchBytes: 4 << 20}
	d, err := kafka.New(c, sinks.Env{})
	if err != nil {
		t.Fatal(err)
	}
	r := sinktest.Start(t, b, c, d)
	sinktest.Eventually(t, "the batch committed or a record dead-lettered", func() bool {
		return r.Counter("weir_sink_records_total", map[string]string{"sink": "mirror"}) == 5 ||
			len(sinktest.ReadAll(t, b, "dead.letter")) > 0
	})
	if dl := sinktest.ReadAll(t, b, "dead.letter"); len(dl) != 0 {
		t.Fatalf("%d records dead-lettered, want none: %s", len(dl), dl[0].Headers)
	}
	got := mirrored(t, kf, adm, "weir.events")
	var want []string
	for _, rec := range sinktest.ReadAll(t, b, "events") {
		want = append(want, string(rec.Value))
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("mirror holds %d records, want the %d of weir's topic once each, in order", len(got), len(want))
	}
}

// mirrored reads every record of the mirror's topic (partition 0).
func mirrored(t *testing.T, kf *kfake.Cluster, adm *kadm.Client, topic string) []string {
	t.Helper()
	cl, err := kgo.NewClient(kgo.SeedBrokers(kf.ListenAddrs()...), kgo.ConsumeTopics(topic),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()), kgo.FetchMaxBytes(64<<20), kgo.FetchMaxPartitionBytes(64<<20))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	end, err := adm.ListEndOffsets(context.Background(), topic)
	if err != nil {
		t.Fatal(err)
	}
	o, _ := end.Lookup(topic, 0)
	var got []string
	ctx, cancel := context.WithTimeout(context.Background(), sinktest.Timeout)
	defer cancel()
	for int64(len(got)) < o.Offset {
		fs := cl.PollFetches(ctx)
		if err := fs.Err0(); err != nil {
			t.Fatalf("after %d: %v", len(got), err)
		}
		fs.EachRecord(func(kr *kgo.Record) { got = append(got, string(kr.Value)) })
	}
	return got
}
