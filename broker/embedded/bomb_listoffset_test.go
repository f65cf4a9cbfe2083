package embedded

import (
	"testing"

	"github.com/weirnet/weir/broker"
	"github.com/weirnet/weir/broker/recordbatch"
	"github.com/weirnet/weir/internal/heaptest"
)

// TestListOffsetOfBombBounded: a ListOffsets by time (a Kafka client's
// offsetsForTimes, kcat -o s@) scans the batch holding the time. A gzip
// batch of 100 KB holds a million records, up to 30 million: decoded
// whole into a record array, that is 128 MB a million, however few
// records the scan needs.
func TestListOffsetOfBombBounded(t *testing.T) {
	const n = 1 << 20
	const ts0 = 1_700_000_000_000
	b := openTest(t, t.TempDir())
	b.CreateTopic(ctx, "t", broker.TopicConfig{Partitions: 1})
	var e recordbatch.Encoder
	e.Reset(-1, -1, -1)
	for i := range n {
		e.Append(nil, []byte("a"), nil, ts0+int64(i))
	}
	bomb, err := recordbatch.Compress(e.Finish(0), recordbatch.CodecGzip)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := b.AppendBatches(ctx, "t", 0, bomb); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		ts, want int64
	}{{ts0 + n/2, n / 2}, {-3, n - 1}, {ts0 + n, -1}} {
		var off int64
		var err error
		alloc := heaptest.Allocated(func() { off, _, err = b.ListOffset("t", 0, c.ts) })
		if err != nil || off != c.want {
			t.Fatalf("ListOffset(%d) = %d, %v; want %d", c.ts, off, err, c.want)
		}
		t.Logf("ListOffset(%d): %d MB allocated", c.ts, alloc>>20)
		if alloc > 48<<20 {
			t.Errorf("ListOffset(%d) allocated %d MB for a batch of %d KB", c.ts, alloc>>20, len(bomb)>>10)
		}
	}
}
