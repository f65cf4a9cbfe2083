package embedded

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/weirnet/weir/broker"
	"github.com/weirnet/weir/broker/recordbatch"
)

// idemProducer builds the batches of one idempotent producer as a Kafka
// client would: a retry is the same bytes with the same base sequence.
type idemProducer struct {
	id    int64
	epoch int16
	seq   int32 // next base sequence
}

func newIdemProducer(t *testing.T, b *Broker) *idemProducer {
	t.Helper()
	id, epoch, err := b.InitProducerID(ctx)
	if err != nil {
		t.Fatal(err)
	}
	return &idemProducer{id: id, epoch: epoch}
}

// batch encodes n records of valueSize bytes from base sequence seq.
func (p *idemProducer) batch(seq int32, n, valueSize int) []byte {
	var e recordbatch.Encoder
	e.Reset(p.id, p.epoch, seq)
	v := bytes.Repeat([]byte{'v'}, valueSize)
	for range n {
		e.Append(nil, v, nil, 1)
	}
	return append([]byte(nil), e.Finish(0)...)
}

// sent is a batch that was appended: its sequence, size and offset.
type sent struct {
	seq, n    int32
	valueSize int
	offset    int64
}

// send appends the next batch and returns what a retry must reproduce.
func (p *idemProducer) send(t *testing.T, b *Broker, n, valueSize int) sent {
	t.Helper()
	off, err := b.AppendBatches(ctx, "t", 0, p.batch(p.seq, n, valueSize))
	if err != nil {
		t.Fatalf("producer %d seq %d: %v", p.id, p.seq, err)
	}
	s := sent{seq: p.seq, n: int32(n), valueSize: valueSize, offset: off}
	p.seq += int32(n)
	return s
}

func highWatermark(t *testing.T, b *Broker) int64 {
	t.Helper()
	infos, err := b.DescribeTopics(ctx, "t")
	if err != nil {
		t.Fatal(err)
	}
	return infos[0].Partitions[0].HighWatermark
}

// expectDuplicate retries s: it must be acknowledged with its original
// offset and leave the log as it was.
func (p *idemProducer) expectDuplicate(t *testing.T, b *Broker, s sent) {
	t.Helper()
	before := highWatermark(t, b)
	off, err := b.AppendBatches(ctx, "t", 0, p.batch(s.seq, int(s.n), s.valueSize))
	if err != nil || off != s.offset {
		t.Fatalf("producer %d retry of seq %d: offset %d, %v; want %d (a duplicate)", p.id, s.seq, off, err, s.offset)
	}
	if after := highWatermark(t, b); after != before {
		t.Fatalf("producer %d retry of seq %d appended: log end %d -> %d", p.id, s.seq, before, after)
	}
}

// expectSequencing checks that the next sequence is accepted and a gap
// refused, as before a restart.
func (p *idemProducer) expectSequencing(t *testing.T, b *Broker) {
	t.Helper()
	if _, err := b.AppendBatches(ctx, "t", 0, p.batch(p.seq+5, 1, 10)); !errors.Is(err, broker.ErrOutOfOrderSequence) {
		t.Fatalf("producer %d: gap in sequence: %v, want ErrOutOfOrderSequence", p.id, err)
	}
	want := highWatermark(t, b)
	if s := p.send(t, b, 2, 10); s.offset != want {
		t.Fatalf("producer %d: next batch at offset %d, want %d", p.id, s.offset, want)
	}
}

func TestProducerStateAfterCleanRestart(t *testing.T) {
	dir := t.TempDir()
	b := openTest(t, dir)
	if err := b.CreateTopic(ctx, "t", broker.TopicConfig{Partitions: 1}); err != nil {
		t.Fatal(err)
	}
	p := newIdemProducer(t, b)
	first := p.send(t, b, 3, 10)
	last := p.send(t, b, 3, 10)
	if err := b.Close(); err != nil {
		t.Fatal(err)
	}

	b = openTest(t, dir)
	p.expectDuplicate(t, b, last)
	p.expectDuplicate(t, b, first)
	p.expectSequencing(t, b)
	if got := readAll(t, b, "t", 0); len(got) != 8 {
		t.Fatalf("log has %d records, want 8", len(got))
	}
}

// crashCopy copies a broker's directory while it is open, as a kill -9
// would leave it: no clean-shutdown marker, no snapshot from a close.
func crashCopy(t *testing.T, dir string) string {
	t.Helper()
	to := t.TempDir()
	copyTree(t, dir, to)
	if _, err := os.Stat(filepath.Join(to, ".clean_shutdown")); err == nil {
		t.Fatal("crash copy has a clean-shutdown marker")
	}
	return to
}

func TestProducerStateAfterCrash(t *testing.T) {
	dir := t.TempDir()
	b := openTest(t, dir)
	if err := b.CreateTopic(ctx, "t", broker.TopicConfig{Partitions: 1, SegmentBytes: 4 << 10}); err != nil {
		t.Fatal(err)
	}
	// a's batches all lie before a roll, so only the snapshot written at
	// the roll knows them; b's lie after it, in the active segment.
	a, c := newIdemProducer(t, b), newIdemProducer(t, b)
	a1 := a.send(t, b, 1, 1500)
	a2 := a.send(t, b, 1, 1500)
	c1 := c.send(t, b, 1, 1500) // rolls
	c2 := c.send(t, b, 2, 10)
	if infos, _ := b.DescribeTopics(ctx, "t"); infos[0].Partitions[0].Segments != 2 {
		t.Fatalf("%d segments, want 2 (a roll before c's batches)", infos[0].Partitions[0].Segments)
	}
	covered, producers := readProducerSnapshot(t, dir)
	if covered != c1.offset || producers[a.id] == nil || producers[c.id] != nil {
		t.Fatalf("snapshot at roll covers %d with %d producers; want offset %d and producer %d only", covered, len(producers), c1.offset, a.id)
	}

	crashed := openTest(t, crashCopy(t, dir))
	a.expectDuplicate(t, crashed, a2)
	a.expectDuplicate(t, crashed, a1)
	c.expectDuplicate(t, crashed, c2)
	c.expectDuplicate(t, crashed, c1)
	// Each producer's next batch, on a copy of a, c.
	ac, cc := *a, *c
	ac.expectSequencing(t, crashed)
	cc.expectSequencing(t, crashed)

	// A clean restart, then a crash: the snapshot written at close lies
	// within the active segment, and the scan after the crash adds what
	// came after it.
	if err := b.Close(); err != nil {
		t.Fatal(err)
	}
	b = openTest(t, dir)
	a3 := a.send(t, b, 2, 10)
	d := newIdemProducer(t, b)
	d1 := d.send(t, b, 2, 10)
	crashed = openTest(t, crashCopy(t, dir))
	a.expectDuplicate(t, crashed, a3)
	a.expectDuplicate(t, crashed, a2)
	c.expectDuplicate(t, crashed, c2)
	d.expectDuplicate(t, crashed, d1)
	a.expectSequencing(t, crashed)
	c.expectSequencing(t, crashed)
	d.expectSequencing(t, crashed)
}

func readProducerSnapshot(t *testing.T, dir string) (int64, map[int64]*producerState) {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join(partitionDir(dir, "t", 0), producerSnapshotName))
	if err != nil {
		t.Fatal(err)
	}
	covered, producers, err := decodeProducerSnapshot(raw)
	if err != nil {
		t.Fatal(err)
	}
	return covered, producers
}

// A damaged snapshot is ignored: the open succeeds and rebuilds the state
// from the log, also for producers whose batches lie in sealed segments.
func TestProducerStateDamagedSnapshot(t *testing.T) {
	src := t.TempDir()
	b := openTest(t, src)
	if err := b.CreateTopic(ctx, "t", broker.TopicConfig{Partitions: 1, SegmentBytes: 4 << 10}); err != nil {
		t.Fatal(err)
	}
	a, c := newIdemProducer(t, b), newIdemProducer(t, b)
	a1 := a.send(t, b, 1, 1500)
	a2 := a.send(t, b, 1, 1500)
	c1 := c.send(t, b, 1, 1500) // rolls
	c2 := c.send(t, b, 2, 10)
	if err := b.Close(); err != nil {
		t.Fatal(err)
	}
	snap := filepath.Join(partitionDir(src, "t", 0), producerSnapshotName)
	good, err := os.ReadFile(snap)
	if err != nil {
		t.Fatal(err)
	}
	// A snapshot from elsewhere, claiming offsets past the log's end.
	ahead := encodeProducerSnapshot(1000, map[int64]*producerState{
		a.id: {epoch: a.epoch, lastSeq: a.seq + 50, lastUsed: 900, n: 1, recent: [5]seqEntry{{first: a2.seq, last: a2.seq, offset: 900}}},
	})
	damages := map[string]func([]byte) []byte{
		"truncated": func(b []byte) []byte { return b[:len(b)/2] },
		"flipped":   func(b []byte) []byte { b = bytes.Clone(b); b[len(b)/2] ^= 0x40; return b },
		"empty":     func([]byte) []byte { return nil },
		"missing":   nil,
		"ahead":     func([]byte) []byte { return ahead },
	}
	for name, damage := range damages {
		for _, crash := range []bool{false, true} {
			dir := t.TempDir()
			copyTree(t, src, dir)
			snap := filepath.Join(partitionDir(dir, "t", 0), producerSnapshotName)
			if damage == nil {
				os.Remove(snap)
			} else if err := os.WriteFile(snap, damage(good), 0o644); err != nil {
				t.Fatal(err)
			}
			if crash {
				os.Remove(filepath.Join(dir, ".clean_shutdown"))
			}
			b, err := Open(dir)
			if err != nil {
				t.Fatalf("%s snapshot, crash %v: open: %v", name, crash, err)
			}
			a.expectDuplicate(t, b, a2)
			a.expectDuplicate(t, b, a1)
			c.expectDuplicate(t, b, c2)
			c.expectDuplicate(t, b, c1)
			ac, cc := *a, *c
			ac.expectSequencing(t, b)
			cc.expectSequencing(t, b)
			if err := b.Close(); err != nil {
				t.Fatal(err)
			}
		}
	}
}

func TestProducerSnapshotRoundTrip(t *testing.T) {
	in := map[int64]*producerState{
		1: {epoch: 0, lastSeq: 9, lastUsed: 40, n: 2, recent: [5]seqEntry{{5, 9, 40}, {0, 4, 0}}},
		7: {epoch: 3, lastSeq: 1<<31 - 1, lastUsed: 41, n: 5, recent: [5]seqEntry{{1, 2, 41}, {3, 4, 5}, {6, 7, 8}, {9, 10, 11}, {12, 13, 14}}},
		9: {epoch: -1, lastSeq: 0},
	}
	covered, out, err := decodeProducerSnapshot(encodeProducerSnapshot(42, in))
	if err != nil || covered != 42 || len(out) != len(in) {
		t.Fatalf("decoded %d producers covering %d, %v", len(out), covered, err)
	}
	for id, st := range in {
		if *out[id] != *st {
			t.Fatalf("producer %d: %+v, want %+v", id, *out[id], *st)
		}
	}
	if _, _, err := decodeProducerSnapshot(encodeProducerSnapshot(0, nil)); err != nil {
		t.Fatalf("empty state: %v", err)
	}
}

// A snapshot holding more producers than a partition keeps (written by a
// build with a larger bound) loads the most recent ones.
func TestProducerSnapshotBound(t *testing.T) {
	dir := t.TempDir()
	b := openTest(t, dir)
	if err := b.CreateTopic(ctx, "t", broker.TopicConfig{Partitions: 1}); err != nil {
		t.Fatal(err)
	}
	p := newIdemProducer(t, b)
	p.send(t, b, 1, 10)
	if err := b.Close(); err != nil {
		t.Fatal(err)
	}
	many := make(map[int64]*producerState)
	for i := range int64(maxProducers + 10) {
		many[1000+i] = &producerState{lastUsed: i}
	}
	raw := encodeProducerSnapshot(1, many)
	if err := os.WriteFile(filepath.Join(partitionDir(dir, "t", 0), producerSnapshotName), raw, 0o644); err != nil {
		t.Fatal(err)
	}
	b = openTest(t, dir)
	got := b.topics["t"].partitions[0].producers
	if len(got) != maxProducers || got[1000] != nil || got[1000+maxProducers+9] == nil {
		t.Fatalf("%d producers kept (oldest kept: %v), want the %d most recent", len(got), got[1000] != nil, maxProducers)
	}
}

func FuzzDecodeProducerSnapshot(f *testing.F) {
	f.Add(encodeProducerSnapshot(0, nil))
	f.Add(encodeProducerSnapshot(42, map[int64]*producerState{
		1: {lastSeq: 9, lastUsed: 40, n: 2, recent: [5]seqEntry{{5, 9, 40}, {0, 4, 0}}},
	}))
	f.Fuzz(func(t *testing.T, data []byte) {
		covered, producers, err := decodeProducerSnapshot(data)
		if err != nil {
			return
		}
		if again := encodeProducerSnapshot(covered, producers); !bytes.Equal(again, data) {
			t.Fatalf("decoded snapshot encodes differently")
		}
	})
}

// TestProducerSnapshotAheadIsReplaced: a snapshot past the end of the log
// (the log lost data the snapshot saw) is not trusted at open, and is
// removed: else, once the log grew past it, an open after a crash would
// trust it, and the batches between would be neither replayed (their
// retries appended again) nor in order for a live producer.
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

// TestDamagedProducerIDsFileDoesNotReuseIDs: with meta/producer-ids gone
// or damaged, ids started again at 1, so a new idempotent producer got the
// id of one the partitions still remembered and its first batch was
// refused as out of sequence (fatal for librdkafka's producer).
func TestDamagedProducerIDsFileDoesNotReuseIDs(t *testing.T) {
	for name, damage := range map[string]func(string) error{
		"removed":   os.Remove,
		"truncated": func(f string) error { return os.Truncate(f, 3) },
	} {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			b := openTest(t, dir)
			if err := b.CreateTopic(ctx, "t", broker.TopicConfig{Partitions: 1}); err != nil {
				t.Fatal(err)
			}
			old := newIdemProducer(t, b)
			for range 3 {
				old.send(t, b, 5, 10)
			}
			if err := b.Close(); err != nil {
				t.Fatal(err)
			}
			if err := damage(filepath.Join(dir, "meta", "producer-ids")); err != nil {
				t.Fatal(err)
			}
			b = openTest(t, dir)
			fresh := newIdemProducer(t, b)
			if fresh.id <= old.id {
				t.Errorf("new producer id %d, not past %d, which the log remembers", fresh.id, old.id)
			}
			fresh.send(t, b, 2, 10)
		})
	}
}
