package enrich

import (
	"context"
	"log/slog"
	"testing"

	"github.com/weirnet/weir/broker"
	"github.com/weirnet/weir/broker/embedded"
	"github.com/weirnet/weir/telemetry"
)

// takeProduced is a broker whose produces take the records and keep
// nothing, so the allocations counted are publish's own.
type takeProduced struct{ broker.Broker }

func (takeProduced) ProducePartition(_ context.Context, _ string, _ int32, recs []broker.Record) error {
	for i := range recs {
		recs[i].Offset = 0
	}
	return nil
}

// syslogTopics is an embedded log with raw.syslog and enriched.syslog of
// partitions partitions each.
func syslogTopics(t *testing.T, partitions int32) *embedded.Broker {
	b := openBroker(t)
	for _, topic := range []string{telemetry.TopicRawSyslog, telemetry.TopicEnrichedSyslog} {
		if err := b.CreateTopic(context.Background(), topic, broker.TopicConfig{Partitions: partitions}); err != nil {
			t.Fatal(err)
		}
	}
	return b
}

// takingOutputs are a syslog worker's outputs, aligned, over b's topics
// with produces that keep nothing (takeProduced).
func takingOutputs(t *testing.T, b broker.Broker, txn bool) *outputs {
	o := newOutputs(takeProduced{b}, telemetry.TopicRawSyslog, slog.New(slog.DiscardHandler), NewWorkerMetrics(nil).m, txn)
	if err := o.align(context.Background(), telemetry.TopicEnrichedSyslog); err != nil {
		t.Fatal(err)
	}
	return o
}

// TestPublishAllocatesNothingOnceGrown: without a transaction, a publish
// lays out what it produces (the records, their headers and src_offset
// values) in buffers kept from the call before. They were made anew at
// every call, most of what the syslog path allocated (about 330 B a
// record), though nothing holds a record once its produce returned. In a
// transaction they are new each call (its producer may keep them until
// the commit), and a publish's buffers hold no record's values after it.
func TestPublishAllocatesNothingOnceGrown(t *testing.T) {
	ctx := context.Background()
	b := syslogTopics(t, 2)
	for _, txn := range []bool{false, true} {
		o := takingOutputs(t, b, txn)
		outs := make([]outRecord, 200)
		rec := broker.Record{Key: []byte("r1"), Value: []byte(`{"v":1}`), Headers: []broker.Header{{Key: "h", Value: []byte("v")}}}
		src := int64(0)
		publish := func() {
			for i := range outs {
				outs[i] = outRecord{rec: rec, part: int32(i % 2), src: src}
				src++
			}
			if _, _, err := o.publish(ctx, nil, telemetry.TopicEnrichedSyslog, outs); err != nil {
				t.Fatal(err)
			}
		}
		publish()
		allocs := testing.AllocsPerRun(20, publish)
		if !txn && allocs != 0 {
			t.Errorf("without a transaction: %v allocations a publish of %d records once grown, want 0", allocs, len(outs))
		}
		if txn && allocs < 3 {
			t.Errorf("in a transaction: %v allocations a publish, want new buffers (3)", allocs)
		}
		for i, r := range o.produced[:cap(o.produced)] {
			if r.Value != nil || r.Headers != nil {
				t.Fatalf("txn %v: record %d of the kept buffer still holds %q", txn, i, r.Value)
			}
		}
		for i, h := range o.headers[:cap(o.headers)] {
			if h.Value != nil {
				t.Fatalf("txn %v: header %d of the kept buffer still holds %q", txn, i, h.Value)
			}
		}
	}
}

// TestPublishKeepsNoBurstBuffers: a publish of more than maxKeptProduced
// outputs does not keep its buffers for the next call, also when few of
// them are produced (those an earlier attempt or owner published are
// skipped: a restart reads its uncommitted records again). The header and
// src_offset buffers are sized for every output given, not those produced,
// and were kept at a burst's size for good.
func TestPublishKeepsNoBurstBuffers(t *testing.T) {
	ctx := context.Background()
	o := takingOutputs(t, syslogTopics(t, 1), false)
	const n = 4 * maxKeptProduced
	outs := make([]outRecord, n)
	rec := broker.Record{Key: []byte("r1"), Value: []byte(`{"v":1}`), Headers: logHeaders}
	for i := range outs {
		outs[i] = outRecord{rec: rec, part: 0, src: int64(i)}
	}
	for attempt := range 2 { // the second: all published already
		if _, _, err := o.publish(ctx, nil, telemetry.TopicEnrichedSyslog, outs); err != nil {
			t.Fatal(err)
		}
		if cap(o.produced) > maxKeptProduced || cap(o.headers) > 3*maxKeptProduced || cap(o.srcVals) > maxKeptProduced*o.srcValSize() {
			t.Errorf("attempt %d: after a publish of %d outputs, kept buffers of %d records, %d headers, %d bytes of src_offset values",
				attempt, n, cap(o.produced), cap(o.headers), cap(o.srcVals))
		}
	}
}
