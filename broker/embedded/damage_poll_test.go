package embedded

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"testing"
	"time"

	"github.com/weirnet/weir/broker"
)

// TestPollPastBatchFailingItsCRC: a group member owning several partitions
// of which one holds a batch whose CRC fails (bit rot in an old segment).
// Poll failed as a whole at that batch, at every call: the records it had
// read from the partitions before it in the same call were dropped (their
// positions already past them), the partitions after it were never read,
// and the damaged partition never got past the batch, so weir's own
// workers stopped for good on one flipped byte. The batch is skipped,
// logged and counted as skipped records; everything else is delivered.
func TestPollPastBatchFailingItsCRC(t *testing.T) {
	dir := t.TempDir()
	opts := WithTopicDefaults(broker.TopicConfig{Partitions: 3, SegmentBytes: 4096})
	b, err := Open(dir, plainBatches, opts)
	if err != nil {
		t.Fatal(err)
	}
	// 20 batches of 10 records in each partition; record values say
	// where they belong.
	for i := 0; i < 20; i++ {
		for p := int32(0); p < 3; p++ {
			recs := make([]broker.Record, 10)
			for j := range recs {
				recs[j].Value = fmt.Appendf(nil, `{"p":%d,"seq":%d}%s`, p, i*10+j, bytes.Repeat([]byte("x"), 40))
			}
			if err := b.ProducePartition(ctx, "t", p, recs); err != nil {
				t.Fatal(err)
			}
		}
	}
	if err := b.Close(); err != nil {
		t.Fatal(err)
	}
	seg := segmentName(partitionDir(dir, "t", 1), 0, ".log")
	data, err := os.ReadFile(seg)
	if err != nil {
		t.Fatal(err)
	}
	i := bytes.Index(data, []byte(`{"p":1,"seq":15}`))
	if i < 0 {
		t.Fatal("record 15 of partition 1 not found")
	}
	data[i+14] = '6' // the batch of offsets 10 to 19 fails its CRC
	if err := os.WriteFile(seg, data, 0o644); err != nil {
		t.Fatal(err)
	}

	b2 := openTest(t, dir, opts)
	c, err := b2.Consume(ctx, "g", []string{"t"})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	got := map[int32]int{}
	var pollErr error
	for polls := 0; polls < 100; polls++ {
		pctx, cancel := context.WithTimeout(ctx, 200*time.Millisecond)
		recs, err := c.Poll(pctx)
		cancel()
		if err == context.DeadlineExceeded {
			break
		}
		if err != nil {
			pollErr = err
			continue
		}
		for _, r := range recs {
			want := fmt.Sprintf(`{"p":%d,"seq":%d}`, r.Partition, r.Offset)
			if !bytes.HasPrefix(r.Value, []byte(want)) {
				t.Fatalf("partition %d offset %d is %q", r.Partition, r.Offset, r.Value)
			}
			got[r.Partition]++
		}
	}
	if got[0] != 200 || got[2] != 200 || got[1] != 190 {
		t.Fatalf("records delivered by partition: %v, want 200, 190 (a batch of 10 damaged), 200; last poll error: %v", got, pollErr)
	}
	if n := b2.groups.skippedRecords()[[3]string{"g", "t", "corrupt"}]; n != 10 {
		t.Errorf("skipped records counted: %d, want the damaged batch's 10", n)
	}
}
