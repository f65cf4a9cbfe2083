package embedded

import (
	"sync/atomic"
	"testing"
	"time"

	"github.com/weirnet/weir/broker"
)

// segmentsAfterRestart writes to a one-partition topic whose segments roll
// after an hour: first at the start, with records stamped ts(start), then
// 50 minutes later; the log is closed (or left as after a crash) and
// opened again, and 70 minutes after the start one more record is
// appended. It returns the partition's segment count: the active segment
// is then older than its age and must have rolled, 2.
func segmentsAfterRestart(t *testing.T, clean bool, ts func(start time.Time) time.Time) int {
	t.Helper()
	dir := t.TempDir()
	start := time.Now()
	var clock atomic.Pointer[time.Time]
	clock.Store(&start)
	opts := []Option{withClock(func() time.Time { return *clock.Load() }), WithIndexInterval(256),
		WithTopicDefaults(broker.TopicConfig{Partitions: 1, SegmentAge: time.Hour, RetentionTime: -1})}
	b, err := Open(dir, opts...)
	if err != nil {
		t.Fatal(err)
	}
	produce := func(b *Broker, n int) {
		t.Helper()
		recs := makeRecords(n, 0)
		for i := range recs {
			recs[i].Timestamp = ts(start)
		}
		if err := b.Produce(ctx, "t", recs); err != nil {
			t.Fatal(err)
		}
	}
	for range 20 {
		produce(b, 10)
	}
	later := start.Add(50 * time.Minute)
	clock.Store(&later)
	for range 20 {
		produce(b, 10)
	}
	if clean {
		if err := b.Close(); err != nil {
			t.Fatal(err)
		}
	} else {
		b.closeFiles() // as a crash leaves it: no index flush, no marker
	}
	after := start.Add(70 * time.Minute)
	clock.Store(&after)
	b2 := openTest(t, dir, opts...)
	produce(b2, 1)
	info, err := b2.DescribeTopics(ctx, "t")
	if err != nil {
		t.Fatal(err)
	}
	return info[0].Partitions[0].Segments
}

// closeFiles closes every partition's files without flushing anything, as
// a process killed would leave them, and releases the lock.
func (b *Broker) closeFiles() {
	b.stop()
	b.bg.Wait()
	b.mu.Lock()
	for _, t := range b.topics {
		for _, p := range t.partitions {
			p.closeFiles()
		}
	}
	b.mu.Unlock()
	b.offsets.close()
	b.lock.Release()
}

// TestSegmentAgeAcrossCleanRestart: after a clean restart the active
// segment's age counted from the batch at its last index entry, not its
// first, so a partition written to steadily and restarted more often than
// segment.age never rolled by age, and retention by time, which deletes
// only sealed segments of a partition being written, never deleted it.
func TestSegmentAgeAcrossCleanRestart(t *testing.T) {
	if n := segmentsAfterRestart(t, true, func(time.Time) time.Time { return time.Time{} }); n != 2 {
		t.Fatalf("%d segments 70 minutes after the first append, with a 1h segment age; want 2", n)
	}
}

// TestSegmentAgeWithFutureTimestamps: after a restart the active
// segment's age counted from its first record's timestamp, the producer's
// clock: a device ten years ahead kept the segment from ever rolling by age.
func TestSegmentAgeWithFutureTimestamps(t *testing.T) {
	future := func(start time.Time) time.Time { return start.AddDate(10, 0, 0) }
	for _, clean := range []bool{true, false} {
		if n := segmentsAfterRestart(t, clean, future); n != 2 {
			t.Fatalf("clean=%v: %d segments 70 minutes after the first append, with a 1h segment age; want 2", clean, n)
		}
	}
}
