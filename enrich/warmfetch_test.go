package enrich

import (
	"context"
	"log/slog"
	"slices"
	"testing"
	"time"

	"github.com/weirnet/weir/broker"
	"github.com/weirnet/weir/broker/embedded"
	"github.com/weirnet/weir/collectors/syslog"
	"github.com/weirnet/weir/telemetry"
)

// warmPartitionRecords is a raw.syslog partition of n records of the
// corpus mix from 1,000 devices, a millisecond apart and ending now.
func warmPartitionRecords(tb testing.TB, n int) (*embedded.Broker, time.Time) {
	var p syslog.Parser
	var corpus []broker.Record
	for _, c := range loadCorpus(tb) {
		corpus = append(corpus, receivedRecord(&p, c.Raw))
	}
	b, err := embedded.Open(tb.TempDir())
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { b.Close() })
	end := time.Now()
	batch := make([]broker.Record, 0, 4096)
	for i := range n {
		r := corpus[i%len(corpus)]
		r.Timestamp = end.Add(-time.Duration(n-i) * time.Millisecond)
		batch = append(batch, r)
		if len(batch) == cap(batch) || i == n-1 {
			if err := b.ProducePartition(context.Background(), telemetry.TopicRawSyslog, 0, batch); err != nil {
				tb.Fatal(err)
			}
			batch = batch[:0]
		}
	}
	return b, end
}

// TestWarmupFetchedMatchesWarmSyslog: a warm-up of a fetch at a time,
// decoded ahead (queueWarm, warmFetched), leaves the detector the state
// the record-at-a-time warm-up (warmSyslog) leaves: the same changes of
// the same objects.
func TestWarmupFetchedMatchesWarmSyslog(t *testing.T) {
	b, end := warmPartitionRecords(t, 20_000)
	inv, _ := ParseInventory([]byte(testInventory))
	warm := func(batched bool) *Worker {
		w := NewWorker(b, inv, NewClassifier())
		wm := newWarmer(b, time.Hour, slog.New(slog.DiscardHandler))
		feed := w.warmSyslog
		if batched {
			wm.fetched, feed = w.warmFetched, w.queueWarm
		}
		wm.warmPartition(context.Background(), telemetry.TopicRawSyslog, 0, 20_000, end, feed)
		return w
	}
	one, batched := warm(false), warm(true)
	if len(one.det.changes) == 0 {
		t.Fatal("no change reached the detector")
	}
	if len(one.det.changes) != len(batched.det.changes) || len(one.det.states) != len(batched.det.states) {
		t.Fatalf("record at a time: %d objects' changes, %d states; a fetch at a time: %d, %d",
			len(one.det.changes), len(one.det.states), len(batched.det.changes), len(batched.det.states))
	}
	for k, c := range one.det.changes {
		if c2, ok := batched.det.changes[k]; !ok || !slices.EqualFunc(c.times, c2.times, time.Time.Equal) {
			t.Errorf("object %v: changes %v, a fetch at a time %v", k, c, c2)
		}
	}
	for k, st := range one.det.states {
		if st2, ok := batched.det.states[k]; !ok || st2.typ != st.typ || !st2.at.Equal(st.at) || st2.n != st.n {
			t.Errorf("object %v: state %+v, a fetch at a time %+v", k, st, st2)
		}
	}
	if len(batched.warmBatch) != 0 || cap(batched.warmBatch) > warmChunk {
		t.Errorf("after the warm-up the worker holds %d records in an array of %d", len(batched.warmBatch), cap(batched.warmBatch))
	}
	for _, r := range batched.warmBatch[:cap(batched.warmBatch)] {
		if r.Value != nil {
			t.Fatal("the batch's array still points into a fetch's buffer")
		}
	}
}

// BenchmarkWarmupPartition is a syslog warm-up's time per record of a
// partition read back: a record at a time (warmSyslog), and a fetch at a
// time, decoded ahead (warmFetched), alternated in one run.
func BenchmarkWarmupPartition(b *testing.B) {
	const n = 200_000
	br, end := warmPartitionRecords(b, n)
	inv, _ := ParseInventory([]byte(testInventory))
	for _, batched := range []bool{false, true} {
		name := "record"
		if batched {
			name = "fetch"
		}
		b.Run(name, func(b *testing.B) {
			for range b.N {
				w := NewWorker(br, inv, NewClassifier())
				wm := newWarmer(br, time.Hour, slog.New(slog.DiscardHandler))
				feed := w.warmSyslog
				if batched {
					wm.fetched, feed = w.warmFetched, w.queueWarm
				}
				wm.warmPartition(context.Background(), telemetry.TopicRawSyslog, 0, n, end, feed)
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/n, "ns/record")
		})
	}
}
