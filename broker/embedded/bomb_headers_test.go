package embedded

import (
	"errors"
	"testing"

	"github.com/weirnet/weir/broker"
	"github.com/weirnet/weir/broker/recordbatch"
	"github.com/weirnet/weir/internal/heaptest"
)

// headerBomb is a gzip batch of records each with perRecord empty headers
// (two bytes each decompressed, a record under max_message_bytes): a
// batch of a few hundred KB that decodes to tens of millions of headers,
// 40 bytes each in a decoder's header array.
func headerBomb(t testing.TB, records, perRecord int) []byte {
	t.Helper()
	hdrs := make([]broker.Header, perRecord)
	var e recordbatch.Encoder
	e.Reset(-1, -1, -1)
	for range records {
		e.Append(nil, []byte("v"), hdrs, 1_700_000_000_000)
	}
	b, err := recordbatch.Compress(e.Finish(0), recordbatch.CodecGzip)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestHeaderBombBounded: the bounds on a read count records, not their
// headers, and the check at append kept every header of the batch: a
// gzip batch of 15 KB whose 16 records had 400,000 empty headers each
// (800 KB a record, under max_message_bytes) made the append and each
// read allocate hundreds of MB; at 256 records, the decompression limit,
// it was 10 GB. Such records are refused at append now
// (MaxRecordHeaders); 100 records of 60,000 headers, under it, still
// make 6 million, which a read bounds.
func TestHeaderBombBounded(t *testing.T) {
	b := openTest(t, t.TempDir())
	b.CreateTopic(ctx, "t", broker.TopicConfig{Partitions: 1})
	bomb := headerBomb(t, 100, 60_000)
	t.Logf("gzip batch of %d KB", len(bomb)>>10)
	var err error
	if a := heaptest.Allocated(func() { _, err = b.AppendBatches(ctx, "t", 0, bomb) }); a > 64<<20 {
		t.Errorf("the append allocated %d MB", a>>20)
	}
	if err != nil {
		t.Fatal(err)
	}
	t.Run("fetch", func(t *testing.T) {
		var res broker.FetchResult
		got := 0
		for off := int64(0); off < 100; {
			if a := heaptest.Allocated(func() { err = b.Fetch(ctx, "t", 0, off, broker.FetchOptions{}, &res) }); a > 160<<20 {
				t.Errorf("a fetch at %d allocated %d MB", off, a>>20)
			}
			if err != nil || len(res.Records) == 0 {
				t.Fatalf("fetch at %d: %d records, %v", off, len(res.Records), err)
			}
			for i, r := range res.Records {
				if r.Offset != off+int64(i) || len(r.Headers) != 60_000 {
					t.Fatalf("record %d of a fetch at %d: offset %d, %d headers", i, off, r.Offset, len(r.Headers))
				}
			}
			got += len(res.Records)
			off = res.Records[len(res.Records)-1].Offset + 1
		}
		if got != 100 {
			t.Errorf("%d records read", got)
		}
	})
	t.Run("poll", func(t *testing.T) {
		c, err := b.Consume(ctx, "g", []string{"t"})
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		got := 0
		for got < 100 {
			var recs []broker.Record
			if a := heaptest.Allocated(func() { recs, err = c.Poll(ctx) }); a > 160<<20 {
				t.Errorf("a poll at %d allocated %d MB", got, a>>20)
			}
			if err != nil {
				t.Fatal(err)
			}
			if recs[0].Offset != int64(got) {
				t.Fatalf("poll from %d starts at %d", got, recs[0].Offset)
			}
			got += len(recs)
		}
	})
}

// TestOversizedRecordRefusedBeforeItsHeaders: the check at append
// compared a record's size with max_message_bytes after decoding it,
// headers and all: a record of 8 MB of empty headers (4 million, a gzip
// batch of a few KB) grew a header array of 160 MB before it was
// refused; at the 256 MiB decompression limit, 5 GB.
func TestOversizedRecordRefusedBeforeItsHeaders(t *testing.T) {
	b := openTest(t, t.TempDir(), WithMaxMessageBytes(1<<20))
	b.CreateTopic(ctx, "t", broker.TopicConfig{Partitions: 1})
	bomb := headerBomb(t, 1, 4<<20)
	t.Logf("gzip batch of %d KB", len(bomb)>>10)
	var err error
	if a := heaptest.Allocated(func() { _, err = b.AppendBatches(ctx, "t", 0, bomb) }); a > 48<<20 {
		t.Errorf("refusing the record allocated %d MB", a>>20)
	}
	if !errors.Is(err, broker.ErrRecordTooLarge) {
		t.Fatalf("err = %v, want ErrRecordTooLarge", err)
	}
}

// TestPollBoundedAcrossPartitions: decodeBudget bounds what one read
// decompresses, but decodeBatches always decodes a first batch, and Poll
// called it for each partition it owns: a member of four partitions each
// holding a 96 MB gzip batch (12 records of 8 MB, a few hundred KB sent)
// decompressed all four in one Poll. Poll stops taking partitions once a
// read's bound is reached, and starts at the next one the next time.
func TestPollBoundedAcrossPartitions(t *testing.T) {
	const parts = 4
	b := openTest(t, t.TempDir())
	b.CreateTopic(ctx, "t", broker.TopicConfig{Partitions: parts})
	rec := make([]byte, 8<<20-1024)
	var values [][]byte
	for range 12 {
		values = append(values, rec)
	}
	bomb := compressedBatch(t, recordbatch.CodecGzip, values...)
	t.Logf("gzip batch of %d KB", len(bomb)>>10)
	for p := range int32(parts) {
		if _, err := b.AppendBatches(ctx, "t", p, bomb); err != nil {
			t.Fatal(err)
		}
	}
	bomb, values = nil, nil
	c, err := b.Consume(ctx, "g", []string{"t"})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	seen := map[int32]int{}
	for polls, total := 0, 0; total < parts*12; polls++ {
		if polls > 2*parts {
			t.Fatalf("after %d polls, records of %d partitions", polls, len(seen))
		}
		var recs []broker.Record
		a := heaptest.Allocated(func() { recs, err = c.Poll(ctx) })
		if err != nil {
			t.Fatal(err)
		}
		ps := map[int32]bool{}
		for _, r := range recs {
			seen[r.Partition]++
			ps[r.Partition] = true
		}
		total += len(recs)
		t.Logf("poll %d: %d records of %d partitions, %d MB allocated", polls, len(recs), len(ps), a>>20)
		// One batch's decompression allocates about 2.5 times its size
		// (the buffer doubles as it fills).
		if len(ps) > 1 || a > 384<<20 {
			t.Errorf("poll %d decompressed %d partitions' batches, allocating %d MB", polls, len(ps), a>>20)
		}
	}
	for p, n := range seen {
		if n != 12 {
			t.Errorf("partition %d: %d records", p, n)
		}
	}
}
