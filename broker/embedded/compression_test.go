package embedded

import (
	"context"
	"fmt"
	"os"
	"testing"

	"github.com/weirnet/weir/broker"
	"github.com/weirnet/weir/broker/recordbatch"
)

// syslogLike are records as weir's parts write them: JSON that repeats its
// keys and most of its values from record to record.
func syslogLike(n, start int) []broker.Record {
	recs := make([]broker.Record, n)
	for i := range recs {
		k := start + i
		recs[i] = broker.Record{
			Key: fmt.Appendf(nil, "edge%d", k%50),
			Value: fmt.Appendf(nil, `{"v":1,"device":"edge%d","received_at":"2026-12-07T10:00:%02d.%06dZ","facility":23,"severity":3,"message":"%%LINEPROTO-5-UPDOWN: Line protocol on Interface GigabitEthernet0/%d, changed state to down","tags":{"site":"par1","role":"edge"}}`,
				k%50, k%60, k, k%48),
			Headers: []broker.Header{{Key: "src_offset", Value: fmt.Appendf(nil, "%d", k)}},
		}
	}
	return recs
}

// logBytes is the size of a partition's segment files.
func logBytes(t *testing.T, dataDir, topic string, partition int32) int64 {
	t.Helper()
	var total int64
	pdir := partitionDir(dataDir, topic, partition)
	for _, base := range segmentBases(t, pdir) {
		fi, err := os.Stat(segmentName(pdir, base, ".log"))
		if err != nil {
			t.Fatal(err)
		}
		total += fi.Size()
	}
	return total
}

// firstCodec is the codec of the first batch of a partition's first segment.
func firstCodec(t *testing.T, dataDir, topic string, partition int32) int {
	t.Helper()
	pdir := partitionDir(dataDir, topic, partition)
	data, err := os.ReadFile(segmentName(pdir, segmentBases(t, pdir)[0], ".log"))
	if err != nil {
		t.Fatal(err)
	}
	h, err := recordbatch.Validate(data)
	if err != nil {
		t.Fatal(err)
	}
	return h.Codec()
}

// TestOwnBatchesCompressed: Produce writes its batches with the codec
// WithCompression names (snappy unless set), several times smaller for
// records like weir's own; Fetch and a group's Poll give the records back
// as they were, and so does the log opened again.
func TestOwnBatchesCompressed(t *testing.T) {
	ctx := context.Background()
	const n = 4000
	want := syslogLike(n, 0)
	plainDir := t.TempDir()
	plain := openTest(t, plainDir, plainBatches, WithTopicDefaults(broker.TopicConfig{Partitions: 1}))
	if err := plain.Produce(ctx, "t", syslogLike(n, 0)); err != nil {
		t.Fatal(err)
	}
	plainBytes := logBytes(t, plainDir, "t", 0)
	for _, tc := range []struct {
		name string
		opts []Option
	}{
		{"snappy", nil}, // the default
		{"lz4", []Option{WithCompression(recordbatch.CodecLZ4)}},
		{"zstd", []Option{WithCompression(recordbatch.CodecZstd)}},
		{"gzip", []Option{WithCompression(recordbatch.CodecGzip)}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			opts := append([]Option{WithTopicDefaults(broker.TopicConfig{Partitions: 1})}, tc.opts...)
			b, err := Open(dir, opts...)
			if err != nil {
				t.Fatal(err)
			}
			// Two calls: the second's batches reuse the first's compressor.
			if err := b.Produce(ctx, "t", syslogLike(n/2, 0)); err != nil {
				t.Fatal(err)
			}
			if err := b.Produce(ctx, "t", syslogLike(n/2, n/2)); err != nil {
				t.Fatal(err)
			}
			if codec := firstCodec(t, dir, "t", 0); codec != recordbatch.CodecNames[tc.name] {
				t.Errorf("first batch written with codec %d, want %s", codec, tc.name)
			}
			size := logBytes(t, dir, "t", 0)
			if size*3 > plainBytes {
				t.Errorf("log of %d bytes, against %d uncompressed: not a third", size, plainBytes)
			}
			t.Logf("%s: %d bytes, uncompressed %d (%.1f times smaller)", tc.name, size, plainBytes, float64(plainBytes)/float64(size))
			checkRecords(t, readAll(t, b, "t", 0), want)
			c, err := b.Consume(ctx, "g", []string{"t"})
			if err != nil {
				t.Fatal(err)
			}
			var polled []broker.Record
			for len(polled) < n {
				recs, err := c.Poll(ctx)
				if err != nil {
					t.Fatal(err)
				}
				for _, r := range recs {
					polled = append(polled, ownRecord(r))
				}
			}
			checkRecords(t, polled, want)
			c.Close()
			if err := b.Close(); err != nil {
				t.Fatal(err)
			}
			b = openTest(t, dir, opts...)
			checkRecords(t, readAll(t, b, "t", 0), want)
		})
	}
}

func checkRecords(t *testing.T, got, want []broker.Record) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%d records, want %d", len(got), len(want))
	}
	for i := range got {
		g, w := &got[i], &want[i]
		if g.Offset != int64(i) || string(g.Key) != string(w.Key) || string(g.Value) != string(w.Value) ||
			len(g.Headers) != 1 || string(g.Headers[0].Value) != string(w.Headers[0].Value) {
			t.Fatalf("record %d: offset %d key %q value %q headers %v; want key %q value %q", i, g.Offset, g.Key, g.Value, g.Headers, w.Key, w.Value)
		}
	}
}

// TestReadsBoundDecompressedBytes: WithMaxPollBytes bounds a poll of
// compressed batches by their records' bytes decompressed, as it bounds
// uncompressed ones, not by the batches' compressed bytes (7 times as many
// records for weir's own), and FetchOptions.MaxBytes a fetch.
func TestReadsBoundDecompressedBytes(t *testing.T) {
	ctx := context.Background()
	b := openTest(t, t.TempDir(), WithTopicDefaults(broker.TopicConfig{Partitions: 1}))
	const batches, per = 40, 100
	for i := range batches {
		if err := b.Produce(ctx, "t", syslogLike(per, i*per)); err != nil {
			t.Fatal(err)
		}
	}
	const maxPoll = 64 << 10
	c, err := b.Consume(ctx, "g", []string{"t"}, broker.WithMaxPollBytes(maxPoll))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	seen := 0
	for polls := 0; seen < batches*per; polls++ {
		recs, err := c.Poll(ctx)
		if err != nil {
			t.Fatal(err)
		}
		size := 0
		for i, r := range recs {
			if r.Offset != int64(seen+i) {
				t.Fatalf("poll %d: record %d at offset %d, want %d", polls, i, r.Offset, seen+i)
			}
			size += len(r.Key) + len(r.Value) + len(r.Headers[0].Key) + len(r.Headers[0].Value)
		}
		// A batch of records (27 KB) past the bound at most: decoding
		// stops at a batch's end.
		if size > maxPoll+per*300 {
			t.Fatalf("poll %d: %d records, %d bytes of them, for a bound of %d", polls, len(recs), size, maxPoll)
		}
		seen += len(recs)
	}
	var res broker.FetchResult
	for off := int64(0); off < batches*per; {
		if err := b.Fetch(ctx, "t", 0, off, broker.FetchOptions{MaxBytes: maxPoll}, &res); err != nil {
			t.Fatal(err)
		}
		if len(res.Records) == 0 || len(res.Records) > maxPoll/250+per {
			t.Fatalf("fetch at %d: %d records for a bound of %d bytes", off, len(res.Records), maxPoll)
		}
		off = res.Records[len(res.Records)-1].Offset + 1
	}
}

// TestBytesOutCountsWhatIsRead: a Poll or a Fetch of compressed batches
// stops decoding at its bound of bytes decompressed, leaving batches it
// read for the next; weir_broker_bytes_out_total counts each batch once, as
// it did uncompressed, not once per read that left it (4.5 times the log
// for snappy's syslog records).
func TestBytesOutCountsWhatIsRead(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	b := openTest(t, dir, WithTopicDefaults(broker.TopicConfig{Partitions: 2}))
	const calls, per = 600, 100
	for i := range calls {
		if err := b.Produce(ctx, "t", syslogLike(per, i*per)); err != nil {
			t.Fatal(err)
		}
	}
	logSize := logBytes(t, dir, "t", 0) + logBytes(t, dir, "t", 1)
	bytesOut := func() int64 {
		b.mu.RLock()
		defer b.mu.RUnlock()
		return b.topics["t"].stats.bytesOut.Load()
	}
	c, err := b.Consume(ctx, "g", []string{"t"}, broker.WithMaxPollBytes(1<<20))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	seen := map[[2]int64]bool{}
	for len(seen) < calls*per {
		recs, err := c.Poll(ctx)
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range recs {
			k := [2]int64{int64(r.Partition), r.Offset}
			if seen[k] {
				t.Fatalf("record %v polled twice", k)
			}
			seen[k] = true
		}
	}
	if got := bytesOut(); got != logSize {
		t.Errorf("after polling the log of %d bytes once, bytes out %d", logSize, got)
	}
	before := bytesOut()
	var res broker.FetchResult
	for p := range int32(2) {
		for off := int64(0); ; {
			if err := b.Fetch(ctx, "t", p, off, broker.FetchOptions{MaxBytes: 1 << 20}, &res); err != nil {
				t.Fatal(err)
			}
			if len(res.Records) == 0 {
				break
			}
			off = res.Records[len(res.Records)-1].Offset + 1
		}
	}
	if got := bytesOut() - before; got != logSize {
		t.Errorf("after fetching the log of %d bytes once, bytes out %d more", logSize, got)
	}
}
