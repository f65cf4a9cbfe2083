package embedded

import (
	"bytes"
	"os"
	"testing"

	"github.com/weirnet/weir/broker"
)

// TestSealedRebuildDoesNotCutIntactRecords: segment 0 lost its
// .timeindex (documented to cost a scan) and one byte of one record in its
// second batch rotted. The open rebuilds the index files with a full scan
// without truncating a sealed segment at a batch failing its CRC (the
// active segment's recovery would): the intact batches after it are
// still read.
func TestSealedRebuildDoesNotCutIntactRecords(t *testing.T) {
	dir := t.TempDir()
	writtenLog(t, dir, WithIndexInterval(256), WithTopicDefaults(broker.TopicConfig{Partitions: 1, SegmentBytes: 8192}))
	pdir := partitionDir(dir, "t", 0)
	bases := segmentBases(t, pdir)
	if len(bases) < 3 || bases[1] < 40 {
		t.Fatalf("segments %v", bases)
	}
	seg := segmentName(pdir, 0, ".log")
	data, _ := os.ReadFile(seg)
	before := len(data)
	i := bytes.Index(data, []byte(`{"seq":15}`))
	if i < 0 {
		t.Fatal("record 15 not found")
	}
	data[i+len(`{"seq":15}`)+3] ^= 1 // one bit of record 15's padding
	os.WriteFile(seg, data, 0o644)
	if err := os.Remove(segmentName(pdir, 0, ".timeindex")); err != nil {
		t.Fatal(err)
	}
	b2 := openTest(t, dir, WithIndexInterval(256))
	var res broker.FetchResult
	if err := b2.Fetch(ctx, "t", 0, 20, broker.FetchOptions{MaxBytes: 64 << 10}, &res); err != nil {
		t.Fatalf("fetch at 20: %v", err)
	}
	st, _ := os.Stat(seg)
	if len(res.Records) == 0 || res.Records[0].Offset != 20 {
		first := int64(-1)
		if len(res.Records) > 0 {
			first = res.Records[0].Offset
		}
		t.Fatalf("fetch at offset 20 (batch intact) starts at %d; segment 0 was %d bytes, is now %d: the intact batches 20..%d were cut from disk",
			first, before, st.Size(), bases[1]-1)
	}
}
