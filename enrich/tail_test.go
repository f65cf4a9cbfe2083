package enrich

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/weirnet/weir/broker"
	"github.com/weirnet/weir/broker/embedded"
)

// TestTailPastOtherInputs: raw.snmp and raw.gnmi both write
// enriched.metrics; thousands of gNMI records after SNMP's last do not
// hide it from a restarted SNMP worker, which would publish its
// uncommitted batch a second time.
func TestTailPastOtherInputs(t *testing.T) {
	b := tailLog(t, "raw.snmp", "raw.gnmi", "raw.traps", "enriched.metrics")
	ctx := context.Background()
	newOut := func(input string) *outputs {
		o := alignedOutputs(t, b, input, "enriched.metrics")
		o.track(ctx, []broker.TopicPartition{{Topic: input, Partition: 0}}, nil)
		return o
	}
	rec := outFrom
	if _, _, err := newOut("raw.snmp").publish(ctx, nil, "enriched.metrics", []outRecord{rec(41), rec(42)}); err != nil {
		t.Fatal(err)
	}
	var g []outRecord
	for i := range 3 * tailWindow {
		g = append(g, rec(int64(i)))
	}
	if _, _, err := newOut("raw.gnmi").publish(ctx, nil, "enriched.metrics", g); err != nil {
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
	b := tailLog(t, "raw.syslog", "enriched.syslog")
	ctx := context.Background()
	o := alignedOutputs(t, b, "raw.syslog", "enriched.syslog")
	assigned := []broker.TopicPartition{{Topic: "raw.syslog", Partition: 0}}
	polled, rec := polledAt, outFrom
	o.track(ctx, assigned, polled(0, 1, 2, 3))
	if _, _, err := o.publish(ctx, nil, "enriched.syslog", []outRecord{rec(0), rec(1), rec(2), rec(3)}); err != nil {
		t.Fatal(err)
	}
	recreate(t, b, "raw.syslog")
	o.track(ctx, assigned, polled(0, 1))
	left, _, err := o.publish(ctx, nil, "enriched.syslog", []outRecord{rec(0), rec(1)})
	if err != nil || left != 0 {
		t.Fatal(left, err)
	}
	if n := len(readTopic(t, b, "enriched.syslog")); n != 6 {
		t.Fatalf("%d outputs, want 6: the new topic's first records were taken for published", n)
	}
	// A worker taking over reads the new topic's last, 1.
	o2 := alignedOutputs(t, b, "raw.syslog", "enriched.syslog")
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

// TestTailOfARecreatedInputAfterAnUpgrade: outputs written before
// src_offset named the input topic ("raw.syslog:N"), then some with its ID,
// then the input deleted and made again. Reading back for the new topic's
// tail, the scan passed the old topic's headers with its ID and took the
// older headers without one for this topic's: the new topic's first N+1
// records were skipped as published, never enriched (weir upgraded, then
// weir topics delete raw.syslog).
func TestTailOfARecreatedInputAfterAnUpgrade(t *testing.T) {
	b := tailLog(t, "raw.syslog", "enriched.syslog")
	ctx := context.Background()
	// As the version before wrote them.
	var before []broker.Record
	for i := range 100 {
		before = append(before, broker.Record{Key: []byte("edge1"), Value: []byte(fmt.Sprint(i)),
			Headers: []broker.Header{{Key: headerSrcOffset, Value: fmt.Appendf(nil, "raw.syslog:%d", i)}}})
	}
	if err := b.ProducePartition(ctx, "enriched.syslog", 0, before); err != nil {
		t.Fatal(err)
	}
	o := alignedOutputs(t, b, "raw.syslog", "enriched.syslog")
	assigned := []broker.TopicPartition{{Topic: "raw.syslog", Partition: 0}}
	rec := outFrom
	o.track(ctx, assigned, polledAt(100, 101))
	if _, _, err := o.publish(ctx, nil, "enriched.syslog", []outRecord{rec(100), rec(101)}); err != nil {
		t.Fatal(err)
	}
	recreate(t, b, "raw.syslog")
	o.track(ctx, assigned, polledAt(0, 1))
	if _, _, err := o.publish(ctx, nil, "enriched.syslog", []outRecord{rec(0), rec(1)}); err != nil {
		t.Fatal(err)
	}
	if n := len(readTopic(t, b, "enriched.syslog")); n != 104 {
		t.Fatalf("%d outputs, want 104: the new topic's records were taken for published by headers older than the old topic's", n)
	}
	// A header without the ID still counts where no other topic's came
	// after it: weir upgraded, its input not made again.
	o2 := alignedOutputs(t, b, "raw.syslog", "enriched.syslog")
	if err := b.CreateTopic(ctx, "enriched.other", broker.TopicConfig{Partitions: 1}); err != nil {
		t.Fatal(err)
	}
	if err := b.ProducePartition(ctx, "enriched.other", 0, before); err != nil {
		t.Fatal(err)
	}
	o2.tails["enriched.other"], o2.earlier["enriched.other"] = map[int32]int64{}, map[int32]int64{}
	if tail, err := o2.tail(ctx, "enriched.other", 0); err != nil || tail != 99 {
		t.Errorf("headers without an ID only: tail %d (%v), want 99", tail, err)
	}
}

// TestRecordsPolledBeforeTheInputWasMadeAgain: records polled from the
// input topic, which is then deleted and made again before they are
// published. The first output to a partition whose tail was not read yet
// (an events partition that had no event) made tail() take the new topic's
// ID, and the old topic's records published after it carried it: the new
// topic's first records, below their offsets, were then skipped as
// published.
func TestRecordsPolledBeforeTheInputWasMadeAgain(t *testing.T) {
	b := tailLog(t, "raw.syslog", "enriched.syslog", "events")
	ctx := context.Background()
	o := alignedOutputs(t, b, "raw.syslog", "enriched.syslog", "events")
	assigned := []broker.TopicPartition{{Topic: "raw.syslog", Partition: 0}}
	polled, rec := polledAt, outFrom
	o.track(ctx, assigned, polled(0, 1, 2, 3))
	if _, _, err := o.publish(ctx, nil, "enriched.syslog", []outRecord{rec(0), rec(1), rec(2), rec(3)}); err != nil {
		t.Fatal(err)
	}
	// 4 to 9 polled; the topic made again before they are published.
	o.track(ctx, assigned, polled(4, 5, 6, 7, 8, 9))
	recreate(t, b, "raw.syslog")
	if _, _, err := o.publish(ctx, nil, "events", []outRecord{rec(4)}); err != nil {
		t.Fatal(err)
	}
	if _, _, err := o.publish(ctx, nil, "enriched.syslog", []outRecord{rec(4), rec(5), rec(6), rec(7), rec(8), rec(9)}); err != nil {
		t.Fatal(err)
	}
	// The new topic's first records.
	o.track(ctx, assigned, polled(0, 1, 2))
	if _, _, err := o.publish(ctx, nil, "enriched.syslog", []outRecord{rec(0), rec(1), rec(2)}); err != nil {
		t.Fatal(err)
	}
	if n := len(readTopic(t, b, "enriched.syslog")); n != 13 {
		t.Fatalf("%d outputs, want 13: the new topic's first records were taken for published", n)
	}
}

// tailLog is an embedded log with topics of one partition each, for the
// tail tests.
func tailLog(t *testing.T, topics ...string) *embedded.Broker {
	return partitionedLog(t, 1, topics...)
}

// partitionedLog is an embedded log with topics of partitions each.
func partitionedLog(t *testing.T, partitions int32, topics ...string) *embedded.Broker {
	t.Helper()
	b, err := embedded.Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { b.Close() })
	for _, topic := range topics {
		if err := b.CreateTopic(context.Background(), topic, broker.TopicConfig{Partitions: partitions}); err != nil {
			t.Fatal(err)
		}
	}
	return b
}

// alignedOutputs is a worker's outputs of input to the topics given, on
// the embedded log (no transactions).
func alignedOutputs(t *testing.T, b broker.Broker, input string, topics ...string) *outputs {
	t.Helper()
	m, logger := NewWorkerMetrics(nil).m, slog.New(slog.DiscardHandler)
	o := newOutputs(b, input, logger, m, false)
	if err := o.align(context.Background(), topics...); err != nil {
		t.Fatal(err)
	}
	return o
}

// polledAt is a poll's records of partition 0 at offsets.
func polledAt(offsets ...int64) []broker.Record {
	var recs []broker.Record
	for _, off := range offsets {
		recs = append(recs, broker.Record{Partition: 0, Offset: off})
	}
	return recs
}

// outFrom is an output of input partition 0's record at offset src.
func outFrom(src int64) outRecord {
	return outRecord{broker.Record{Key: []byte("edge1"), Value: []byte(fmt.Sprint(src))}, 0, src}
}

// outOf is an output of input partition part's record at offset src,
// its value "part/src".
func outOf(part int32, src int64) outRecord {
	return outRecord{broker.Record{Key: []byte("edge1"), Value: fmt.Appendf(nil, "%d/%d", part, src)}, part, src}
}

// recreate deletes topic and makes it again.
func recreate(t *testing.T, b *embedded.Broker, topic string) {
	t.Helper()
	if err := b.DeleteTopic(context.Background(), topic); err != nil {
		t.Fatal(err)
	}
	if err := b.CreateTopic(context.Background(), topic, broker.TopicConfig{Partitions: 1}); err != nil {
		t.Fatal(err)
	}
}

// TestPublishLaysOutByPartition: one publish call of outputs from three
// input partitions, interleaved, with a record no input caused and one too
// large for the log: each output partition gets its own records in input
// order, the keyed one lands by its key, and the too-large record's input
// offset still moves its partition's tail (it is not published again).
func TestPublishLaysOutByPartition(t *testing.T) {
	b := partitionedLog(t, 3, "raw.syslog", "enriched.syslog")
	ctx := context.Background()
	o := alignedOutputs(t, b, "raw.syslog", "enriched.syslog")
	var assigned []broker.TopicPartition
	for p := range int32(3) {
		assigned = append(assigned, broker.TopicPartition{Topic: "raw.syslog", Partition: p})
	}
	o.track(ctx, assigned, nil)
	huge := outOf(2, 8)
	huge.rec.Value = make([]byte, embedded.DefaultMaxMessageBytes+1)
	keyed := outRecord{broker.Record{Key: []byte("core9"), Value: []byte("keyed")}, -1, 0}
	outs := []outRecord{outOf(0, 10), outOf(1, 5), outOf(0, 11), outOf(2, 7), keyed, outOf(1, 6), huge}
	left, had, err := o.publish(ctx, nil, "enriched.syslog", outs)
	if err != nil || left != 1 || had != 0 {
		t.Fatalf("publish: left %d, had %d, %v; want the huge one left", left, had, err)
	}
	got := map[int32][]string{}
	for _, r := range readTopic(t, b, "enriched.syslog") {
		got[r.Partition] = append(got[r.Partition], string(r.Value))
	}
	want := map[int32][]string{0: {"0/10", "0/11"}, 1: {"1/5", "1/6"}, 2: {"2/7"}}
	kp := broker.PartitionForKey([]byte("core9"), 3)
	want[kp] = append(want[kp], "keyed")
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("partitions hold %v, want %v", got, want)
	}
	for part, src := range map[int32]int64{0: 11, 1: 6, 2: 8} {
		if tail := o.tails["enriched.syslog"][part]; tail != src {
			t.Errorf("partition %d: tail %d, want %d", part, tail, src)
		}
	}
	// Again, as a retry would: nothing an input caused is published twice.
	if _, _, err := o.publish(ctx, nil, "enriched.syslog", outs[:4]); err != nil {
		t.Fatal(err)
	}
	if n := len(readTopic(t, b, "enriched.syslog")); n != 6 {
		t.Errorf("%d records after publishing the same outputs again, want 6", n)
	}
}

// goneFrom records the output partitions produced to, in order, and
// refuses one (an output topic made again with fewer partitions).
type goneFrom struct {
	*embedded.Broker
	parts []int32
	gone  int32 // -1: none
}

func (g *goneFrom) ProducePartition(ctx context.Context, topic string, p int32, recs []broker.Record) error {
	g.parts = append(g.parts, p)
	if p == g.gone {
		return fmt.Errorf("%w: %s/%d", broker.ErrUnknownPartition, topic, p)
	}
	return g.Broker.ProducePartition(ctx, topic, p, recs)
}

// TestPublishPartitionOrderWithTooLarge: output partitions are produced in
// the order their first record kept comes, as before publish laid them out
// in one array; a record too large for the log does not put its partition
// first. When a later partition's produce fails, the earlier ones are in
// the log and their tails moved, so the retry publishes only the rest.
func TestPublishPartitionOrderWithTooLarge(t *testing.T) {
	eb := partitionedLog(t, 2, "raw.syslog", "enriched.syslog")
	ctx := context.Background()
	b := &goneFrom{Broker: eb, gone: 1}
	o := alignedOutputs(t, b, "raw.syslog", "enriched.syslog")
	o.track(ctx, []broker.TopicPartition{{Topic: "raw.syslog", Partition: 0}, {Topic: "raw.syslog", Partition: 1}}, nil)
	huge := outOf(1, 4)
	huge.rec.Value = make([]byte, embedded.DefaultMaxMessageBytes+1)
	outs := []outRecord{huge, outOf(0, 10), outOf(1, 5)}
	left, had, err := o.publish(ctx, nil, "enriched.syslog", outs)
	if !errors.Is(err, broker.ErrUnknownPartition) || left != 1 || had != 0 {
		t.Fatalf("publish: left %d, had %d, %v; want the huge one left and partition 1's error", left, had, err)
	}
	if fmt.Sprint(b.parts) != "[0 1]" {
		t.Errorf("produced to partitions %v, want [0 1]: in the order of their first record kept", b.parts)
	}
	if tail := o.tails["enriched.syslog"][0]; tail != 10 {
		t.Errorf("partition 0: tail %d, want 10", tail)
	}
	if tail := o.tails["enriched.syslog"][1]; tail != -1 {
		t.Errorf("partition 1: tail %d, want -1 (not produced)", tail)
	}
	b.gone, b.parts = -1, nil
	if _, _, err := o.publish(ctx, nil, "enriched.syslog", outs); err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(b.parts) != "[1]" {
		t.Errorf("the retry produced to partitions %v, want [1]", b.parts)
	}
	if n := len(readTopic(t, eb, "enriched.syslog")); n != 2 {
		t.Errorf("%d records, want 2", n)
	}
}

// TestTakeoverSkipsOnlyWhatIsThere: a worker taking over a partition
// skips the records whose outputs are there, not every record up to the
// last one there. The first worker published the events of records 0, 2,
// 4 and 6 and committed up to 3 (5 was left out, a repeat). The second,
// from 3, published 3 judged again (a repeat of a change whose event was
// never published, it is a change now) after thousands of another input's
// outputs, skipped 4 and 6, published 7 and committed up to 5. The third,
// from 5, publishes 5 and 8: 6 and 7 are there, though 3, an output of a
// record before its start, comes after 6 in the log.
func TestTakeoverSkipsOnlyWhatIsThere(t *testing.T) {
	b := tailLog(t, "raw.traps", "raw.syslog", "events")
	ctx := context.Background()
	t0 := time.Now().Add(-time.Hour)
	var in []broker.Record
	for i := range 10 {
		in = append(in, broker.Record{Key: []byte("edge1"), Value: []byte("x"), Timestamp: t0.Add(time.Duration(i) * time.Second)})
	}
	if err := b.Produce(ctx, "raw.traps", in); err != nil {
		t.Fatal(err)
	}
	assigned := []broker.TopicPartition{{Topic: "raw.traps", Partition: 0}}
	stamped := func(src int64) outRecord {
		o := outFrom(src)
		o.rec.Timestamp = t0.Add(time.Duration(src) * time.Second)
		return o
	}
	publish := func(o *outputs, outs ...outRecord) {
		t.Helper()
		if _, _, err := o.publish(ctx, nil, "events", outs); err != nil {
			t.Fatal(err)
		}
	}
	first := alignedOutputs(t, b, "raw.traps", "events")
	first.track(ctx, assigned, polledAt(0, 1, 2, 3, 4, 5, 6))
	publish(first, stamped(0), stamped(2), stamped(4), stamped(6))

	logs := alignedOutputs(t, b, "raw.syslog", "events")
	logs.track(ctx, []broker.TopicPartition{{Topic: "raw.syslog", Partition: 0}}, nil)
	var others []outRecord
	for i := range tailWindow + 100 {
		others = append(others, outFrom(int64(i)))
	}
	publish(logs, others...)

	second := alignedOutputs(t, b, "raw.traps", "events")
	second.track(ctx, assigned, polledAt(3, 4, 5, 6, 7))
	publish(second, outFrom(3), outFrom(4), outFrom(6), outFrom(7))

	third := alignedOutputs(t, b, "raw.traps", "events")
	third.track(ctx, assigned, polledAt(5, 6, 7, 8))
	if past, _ := third.publishedPast(ctx, "events", 0, 5); past != 8 {
		t.Errorf("published past %d, want 8", past)
	}
	publish(third, outFrom(5), outFrom(6), outFrom(7), outFrom(8))
	var got []string
	for _, r := range readTopic(t, b, "events") {
		if v, kind := third.srcHeader(srcOffsetOf(r)); kind == srcThis {
			got = append(got, fmt.Sprint(v))
		}
	}
	if want := "0 2 4 6 3 7 5 8"; strings.Join(got, " ") != want {
		t.Errorf("raw.traps' outputs in the log: %s, want %s", strings.Join(got, " "), want)
	}
}

// srcOffsetOf is r's src_offset header.
func srcOffsetOf(r broker.Record) []byte {
	for _, h := range r.Headers {
		if h.Key == headerSrcOffset {
			return h.Value
		}
	}
	return nil
}

// TestTakeoverAfterAnUpgradeSkipsWhatIsThere: the version before wrote
// src_offset without the input topic's ID ("raw.syslog:N"), published the
// outputs of records 0 to 9 and stopped (killed) with 5 committed. The
// upgraded worker, from 5, skips 5 to 9 as before the exact skips: they
// are there, if under headers without the ID.
func TestTakeoverAfterAnUpgradeSkipsWhatIsThere(t *testing.T) {
	b := tailLog(t, "raw.syslog", "enriched.syslog")
	ctx := context.Background()
	t0 := time.Now().Add(-time.Hour)
	var in, before []broker.Record
	for i := range 13 {
		at := t0.Add(time.Duration(i) * time.Second)
		in = append(in, broker.Record{Key: []byte("edge1"), Value: []byte("x"), Timestamp: at})
		if i < 10 {
			before = append(before, broker.Record{Key: []byte("edge1"), Value: []byte(fmt.Sprint(i)), Timestamp: at,
				Headers: []broker.Header{{Key: headerSrcOffset, Value: fmt.Appendf(nil, "raw.syslog:%d", i)}}})
		}
	}
	if err := b.Produce(ctx, "raw.syslog", in); err != nil {
		t.Fatal(err)
	}
	if err := b.ProducePartition(ctx, "enriched.syslog", 0, before); err != nil {
		t.Fatal(err)
	}
	o := alignedOutputs(t, b, "raw.syslog", "enriched.syslog")
	o.track(ctx, []broker.TopicPartition{{Topic: "raw.syslog", Partition: 0}}, polledAt(5, 6, 7, 8, 9, 10, 11, 12))
	var outs []outRecord
	for i := range int64(8) {
		outs = append(outs, outFrom(5+i))
	}
	if _, _, err := o.publish(ctx, nil, "enriched.syslog", outs); err != nil {
		t.Fatal(err)
	}
	if n := len(readTopic(t, b, "enriched.syslog")); n != 13 {
		t.Errorf("%d outputs, want 13: the outputs of 5 to 9 there were published again", n)
	}
}
