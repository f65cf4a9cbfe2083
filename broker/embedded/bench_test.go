package embedded

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/weirnet/weir/broker"
)

// benchRecords are 200-byte values keyed over 1,000 devices, as the issue's
// performance figures specify.
func benchRecords(n int) []broker.Record {
	recs := make([]broker.Record, n)
	val := make([]byte, 200)
	for i := range val {
		val[i] = 'a' + byte(i%26)
	}
	for i := range recs {
		recs[i] = broker.Record{Key: []byte(fmt.Sprintf("device-%04d", i%1000)), Value: val}
	}
	return recs
}

const benchBatch = 1000

// recycleRecords is how many records a write benchmark writes before it
// removes its file (with the timer stopped) and starts a new one: about
// 200 MB. A file that grows for the whole run writes into pages the VM's
// host supplies anew, which on the development machine cost several
// times the write itself and hid changes to the code (see the README's
// "Measuring on this machine"); recycled pages are what a log whose
// retention deletes old segments writes into.
const recycleRecords = 1 << 20

// BenchmarkPlainFileWrite is the baseline: the same bytes written
// sequentially through a 4 MiB buffer, with nothing else.
func BenchmarkPlainFileWrite(b *testing.B) {
	dir := b.TempDir()
	rec := make([]byte, 200)
	b.SetBytes(200)
	b.ReportAllocs()
	for i := 0; i < b.N; i += recycleRecords {
		b.StopTimer()
		name := filepath.Join(dir, "plain")
		os.Remove(name)
		f, err := os.Create(name)
		if err != nil {
			b.Fatal(err)
		}
		w := bufio.NewWriterSize(f, 4<<20)
		b.StartTimer()
		for j := i; j < min(b.N, i+recycleRecords); j++ {
			w.Write(rec)
		}
		if err := w.Flush(); err != nil {
			b.Fatal(err)
		}
		f.Close()
	}
}

// BenchmarkProduce appends 200-byte records in calls of 1,000 (what a
// collector's batch looks like) over 6 partitions; ns/op is per record.
func BenchmarkProduce(b *testing.B) {
	recs := benchRecords(benchBatch)
	b.SetBytes(200)
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i += recycleRecords {
		b.StopTimer()
		dir := filepath.Join(b.TempDir(), "log")
		br, err := Open(dir, WithRetentionCheckInterval(0))
		if err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
		for j := i; j < min(b.N, i+recycleRecords); j += benchBatch {
			if err := br.Produce(context.Background(), "bench", recs[:min(benchBatch, b.N-j, i+recycleRecords-j)]); err != nil {
				b.Fatal(err)
			}
		}
		b.StopTimer()
		br.Close()
		os.RemoveAll(dir)
		b.StartTimer()
	}
}

// BenchmarkConsumeGroup reads a group over all 6 partitions; ns/op is per
// record.
func BenchmarkConsumeGroup(b *testing.B) {
	br, err := Open(b.TempDir(), WithRetentionCheckInterval(0))
	if err != nil {
		b.Fatal(err)
	}
	defer br.Close()
	recs := benchRecords(benchBatch)
	for i := 0; i < b.N; i += benchBatch {
		if err := br.Produce(context.Background(), "bench", recs[:min(benchBatch, b.N-i)]); err != nil {
			b.Fatal(err)
		}
	}
	c, err := br.Consume(context.Background(), "bench", []string{"bench"})
	if err != nil {
		b.Fatal(err)
	}
	defer c.Close()
	b.SetBytes(200)
	b.ReportAllocs()
	b.ResetTimer()
	var sum int
	for seen := 0; seen < b.N; {
		got, err := c.Poll(context.Background())
		if err != nil {
			b.Fatal(err)
		}
		for i := range got {
			sum += len(got[i].Value)
		}
		seen += len(got)
	}
	if err := c.Commit(context.Background()); err != nil {
		b.Fatal(err)
	}
	_ = sum
}

// BenchmarkCloseManyPartitions: a clean stop of a log of 1,000 partitions,
// each with a record (its last segment's indexes, log and producer state
// are synced): a stop that takes long runs into systemd's stop timeout.
func BenchmarkCloseManyPartitions(b *testing.B) {
	ctx := context.Background()
	dir := b.TempDir()
	recs := benchRecords(1)
	for b.Loop() {
		b.StopTimer()
		br, err := Open(dir)
		if err != nil {
			b.Fatal(err)
		}
		if err := br.CreateTopic(ctx, "many", broker.TopicConfig{Partitions: 1000}); err != nil && !errors.Is(err, broker.ErrTopicExists) {
			b.Fatal(err)
		}
		for p := range int32(1000) {
			if err := br.ProducePartition(ctx, "many", p, recs); err != nil {
				b.Fatal(err)
			}
		}
		b.StartTimer()
		if err := br.Close(); err != nil {
			b.Fatal(err)
		}
	}
}
