package file_test

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/weirnet/weir/broker"
	"github.com/weirnet/weir/configs"
	"github.com/weirnet/weir/sinks"
	"github.com/weirnet/weir/sinks/file"
	"github.com/weirnet/weir/sinks/internal/sinktest"
	"github.com/weirnet/weir/telemetry"
)

// TestDiskFullThenSpace: the sink's directory is a 1 MiB tmpfs that
// fills up; the sink retries, and once the volume has room again every
// record is there, each line whole, and every rotation compressed (a gzip
// that failed on the full disk is done at a later rotation).
func TestDiskFullThenSpace(t *testing.T) {
	dir := smallDisk(t)
	b := sinktest.Broker(t)
	evs := make([]telemetry.Event, 3000)
	noise := make([]byte, 400)
	for i := range evs {
		rand.Read(noise)
		evs[i] = telemetry.Event{V: 1, Type: "interface_down", Device: fmt.Sprintf("r%d", i), Object: "Ethernet1",
			Message: hex.EncodeToString(noise), Time: time.Unix(1700000000, 0).UTC()}
	}
	sinktest.Produce(t, b, "events", telemetry.SchemaEvent, func(i int) string { return fmt.Sprintf("r%d", i) }, evs)
	c := configs.Sink{Type: "file", Name: "archive", Topics: []string{"events"}, Path: dir + "/events.jsonl",
		MaxSize: 256 << 10, Keep: keep(1000), BatchSize: 100, FlushInterval: configs.Duration(20 * time.Millisecond),
		Retry: configs.SinkRetry{Initial: configs.Duration(20 * time.Millisecond), Max: configs.Duration(100 * time.Millisecond)}}
	s, err := file.NewSink(c, time.Now)
	if err != nil {
		t.Fatal(err)
	}
	var log strings.Builder
	r := sinktest.StartLogging(t, b, c, s, &syncWriter{w: &log})
	sinktest.Eventually(t, "retries on the full disk", func() bool {
		return r.Counter("weir_sink_retries_total", map[string]string{"sink": "archive", "reason": "no_space"}) >= 5
	})
	if out, err := exec.Command("mount", "-o", "remount,size=64m", dir).CombinedOutput(); err != nil {
		t.Fatalf("remount: %v %s", err, out)
	}
	sinktest.Eventually(t, "3000 records written", func() bool {
		return r.Counter("weir_sink_records_total", map[string]string{"sink": "archive"}) >= 3000
	})
	r.Stop()
	lines, files := readLines(t, dir)
	missing := 0
	for i := range evs {
		if lines[fmt.Sprintf("events/r%d", i)] == 0 {
			missing++
		}
	}
	t.Logf("files: %v", files)
	if missing > 0 {
		t.Fatalf("%d of 3000 records missing", missing)
	}
	for _, f := range files {
		if strings.HasSuffix(f, ".jsonl") && f != "events.jsonl" {
			t.Errorf("rotated file %s left uncompressed", f)
		}
	}
}

type syncWriter struct {
	mu sync.Mutex
	w  *strings.Builder
}

func (w *syncWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.w.Write(p)
}

// TestRotationFailingOnFullDiskLeavesNoDuplicates: a batch that rotates
// the file part way (its first lines fill the file) on a full disk fails
// in the rotation's flush, after some of those first lines reached the
// file. The batch is retried whole: what the failed attempt left must be
// cut back, as a failed write or sync is, or the retry writes those lines
// a second time.
func TestRotationFailingOnFullDiskLeavesNoDuplicates(t *testing.T) {
	dir := smallDisk(t)
	s, err := file.NewSink(configs.Sink{Type: "file", Name: "f", Path: filepath.Join(dir, "events.jsonl"),
		MaxSize: 256 << 10, Keep: keep(10)}, time.Now)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	batch := func(from, n int) []sinks.Item {
		items := make([]sinks.Item, n)
		for i := range items {
			key := fmt.Sprintf("r%d", from+i)
			value := fmt.Appendf(nil, `{"v":1,"type":"t","device":%q,"message":"%s"}`, key, strings.Repeat("x", 1000))
			items[i] = sinks.Item{Record: broker.Record{Topic: "events", Offset: int64(from + i), Key: []byte(key), Value: value,
				Headers: []broker.Header{{Key: telemetry.HeaderSchema, Value: []byte(telemetry.SchemaEvent)}}}}
		}
		return items
	}
	if err := s.Write(context.Background(), batch(0, 10)); err != nil {
		t.Fatal(err)
	}
	// Leave about 64 KiB free: the ~240 KiB of lines before the rotation
	// do not fit.
	filler := filepath.Join(dir, "filler")
	fillDisk(t, filler, 64<<10)
	second := batch(10, 300) // ~230 lines reach max_size, then a rotation
	if err := s.Write(context.Background(), second); err == nil {
		t.Fatal("the batch was written on a full disk")
	}
	os.Remove(filler)
	if err := s.Write(context.Background(), second); err != nil {
		t.Fatal(err)
	}
	s.Close()
	lines, files := readLines(t, dir)
	for i := range 310 {
		if n := lines[fmt.Sprintf("events/r%d", i)]; n != 1 {
			t.Errorf("r%d written %d times, want once (files %v)", i, n, files)
		}
	}
}

// TestPerTopicSyncFailureLeavesNoDuplicates: with per_topic, one batch
// writes two files. When the disk fills, the small file's sync may succeed
// before the large one's fails; the batch is retried whole, so the small
// file must be cut back too, or its lines are there twice. Which file is
// synced first is not fixed, so the round is repeated: with the lines
// kept, some round duplicates them.
func TestPerTopicSyncFailureLeavesNoDuplicates(t *testing.T) {
	dir := smallDisk(t)
	s, err := file.NewSink(configs.Sink{Type: "file", Name: "f", Path: filepath.Join(dir, "out.jsonl"), PerTopic: true,
		Keep: keep(10)}, time.Now)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	item := eventItem
	filler := filepath.Join(dir, "filler")
	const rounds = 16
	for round := range rounds {
		// One small line for "small", ~128 KiB for "big": under the
		// writer's buffer, so both fail (or not) at the batch's sync.
		batch := []sinks.Item{item("small", fmt.Sprintf("s%d", round), 100)}
		for i := range 128 {
			batch = append(batch, item("big", fmt.Sprintf("b%d-%d", round, i), 1000))
		}
		fillDisk(t, filler, 32<<10) // room for the small line, not for the big ones
		if err := s.Write(context.Background(), batch); err == nil {
			t.Fatalf("round %d: the batch was written on a full disk", round)
		}
		os.Remove(filler)
		if err := s.Write(context.Background(), batch); err != nil {
			t.Fatalf("round %d: %v", round, err)
		}
		// Keep the big file small, so every round finds room for it.
		if err := os.Truncate(filepath.Join(dir, "out.big.jsonl"), 0); err != nil {
			t.Fatal(err)
		}
	}
	s.Close()
	lines, files := readLines(t, dir)
	for round := range rounds {
		if n := lines[fmt.Sprintf("small/s%d", round)]; n != 1 {
			t.Errorf("s%d written %d times, want once (files %v)", round, n, files)
		}
	}
}

// TestGzipFailingOnFullDiskLeavesNoDuplicates: a batch rotates the file
// part way, the rotation's rename succeeds, then its gzip fails for want
// of room. The rotation is done (the next one compresses what is left
// uncompressed): failing the batch would have it retried whole, and the
// lines it had before the rotation, now in the rotated file, written twice.
func TestGzipFailingOnFullDiskLeavesNoDuplicates(t *testing.T) {
	dir := smallDisk(t)
	reg := prometheus.NewRegistry()
	s, err := file.New(configs.Sink{Type: "file", Name: "f", Path: filepath.Join(dir, "events.jsonl"),
		MaxSize: 256 << 10, Keep: keep(10)}, sinks.Env{Registerer: reg})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	noise := make([]byte, 500)
	batch := func(from, n int) []sinks.Item {
		items := make([]sinks.Item, n)
		for i := range items {
			rand.Read(noise) // hex of random bytes: gzip saves only about half
			key := fmt.Sprintf("r%d", from+i)
			value := fmt.Appendf(nil, `{"v":1,"type":"t","device":%q,"message":"%x"}`, key, noise)
			items[i] = sinks.Item{Record: broker.Record{Topic: "events", Offset: int64(from + i), Key: []byte(key), Value: value,
				Headers: []broker.Header{{Key: telemetry.HeaderSchema, Value: []byte(telemetry.SchemaEvent)}}}}
		}
		return items
	}
	if err := s.Write(context.Background(), batch(0, 200)); err != nil { // ~210 KiB
		t.Fatal(err)
	}
	// Room for the lines up to the rotation (~46 KiB) and the new file's
	// first lines, not for the ~130 KiB gzip of the rotated file.
	filler := filepath.Join(dir, "filler")
	fillDisk(t, filler, 112<<10)
	second := batch(200, 60)
	err = s.Write(context.Background(), second)
	os.Remove(filler)
	if err != nil {
		// Retried by the framework, as it would be.
		if err := s.Write(context.Background(), second); err != nil {
			t.Fatal(err)
		}
	}
	s.Close()
	lines, files := readLines(t, dir)
	for i := range 260 {
		if n := lines[fmt.Sprintf("events/r%d", i)]; n != 1 {
			t.Errorf("r%d written %d times, want once (files %v)", i, n, files)
		}
	}
	// The failed gzip is counted, not only logged.
	want := "# HELP weir_file_sink_housekeeping_failures_total Rotations whose gzip (task compress) or removal of rotated files past keep (task prune) failed, a full disk most often; the next rotation tries again.\n" +
		"# TYPE weir_file_sink_housekeeping_failures_total counter\n" +
		"weir_file_sink_housekeeping_failures_total{sink=\"f\",task=\"compress\"} 1\n" +
		"weir_file_sink_housekeeping_failures_total{sink=\"f\",task=\"prune\"} 0\n"
	if err := testutil.GatherAndCompare(reg, strings.NewReader(want), "weir_file_sink_housekeeping_failures_total"); err != nil {
		t.Error(err)
	}
}

// smallDisk is a directory on a 1 MiB tmpfs of its own (needs root; the
// test is skipped without it), unmounted at the test's end.
func smallDisk(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	if out, err := exec.Command("mount", "-t", "tmpfs", "-o", "size=1m", "tmpfs", dir).CombinedOutput(); err != nil {
		t.Skipf("mount tmpfs: %v %s", err, out)
	}
	t.Cleanup(func() { exec.Command("umount", dir).Run() })
	return dir
}

// TestPerTopicRotationSyncFailureLeavesNoDuplicates: a rotation part way
// through a per_topic batch first syncs the lines the batch wrote so far,
// in each of its files. When the disk fills, the small file's sync may
// succeed before the large one's fails; nothing of the batch is done then
// and it is retried whole, so the small file must be cut back too, or its
// line is there twice. Which file is synced first is not fixed, so the
// round is repeated.
func TestPerTopicRotationSyncFailureLeavesNoDuplicates(t *testing.T) {
	dir := smallDisk(t)
	s, err := file.NewSink(configs.Sink{Type: "file", Name: "f", Path: filepath.Join(dir, "out.jsonl"), PerTopic: true,
		MaxSize: 64 << 10, Keep: keep(2)}, time.Now)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	item := eventItem
	filler := filepath.Join(dir, "filler")
	const rounds = 16
	for round := range rounds {
		// One small line for "small", then ~80 KiB for "big", whose file
		// reaches max_size part way: the lines before are synced first.
		batch := []sinks.Item{item("small", fmt.Sprintf("s%d", round), 100)}
		for i := range 80 {
			batch = append(batch, item("big", fmt.Sprintf("b%d-%d", round, i), 1000))
		}
		fillDisk(t, filler, 32<<10) // room for the small line, not for the big ones
		err := s.Write(context.Background(), batch)
		if err == nil {
			t.Fatalf("round %d: the batch was written on a full disk", round)
		}
		var pe *sinks.PartialError
		if errors.As(err, &pe) {
			t.Fatalf("round %d: %d items reported done, none synced whole: %v", round, pe.Done, err)
		}
		os.Remove(filler)
		if err := s.Write(context.Background(), batch); err != nil {
			t.Fatalf("round %d: %v", round, err)
		}
		// Keep the big file small, so every round finds room for it.
		if err := os.Truncate(filepath.Join(dir, "out.big.jsonl"), 0); err != nil {
			t.Fatal(err)
		}
	}
	s.Close()
	lines, files := readLines(t, dir)
	for round := range rounds {
		if n := lines[fmt.Sprintf("small/s%d", round)]; n != 1 {
			t.Errorf("s%d written %d times, want once (files %v)", round, n, files)
		}
	}
}

// fillDisk writes filler, a file of dir's file system, so that about
// leave bytes of it stay free.
func fillDisk(t *testing.T, filler string, leave int64) {
	t.Helper()
	var st syscall.Statfs_t
	if err := syscall.Statfs(filepath.Dir(filler), &st); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filler, make([]byte, int64(st.Bavail)*st.Bsize-leave), 0o644); err != nil {
		t.Fatal(err)
	}
}

// eventItem is an event record of topic, keyed key, with a message of
// size bytes.
func eventItem(topic, key string, size int) sinks.Item {
	value := fmt.Appendf(nil, `{"v":1,"type":"t","device":%q,"message":"%s"}`, key, strings.Repeat("x", size))
	return sinks.Item{Record: broker.Record{Topic: topic, Key: []byte(key), Value: value,
		Headers: []broker.Header{{Key: telemetry.HeaderSchema, Value: []byte(telemetry.SchemaEvent)}}}}
}
