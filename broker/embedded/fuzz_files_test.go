package embedded

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/weirnet/weir/broker"
)

// FuzzReplayOffsets opens the group offsets file with arbitrary contents
// (a crashed or rotted write): no panic, the entries read are those a
// strict parse finds, and a commit made after the open survives the next
// open together with everything the first open read.
func FuzzReplayOffsets(f *testing.F) {
	a := appendOffsetEntry(nil, groupKey{"g", "t", 0}, 5)
	a = appendOffsetEntry(a, groupKey{"g", "t", 1}, 7)
	a = appendOffsetEntry(a, groupKey{"h", "events", 3}, 100)
	f.Add(a)
	f.Add(a[:len(a)-3])
	bad := bytes.Clone(a)
	bad[20] ^= 1
	f.Add(bad)
	f.Add(appendOffsetRemoval(bytes.Clone(a), groupKey{"g", "t", 0}))
	// A committed -2, then its removal.
	kept := appendOffsetEntry(bytes.Clone(a), groupKey{"g", "t", 2}, -2)
	f.Add(kept)
	f.Add(appendOffsetRemoval(bytes.Clone(kept), groupKey{"g", "t", 2}))
	// A negative commit as write makes it (the removal, then the entry),
	// torn in its entry.
	pair := appendOffsetEntry(appendOffsetRemoval(bytes.Clone(a), groupKey{"g", "t", 0}), groupKey{"g", "t", 0}, -1)
	f.Add(pair[:len(pair)-1])
	f.Add([]byte{})
	f.Add(make([]byte, 64))
	logger := slog.New(slog.DiscardHandler)
	f.Fuzz(func(t *testing.T, data []byte) {
		m := map[groupKey]int64{}
		end, skipped := replayOffsets(data, m)
		if end < 0 || end > len(data) {
			t.Fatalf("end %d of %d bytes", end, len(data))
		}
		last := 0
		for _, d := range skipped {
			if d.at < last || d.n <= 0 || d.at+d.n > len(data) {
				t.Fatalf("damaged spans %v of %d bytes", skipped, len(data))
			}
			last = d.at + d.n
		}
		dir := t.TempDir()
		if err := os.MkdirAll(filepath.Join(dir, "meta"), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, "meta", "offsets.log"), data, 0o644); err != nil {
			t.Fatal(err)
		}
		now := func() time.Time { return time.Unix(1e9, 0) }
		s, err := openOffsetStore(dir, true, now, logger)
		if err != nil {
			t.Fatal(err)
		}
		if !maps.Equal(s.m, m) {
			t.Fatalf("open read %v, replay %v", s.m, m)
		}
		k := groupKey{"after-open", "t", 2}
		// And a negative one (a KafkaJS resetOffsets), on a key the file
		// may hold already.
		neg := groupKey{"g", "t", 0}
		if err := s.commit([]GroupOffset{{Group: k.group, Topic: k.topic, Partition: k.partition, Offset: 42},
			{Group: neg.group, Topic: neg.topic, Partition: neg.partition, Offset: -2}}); err != nil {
			t.Fatal(err)
		}
		want := maps.Clone(m)
		want[k] = 42
		want[neg] = -2
		if err := s.close(); err != nil {
			t.Fatal(err)
		}
		s2, err := openOffsetStore(dir, true, now, logger)
		if err != nil {
			t.Fatal(err)
		}
		defer s2.close()
		if !maps.Equal(s2.m, want) {
			t.Fatalf("after a commit and a reopen: %v, want %v", s2.m, want)
		}
	})
}

// sealedTemplate writes a log of three or more segments whose records
// carry increasing timestamps (one second apart, from ts0), and returns
// the records.
func sealedTemplate(t testing.TB, dir string) []broker.Record {
	b, err := Open(dir, plainBatches, WithIndexInterval(256), WithTopicDefaults(broker.TopicConfig{Partitions: 1, SegmentBytes: 8192}))
	if err != nil {
		t.Fatal(err)
	}
	var all []broker.Record
	for i := range 50 {
		recs := makeRecords(10, i*10)
		for j := range recs {
			recs[j].Value = append(recs[j].Value, bytes.Repeat([]byte("x"), 40)...)
			recs[j].Timestamp = time.UnixMilli(ts0 + int64(i*10+j)*1000)
		}
		if err := b.ProducePartition(ctx, "t", 0, recs); err != nil {
			t.Fatal(err)
		}
		all = append(all, recs...)
	}
	if err := b.Close(); err != nil {
		t.Fatal(err)
	}
	return all
}

const ts0 = 1_700_000_000_000

// FuzzSealedIndexes opens a log whose first (sealed) segment has arbitrary
// offset and time index files (a crash or rot): no panic, every record is
// still read, a fetch at any offset of that segment starts at it, the
// largest timestamp is found, and, for a time index a crash may leave, a
// timestamp look-up finds the first record at or after the time.
func FuzzSealedIndexes(f *testing.F) {
	tmpl := f.TempDir()
	recs := sealedTemplate(f, tmpl)
	pdir := partitionDir(tmpl, "t", 0)
	idx, _ := os.ReadFile(segmentName(pdir, 0, ".index"))
	tidx, _ := os.ReadFile(segmentName(pdir, 0, ".timeindex"))
	bases := segmentBases(&testing.T{}, pdir)
	if len(bases) < 3 {
		f.Fatalf("segments %v", bases)
	}
	segEnd := bases[1]
	f.Add(idx, tidx)
	f.Add(idx[:len(idx)-3], tidx[:len(tidx)-5])
	f.Add(append(bytes.Clone(idx), make([]byte, 16)...), append(bytes.Clone(tidx), make([]byte, 24)...))
	f.Add([]byte{}, []byte{})
	if len(idx) >= 16 {
		swapped := bytes.Clone(idx)
		copy(swapped[:8], idx[8:16])
		copy(swapped[8:16], idx[:8])
		f.Add(swapped, tidx)
	}
	f.Fuzz(func(t *testing.T, idxData, tidxData []byte) {
		dir := t.TempDir()
		copyTree(t, tmpl, dir)
		p := partitionDir(dir, "t", 0)
		if err := os.WriteFile(segmentName(p, 0, ".index"), idxData, 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(segmentName(p, 0, ".timeindex"), tidxData, 0o644); err != nil {
			t.Fatal(err)
		}
		b, err := Open(dir, WithIndexInterval(256), WithLogger(slog.New(slog.DiscardHandler)))
		if err != nil {
			t.Fatal(err)
		}
		defer b.Close()
		got := readAll(t, b, "t", 0)
		if len(got) != len(recs) {
			t.Fatalf("read %d records, wrote %d", len(got), len(recs))
		}
		var res broker.FetchResult
		for off := int64(0); off < segEnd+2; off += 7 {
			if err := b.Fetch(ctx, "t", 0, off, broker.FetchOptions{MaxBytes: 1}, &res); err != nil {
				t.Fatalf("fetch at %d: %v", off, err)
			}
			if len(res.Records) == 0 || res.Records[0].Offset > off {
				first := int64(-1)
				if len(res.Records) > 0 {
					first = res.Records[0].Offset
				}
				t.Fatalf("fetch at %d starts at %d", off, first)
			}
		}
		if off, ts, err := b.ListOffset("t", 0, -3); err != nil || off != int64(len(recs)-1) || ts != ts0+int64(len(recs)-1)*1000 {
			t.Fatalf("largest timestamp: offset %d at %d (%v), want %d", off, ts, err, len(recs)-1)
		}
		if !crashShaped(tidxData, tidx) {
			// Time index entries rotted in place (not what a crash
			// leaves) may send a look-up past earlier records: each
			// entry is trusted to bound the timestamps before it.
			return
		}
		for i := int64(0); i < segEnd+2; i += 5 {
			ts := ts0 + i*1000 - 500
			off, _, err := b.ListOffset("t", 0, ts)
			if err != nil {
				t.Fatalf("list offset at %d: %v", ts, err)
			}
			if off != i {
				t.Fatalf("first record at or after %d is offset %d, look-up says %d", ts, i, off)
			}
		}
	})
}

// crashShaped reports whether a time index is what a crash may leave of
// the real one: whole entries of it, then a torn entry or zeros (blocks
// allocated but not written).
func crashShaped(got, real []byte) bool {
	k := 0
	for k < len(got) && k < len(real) && got[k] == real[k] {
		k++
	}
	k -= k % timeEntrySize
	rest := got[k:]
	return len(rest) < timeEntrySize || bytes.Count(rest, []byte{0}) == len(rest)
}

// FuzzTopicMeta opens a log whose topic metadata file holds arbitrary
// JSON: the open either refuses it with an error or serves the topic, and
// never panics.
func FuzzTopicMeta(f *testing.F) {
	good, _ := json.Marshal(metaFromConfig("t", [16]byte{1}, broker.TopicConfig{Partitions: 2, RetentionTime: time.Hour}))
	f.Add(good)
	f.Add([]byte(`{"name":"t","partitions":-1}`))
	f.Add([]byte(`{"name":"t","partitions":0}`))
	f.Add([]byte(`{"name":"t","partitions":100000000}`))
	f.Add([]byte(`{"name":"../x","partitions":1}`))
	f.Add([]byte(`{"name":"","partitions":1}`))
	f.Add([]byte(`{"name":"t","partitions":1,"segment_bytes":-5,"retention_ms":-9223372036854775808}`))
	f.Add([]byte(`{`))
	f.Fuzz(func(t *testing.T, data []byte) {
		var m topicMeta
		if json.Unmarshal(data, &m) == nil && m.Partitions > 64 {
			return // a partition directory each: not what this exercises
		}
		dir := t.TempDir()
		if err := os.MkdirAll(metaDir(dir), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(metaDir(dir), "t.json"), data, 0o644); err != nil {
			t.Fatal(err)
		}
		b, err := Open(dir, WithLogger(slog.New(slog.DiscardHandler)))
		if err != nil {
			return
		}
		defer b.Close()
		infos, err := b.DescribeTopics(ctx)
		if err != nil {
			t.Fatal(err)
		}
		for _, in := range infos {
			if len(in.Partitions) == 0 {
				t.Fatalf("topic %q opened with no partitions", in.Name)
			}
			for _, p := range in.Partitions {
				if err := b.ProducePartition(ctx, in.Name, p.Partition, []broker.Record{{Value: []byte("v")}}); err != nil {
					t.Fatalf("topic %q partition %d opened but takes no record: %v", in.Name, p.Partition, err)
				}
			}
		}
	})
}

// TestTopicMetaWithoutPartitionsRefused: a topic metadata file damaged to
// say 0 partitions opened a topic with none, and the first produce to it
// panicked (a division by zero choosing the partition). The open refuses
// the file instead, naming it.
func TestTopicMetaWithoutPartitionsRefused(t *testing.T) {
	for _, meta := range []string{`{"name":"t","partitions":0}`, `{"name":"t","partitions":-1}`, `{"name":"../t","partitions":1}`} {
		dir := t.TempDir()
		if err := os.MkdirAll(metaDir(dir), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(metaDir(dir), "t.json"), []byte(meta), 0o644); err != nil {
			t.Fatal(err)
		}
		b, err := Open(dir, WithLogger(slog.New(slog.DiscardHandler)))
		if err == nil {
			perr := func() (err error) {
				defer func() {
					if r := recover(); r != nil {
						err = fmt.Errorf("panic: %v", r)
					}
				}()
				return b.Produce(ctx, "t", []broker.Record{{Key: []byte("k"), Value: []byte("v")}})
			}()
			b.Close()
			t.Fatalf("%s: opened; produce: %v", meta, perr)
		}
		if !errors.Is(err, broker.ErrStorage) || !strings.Contains(err.Error(), "t.json") {
			t.Fatalf("%s: %v, want a storage error naming the file", meta, err)
		}
	}
}

// TestTimeLookupPastDamagedMaxTimestamp: the last time index entry of a
// sealed segment rotted to a far future timestamp (its offset intact).
// A look-up of a time in the next segment chose the damaged one, found no
// record at or after the time in it and answered -1 (none: a consumer
// reset by time went to the end, skipping the records). It goes on to
// the next segment.
func TestTimeLookupPastDamagedMaxTimestamp(t *testing.T) {
	dir := t.TempDir()
	recs := sealedTemplate(t, dir)
	p := partitionDir(dir, "t", 0)
	bases := segmentBases(t, p)
	name := segmentName(p, 0, ".timeindex")
	tidx, err := os.ReadFile(name)
	if err != nil || len(tidx) < timeEntrySize {
		t.Fatalf("time index: %d bytes, %v", len(tidx), err)
	}
	last := len(tidx)/timeEntrySize*timeEntrySize - timeEntrySize
	binary.BigEndian.PutUint64(tidx[last:], uint64(ts0)*1000)
	if err := os.WriteFile(name, tidx, 0o644); err != nil {
		t.Fatal(err)
	}
	b := openTest(t, dir, WithLogger(slog.New(slog.DiscardHandler)))
	want := bases[1] + 3
	off, _, err := b.ListOffset("t", 0, recs[want].Timestamp.UnixMilli())
	if err != nil || off != want {
		t.Fatalf("first record at or after record %d's time: %d (%v)", want, off, err)
	}
}
