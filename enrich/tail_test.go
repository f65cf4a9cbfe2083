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
		o.track([]broker.TopicPartition{{Topic: input, Partition: 0}}, nil)
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

// TestTailOfARecreatedInput: an input topic deleted and made again between
// two polls (the partition stays assigned): its records go back to offset
// 0, which makes the worker read its tails again, and the old topic's
// src_offsets, told apart by its topic ID, are not taken for the new
// topic's: none of its records is skipped. Headers written before they
// named the topic (no "#ID") still count.
func TestTailOfARecreatedInput(t *testing.T) {
	b, err := embedded.Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	ctx := context.Background()
	for _, topic := range []string{"raw.syslog", "enriched.syslog"} {
		if err := b.CreateTopic(ctx, topic, broker.TopicConfig{Partitions: 1}); err != nil {
			t.Fatal(err)
		}
	}
	m, logger := NewWorkerMetrics(nil).m, slog.New(slog.DiscardHandler)
	o := newOutputs(b, "raw.syslog", logger, m, false)
	if err := o.align(ctx, "enriched.syslog"); err != nil {
		t.Fatal(err)
	}
	assigned := []broker.TopicPartition{{Topic: "raw.syslog", Partition: 0}}
	polled := func(offsets ...int64) []broker.Record {
		var recs []broker.Record
		for _, off := range offsets {
			recs = append(recs, broker.Record{Partition: 0, Offset: off})
		}
		return recs
	}
	rec := func(src int64) outRecord {
		return outRecord{broker.Record{Key: []byte("edge1"), Value: []byte(fmt.Sprint(src))}, 0, src}
	}
	o.track(assigned, polled(0, 1, 2, 3))
	if _, err := o.publish(ctx, nil, "enriched.syslog", []outRecord{rec(0), rec(1), rec(2), rec(3)}); err != nil {
		t.Fatal(err)
	}
	if err := b.DeleteTopic(ctx, "raw.syslog"); err != nil {
		t.Fatal(err)
	}
	if err := b.CreateTopic(ctx, "raw.syslog", broker.TopicConfig{Partitions: 1}); err != nil {
		t.Fatal(err)
	}
	o.track(assigned, polled(0, 1))
	left, err := o.publish(ctx, nil, "enriched.syslog", []outRecord{rec(0), rec(1)})
	if err != nil || left != 0 {
		t.Fatal(left, err)
	}
	if n := len(readTopic(t, b, "enriched.syslog")); n != 6 {
		t.Fatalf("%d outputs, want 6: the new topic's first records were taken for published", n)
	}
	// A worker taking over reads the new topic's last, 1.
	o2 := newOutputs(b, "raw.syslog", logger, m, false)
	if err := o2.align(ctx, "enriched.syslog"); err != nil {
		t.Fatal(err)
	}
	if tail, err := o2.tail(ctx, "enriched.syslog", 0); err != nil || tail != 1 {
		t.Errorf("tail %d (%v), want 1", tail, err)
	}
	// A header without the ID, as weir wrote them before, is this input's.
	if v, ok := o2.srcOffset([]byte("raw.syslog:7")); !ok || v != 7 {
		t.Errorf("header without an ID: %d %v", v, ok)
	}
	if _, ok := o2.srcOffset([]byte("raw.syslog#00000000:7")); ok {
		t.Error("a header of another raw.syslog taken for this one's")
	}
}
