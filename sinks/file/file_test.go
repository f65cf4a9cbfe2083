package file_test

import (
	"bufio"
	"compress/gzip"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/weirnet/weir/broker"
	"github.com/weirnet/weir/configs"
	"github.com/weirnet/weir/sinks"
	"github.com/weirnet/weir/sinks/file"
	"github.com/weirnet/weir/sinks/internal/sinktest"
	"github.com/weirnet/weir/telemetry"
)

type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) now() time.Time      { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *clock) add(d time.Duration) { c.mu.Lock(); c.t = c.t.Add(d); c.mu.Unlock() }
func events(n, from int) []telemetry.Event {
	out := make([]telemetry.Event, n)
	for i := range out {
		out[i] = telemetry.Event{V: 1, Type: "interface_down", Device: fmt.Sprintf("r%d", from+i), Object: "Ethernet1",
			Message: strings.Repeat("x", 100), Time: time.Unix(1700000000, 0).UTC()}
	}
	return out
}

// readLines reads every line of the plain and gzipped files in dir.
func readLines(t *testing.T, dir string) (lines map[string]int, files []string) {
	t.Helper()
	lines = map[string]int{}
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range ents {
		files = append(files, e.Name())
		f, err := os.Open(filepath.Join(dir, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		var r io.Reader = f
		if strings.HasSuffix(e.Name(), ".gz") {
			zr, err := gzip.NewReader(f)
			if err != nil {
				t.Fatalf("%s: %v", e.Name(), err)
			}
			r = zr
		}
		sc := bufio.NewScanner(r)
		for sc.Scan() {
			var l struct {
				Topic   string            `json:"topic"`
				Key     string            `json:"key"`
				Value   telemetry.Event   `json:"value"`
				Headers map[string]string `json:"headers"`
			}
			if err := json.Unmarshal(sc.Bytes(), &l); err != nil {
				t.Fatalf("%s: %q: %v", e.Name(), sc.Text(), err)
			}
			if l.Value.Device != l.Key || l.Headers[telemetry.HeaderSchema] != telemetry.SchemaEvent {
				t.Fatalf("line %q", sc.Text())
			}
			lines[l.Topic+"/"+l.Key]++
		}
		if err := sc.Err(); err != nil {
			t.Fatal(err)
		}
		f.Close()
	}
	return lines, files
}

func TestRotateBySizeGzipKeep(t *testing.T) {
	b := sinktest.Broker(t)
	dir := t.TempDir()
	cfg := configs.Sink{Type: "file", Name: "archive", Topics: []string{"events"}, Path: filepath.Join(dir, "events.jsonl"),
		MaxSize: 8 << 10, Keep: keep(100), BatchSize: 20, FlushInterval: configs.Duration(10 * time.Millisecond)}
	clk := &clock{t: time.Unix(1700000000, 0)}
	s, err := file.NewSink(cfg, func() time.Time { clk.add(time.Millisecond); return clk.now() })
	if err != nil {
		t.Fatal(err)
	}
	key := func(i int) string { return fmt.Sprintf("r%d", i) }
	sinktest.Produce(t, b, "events", telemetry.SchemaEvent, key, events(500, 0))
	r := sinktest.Start(t, b, cfg, s)
	sinktest.Eventually(t, "500 records", func() bool {
		return r.Counter("weir_sink_records_total", map[string]string{"sink": "archive"}) == 500
	})
	if err := r.Stop(); err != nil {
		t.Fatal(err)
	}
	lines, files := readLines(t, dir)
	if len(lines) != 500 {
		t.Fatalf("%d distinct records, want 500; files %v", len(lines), files)
	}
	gz := 0
	for _, f := range files {
		if strings.HasSuffix(f, ".jsonl.gz") {
			gz++
		} else if f != "events.jsonl" {
			t.Errorf("unexpected file %s", f)
		}
	}
	// ~330 bytes a line, 8 KiB a file: about 20 rotations.
	if gz < 10 {
		t.Fatalf("only %d gzipped rotations: %v", gz, files)
	}
	for _, f := range files {
		if st, _ := os.Stat(filepath.Join(dir, f)); !strings.HasSuffix(f, ".gz") && st.Size() > 8<<10 {
			t.Errorf("%s is %d bytes, over max_size", f, st.Size())
		}
	}

	// Keep: a second run with keep 3 prunes to the 3 newest rotations.
	cfg.Keep = keep(3)
	s2, err := file.NewSink(cfg, func() time.Time { clk.add(time.Millisecond); return clk.now() })
	if err != nil {
		t.Fatal(err)
	}
	sinktest.Produce(t, b, "events", telemetry.SchemaEvent, func(i int) string { return fmt.Sprintf("r%d", 1000+i) }, events(100, 1000))
	r2 := sinktest.Start(t, b, cfg, s2)
	sinktest.Eventually(t, "100 more records", func() bool {
		return r2.Counter("weir_sink_records_total", map[string]string{"sink": "archive"}) == 100
	})
	r2.Stop()
	_, files = readLines(t, dir)
	if len(files) != 4 {
		t.Fatalf("files after keep 3: %v", files)
	}

	// keep 0: no rotated file is kept (it meant the default, 7).
	cfg.Keep = keep(0)
	s3, err := file.NewSink(cfg, func() time.Time { clk.add(time.Millisecond); return clk.now() })
	if err != nil {
		t.Fatal(err)
	}
	sinktest.Produce(t, b, "events", telemetry.SchemaEvent, func(i int) string { return fmt.Sprintf("r%d", 2000+i) }, events(100, 2000))
	r3 := sinktest.Start(t, b, cfg, s3)
	sinktest.Eventually(t, "100 more records", func() bool {
		return r3.Counter("weir_sink_records_total", map[string]string{"sink": "archive"}) == 100
	})
	r3.Stop()
	if _, files = readLines(t, dir); len(files) != 1 || files[0] != "events.jsonl" {
		t.Fatalf("files after keep 0: %v, want events.jsonl alone", files)
	}
}

func TestRotateByAgePerTopic(t *testing.T) {
	b := sinktest.Broker(t)
	dir := t.TempDir()
	no := false
	cfg := configs.Sink{Type: "file", Name: "pt", Topics: []string{"events", "other"}, Path: filepath.Join(dir, "weir.jsonl"),
		PerTopic: true, MaxAge: configs.Duration(time.Hour), Compress: &no, FlushInterval: configs.Duration(10 * time.Millisecond)}
	clk := &clock{t: time.Unix(1700000000, 0)}
	s, err := file.NewSink(cfg, clk.now)
	if err != nil {
		t.Fatal(err)
	}
	key := func(i int) string { return fmt.Sprintf("r%d", i) }
	sinktest.Produce(t, b, "events", telemetry.SchemaEvent, key, events(10, 0))
	sinktest.Produce(t, b, "other", telemetry.SchemaEvent, key, events(5, 0))
	key100 := func(i int) string { return fmt.Sprintf("r%d", 100+i) }
	r := sinktest.Start(t, b, cfg, s)
	sinktest.Eventually(t, "15 records", func() bool {
		return r.Counter("weir_sink_records_total", map[string]string{"sink": "pt"}) == 15
	})
	clk.add(2 * time.Hour)
	sinktest.Produce(t, b, "events", telemetry.SchemaEvent, key100, events(1, 100))
	sinktest.Eventually(t, "16 records", func() bool {
		return r.Counter("weir_sink_records_total", map[string]string{"sink": "pt"}) == 16
	})
	r.Stop()
	lines, files := readLines(t, dir)
	if len(lines) != 16 || lines["other/r4"] != 1 || lines["events/r100"] != 1 {
		t.Fatalf("lines %v", lines)
	}
	want := map[string]bool{"weir.events.jsonl": true, "weir.other.jsonl": true}
	rotated := 0
	for _, f := range files {
		if !want[f] {
			if !strings.HasPrefix(f, "weir.events-") || !strings.HasSuffix(f, ".jsonl") {
				t.Errorf("unexpected file %s", f)
			}
			rotated++
		}
	}
	if rotated != 1 {
		t.Fatalf("files %v: want one uncompressed rotation of the events file", files)
	}
}

// TestDirectoryNotThereYet: a sink whose directory cannot be made (here a
// file is in its way; a volume not mounted, a read-only file system)
// starts, fails its writes as retryable, and writes once it can; weir
// would not start.
func TestDirectoryNotThereYet(t *testing.T) {
	dir := t.TempDir()
	blocker := filepath.Join(dir, "archive")
	os.WriteFile(blocker, []byte("in the way"), 0o644)
	s, err := file.NewSink(configs.Sink{Type: "file", Name: "f", Path: filepath.Join(blocker, "events.jsonl")}, time.Now)
	if err != nil {
		t.Fatalf("the sink did not start: %v", err)
	}
	defer s.Close()
	items := []sinks.Item{{Record: broker.Record{Topic: "events", Key: []byte("r1"), Value: []byte(`{"v":1}`)}}}
	var re *sinks.RetryableError
	if err := s.Write(context.Background(), items); !errors.As(err, &re) {
		t.Fatalf("a write with no directory: %v, want a retryable error", err)
	}
	os.Remove(blocker)
	if err := s.Write(context.Background(), items); err != nil {
		t.Fatalf("a write once the directory can be made: %v", err)
	}
	if b, _ := os.ReadFile(filepath.Join(blocker, "events.jsonl")); !strings.Contains(string(b), `"key":"r1"`) {
		t.Fatalf("file holds %q", b)
	}
}

// TestFileDeletedUnderTheSink: the file removed (or moved away) by someone
// else while the sink has it open: the next batch goes to a new file at
// the path, not into the deleted one, where it reached no one.
func TestFileDeletedUnderTheSink(t *testing.T) {
	path := filepath.Join(t.TempDir(), "events.jsonl")
	s, err := file.NewSink(configs.Sink{Type: "file", Name: "f", Path: path}, time.Now)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	write := func(key string) {
		t.Helper()
		if err := s.Write(context.Background(), []sinks.Item{{Record: broker.Record{Topic: "events", Key: []byte(key), Value: []byte(`{"v":1}`)}}}); err != nil {
			t.Fatal(err)
		}
	}
	write("before")
	os.Remove(path)
	write("after")
	b, err := os.ReadFile(path)
	if err != nil || !strings.Contains(string(b), `"key":"after"`) || strings.Contains(string(b), `"key":"before"`) {
		t.Fatalf("the path holds %q (%v), want the record after the removal", b, err)
	}
}

// TestCopytruncateUnderTheSink: logrotate with copytruncate copies the
// file away and truncates it in place (same inode). The sink must count
// the file's size from there: it went on from the size before, so the next
// batches rotated a nearly empty file as if full, each such rotation
// pushing a real one out of keep.
func TestCopytruncateUnderTheSink(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "events.jsonl")
	line := len(`{"topic":"events","partition":0,"offset":0,"timestamp":"0001-01-01T00:00:00Z","key":"r00","value":{"v":1}}` + "\n")
	s, err := file.NewSink(configs.Sink{Type: "file", Name: "f", Path: path, MaxSize: configs.ByteSize(10 * line), Keep: keep(5)}, time.Now)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	write := func(from, n int) {
		t.Helper()
		items := make([]sinks.Item, n)
		for i := range items {
			items[i] = sinks.Item{Record: broker.Record{Topic: "events", Key: fmt.Appendf(nil, "r%02d", from+i), Value: []byte(`{"v":1}`)}}
		}
		if err := s.Write(context.Background(), items); err != nil {
			t.Fatal(err)
		}
	}
	write(0, 8)
	// logrotate copytruncate: copy, then truncate the file in place.
	old, _ := os.ReadFile(path)
	os.WriteFile(path+".1", old, 0o644)
	if err := os.Truncate(path, 0); err != nil {
		t.Fatal(err)
	}
	write(10, 4) // 4 lines in an empty file of room for 10: no rotation
	ents, _ := os.ReadDir(dir)
	var names []string
	for _, e := range ents {
		names = append(names, e.Name())
	}
	if len(names) != 2 {
		t.Fatalf("files %v: the truncated file was rotated as if it were full", names)
	}
	b, _ := os.ReadFile(path)
	if n := strings.Count(string(b), "\n"); n != 4 || strings.ContainsRune(string(b), 0) {
		t.Fatalf("the file holds %d lines, want 4: %q", n, b)
	}
}

// TestRotationKeepsPermissions: an operator who made the file private
// (chmod 600: it holds logins and configuration changes) keeps it so
// across rotations: the rotated file, its gzip and the new file at the
// path get its mode, not the default 0644.
func TestRotationKeepsPermissions(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "events.jsonl")
	line := len(`{"topic":"events","partition":0,"offset":0,"timestamp":"0001-01-01T00:00:00Z","key":"r00","value":{"v":1}}` + "\n")
	s, err := file.NewSink(configs.Sink{Type: "file", Name: "f", Path: path, MaxSize: configs.ByteSize(3 * line), Keep: keep(5)}, time.Now)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	write := func(from, n int) {
		t.Helper()
		items := make([]sinks.Item, n)
		for i := range items {
			items[i] = sinks.Item{Record: broker.Record{Topic: "events", Key: fmt.Appendf(nil, "r%02d", from+i), Value: []byte(`{"v":1}`)}}
		}
		if err := s.Write(context.Background(), items); err != nil {
			t.Fatal(err)
		}
	}
	write(0, 2)
	if err := os.Chmod(path, 0o600); err != nil {
		t.Fatal(err)
	}
	write(10, 2) // rotates: 4 lines do not fit 3
	write(20, 3) // and again
	ents, _ := os.ReadDir(dir)
	if len(ents) < 3 {
		t.Fatalf("files %v: want rotations", ents)
	}
	for _, e := range ents {
		st, err := os.Stat(filepath.Join(dir, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		if m := st.Mode().Perm(); m != 0o600 {
			t.Errorf("%s has mode %o, want 600 as the file was made", e.Name(), m)
		}
	}
}

// keep is a sink's keep setting of n.
func keep(n int) *int { return &n }
