package file_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/weirnet/weir/configs"
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
		MaxSize: 8 << 10, Keep: 100, BatchSize: 20, FlushInterval: configs.Duration(10 * time.Millisecond)}
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
