package embedded

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/weirnet/weir/broker"
)

// Damaged files found at start, beyond a torn tail of the active segment.

// produceBatches writes n batches of 10 records to partition 0 of "t".
func produceBatches(t *testing.T, b *Broker, n int) {
	t.Helper()
	for i := 0; i < n; i++ {
		recs := makeRecords(10, i*10)
		for j := range recs {
			recs[j].Value = append(recs[j].Value, bytes.Repeat([]byte("x"), 40)...)
		}
		if err := b.ProducePartition(ctx, "t", 0, recs); err != nil {
			t.Fatal(err)
		}
	}
}

// writtenLog writes 50 batches of 10 records to partition 0 of "t" in a
// log at dir opened with opts, and closes it cleanly.
func writtenLog(t *testing.T, dir string, opts ...Option) {
	t.Helper()
	b, err := Open(dir, append([]Option{plainBatches}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	produceBatches(t, b, 50)
	if err := b.Close(); err != nil {
		t.Fatal(err)
	}
}

func segmentBases(t *testing.T, dir string) []int64 {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var bases []int64
	for _, e := range entries {
		var base int64
		if n, _ := fmt.Sscanf(e.Name(), "%020d.log", &base); n == 1 && filepath.Ext(e.Name()) == ".log" {
			bases = append(bases, base)
		}
	}
	return bases
}

// TestCleanOpenCorruptIndexKeepsLog: after a clean stop, the open resumes
// the active segment's scan at the last offset index entry. A damaged
// index (a flipped byte in its last entry) must cost a scan, not the log:
// every record stays readable and the next produce gets the next offset.
func TestCleanOpenCorruptIndexKeepsLog(t *testing.T) {
	dir := t.TempDir()
	writtenLog(t, dir, WithIndexInterval(256), WithTopicDefaults(broker.TopicConfig{Partitions: 1}))
	idx := segmentName(partitionDir(dir, "t", 0), 0, ".index")
	data, err := os.ReadFile(idx)
	if err != nil || len(data) < 2*indexEntrySize {
		t.Fatalf("index: %d bytes, %v", len(data), err)
	}
	// One bit of the last entry's position: it now points into a batch.
	last := len(data) - indexEntrySize
	pos := binary.BigEndian.Uint32(data[last+4:])
	binary.BigEndian.PutUint32(data[last+4:], pos+4)
	if err := os.WriteFile(idx, data, 0o644); err != nil {
		t.Fatal(err)
	}
	b2 := openTest(t, dir)
	if got := readAll(t, b2, "t", 0); len(got) != 500 {
		t.Fatalf("after a clean open with a damaged index: %d records, want 500", len(got))
	}
	if err := b2.ProducePartition(ctx, "t", 0, makeRecords(1, 500)); err != nil {
		t.Fatal(err)
	}
	if infos, _ := b2.DescribeTopics(ctx, "t"); infos[0].Partitions[0].HighWatermark != 501 {
		t.Fatalf("high watermark %d after one more record, want 501", infos[0].Partitions[0].HighWatermark)
	}
}

// TestCleanOpenIndexPastEndOfLog: a last index entry that points past the
// end of the segment file (the log file is shorter than its index says)
// must not set the partition's size and high watermark from the index.
func TestCleanOpenIndexPastEndOfLog(t *testing.T) {
	dir := t.TempDir()
	writtenLog(t, dir, WithIndexInterval(256), WithTopicDefaults(broker.TopicConfig{Partitions: 1}))
	idx := segmentName(partitionDir(dir, "t", 0), 0, ".index")
	f, err := os.OpenFile(idx, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	// A garbage last entry: relative offset 100000 at byte 1 GiB.
	f.Write(binary.BigEndian.AppendUint32(binary.BigEndian.AppendUint32(nil, 100000), 1<<30))
	f.Close()
	b2 := openTest(t, dir)
	infos, _ := b2.DescribeTopics(ctx, "t")
	if hwm := infos[0].Partitions[0].HighWatermark; hwm != 500 {
		t.Fatalf("high watermark %d after a clean open, want 500", hwm)
	}
	if got := readAll(t, b2, "t", 0); len(got) != 500 {
		t.Fatalf("%d records, want 500", len(got))
	}
}

// TestSealedSegmentFlippedByte: every batch carries a CRC, but only the
// active segment's tail is checked at open, and reads do not check it. A
// byte flipped inside a record of an old segment must not reach a consumer
// as if it were the record that was produced.
func TestSealedSegmentFlippedByte(t *testing.T) {
	dir := t.TempDir()
	writtenLog(t, dir, WithTopicDefaults(broker.TopicConfig{Partitions: 1, SegmentBytes: 4096}))
	pdir := partitionDir(dir, "t", 0)
	if bases := segmentBases(t, pdir); len(bases) < 3 {
		t.Fatalf("want several segments, have %v", bases)
	}
	seg := segmentName(pdir, 0, ".log")
	data, _ := os.ReadFile(seg)
	i := bytes.Index(data, []byte(`{"seq":5}`))
	if i < 0 {
		t.Fatal("record 5 not found")
	}
	data[i+7] = '6' // {"seq":6}: bit rot in the middle of an old segment
	os.WriteFile(seg, data, 0o644)
	os.Remove(filepath.Join(dir, ".clean_shutdown")) // even after a crash
	b2 := openTest(t, dir)
	var res broker.FetchResult
	err := b2.Fetch(ctx, "t", 0, 0, broker.FetchOptions{MaxBytes: 64 << 10}, &res)
	if err != nil {
		t.Logf("detected: %v", err)
		return
	}
	for _, r := range res.Records {
		want := fmt.Sprintf(`{"seq":%d}`, r.Offset)
		if !bytes.HasPrefix(r.Value, []byte(want)) {
			t.Fatalf("offset %d served as %q with no error: a batch failing its CRC reached the consumer", r.Offset, r.Value[:9])
		}
	}
}

// TestTruncatedSealedSegmentDoesNotStallConsumers: an old segment shorter
// than the next segment's base says (its last batch lost) leaves a gap of
// offsets. Recovery must say so and consumers must get past it (or get an
// error), not wait at the gap for ever with the later segments unread.
func TestTruncatedSealedSegmentDoesNotStallConsumers(t *testing.T) {
	dir := t.TempDir()
	writtenLog(t, dir, WithTopicDefaults(broker.TopicConfig{Partitions: 1, SegmentBytes: 4096}))
	pdir := partitionDir(dir, "t", 0)
	bases := segmentBases(t, pdir)
	if len(bases) < 3 {
		t.Fatalf("want several segments, have %v", bases)
	}
	seg := segmentName(pdir, 0, ".log")
	if err := os.Truncate(seg, lastBatchStart(t, seg)); err != nil {
		t.Fatal(err)
	}
	b2 := openTest(t, dir)
	c, err := b2.Consume(ctx, "g", []string{"t"})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	pctx, cancel := context.WithTimeout(ctx, 3*time.Second)
	defer cancel()
	seen := 0
	for seen < 490 {
		recs, err := c.Poll(pctx)
		if err != nil {
			t.Fatalf("group consumer stalled after %d of the 490 records left (first segment ends at %d, next starts at %d): %v",
				seen, bases[1]-10, bases[1], err)
		}
		seen += len(recs)
	}
}

// TestSealedIndexDamagedStillReads: a sealed segment's offset index is only
// a hint (a missing one means a scan). A damaged entry must not make the
// records it points at unreadable.
func TestSealedIndexDamagedStillReads(t *testing.T) {
	dir := t.TempDir()
	writtenLog(t, dir, WithIndexInterval(256), WithTopicDefaults(broker.TopicConfig{Partitions: 1, SegmentBytes: 8192}))
	idx := segmentName(partitionDir(dir, "t", 0), 0, ".index")
	data, err := os.ReadFile(idx)
	if err != nil || len(data) < indexEntrySize {
		t.Fatalf("index: %d bytes, %v", len(data), err)
	}
	pos := binary.BigEndian.Uint32(data[4:])
	binary.BigEndian.PutUint32(data[4:], pos+1) // one bit: into a batch
	os.WriteFile(idx, data, 0o644)
	os.Remove(filepath.Join(dir, ".clean_shutdown")) // even after a crash
	b2 := openTest(t, dir, WithIndexInterval(256))
	rel := binary.BigEndian.Uint32(data[:4])
	var res broker.FetchResult
	if err := b2.Fetch(ctx, "t", 0, int64(rel), broker.FetchOptions{MaxBytes: 64 << 10}, &res); err != nil {
		t.Fatalf("fetch at offset %d (data intact, index entry damaged): %v", rel, err)
	}
	if len(res.Records) == 0 || res.Records[0].Offset != int64(rel) {
		t.Fatalf("fetch at offset %d: %d records from %v", rel, len(res.Records), res.Records)
	}
	// The read mended the index file: the entry is what it was.
	mended, err := os.ReadFile(idx)
	if err != nil {
		t.Fatal(err)
	}
	if got := binary.BigEndian.Uint32(mended[4:]); got != pos {
		t.Fatalf("index entry 0 after the read: byte %d, want %d", got, pos)
	}
}

// TestOffsetsMiddleEntryDamagedKeepsLaterCommits: the group offsets file is
// a sequence of independent, length-prefixed, CRC-checked entries. One
// entry damaged in the middle (a flipped bit in its payload, the length
// intact) must not silently take every later commit with it: the groups
// whose commits follow would go back and consume again.
func TestOffsetsMiddleEntryDamagedKeepsLaterCommits(t *testing.T) {
	dir := t.TempDir()
	var logBuf bytes.Buffer
	logger := slog.New(slog.NewTextHandler(&logBuf, nil))
	s, err := openOffsetStore(dir, true, time.Now, logger)
	if err != nil {
		t.Fatal(err)
	}
	for i, g := range []string{"a", "b", "c"} {
		if err := s.commit([]GroupOffset{{g, "t", 0, int64(100 * (i + 1))}}); err != nil {
			t.Fatal(err)
		}
	}
	s.close()
	path := filepath.Join(dir, "meta", "offsets.log")
	data, _ := os.ReadFile(path)
	// Entry "a" is first; flip a bit of its offset (the payload's end).
	first := 8 + int(binary.BigEndian.Uint32(data))
	data[first-1] ^= 1
	os.WriteFile(path, data, 0o644)
	s, err = openOffsetStore(dir, true, time.Now, logger)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.close() })
	_, okB := s.committed("b", "t", 0)
	_, okC := s.committed("c", "t", 0)
	if !okB || !okC {
		t.Errorf("one damaged entry lost the later, intact commits of groups b (%v) and c (%v)", okB, okC)
	}
	if !bytes.Contains(logBuf.Bytes(), []byte("skipped a damaged entry")) {
		t.Errorf("damaged entry skipped with nothing logged: %s", logBuf.Bytes())
	}
	if kept, err := os.ReadFile(path + ".damaged"); err != nil || !bytes.Equal(kept, data) {
		t.Errorf("no copy of the damaged file kept: %v", err)
	}
	// The file was written again without the damaged entry.
	s.close()
	logBuf.Reset()
	if s, err = openOffsetStore(dir, true, time.Now, logger); err != nil {
		t.Fatal(err)
	}
	if _, ok := s.committed("c", "t", 0); !ok || logBuf.Len() != 0 {
		t.Errorf("second open: c committed %v, log %s", ok, logBuf.Bytes())
	}
}

// TestRetentionUnderConcurrentReaders: readers at the log start while
// retention deletes segments under them get records or
// ErrOffsetOutOfRange, never another error or a record below the asked
// offset, and never wait at an offset below the log start.
func TestRetentionUnderConcurrentReaders(t *testing.T) {
	dir := t.TempDir()
	b := openTest(t, dir, WithRetentionCheckInterval(0), WithTopicDefaults(broker.TopicConfig{Partitions: 1, SegmentBytes: 2048, RetentionBytes: 8192}))
	if err := b.ProducePartition(ctx, "t", 0, makeRecords(5, 0)); err != nil {
		t.Fatal(err) // the topic exists before the readers describe it
	}
	stop := make(chan struct{})
	errc := make(chan error, 4)
	go func() {
		for i := 1; ; i++ {
			select {
			case <-stop:
				errc <- nil
				return
			default:
			}
			if err := b.ProducePartition(ctx, "t", 0, makeRecords(5, i*5)); err != nil {
				errc <- err
				return
			}
			b.ApplyRetention()
		}
	}()
	for r := 0; r < 2; r++ {
		go func() {
			var res broker.FetchResult
			for {
				select {
				case <-stop:
					errc <- nil
					return
				default:
				}
				infos, _ := b.DescribeTopics(ctx, "t")
				off := infos[0].Partitions[0].LogStartOffset
				for k := 0; k < 20; k++ {
					err := b.Fetch(ctx, "t", 0, off, broker.FetchOptions{MaxBytes: 1024, MaxWait: 50 * time.Millisecond}, &res)
					if errors.Is(err, broker.ErrOffsetOutOfRange) {
						break
					}
					if err != nil {
						errc <- err
						return
					}
					for _, rec := range res.Records {
						if rec.Offset != off {
							errc <- fmt.Errorf("asked %d, got %d", off, rec.Offset)
							return
						}
						off++
					}
				}
			}
		}()
	}
	time.Sleep(3 * time.Second)
	close(stop)
	for i := 0; i < 3; i++ {
		if err := <-errc; err != nil {
			t.Fatal(err)
		}
	}
}

// TestMissingTimeIndexOfSealedSegment: a missing index file is documented
// to cost a scan, nothing more. Without its .timeindex a sealed segment's
// max timestamp is unknown after a restart, and a lookup by timestamp must
// still find the first record at or after it, not one in a later segment.
func TestMissingTimeIndexOfSealedSegment(t *testing.T) {
	dir := t.TempDir()
	b, err := Open(dir, WithTopicDefaults(broker.TopicConfig{Partitions: 1, SegmentBytes: 4 << 10}), WithIndexInterval(256))
	if err != nil {
		t.Fatal(err)
	}
	base := time.UnixMilli(1_700_000_000_000)
	for i := 0; i < 500; i++ {
		rec := []broker.Record{{Value: []byte(fmt.Sprint(i)), Timestamp: base.Add(time.Duration(i) * time.Second)}}
		if err := b.Produce(ctx, "t", rec); err != nil {
			t.Fatal(err)
		}
	}
	b.Close()
	if err := os.Remove(segmentName(partitionDir(dir, "t", 0), 0, ".timeindex")); err != nil {
		t.Fatal(err)
	}
	b2 := openTest(t, dir)
	for _, tc := range []struct{ ts, off int64 }{
		{base.UnixMilli(), 0},
		{base.Add(10 * time.Second).UnixMilli(), 10},
	} {
		if off, _, err := b2.ListOffset("t", 0, tc.ts); err != nil || off != tc.off {
			t.Errorf("ListOffset(%d) = %d, %v; want %d (segment 0's time index missing)", tc.ts, off, err, tc.off)
		}
	}
}
