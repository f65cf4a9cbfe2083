package embedded

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/weirnet/weir/broker"
)

// TestDeleteTopicOnFullDiskForgetsOffsets: deleting a topic is how an
// operator frees a full disk, but the deletion writes its groups'
// offset tombstones before the data goes, so on a full disk that write
// failed and was ignored: the group kept its offsets, and the topic made
// again (a collector producing to it) was read from the old topic's
// offsets, past the new records.
func TestDeleteTopicOnFullDiskForgetsOffsets(t *testing.T) {
	dir := tmpfsDir(t)
	b, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	if err := b.CreateTopic(ctx, "a", broker.TopicConfig{Partitions: 1}); err != nil {
		t.Fatal(err)
	}
	if err := b.ProducePartition(ctx, "a", 0, makeRecords(500, 0)); err != nil {
		t.Fatal(err)
	}
	// Enough groups that their tombstones take more than the page the
	// file has left.
	var offs []GroupOffset
	for i := range 300 {
		offs = append(offs, GroupOffset{Group: fmt.Sprintf("g%d", i), Topic: "a", Partition: 0, Offset: 500})
	}
	if err := b.CommitOffsets(offs); err != nil {
		t.Fatal(err)
	}
	f, err := os.Create(filepath.Join(dir, "filler"))
	if err != nil {
		t.Fatal(err)
	}
	for _, err = f.Write(make([]byte, 4096)); err == nil; _, err = f.Write(make([]byte, 4096)) {
	}
	f.Close()
	if err := b.DeleteTopic(ctx, "a"); err != nil {
		t.Fatalf("deleting a topic on a full disk: %v", err)
	}
	if off, ok := b.Committed("g7", "a", 0); ok {
		t.Errorf("after the topic's deletion, group g7 still has offset %d on it", off)
	}
	// The topic made again: its group starts afresh, now and after a
	// restart (the space the deletion freed lets the store catch up).
	if err := b.CreateTopic(ctx, "a", broker.TopicConfig{Partitions: 1}); err != nil {
		t.Fatal(err)
	}
	if err := b.ProducePartition(ctx, "a", 0, makeRecords(10, 0)); err != nil {
		t.Fatal(err)
	}
	if off, ok := b.Committed("g7", "a", 0); ok {
		t.Errorf("the topic made again: group g7 has the old topic's offset %d", off)
	}
	if err := b.Close(); err != nil {
		t.Fatal(err)
	}
	b = openTest(t, dir)
	if off, ok := b.Committed("g7", "a", 0); ok {
		t.Errorf("after a restart: group g7 has the deleted topic's offset %d", off)
	}
}

// TestNewTopicHasNoOldOffsets: a deletion stopped between the topic's
// metadata and its groups' offsets (a crash; a full disk until the stop)
// left the offsets in meta/offsets.log, and the topic made again under
// the name after the restart was read from them.
func TestNewTopicHasNoOldOffsets(t *testing.T) {
	dir := t.TempDir()
	b, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	if err := b.CreateTopic(ctx, "a", broker.TopicConfig{Partitions: 1}); err != nil {
		t.Fatal(err)
	}
	if err := b.CommitOffsets([]GroupOffset{{Group: "g", Topic: "a", Partition: 0, Offset: 500}}); err != nil {
		t.Fatal(err)
	}
	if err := b.Close(); err != nil {
		t.Fatal(err)
	}
	// What the deletion had done when it stopped.
	if err := os.Remove(filepath.Join(dir, "meta", "topics", "a.json")); err != nil {
		t.Fatal(err)
	}
	b = openTest(t, dir)
	if err := b.CreateTopic(ctx, "a", broker.TopicConfig{Partitions: 1}); err != nil {
		t.Fatal(err)
	}
	if off, ok := b.Committed("g", "a", 0); ok {
		t.Errorf("a new topic a: group g has the old one's offset %d", off)
	}
}
