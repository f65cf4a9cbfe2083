package embedded

import (
	"bytes"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/weirnet/weir/broker"
)

// lostDirLog writes a 2-partition topic "t", lets damage change the data
// directory, opens it again and returns what the open logged.
func lostDirLog(t *testing.T, damage func(dir string)) (*Broker, string) {
	t.Helper()
	dir := t.TempDir()
	b, err := Open(dir, WithTopicDefaults(broker.TopicConfig{Partitions: 2}))
	if err != nil {
		t.Fatal(err)
	}
	if err := b.Produce(ctx, "t", makeRecords(100, 0)); err != nil {
		t.Fatal(err)
	}
	if err := b.Close(); err != nil {
		t.Fatal(err)
	}
	damage(dir)
	var logs bytes.Buffer
	b = openTest(t, dir, WithLogger(slog.New(slog.NewTextHandler(&logs, nil))))
	return b, logs.String()
}

// TestLostPartitionDirectoryIsLogged: a partition whose directory is gone
// at start (removed by hand, a restore that missed it) came back empty at
// offset 0 without a word; its records were gone and its offsets start
// again under the consumers' commits.
func TestLostPartitionDirectoryIsLogged(t *testing.T) {
	_, logs := lostDirLog(t, func(dir string) {
		if err := os.RemoveAll(partitionDir(dir, "t", 1)); err != nil {
			t.Fatal(err)
		}
	})
	if !strings.Contains(logs, "partition=t-1") || !strings.Contains(logs, "level=WARN") {
		t.Fatalf("a partition directory missing at start is not logged:\n%s", logs)
	}
}

// TestPartitionDirectoriesOfNoTopicAreLogged: a topic's directories whose
// meta/topics file is gone were ignored at start without a word, and the
// first produce to that name (auto-creation) removed them, data and all.
func TestPartitionDirectoriesOfNoTopicAreLogged(t *testing.T) {
	_, logs := lostDirLog(t, func(dir string) {
		if err := os.Remove(filepath.Join(metaDir(dir), "t.json")); err != nil {
			t.Fatal(err)
		}
	})
	if !strings.Contains(logs, "t-0") || !strings.Contains(logs, "level=WARN") {
		t.Fatalf("partition directories of no topic are not logged at start:\n%s", logs)
	}
}
