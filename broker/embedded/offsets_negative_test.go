package embedded

import (
	"context"
	"encoding/binary"
	"hash/crc32"
	"log/slog"
	"maps"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/weirnet/weir/broker"
)

// fetchOffsetsV8 is what OffsetFetch (v8) answers for the group's
// partitions 0..n-1 of topic.
func fetchOffsetsV8(t *testing.T, b *Broker, group, topic string, n int) []int64 {
	t.Helper()
	req := kmsg.NewPtrOffsetFetchRequest()
	req.Version = 8
	rg := kmsg.NewOffsetFetchRequestGroup()
	rg.Group = group
	rt := kmsg.NewOffsetFetchRequestGroupTopic()
	rt.Topic = topic
	for p := range n {
		rt.Partitions = append(rt.Partitions, int32(p))
	}
	rg.Topics = append(rg.Topics, rt)
	req.Groups = append(req.Groups, rg)
	resp := b.OffsetFetch(req)
	if len(resp.Groups) != 1 || resp.Groups[0].ErrorCode != 0 || len(resp.Groups[0].Topics) != 1 {
		t.Fatalf("offset fetch: %+v", resp)
	}
	var out []int64
	for _, p := range resp.Groups[0].Topics[0].Partitions {
		if p.ErrorCode != 0 {
			t.Fatalf("offset fetch of partition %d: %v", p.Partition, kerr.ErrorForCode(p.ErrorCode))
		}
		out = append(out, p.Offset)
	}
	return out
}

// TestNegativeCommittedOffsetKept: a client may commit -2 or -1 (KafkaJS's
// admin.resetOffsets does, for earliest and latest); Kafka stores it as
// given and OffsetFetch returns it, the group existing (Empty) until it
// is deleted. It is kept across a reopen, counts as no committed position
// for an in-process member (which starts at the log start), and the group
// can still be deleted, for good.
func TestNegativeCommittedOffsetKept(t *testing.T) {
	dir := t.TempDir()
	b := openTest(t, dir)
	if err := b.CreateTopic(ctx, "t", broker.TopicConfig{Partitions: 3}); err != nil {
		t.Fatal(err)
	}
	if err := b.ProducePartition(ctx, "t", 0, makeRecords(4, 0)); err != nil {
		t.Fatal(err)
	}
	// An admin tool's commit: no member, generation -1.
	wantCode(t, "commit", commitCode(t, b.OffsetCommit(commitReq("reset", "", -1, "t", map[int32]int64{0: -2, 1: -1, 2: 0}))), nil)
	check := func(b *Broker, when string) {
		t.Helper()
		if got := fetchOffsetsV8(t, b, "reset", "t", 3); got[0] != -2 || got[1] != -1 || got[2] != 0 {
			t.Fatalf("%s: fetched %v, want [-2 -1 0]", when, got)
		}
		d := b.DescribeGroups(&kmsg.DescribeGroupsRequest{Version: 5, Groups: []string{"reset"}}).Groups[0]
		if d.ErrorCode != 0 || d.State != "Empty" {
			t.Fatalf("%s: described %q (error %d), want Empty", when, d.State, d.ErrorCode)
		}
	}
	check(b, "after the commit")
	b.Close()

	b = openTest(t, dir)
	check(b, "after a reopen")

	// Lag of a partition committed negative counts from the log start, as
	// kadm's (weir groups describe) does; no committed offset is shown.
	reg := prometheus.NewPedanticRegistry()
	reg.MustRegister(b.Collector())
	exp := `# HELP weir_consumer_lag Records between a group's committed offset (or, for a partition it consumes without one, the log start) and the log end.
# TYPE weir_consumer_lag gauge
weir_consumer_lag{group="reset",partition="0",topic="t"} 4
weir_consumer_lag{group="reset",partition="1",topic="t"} 0
weir_consumer_lag{group="reset",partition="2",topic="t"} 0
`
	if err := testutil.GatherAndCompare(reg, strings.NewReader(exp), "weir_consumer_lag"); err != nil {
		t.Fatal(err)
	}
	if n, err := testutil.GatherAndCount(reg, "weir_consumer_committed_offset"); err != nil || n != 1 {
		t.Fatalf("%d committed offsets shown (%v), want 1: a negative one is none", n, err)
	}

	// An in-process member takes -2 as no commit: it reads from the start.
	c, err := b.Consume(ctx, "reset", []string{"t"})
	if err != nil {
		t.Fatal(err)
	}
	var got []broker.Record
	for len(got) < 4 {
		pctx, cancel := context.WithTimeout(ctx, 30*time.Second)
		recs, err := c.Poll(pctx)
		cancel()
		if err != nil {
			t.Fatalf("poll after %d records: %v", len(got), err)
		}
		got = append(got, recs...)
	}
	if got[0].Partition != 0 || got[0].Offset != 0 {
		t.Fatalf("first record read: partition %d offset %d, want 0/0", got[0].Partition, got[0].Offset)
	}
	// Partition 1 (committed -1, empty) is at its start, not at -1.
	if pos, ok := c.(broker.Positioner).Position(context.Background(), broker.TopicPartition{Topic: "t", Partition: 1}); !ok || pos != 0 {
		t.Fatalf("position on partition 1: %d (%v), want 0", pos, ok)
	}
	if err := c.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	c.Close()
	if got := fetchOffsetsV8(t, b, "reset", "t", 3); got[0] != 4 || got[1] != 0 || got[2] != 0 {
		t.Fatalf("after the member's commit: fetched %v, want [4 0 0]", got)
	}
	// A member starting at the end takes a negative commit as none too:
	// it starts, and commits, at the end.
	if err := b.CommitOffsets([]GroupOffset{{"late", "t", 0, -2}}); err != nil {
		t.Fatal(err)
	}
	late, err := b.Consume(ctx, "late", []string{"t"}, broker.WithResetToLatest())
	if err != nil {
		t.Fatal(err)
	}
	if err := late.Commit(ctx); err != nil { // applies the assignment
		t.Fatal(err)
	}
	if pos, ok := late.(broker.Positioner).Position(context.Background(), broker.TopicPartition{Topic: "t", Partition: 0}); !ok || pos != 4 {
		t.Fatalf("late member's position on partition 0: %d (%v), want 4", pos, ok)
	}
	late.Close()

	del := b.DeleteGroups(&kmsg.DeleteGroupsRequest{Version: 2, Groups: []string{"reset"}})
	if code := del.Groups[0].ErrorCode; code != 0 {
		t.Fatalf("delete group: %v", kerr.ErrorForCode(code))
	}
	b.Close()
	b = openTest(t, dir)
	if got := fetchOffsetsV8(t, b, "reset", "t", 3); got[0] != -1 || got[1] != -1 || got[2] != -1 {
		t.Fatalf("after the delete and a reopen: fetched %v, want nothing committed", got)
	}
	if d := b.DescribeGroups(&kmsg.DescribeGroupsRequest{Version: 5, Groups: []string{"reset"}}).Groups[0]; d.State != "Dead" {
		t.Fatalf("after the delete and a reopen: described %q, want Dead", d.State)
	}
}

// oldOffsetEntry is an entry as weir wrote them before negative offsets
// were kept: a negative offset removed the key (deleted groups and topics
// wrote -1; a client's negative commit was written as given).
func oldOffsetEntry(b []byte, group, topic string, partition int32, off int64) []byte {
	var e []byte
	e = binary.BigEndian.AppendUint16(e, uint16(len(group)))
	e = append(e, group...)
	e = binary.BigEndian.AppendUint16(e, uint16(len(topic)))
	e = append(e, topic...)
	e = binary.BigEndian.AppendUint32(e, uint32(partition))
	e = binary.BigEndian.AppendUint64(e, uint64(off))
	b = binary.BigEndian.AppendUint32(b, uint32(len(e)))
	b = binary.BigEndian.AppendUint32(b, crc32.Checksum(e, crc32.MakeTable(crc32.Castagnoli)))
	return append(b, e...)
}

// TestOffsetsFileOfEarlierVersions: a file written before negative
// offsets were kept reads as it did: its negative entries delete.
func TestOffsetsFileOfEarlierVersions(t *testing.T) {
	dir := t.TempDir()
	var b []byte
	b = oldOffsetEntry(b, "deleted", "t", 0, 5)
	b = oldOffsetEntry(b, "deleted", "t", 1, 6)
	b = oldOffsetEntry(b, "kept", "t", 0, 7)
	b = oldOffsetEntry(b, "deleted", "t", 0, -1)
	b = oldOffsetEntry(b, "deleted", "t", 1, -1)
	b = oldOffsetEntry(b, "reset", "t", 0, 9)
	b = oldOffsetEntry(b, "reset", "t", 0, -2)
	if err := os.MkdirAll(filepath.Join(dir, "meta"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "meta", "offsets.log"), b, 0o644); err != nil {
		t.Fatal(err)
	}
	for i := range 2 {
		s, err := openOffsetStore(dir, true, time.Now, slog.Default())
		if err != nil {
			t.Fatal(err)
		}
		if got := s.all(); len(got) != 1 || got[0] != (GroupOffset{"kept", "t", 0, 7}) {
			t.Fatalf("open %d: %v, want only kept/t/0 at 7", i, got)
		}
		if _, err := os.Stat(s.path + ".damaged"); err == nil {
			t.Fatalf("open %d: the file was taken as damaged", i)
		}
		// A commit of -2 now is kept; the next open reads both kinds.
		if err := s.commit([]GroupOffset{{"new", "t", 0, -2}}); err != nil {
			t.Fatal(err)
		}
		if off, ok := s.committed("new", "t", 0); !ok || off != -2 {
			t.Fatalf("open %d: committed -2 reads %d (%v)", i, off, ok)
		}
		if err := s.deleteGroup("new"); err != nil {
			t.Fatal(err)
		}
		if err := s.close(); err != nil {
			t.Fatal(err)
		}
	}
}

// earlierVersionsReplay reads b as weir did before negative offsets were
// kept: an entry of the original layout is applied (a negative offset
// removing its key), any other is skipped as damaged, the entries after
// it read on.
func earlierVersionsReplay(b []byte) map[groupKey]int64 {
	m := map[groupKey]int64{}
	for pos := 0; pos+8 <= len(b); {
		n := int(binary.BigEndian.Uint32(b[pos:]))
		if n < 14 || pos+8+n > len(b) {
			break
		}
		e := b[pos+8 : pos+8+n]
		pos += 8 + n
		gl := int(binary.BigEndian.Uint16(e))
		if 2+gl+2 > len(e) {
			continue
		}
		tl := int(binary.BigEndian.Uint16(e[2+gl:]))
		if 2+gl+2+tl+12 != len(e) {
			continue // the kind byte's layout: damaged to them
		}
		k := groupKey{string(e[2 : 2+gl]), string(e[4+gl : 4+gl+tl]), int32(binary.BigEndian.Uint32(e[4+gl+tl:]))}
		if off := int64(binary.BigEndian.Uint64(e[8+gl+tl:])); off < 0 {
			delete(m, k)
		} else {
			m[k] = off
		}
	}
	return m
}

// TestNegativeCommitAfterDowngrade: going back to an earlier version, a
// negative commit reads as those versions wrote it, a removal: the
// offset committed before the reset must not come back (the group would
// resume where the reset moved it from), whether or not the file was
// compacted since.
func TestNegativeCommitAfterDowngrade(t *testing.T) {
	dir := t.TempDir()
	s, err := openOffsetStore(dir, true, time.Now, slog.Default())
	if err != nil {
		t.Fatal(err)
	}
	if err := s.commit([]GroupOffset{{"g", "t", 0, 500}, {"g", "t", 1, 600}, {"h", "t", 0, 7}}); err != nil {
		t.Fatal(err)
	}
	if err := s.commit([]GroupOffset{{"g", "t", 0, -2}, {"g", "t", 1, -1}}); err != nil {
		t.Fatal(err)
	}
	want := map[groupKey]int64{{"h", "t", 0}: 7}
	b, err := os.ReadFile(s.path)
	if err != nil {
		t.Fatal(err)
	}
	if got := earlierVersionsReplay(b); !maps.Equal(got, want) {
		t.Fatalf("an earlier version reads %v, want %v", got, want)
	}
	if off, ok := s.committed("g", "t", 0); !ok || off != -2 {
		t.Fatalf("committed -2 reads %d (%v)", off, ok)
	}
	s.mu.Lock()
	err = s.compact()
	s.mu.Unlock()
	if err != nil {
		t.Fatal(err)
	}
	if b, err = os.ReadFile(s.path); err != nil {
		t.Fatal(err)
	}
	if got := earlierVersionsReplay(b); !maps.Equal(got, want) {
		t.Fatalf("compacted, an earlier version reads %v, want %v", got, want)
	}
	if err := s.close(); err != nil {
		t.Fatal(err)
	}
	s, err = openOffsetStore(dir, true, time.Now, slog.Default())
	if err != nil {
		t.Fatal(err)
	}
	defer s.close()
	if got := s.all(); len(got) != 3 || got[0].Offset != -2 || got[1].Offset != -1 || got[2].Offset != 7 {
		t.Fatalf("reopened: %v", got)
	}
}
