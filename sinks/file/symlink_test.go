package file_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/weirnet/weir/configs"
	"github.com/weirnet/weir/sinks"
	"github.com/weirnet/weir/sinks/file"
	"github.com/weirnet/weir/sinks/internal/sinktest"
	"github.com/weirnet/weir/telemetry"
)

// TestPathThroughSymlinkRotatesTheTarget: path a symlink to the file on
// another disk (/var/log/weir/events.jsonl -> /data/weir/events.jsonl).
// Rotation renamed the symlink itself: the target was left for good with
// its lines, never pruned, and the next file was a regular file at path.
// The file the link names is rotated, beside it, and the link stays.
func TestPathThroughSymlinkRotatesTheTarget(t *testing.T) {
	b := sinktest.Broker(t)
	data, logs := t.TempDir(), t.TempDir()
	link := filepath.Join(logs, "events.jsonl")
	if err := os.Symlink(filepath.Join(data, "events.jsonl"), link); err != nil { // dangling until the first write
		t.Fatal(err)
	}
	cfg := configs.Sink{Type: "file", Name: "archive", Topics: []string{"events"}, Path: link,
		MaxSize: 8 << 10, Keep: keep(100), BatchSize: 20, FlushInterval: configs.Duration(10 * time.Millisecond)}
	clk := &clock{t: time.Unix(1700000000, 0)}
	s, err := file.NewSink(cfg, func() time.Time { clk.add(time.Millisecond); return clk.now() })
	if err != nil {
		t.Fatal(err)
	}
	sinktest.Produce(t, b, "events", telemetry.SchemaEvent, func(i int) string { return fmt.Sprintf("r%d", i) }, events(200, 0))
	r := sinktest.Start(t, b, cfg, s)
	sinktest.Eventually(t, "200 records", func() bool {
		return r.Counter("weir_sink_records_total", map[string]string{"sink": "archive"}) == 200
	})
	if err := r.Stop(); err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Lstat(link); err != nil || fi.Mode()&os.ModeSymlink == 0 {
		t.Fatalf("path is no longer the symlink: %v %v", fi, err)
	}
	if ents, _ := os.ReadDir(logs); len(ents) != 1 {
		t.Errorf("files beside the link: %v, want the link alone", ents)
	}
	lines, files := readLines(t, data)
	if len(lines) != 200 {
		t.Fatalf("%d distinct records in the target's directory, want 200; files %v", len(lines), files)
	}
	gz := 0
	for _, f := range files {
		if strings.HasSuffix(f, ".jsonl.gz") {
			gz++
		}
	}
	if gz < 3 {
		t.Errorf("%d rotations beside the target: %v", gz, files)
	}
}

// TestPathThroughSymlinkRecoversFromAFullDisk: a batch that fails (a full
// disk) closes the file it wrote to and forgets it, so the retry opens it
// again. Through a symlink the file was kept under the link's path while
// forgotten under the target's: the retry found the closed file (the
// link still names it) and failed at every attempt, with the disk free.
func TestPathThroughSymlinkRecoversFromAFullDisk(t *testing.T) {
	dir := smallDisk(t)
	link := filepath.Join(t.TempDir(), "events.jsonl")
	if err := os.Symlink(filepath.Join(dir, "events.jsonl"), link); err != nil {
		t.Fatal(err)
	}
	s, err := file.NewSink(configs.Sink{Type: "file", Name: "f", Path: link, Keep: keep(10)}, time.Now)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	batch := func(from, n int) []sinks.Item {
		items := make([]sinks.Item, n)
		for i := range items {
			items[i] = eventItem("events", fmt.Sprintf("r%d", from+i), 1000)
		}
		return items
	}
	if err := s.Write(context.Background(), batch(0, 10)); err != nil {
		t.Fatal(err)
	}
	filler := filepath.Join(dir, "filler")
	fillDisk(t, filler, 16<<10)
	second := batch(10, 100) // ~100 KiB: does not fit
	if err := s.Write(context.Background(), second); err == nil {
		t.Fatal("the batch was written on a full disk")
	}
	os.Remove(filler)
	if err := s.Write(context.Background(), second); err != nil {
		t.Fatalf("with room again: %v", err)
	}
	s.Close()
	lines, files := readLines(t, dir)
	for i := range 110 {
		if n := lines[fmt.Sprintf("events/r%d", i)]; n != 1 {
			t.Errorf("r%d written %d times, want once (files %v)", i, n, files)
		}
	}
}
