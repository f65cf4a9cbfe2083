package enrich

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/weirnet/weir/broker"
	"github.com/weirnet/weir/broker/embedded"
	"github.com/weirnet/weir/internal/logwindow"
	"github.com/weirnet/weir/telemetry"
)

// readsFailAfter is a log whose reading fetches (not WindowStart's probes)
// of partition fail after the first ok ones.
type readsFailAfter struct {
	*embedded.Broker
	partition int32
	ok        int
}

func (b *readsFailAfter) Fetch(ctx context.Context, topic string, partition int32, offset int64, opts broker.FetchOptions, res *broker.FetchResult) error {
	if partition == b.partition && opts.MaxBytes == logwindow.FetchBytes {
		if b.ok == 0 {
			return errors.New("NOT_LEADER_FOR_PARTITION")
		}
		b.ok--
	}
	return b.Broker.Fetch(ctx, topic, partition, offset, opts, res)
}

// TestFailedWarmupLeavesNoTargetsToReachBackFor: a warm-up of partition 0
// fails after it read core9's failed polls; partition 1, which has no
// target in an outage, then reads back for nothing. The targets a window
// noted were asked for (and forgotten) only by the reach back after a
// window read whole: those of a failed one stayed, and the next
// partition's warm-up read back through its own records for them, up to
// a week or four million records, and logged them not found.
func TestFailedWarmupLeavesNoTargetsToReachBackFor(t *testing.T) {
	base := openBroker(t)
	ctx := context.Background()
	if err := base.CreateTopic(ctx, telemetry.TopicRawSNMP, broker.TopicConfig{Partitions: 2}); err != nil {
		t.Fatal(err)
	}
	inv, _ := ParseInventory([]byte(testInventory))
	end := time.Now().Add(-time.Minute).Truncate(time.Millisecond)
	metric := func(m telemetry.Metric, key string) broker.Record {
		v, err := json.Marshal(&m)
		if err != nil {
			t.Fatal(err)
		}
		return broker.Record{Key: []byte(key), Value: v, Timestamp: m.Time}
	}
	produce := func(partition int32, recs ...broker.Record) {
		if err := base.ProducePartition(ctx, telemetry.TopicRawSNMP, partition, recs); err != nil {
			t.Fatal(err)
		}
	}
	// Partition 0: core9's failed poll, then 9 MB of another device's
	// rows in the window, more than one fetch.
	n0 := int64(1)
	produce(0, metric(telemetry.Metric{V: 1, Measurement: "snmp_status", Device: "core9", Source: "snmp",
		Tags: map[string]string{"agent": "192.0.2.9"}, Fields: map[string]any{"snmp_up": 0}, Time: end.Add(-5 * time.Minute)}, "core9"))
	filler := strings.Repeat("x", 900)
	for range 9 {
		recs := make([]broker.Record, 1000)
		for j := range recs {
			recs[j] = metric(telemetry.Metric{V: 1, Measurement: "snmp_interface", Device: "edge1", Source: "snmp",
				Tags:   map[string]string{"ifIndex": "1", "ifAlias": filler, "agent": "192.0.2.1"},
				Fields: map[string]any{"ifOperStatus": 1}, Time: end.Add(-4 * time.Minute)}, "edge1")
		}
		produce(0, recs...)
		n0 += int64(len(recs))
	}
	// Partition 1: edge2, answering.
	produce(1, metric(telemetry.Metric{V: 1, Measurement: "snmp_status", Device: "edge2", Source: "snmp",
		Tags: map[string]string{"agent": "192.0.2.2"}, Fields: map[string]any{"snmp_up": 1}, Time: end.Add(-time.Minute), Uptime: 100}, "edge2"))
	b := &readsFailAfter{Broker: base, ok: 1}
	w := NewMetricsWorker(b, inv)
	var logged bytes.Buffer
	wm := newWarmer(b, DefaultWarmup, slog.New(slog.NewTextHandler(&logged, nil)))
	wm.lost = w.lostPolls
	wm.warmPartition(ctx, telemetry.TopicRawSNMP, 0, n0, time.Now(), w.warm)
	if !strings.Contains(logged.String(), "warm-up failed") {
		t.Fatalf("partition 0's warm-up did not fail: %s", logged.String())
	}
	logged.Reset()
	wm.warmPartition(ctx, telemetry.TopicRawSNMP, 1, 1, time.Now(), w.warm)
	if strings.Contains(logged.String(), "read back") {
		t.Errorf("partition 1's warm-up read back for partition 0's targets: %s", logged.String())
	}
}
