package embedded

import (
	"bytes"
	"context"
	"encoding/binary"
	"fmt"
	"os"
	"testing"
	"time"

	"github.com/weirnet/weir/broker"
)

// TestPollPastDamagedLastBatchOfSegment: the batch that fails its CRC is
// the last of a sealed segment, and the flipped bits are in its
// lastOffsetDelta (which the CRC covers). No batch after it in the read
// confirms where it ends, and its own header said far past its end: the
// group skipped the good records of the next segment with it.
func TestPollPastDamagedLastBatchOfSegment(t *testing.T) {
	dir := t.TempDir()
	opts := WithTopicDefaults(broker.TopicConfig{Partitions: 1, SegmentBytes: 4096})
	b, err := Open(dir, plainBatches, opts)
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 20; i++ {
		recs := make([]broker.Record, 10)
		for j := range recs {
			recs[j].Value = fmt.Appendf(nil, `{"seq":%d}%s`, i*10+j, bytes.Repeat([]byte("x"), 40))
		}
		if err := b.ProducePartition(ctx, "t", 0, recs); err != nil {
			t.Fatal(err)
		}
	}
	if err := b.Close(); err != nil {
		t.Fatal(err)
	}
	seg := segmentName(partitionDir(dir, "t", 0), 0, ".log")
	data, err := os.ReadFile(seg)
	if err != nil {
		t.Fatal(err)
	}
	// The last batch of the first segment.
	last := 0
	for pos := 0; pos+12 <= len(data); pos += 12 + int(binary.BigEndian.Uint32(data[pos+8:])) {
		last = pos
	}
	base := int64(binary.BigEndian.Uint64(data[last:]))
	binary.BigEndian.PutUint32(data[last+23:], 9+50) // lastOffsetDelta: 9 -> 59
	if err := os.WriteFile(seg, data, 0o644); err != nil {
		t.Fatal(err)
	}

	b2 := openTest(t, dir, opts)
	c, err := b2.Consume(ctx, "g", []string{"t"})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	got := 0
	for polls := 0; polls < 100; polls++ {
		pctx, cancel := context.WithTimeout(ctx, 200*time.Millisecond)
		recs, err := c.Poll(pctx)
		cancel()
		if err == context.DeadlineExceeded {
			break
		}
		if err != nil {
			continue
		}
		for _, r := range recs {
			if want := fmt.Sprintf(`{"seq":%d}`, r.Offset); !bytes.HasPrefix(r.Value, []byte(want)) {
				t.Fatalf("offset %d is %q", r.Offset, r.Value)
			}
			got++
		}
	}
	if got != 190 {
		t.Fatalf("%d records delivered, want 190: all but the damaged batch at %d (its header says it ends at %d)", got, base, base+59)
	}
	if n := b2.groups.skippedRecords()[[3]string{"g", "t", "corrupt"}]; n != 10 {
		t.Errorf("skipped records counted: %d, want the damaged batch's 10", n)
	}
}
