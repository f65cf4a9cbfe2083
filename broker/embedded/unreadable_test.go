package embedded

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/weirnet/weir/broker"
)

// unreadableOpts: small segments and a small index interval, so a few
// batches make sealed segments and index entries in the active one.
func unreadableOpts(logger *slog.Logger) []Option {
	return []Option{WithLogger(logger), WithTopicDefaults(broker.TopicConfig{SegmentBytes: 4 << 10}), WithIndexInterval(512)}
}

// writeUnreadableData leaves in dir, after a clean close, a partition t-0
// of at least three segments with index files, the active one with index
// entries (a clean open then trusts them and rewrites nothing), and a
// producer state snapshot.
func writeUnreadableData(t *testing.T, dir string) {
	t.Helper()
	b, err := Open(dir, unreadableOpts(slog.New(slog.DiscardHandler))...)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	if err := b.CreateTopic(ctx, "t", broker.TopicConfig{Partitions: 1}); err != nil {
		t.Fatal(err)
	}
	p := newIdemProducer(t, b)
	segs, sinceRoll := 1, 0
	for segs < 3 || sinceRoll < 3 {
		p.send(t, b, 4, 100)
		infos, err := b.DescribeTopics(ctx, "t")
		if err != nil {
			t.Fatal(err)
		}
		if n := infos[0].Partitions[0].Segments; n != segs {
			segs, sinceRoll = n, 0
		}
		sinceRoll++
	}
	if err := b.Close(); err != nil {
		t.Fatal(err)
	}
	idx, _ := filepath.Glob(filepath.Join(dir, "t-0", "*.index"))
	if len(idx) < 3 || !exists(filepath.Join(dir, "t-0", producerSnapshotName)) {
		t.Fatalf("partition files: %v", idx)
	}
	for _, name := range idx {
		if st, err := os.Stat(name); err != nil || st.Size() == 0 {
			t.Fatalf("%s: empty or missing (%v)", name, err)
		}
	}
}

type fileState struct {
	data  []byte
	mtime time.Time
}

// fileStates reads the partition's files and the meta files.
func fileStates(t testing.TB, dir string) map[string]fileState {
	t.Helper()
	m := make(map[string]fileState)
	for _, sub := range []string{"t-0", "meta"} {
		err := filepath.WalkDir(filepath.Join(dir, sub), func(path string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() {
				return err
			}
			st, err := os.Stat(path)
			if err != nil {
				return err
			}
			b, err := os.ReadFile(path)
			if err != nil {
				return err
			}
			m[path] = fileState{b, st.ModTime()}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	return m
}

// sameFiles reports the files that differ between before and now.
func sameFiles(before, now map[string]fileState) []string {
	var diff []string
	for name, f := range before {
		g, ok := now[name]
		switch {
		case !ok:
			diff = append(diff, name+": gone")
		case !bytes.Equal(f.data, g.data):
			diff = append(diff, name+": rewritten with other bytes")
		case !f.mtime.Equal(g.mtime):
			diff = append(diff, name+": written again")
		}
	}
	for name := range now {
		if _, ok := before[name]; !ok {
			diff = append(diff, name+": new")
		}
	}
	return diff
}

// TestOpenOutOfDescriptorsChild: see TestOpenOutOfDescriptorsRepairsNothing.
func TestOpenOutOfDescriptorsChild(t *testing.T) {
	dir := os.Getenv(fdLimitEnv)
	if dir == "" {
		t.Skip("run by TestOpenOutOfDescriptorsRepairsNothing")
	}
	var lim unix.Rlimit
	if err := unix.Getrlimit(unix.RLIMIT_NOFILE, &lim); err != nil {
		t.Fatal(err)
	}
	before := fileStates(t, dir)
	failed := 0
	var ranOut []string // the files it ran out of descriptors at
	for free := 0; ; free++ {
		if free > 100 {
			t.Fatal("the open still fails with 100 descriptors free")
		}
		// Each attempt opens what a clean close left.
		if err := os.WriteFile(filepath.Join(dir, ".clean_shutdown"), nil, 0o644); err != nil {
			t.Fatal(err)
		}
		var logs bytes.Buffer
		logger := slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelWarn}))
		fds := openFDs(t)
		lowerFDLimit(t, free)
		b, err := Open(dir, unreadableOpts(logger)...)
		if err := unix.Setrlimit(unix.RLIMIT_NOFILE, &lim); err != nil {
			t.Fatal(err)
		}
		if logs.Len() > 0 {
			t.Errorf("open with %d descriptors free (%v) logged:\n%s", free, err, logs.Bytes())
		}
		if err == nil {
			if free == 0 {
				t.Fatal("opened with no descriptor free")
			}
			fmt.Printf("opened with %d descriptors free, after %d failed opens\n", free, failed)
			// The sweep must have run out where damage used to be repaired.
			all := strings.Join(ranOut, "\n")
			if !strings.Contains(all, ".index") || !strings.Contains(all, producerSnapshotName) {
				t.Errorf("no open ran out at an index file and at the producer state snapshot:\n%s", all)
			}
			if diff := sameFiles(before, fileStates(t, dir)); len(diff) > 0 {
				t.Errorf("the open with enough descriptors changed files:\n%s", strings.Join(diff, "\n"))
			}
			if err := b.Close(); err != nil {
				t.Fatal(err)
			}
			return
		}
		failed++
		ranOut = append(ranOut, err.Error())
		if !errors.Is(err, syscall.EMFILE) || !strings.Contains(err.Error(), dir) {
			t.Errorf("open with %d descriptors free: %v, want EMFILE naming a file of %s", free, err, dir)
		}
		if n := openFDs(t); n != fds {
			t.Errorf("open with %d descriptors free: %d descriptors open after it, %d before", free, n, fds)
		}
		if diff := sameFiles(before, fileStates(t, dir)); len(diff) > 0 {
			t.Fatalf("open with %d descriptors free (%v) changed files:\n%s", free, err, strings.Join(diff, "\n"))
		}
	}
}

// TestOpenOutOfDescriptorsRepairsNothing: an open that runs out of
// descriptors fails, naming the file, and leaves every file as it was. It
// took an index file or a producer state snapshot it could not open for
// damage: logged "rewriting index" or "ignoring producer state snapshot",
// removed the index files and went on. The child tries the open with 0, 1,
// 2... descriptors free, so that each open of the recovery runs out once.
func TestOpenOutOfDescriptorsRepairsNothing(t *testing.T) {
	dir := t.TempDir()
	writeUnreadableData(t, dir)
	if err := runFDChild("TestOpenOutOfDescriptorsChild", dir); err != nil {
		t.Error(err)
	}
}

// TestOpenUnreadableFileRepairsNothing: a file of the partition or of meta
// that is there but cannot be read (a directory in its place: EISDIR, as
// EIO or EACCES would be for another user than root) fails the open,
// naming it, and no file is repaired or rewritten. An index file or the
// producer state snapshot so was taken for damage: the index rewritten,
// the snapshot ignored and the state rebuilt from the log.
func TestOpenUnreadableFileRepairsNothing(t *testing.T) {
	data := t.TempDir()
	writeUnreadableData(t, data)
	idx, _ := filepath.Glob(filepath.Join(data, "t-0", "*.index"))
	sealed := strings.TrimSuffix(filepath.Base(idx[0]), ".index")
	active := strings.TrimSuffix(filepath.Base(idx[len(idx)-1]), ".index")
	for _, name := range []string{
		"t-0/" + sealed + ".index",
		"t-0/" + sealed + ".timeindex",
		"t-0/" + active + ".index",
		"t-0/" + active + ".timeindex",
		"t-0/" + producerSnapshotName,
		"meta/producer-ids",
		"meta/offsets.log",
		"meta/topics/t.json",
	} {
		t.Run(strings.ReplaceAll(name, "/", "_"), func(t *testing.T) {
			dir := t.TempDir()
			copyTree(t, data, dir)
			path := filepath.Join(dir, name)
			if err := os.Remove(path); err != nil {
				t.Fatal(err)
			}
			// Not empty: a removal of it fails, and shows.
			if err := os.MkdirAll(filepath.Join(path, "x"), 0o755); err != nil {
				t.Fatal(err)
			}
			before := fileStates(t, dir)
			var logs bytes.Buffer
			b, err := Open(dir, unreadableOpts(slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelWarn})))...)
			if err == nil {
				b.Close()
				t.Fatalf("opened with a directory in place of %s; logged:\n%s", name, logs.Bytes())
			}
			if !errors.Is(err, broker.ErrStorage) || !strings.Contains(err.Error(), path) {
				t.Errorf("open: %v, want a storage error naming %s", err, path)
			}
			if logs.Len() > 0 {
				t.Errorf("open (%v) logged:\n%s", err, logs.Bytes())
			}
			if diff := sameFiles(before, fileStates(t, dir)); len(diff) > 0 {
				t.Errorf("open (%v) changed files:\n%s", err, strings.Join(diff, "\n"))
			}
		})
	}
}
