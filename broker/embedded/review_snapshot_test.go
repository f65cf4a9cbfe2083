package embedded

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/weirnet/weir/broker"
)

// TestProducerSnapshotAheadIsReplaced: a snapshot past the end of the log
// (the log lost data the snapshot saw) is not trusted at open: the state
// is rebuilt from the log. But the rebuilt state is not written back, so
// the stale file stays. Once the log grows past the stale snapshot's
// offset, a crash makes the next open trust it: the batches between the
// log's end at the rebuild and that offset are never replayed, so their
// producers' retries are appended again (duplicates), and the stale
// entries (here producer a, 50 sequences ahead) refuse a live producer's
// next batch as out of order.
func TestProducerSnapshotAheadIsReplaced(t *testing.T) {
	dir := t.TempDir()
	b := openTest(t, dir)
	// The test batches are timed in 1970: no roll by age (a roll would
	// write a fresh snapshot and hide the stale one).
	cfg := broker.TopicConfig{Partitions: 1, SegmentAge: 200 * 365 * 24 * time.Hour}
	if err := b.CreateTopic(ctx, "t", cfg); err != nil {
		t.Fatal(err)
	}
	a := newIdemProducer(t, b)
	a.send(t, b, 3, 10)
	if err := b.Close(); err != nil {
		t.Fatal(err)
	}
	// A snapshot that saw offsets up to 100, but the log ends at 3.
	ahead := encodeProducerSnapshot(100, map[int64]*producerState{
		a.id: {epoch: a.epoch, lastSeq: a.seq + 50, lastUsed: 90, n: 1, recent: [5]seqEntry{{first: a.seq + 50, last: a.seq + 50, offset: 90}}},
	})
	if err := os.WriteFile(filepath.Join(partitionDir(dir, "t", 0), producerSnapshotName), ahead, 0o644); err != nil {
		t.Fatal(err)
	}

	b = openTest(t, dir) // warns, and rebuilds the state from the log
	a.expectSequencing(t, b)
	e := newIdemProducer(t, b)
	e1 := e.send(t, b, 1, 10)
	filler := newIdemProducer(t, b)
	filler.send(t, b, 200, 10) // the log now ends past 100
	a2 := a.send(t, b, 1, 10)

	crashed := openTest(t, crashCopy(t, dir)) // kill -9 now
	e.expectDuplicate(t, crashed, e1)
	a.expectDuplicate(t, crashed, a2)
	a.expectSequencing(t, crashed)
}
