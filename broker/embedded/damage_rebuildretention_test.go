package embedded

import (
	"encoding/binary"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/weirnet/weir/broker"
)

// TestIndexRebuildAfterRetentionLeavesNoFiles: a read found a sealed
// segment's index entry wrong and, after it released the partition lock,
// calls indexMiss, which rewrites the index files. Retention may remove the
// segment in between (the reader holds only a ref). The rewrite then
// creates .index and .timeindex again for a segment whose .log is gone:
// files no open or retention ever removes (and that a later segment of
// the same base, e.g. a recreated topic, would append to).
func TestIndexRebuildAfterRetentionLeavesNoFiles(t *testing.T) {
	dir := t.TempDir()
	writtenLog(t, dir, WithIndexInterval(256), WithTopicDefaults(broker.TopicConfig{Partitions: 1, SegmentBytes: 8192}))
	pdir := partitionDir(dir, "t", 0)
	idx := segmentName(pdir, 0, ".index")
	data, err := os.ReadFile(idx)
	if err != nil || len(data) < indexEntrySize {
		t.Fatalf("index: %d bytes, %v", len(data), err)
	}
	rel := int64(binary.BigEndian.Uint32(data[:4]))
	binary.BigEndian.PutUint32(data[4:], binary.BigEndian.Uint32(data[4:])+1)
	os.WriteFile(idx, data, 0o644)

	b2 := openTest(t, dir, WithIndexInterval(256))
	p, err := b2.partition(ctx, "t", 0, false)
	if err != nil {
		t.Fatal(err)
	}
	// The reader's half of partition.read, up to its RUnlock.
	p.rw.RLock()
	s := p.segments[0]
	s.acquire()
	size, sealed := s.size.Load(), s.sealed
	pos := s.lookup(rel)
	p.rw.RUnlock()
	if _, err := readFrom(nil, s, pos, size, rel, 1<<16); err == nil {
		t.Fatal("the damaged entry was not noticed")
	}
	// Retention runs now.
	if n, err := p.applyRetention(time.Now().Add(30 * 24 * time.Hour)); err != nil || n == 0 {
		t.Fatalf("retention: %d, %v", n, err)
	}
	// The reader goes on.
	p.indexMiss(s, sealed, size, pos, rel)
	s.release()
	for _, ext := range []string{".log", ".index", ".timeindex"} {
		if _, err := os.Stat(segmentName(pdir, 0, ext)); err == nil {
			left, _ := filepath.Glob(filepath.Join(pdir, "00000000000000000000.*"))
			t.Fatalf("segment 0 removed by retention, yet %v exist after the reader's index rebuild", left)
		}
	}
}
