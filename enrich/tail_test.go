package enrich

import (
	"context"
	"fmt"
	"log/slog"
	"testing"

	"github.com/weirnet/weir/broker"
	"github.com/weirnet/weir/broker/embedded"
)

// TestTailPastOtherInputs: raw.snmp and raw.gnmi both write
// enriched.metrics; thousands of gNMI records after SNMP's last do not
// hide it from a restarted SNMP worker, which would publish its
// uncommitted batch a second time.
func TestTailPastOtherInputs(t *testing.T) {
	b, err := embedded.Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	ctx := context.Background()
	for _, topic := range []string{"raw.snmp", "raw.gnmi", "raw.traps", "enriched.metrics"} {
		if err := b.CreateTopic(ctx, topic, broker.TopicConfig{Partitions: 1}); err != nil {
			t.Fatal(err)
		}
	}
	m, logger := NewWorkerMetrics(nil).m, slog.New(slog.DiscardHandler)
	newOut := func(input string) *outputs {
		o := newOutputs(b, input, logger, m, false)
		if err := o.align(ctx, "enriched.metrics"); err != nil {
			t.Fatal(err)
		}
		o.track([]broker.TopicPartition{{Topic: input, Partition: 0}})
		return o
	}
	rec := func(src int64) outRecord {
		return outRecord{broker.Record{Key: []byte("edge1"), Value: []byte(fmt.Sprint(src))}, 0, src}
	}
	if _, err := newOut("raw.snmp").publish(ctx, nil, "enriched.metrics", []outRecord{rec(41), rec(42)}); err != nil {
		t.Fatal(err)
	}
	var g []outRecord
	for i := range 3 * tailWindow {
		g = append(g, rec(int64(i)))
	}
	if _, err := newOut("raw.gnmi").publish(ctx, nil, "enriched.metrics", g); err != nil {
		t.Fatal(err)
	}
	if tail, err := newOut("raw.snmp").tail(ctx, "enriched.metrics", 0); err != nil || tail != 42 {
		t.Errorf("tail %d (%v), want 42", tail, err)
	}
	if tail, err := newOut("raw.traps").tail(ctx, "enriched.metrics", 0); err != nil || tail != -1 {
		t.Errorf("an input that never wrote there: tail %d (%v), want -1", tail, err)
	}
}
