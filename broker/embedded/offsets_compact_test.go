package embedded

import (
	"log/slog"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// TestOffsetCommitSurvivesFailedCompaction: once the offsets file is
// mostly superseded commits, a commit rewrites it. A rewrite that fails
// (here its temporary file cannot be made) does not fail the commit, which
// is already in the file, and the commits after it are kept across a
// reopen; the rewrite is tried again at the next commit, and then done.
func TestOffsetCommitSurvivesFailedCompaction(t *testing.T) {
	dir := t.TempDir()
	s, err := openOffsetStore(dir, false, time.Now, slog.Default())
	if err != nil {
		t.Fatal(err)
	}
	blocker := s.path + ".tmp"
	// A directory, not empty (so that the rewrite's clean-up does not
	// remove it), where the rewrite's temporary file would go.
	if err := os.MkdirAll(filepath.Join(blocker, "x"), 0o755); err != nil {
		t.Fatal(err)
	}
	var off int64
	for s.size < DefaultOffsetsCompactSize/16+1024 {
		if off++; off > 1e6 {
			t.Fatalf("the file is %d bytes after %d commits", s.size, off)
		}
		if err := s.commit([]GroupOffset{{"g", "t", 0, off}}); err != nil {
			t.Fatalf("commit %d while the rewrite fails: %v", off, err)
		}
	}
	if err := s.close(); err != nil {
		t.Fatal(err)
	}
	// The open rewrites too; failing, it must still open.
	if s, err = openOffsetStore(dir, false, time.Now, slog.Default()); err != nil {
		t.Fatalf("reopen while the rewrite fails: %v", err)
	}
	if got, ok := s.committed("g", "t", 0); !ok || got != off {
		t.Fatalf("after a reopen: committed %d (%v), want %d", got, ok, off)
	}
	// The rewrite can be made again: the next commit makes it.
	if err := os.RemoveAll(blocker); err != nil {
		t.Fatal(err)
	}
	if err := s.commit([]GroupOffset{{"g", "t", 0, off + 1}}); err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Stat(filepath.Join(dir, "meta", "offsets.log")); err != nil || fi.Size() > 1024 {
		t.Fatalf("offsets file not compacted: %v %v", fi.Size(), err)
	}
	s.close()
	s, err = openOffsetStore(dir, false, time.Now, slog.Default())
	if err != nil {
		t.Fatal(err)
	}
	defer s.close()
	if got, _ := s.committed("g", "t", 0); got != off+1 {
		t.Fatalf("after the rewrite and a reopen: committed %d, want %d", got, off+1)
	}
}
