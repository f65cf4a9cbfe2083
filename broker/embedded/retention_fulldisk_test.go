package embedded

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	"github.com/weirnet/weir/broker"
)

// TestRetentionFreesAFullDisk: retention by time rolls an expired active
// segment before deleting; on a full disk that roll's index write failed,
// and retention then deleted nothing at all, not even the sealed segments
// that had expired, so the disk stayed full although retention should
// have emptied it.
func TestRetentionFreesAFullDisk(t *testing.T) {
	dir := tmpfsDir(t)
	now := time.Now()
	var clock atomic.Pointer[time.Time]
	clock.Store(&now)
	b := openTest(t, dir, withClock(func() time.Time { return *clock.Load() }), WithIndexInterval(1<<20),
		WithTopicDefaults(broker.TopicConfig{Partitions: 1, SegmentBytes: 64 << 10, RetentionTime: time.Hour}))
	var err error
	for i := 0; err == nil; i++ {
		recs := makeRecords(50, i*50)
		for j := range recs {
			recs[j].Value = append(recs[j].Value, bytes.Repeat([]byte(" "), 200)...)
		}
		err = b.Produce(ctx, "t", recs)
	}
	if !errors.Is(err, broker.ErrStorage) {
		t.Fatalf("filling the disk: %v", err)
	}
	// Whatever is left, a page here and there, goes too.
	f, err := os.Create(filepath.Join(dir, "filler"))
	if err != nil {
		t.Fatal(err)
	}
	for _, err = f.Write(make([]byte, 4096)); err == nil; _, err = f.Write(make([]byte, 4096)) {
	}
	f.Close()
	before, _ := b.DescribeTopics(ctx, "t")
	if before[0].Partitions[0].Segments < 3 {
		t.Fatalf("want several segments, have %d", before[0].Partitions[0].Segments)
	}
	later := now.Add(2 * time.Hour)
	clock.Store(&later)
	b.ApplyRetention()
	after, _ := b.DescribeTopics(ctx, "t")
	if p := after[0].Partitions[0]; p.LogStartOffset == 0 || p.Segments >= before[0].Partitions[0].Segments {
		t.Fatalf("retention of a full disk, every segment expired: %d of %d segments left, log start %d",
			p.Segments, before[0].Partitions[0].Segments, p.LogStartOffset)
	}
	// With the space freed, the next check rolls the active segment and
	// deletes it too.
	b.ApplyRetention()
	after, _ = b.DescribeTopics(ctx, "t")
	if p := after[0].Partitions[0]; p.Bytes != 0 || p.LogStartOffset != p.HighWatermark {
		t.Fatalf("second retention check: %+v, want all expired data gone", p)
	}
}
