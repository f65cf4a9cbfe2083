package embedded

import (
	"bytes"
	"errors"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/weirnet/weir/broker"
	"github.com/weirnet/weir/broker/recordbatch"
	"github.com/weirnet/weir/internal/heaptest"
)

// gzipBatch is one gzip batch of values.
func gzipBatch(t testing.TB, values ...[]byte) []byte {
	return compressedBatch(t, recordbatch.CodecGzip, values...)
}

func compressedBatch(t testing.TB, codec int, values ...[]byte) []byte {
	t.Helper()
	var e recordbatch.Encoder
	e.Reset(-1, -1, -1)
	for _, v := range values {
		e.Append(nil, v, nil, 1_700_000_000_000)
	}
	b, err := recordbatch.Compress(e.Finish(0), codec)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// tinyRecords is n records of one byte: a batch of them decodes to about
// 150 bytes of records a byte sent.
func tinyRecords(n int) [][]byte {
	v := []byte("a")
	values := make([][]byte, n)
	for i := range values {
		values[i] = v
	}
	return values
}

// TestRecordLargerThanMaxMessageBytesDecompressedRefused: the size limit
// applies to a record's decompressed size too, as Kafka's producers apply
// it before compressing. Else a gzip batch of 100 KB carries a 100 MB
// record, which each reader then holds.
func TestRecordLargerThanMaxMessageBytesDecompressedRefused(t *testing.T) {
	b := openTest(t, t.TempDir(), WithMaxMessageBytes(1<<20))
	b.CreateTopic(ctx, "t", broker.TopicConfig{Partitions: 1})
	big := bytes.Repeat([]byte("a"), 2<<20)
	batch := gzipBatch(t, []byte("ok"), big)
	if len(batch) > 1<<20 {
		t.Fatalf("the batch is %d bytes compressed: the test needs it under the limit", len(batch))
	}
	_, err := b.AppendBatches(ctx, "t", 0, batch)
	if !errors.Is(err, broker.ErrRecordTooLarge) {
		t.Fatalf("err = %v, want ErrRecordTooLarge", err)
	}
	t.Log(err)
	if _, err := b.AppendBatches(ctx, "t", 0, gzipBatch(t, []byte("ok"), big[:1<<19])); err != nil {
		t.Fatalf("a record under the limit: %v", err)
	}
}

// TestReadersKeepNoBombBuffers: a compressed batch that decodes to far
// more than a fetch's usual records is read, bounded, and its buffers are
// not kept for the reader's life.
func TestReadersKeepNoBombBuffers(t *testing.T) {
	const n = 1 << 20
	b := openTest(t, t.TempDir())
	b.CreateTopic(ctx, "t", broker.TopicConfig{Partitions: 1})
	bomb := gzipBatch(t, tinyRecords(n)...)
	t.Logf("%d records in a gzip batch of %d bytes", n, len(bomb))
	if _, err := b.AppendBatches(ctx, "t", 0, bomb); err != nil {
		t.Fatal(err)
	}
	// Megabyte records, 24 in a batch: 24 MB decompressed from 100 KB,
	// in each codec, whose decoders keep buffers of their own.
	mb := bytes.Repeat([]byte("b"), 1<<20)
	var large [][]byte
	for range 24 {
		large = append(large, mb)
	}
	codecs := []int{recordbatch.CodecGzip, recordbatch.CodecSnappy, recordbatch.CodecLZ4, recordbatch.CodecZstd}
	for _, codec := range codecs {
		if _, err := b.AppendBatches(ctx, "t", 0, compressedBatch(t, codec, large...)); err != nil {
			t.Fatal(codec, err)
		}
	}
	if _, err := b.AppendBatches(ctx, "t", 0, gzipBatch(t, []byte("last"))); err != nil {
		t.Fatal(err)
	}
	want := n + 24*len(codecs) + 1
	base := heaptest.Live()

	t.Run("fetch", func(t *testing.T) {
		var res broker.FetchResult
		var got, most int
		for off := int64(0); off < int64(want); {
			if err := b.Fetch(ctx, "t", 0, off, broker.FetchOptions{MaxBytes: 1 << 20}, &res); err != nil {
				t.Fatal(err)
			}
			if len(res.Records) == 0 {
				t.Fatalf("no records at offset %d", off)
			}
			for i, r := range res.Records {
				if r.Offset != off+int64(i) {
					t.Fatalf("record %d of a fetch at %d has offset %d", i, off, r.Offset)
				}
			}
			got += len(res.Records)
			most = max(most, len(res.Records))
			off = res.Records[len(res.Records)-1].Offset + 1
		}
		if got != want {
			t.Fatalf("%d records read, want %d", got, want)
		}
		if string(res.Records[len(res.Records)-1].Value) != "last" {
			t.Fatalf("last record %q", res.Records[len(res.Records)-1].Value)
		}
		// The next fetch finds nothing: its reset is what lets go.
		if err := b.Fetch(ctx, "t", 0, int64(want), broker.FetchOptions{MaxBytes: 1 << 20}, &res); err != nil || len(res.Records) != 0 {
			t.Fatalf("fetch at the end: %d records, %v", len(res.Records), err)
		}
		held := heaptest.Live() - base
		t.Logf("at most %d records a fetch; %d bytes held after the last", most, held)
		if most > maxDecodeRecords {
			t.Errorf("a fetch returned %d records, over the bound of %d", most, maxDecodeRecords)
		}
		if held > 16<<20 {
			t.Errorf("the fetch result holds %d bytes after reading the bomb", held)
		}
		runtime.KeepAlive(&res)
	})

	t.Run("poll", func(t *testing.T) {
		c, err := b.Consume(ctx, "g", []string{"t"})
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		var got, most int
		for got < want {
			recs, err := c.Poll(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if recs[0].Offset != int64(got) {
				t.Fatalf("poll from %d starts at %d", got, recs[0].Offset)
			}
			got += len(recs)
			most = max(most, len(recs))
		}
		if got != want {
			t.Fatalf("%d records polled, want %d", got, want)
		}
		// The next poll finds nothing: its reset is what lets go.
		b.AppendBatches(ctx, "t", 0, gzipBatch(t, []byte("after")))
		if recs, err := c.Poll(ctx); err != nil || len(recs) != 1 {
			t.Fatalf("poll after: %d records, %v", len(recs), err)
		}
		held := heaptest.Live() - base
		t.Logf("at most %d records a poll; %d bytes held after", most, held)

		if most > maxDecodeRecords {
			t.Errorf("a poll returned %d records, over the bound of %d", most, maxDecodeRecords)
		}
		if held > 16<<20 {
			t.Errorf("the consumer holds %d bytes after reading the bomb", held)
		}
		runtime.KeepAlive(c)
	})
}

// TestBatchPastPolicyBoundsRefused: a batch of more records than
// MaxBatchRecords, or a record of more headers than MaxRecordHeaders, is
// refused INVALID_RECORD (not CORRUPT_MESSAGE, which clients retry), and
// a batch at the bounds is taken.
func TestBatchPastPolicyBoundsRefused(t *testing.T) {
	b := openTest(t, t.TempDir())
	b.CreateTopic(ctx, "t", broker.TopicConfig{Partitions: 1})
	if _, err := b.AppendBatches(ctx, "t", 0, gzipBatch(t, tinyRecords(recordbatch.MaxBatchRecords+1)...)); !errors.Is(err, broker.ErrInvalidRecord) || errors.Is(err, broker.ErrCorruptBatch) {
		t.Fatalf("a batch of %d records: %v, want ErrInvalidRecord alone", recordbatch.MaxBatchRecords+1, err)
	}
	if _, err := b.AppendBatches(ctx, "t", 0, gzipBatch(t, tinyRecords(recordbatch.MaxBatchRecords)...)); err != nil {
		t.Fatalf("a batch of %d records: %v", recordbatch.MaxBatchRecords, err)
	}
	headered := func(n int) []byte {
		hdrs := make([]broker.Header, n)
		for i := range hdrs {
			hdrs[i].Key = "h"
		}
		var e recordbatch.Encoder
		e.Reset(-1, -1, -1)
		e.Append(nil, []byte("v"), hdrs, 1_700_000_000_000)
		batch, err := recordbatch.Compress(e.Finish(0), recordbatch.CodecGzip)
		if err != nil {
			t.Fatal(err)
		}
		return batch
	}
	_, err := b.AppendBatches(ctx, "t", 0, headered(recordbatch.MaxRecordHeaders+1))
	if !errors.Is(err, broker.ErrInvalidRecord) || errors.Is(err, broker.ErrCorruptBatch) {
		t.Fatalf("a record of %d headers: %v, want ErrInvalidRecord alone", recordbatch.MaxRecordHeaders+1, err)
	}
	t.Log(err)
	if _, err := b.AppendBatches(ctx, "t", 0, headered(recordbatch.MaxRecordHeaders)); err != nil {
		t.Fatalf("a record of %d headers: %v", recordbatch.MaxRecordHeaders, err)
	}
}

// TestConcurrentBombAppendsBounded: an append of a raw snappy batch holds
// what it decompresses (up to 256 MiB) while it checks it (other codecs
// are checked a record at a time: recordbatch's
// TestCheckHoldsARecordNotTheBatch), and a Kafka listener serves
// thousands of connections: concurrent bombs added up to GBs.
// Decompressing is CPU work, so no more appends check a compressed batch
// at once than there are CPUs.
func TestConcurrentBombAppendsBounded(t *testing.T) {
	const appends, cpus, mb = 16, 2, 1 << 20
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(cpus)) // the bound Open takes
	b := openTest(t, t.TempDir())
	b.CreateTopic(ctx, "t", broker.TopicConfig{Partitions: 1})
	// 8 records of 8 MB less a little: 64 MB decompressed, 3 MB sent.
	rec := bytes.Repeat([]byte("c"), 8*mb-64)
	var values [][]byte
	for range 8 {
		values = append(values, rec)
	}
	bomb := compressedBatch(t, recordbatch.CodecSnappy, values...)
	// Collected soon, what a check dropped does not count as held.
	defer debug.SetGCPercent(debug.SetGCPercent(10))
	var peak atomic.Int64
	stop := make(chan struct{})
	sampled := make(chan struct{})
	go func() {
		defer close(sampled)
		sample := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
		for {
			metrics.Read(sample)
			if v := int64(sample[0].Value.Uint64()); v > peak.Load() {
				peak.Store(v)
			}
			select {
			case <-stop:
				return
			case <-time.After(200 * time.Microsecond):
			}
		}
	}()
	base := heaptest.Live()
	var wg sync.WaitGroup
	for range appends {
		wg.Go(func() {
			if _, err := b.AppendBatches(ctx, "t", 0, bomb); err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
	close(stop)
	<-sampled
	held := peak.Load() - base
	// A check holds the batch decompressed and the copy it grew from;
	// one more for the garbage of those done, not yet collected.
	limit := int64(cpus+2) * 160 * mb
	t.Logf("%d concurrent appends of 64 MB decompressed: peak heap %d MB over the base, bound %d MB", appends, held/mb, limit/mb)
	if held > limit {
		t.Errorf("peak heap %d MB over the base; want under %d MB", held/mb, limit/mb)
	}
}
