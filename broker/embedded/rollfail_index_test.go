package embedded

import (
	"bytes"
	"fmt"
	"log/slog"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/weirnet/weir/broker"
	"github.com/weirnet/weir/internal/syncbuf"
)

// TestFailedRollLeavesIndexesMatching: a roll that fails (no inode left
// for the new segment on a full file system) after it added the segment's
// final time index entry left that entry in the still active segment's
// time index; the batches appended to it afterwards gave the time index one
// entry more than the offset index, so the open after a clean stop found
// them mismatched, logged a warning and scanned the segment.
func TestFailedRollLeavesIndexesMatching(t *testing.T) {
	dir := tmpfsDir(t)
	opts := []Option{plainBatches, WithIndexInterval(256), WithTopicDefaults(broker.TopicConfig{Partitions: 1, SegmentBytes: 64 << 10})}
	b, err := Open(dir, opts...)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	value := func(n, seq int) []broker.Record {
		// A second apart: the final time entry is one of its own.
		return []broker.Record{{Timestamp: time.UnixMilli(1_700_000_000_000).Add(time.Duration(seq) * time.Second),
			Value: append([]byte(fmt.Sprintf(`{"seq":%d}`, seq)), bytes.Repeat([]byte(" "), n)...)}}
	}
	for i := range 40 {
		if err := b.Produce(ctx, "t", value(1000, i)); err != nil {
			t.Fatal(err)
		}
	}
	b.forEachPartition(func(p *partition) { p.flush() })
	var st syscall.Statfs_t
	if err := syscall.Statfs(dir, &st); err != nil {
		t.Fatal(err)
	}
	used := st.Files - st.Ffree
	if err := syscall.Mount("tmpfs", dir, "tmpfs", syscall.MS_REMOUNT, fmt.Sprintf("size=%d,nr_inodes=%d", 1<<20, used)); err != nil {
		t.Skipf("cannot limit the tmpfs's inodes: %v", err)
	}
	// Past segment.bytes: the roll cannot make the next segment.
	if err := b.Produce(ctx, "t", value(30000, 100)); err == nil {
		t.Fatal("a roll with no inode left worked")
	}
	// Small ones fit in the active segment.
	for i := range 5 {
		if err := b.Produce(ctx, "t", value(300, 200+i)); err != nil {
			t.Fatalf("a batch that fits the active segment: %v", err)
		}
	}
	if err := syscall.Mount("tmpfs", dir, "tmpfs", syscall.MS_REMOUNT, fmt.Sprintf("size=%d,nr_inodes=%d", 1<<20, used+100)); err != nil {
		t.Fatal(err)
	}
	if err := b.Close(); err != nil {
		t.Fatalf("clean close: %v", err)
	}
	var logs syncbuf.Buffer
	openTest(t, dir, append(opts, WithLogger(slog.New(slog.NewTextHandler(&logs, nil))))...)
	if strings.Contains(logs.String(), "does not match") {
		t.Errorf("the open after a clean stop found the indexes mismatched:\n%s", logs.String())
	}
}
