package embedded

import (
	"bytes"
	"errors"
	"fmt"
	"sync"
	"testing"

	"github.com/weirnet/weir/broker"
)

// staleRecords are records whose Offset a previous call (or the zero
// value) left at something other than -1, as a caller's reused or new
// records have.
func staleRecords(n int) []broker.Record {
	recs := makeRecords(n, 0)
	for i := range recs {
		if i%4 == 1 {
			recs[i].Key = nil
		}
		recs[i].Offset = int64(i % 2) // 0 for new records, or stale
	}
	return recs
}

// TestProduceFailureBeforeAppendMarksEveryRecord: a call that fails
// before appending anything (a missing topic or partition, a closed log,
// a record too large anywhere in the call) leaves every record at Offset
// -1, so a caller that retries the records without an offset
// (broker.Broker.Produce) retries them all rather than drop them as
// appended.
func TestProduceFailureBeforeAppendMarksEveryRecord(t *testing.T) {
	b := openTest(t, t.TempDir(), WithAutoCreateTopics(false), WithMaxMessageBytes(4096))
	if err := b.CreateTopic(ctx, "t", broker.TopicConfig{Partitions: 3}); err != nil {
		t.Fatal(err)
	}
	closed := openTest(t, t.TempDir())
	closed.Close()
	tooLarge := func() []broker.Record {
		recs := staleRecords(20)
		recs[13].Value = bytes.Repeat([]byte("x"), 5000)
		return recs
	}
	for _, c := range []struct {
		name string
		recs []broker.Record
		call func(recs []broker.Record) error
		want error
	}{
		{"Produce, no such topic", staleRecords(20), func(r []broker.Record) error { return b.Produce(ctx, "missing", r) }, broker.ErrUnknownTopic},
		{"ProducePartition, no such topic", staleRecords(20), func(r []broker.Record) error { return b.ProducePartition(ctx, "missing", 0, r) }, broker.ErrUnknownTopic},
		{"ProducePartition, no such partition", staleRecords(20), func(r []broker.Record) error { return b.ProducePartition(ctx, "t", 3, r) }, broker.ErrUnknownPartition},
		{"Produce, closed", staleRecords(20), func(r []broker.Record) error { return closed.Produce(ctx, "t", r) }, broker.ErrClosed},
		{"ProducePartition, closed", staleRecords(20), func(r []broker.Record) error { return closed.ProducePartition(ctx, "t", 0, r) }, broker.ErrClosed},
		{"Produce, a record too large", tooLarge(), func(r []broker.Record) error { return b.Produce(ctx, "t", r) }, broker.ErrRecordTooLarge},
		{"ProducePartition, a record too large", tooLarge(), func(r []broker.Record) error { return b.ProducePartition(ctx, "t", 1, r) }, broker.ErrRecordTooLarge},
	} {
		err := c.call(c.recs)
		if !errors.Is(err, c.want) {
			t.Fatalf("%s: %v, want %v", c.name, err, c.want)
		}
		for i, r := range c.recs {
			if r.Offset != -1 {
				t.Fatalf("%s: record %d of a call that appended nothing has offset %d, want -1", c.name, i, r.Offset)
			}
		}
	}
	for p := int32(0); p < 3; p++ {
		if got := readAll(t, b, "t", p); len(got) != 0 {
			t.Fatalf("partition %d holds %d records after calls that failed", p, len(got))
		}
	}
}

// TestProduceSplitsLargeCalls: a call holding more than maxBatchBytes for
// a partition is appended as several batches, each record reported where
// it is read back, in call order within its partition.
func TestProduceSplitsLargeCalls(t *testing.T) {
	b := openTest(t, t.TempDir(), WithTopicDefaults(broker.TopicConfig{Partitions: 3}))
	recs := make([]broker.Record, 80)
	for i := range recs {
		// Sizes from 1 byte to 300 KiB, so a batch's bound depends on
		// which records it holds.
		recs[i].Value = fmt.Appendf(nil, "%d %s", i, bytes.Repeat([]byte("v"), (i*37%7)*50<<10))
		if i%5 != 4 {
			recs[i].Key = fmt.Appendf(nil, "k%d", i%3)
		}
	}
	if err := b.Produce(ctx, "t", recs); err != nil {
		t.Fatal(err)
	}
	checkReported(t, b, "t", 3, recs)
	batches := 0
	for p := int32(0); p < 3; p++ {
		held := int64(len(readAll(t, b, "t", p)))
		for off := int64(0); off < held; {
			var res broker.FetchResult
			// A fetch returns at least one whole batch: the one at off.
			if err := b.Fetch(ctx, "t", p, off, broker.FetchOptions{MaxBytes: 1}, &res); err != nil {
				t.Fatal(err)
			}
			size := 0
			for _, r := range res.Records {
				size += len(r.Value)
			}
			if size > maxBatchBytes {
				t.Fatalf("partition %d: a batch of %d records holding %d bytes of values", p, len(res.Records), size)
			}
			off = res.Records[len(res.Records)-1].Offset + 1
			batches++
		}
	}
	if batches <= 3 {
		t.Fatalf("%d batches: the call was not split", batches)
	}

	// ProducePartition splits alike.
	more := recs[:30:30]
	if err := b.ProducePartition(ctx, "t", 2, more); err != nil {
		t.Fatal(err)
	}
	got := readAll(t, b, "t", 2)
	for i, r := range more {
		if r.Partition != 2 || r.Offset != int64(len(got)-len(more)+i) || !bytes.Equal(got[r.Offset].Value, r.Value) {
			t.Fatalf("ProducePartition record %d reported at %d/%d", i, r.Partition, r.Offset)
		}
	}
}

// checkReported fails unless every record of recs, produced in one call
// to topic, is read back where reported, in call order within each
// partition, keyed ones in their key's partition.
func checkReported(t *testing.T, b *Broker, topic string, partitions int32, recs []broker.Record) {
	t.Helper()
	logs := map[int32][]broker.Record{}
	last := map[int32]int64{}
	for i, r := range recs {
		if r.Key != nil && r.Partition != broker.PartitionForKey(r.Key, partitions) {
			t.Fatalf("%s: record %d reported in partition %d, its key's is %d", topic, i, r.Partition, broker.PartitionForKey(r.Key, partitions))
		}
		if l, ok := last[r.Partition]; ok && r.Offset <= l {
			t.Fatalf("%s: record %d reported at %d/%d, after one at %d", topic, i, r.Partition, r.Offset, l)
		}
		last[r.Partition] = r.Offset
		if _, ok := logs[r.Partition]; !ok {
			logs[r.Partition] = readAll(t, b, topic, r.Partition)
		}
		l := logs[r.Partition]
		if r.Offset < 0 || r.Offset >= int64(len(l)) || !bytes.Equal(l[r.Offset].Value, r.Value) {
			t.Fatalf("%s: record %d reported at %d/%d, not read back there", topic, i, r.Partition, r.Offset)
		}
	}
}

// TestProduceScratchAcrossCalls: the pooled scratch of Produce and
// ProducePartition serves calls of any size on topics of any partition
// count (more than 64 too), interleaved from several goroutines.
func TestProduceScratchAcrossCalls(t *testing.T) {
	b := openTest(t, t.TempDir())
	counts := []int32{1, 2, 7, 70}
	for _, n := range counts {
		if err := b.CreateTopic(ctx, fmt.Sprint("t", n), broker.TopicConfig{Partitions: n}); err != nil {
			t.Fatal(err)
		}
	}
	var wg sync.WaitGroup
	errs := make(chan error, 4)
	for g := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 40 {
				n := counts[(g+i)%len(counts)]
				topic := fmt.Sprint("t", n)
				recs := makeRecords(1+(g*31+i*17)%250, g*10000+i*1000)
				for j := range recs {
					if j%3 == 0 {
						recs[j].Key = nil
					}
				}
				var err error
				if i%5 == 4 {
					err = b.ProducePartition(ctx, topic, int32(i)%n, recs)
				} else {
					err = b.Produce(ctx, topic, recs)
				}
				if err != nil {
					errs <- err
					return
				}
				for j, r := range recs {
					if r.Offset < 0 || r.Partition < 0 || r.Partition >= n {
						errs <- fmt.Errorf("%s: record %d of %d reported at %d/%d", topic, j, len(recs), r.Partition, r.Offset)
						return
					}
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	// Then, one call at a time, each checked against the log.
	for i := range 30 {
		n := counts[i%len(counts)]
		topic := fmt.Sprint("t", n)
		recs := makeRecords(1+(i*97)%400, 100000+i*1000)
		for j := range recs {
			if j%4 == 0 {
				recs[j].Key = nil
			}
		}
		if err := b.Produce(ctx, topic, recs); err != nil {
			t.Fatal(err)
		}
		checkReported(t, b, topic, n, recs)
	}
}
