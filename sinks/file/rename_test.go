package file_test

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/weirnet/weir/configs"
	"github.com/weirnet/weir/sinks/file"
	"github.com/weirnet/weir/sinks/internal/sinktest"
	"github.com/weirnet/weir/telemetry"
)

// lockDir makes dir refuse new names (a rename, a new file) while its
// open files can still be written, as a directory an operator made
// read-only does: chattr +i, since root ignores a directory's mode bits;
// else chmod 0555. It returns what undoes it.
func lockDir(t *testing.T, dir string) func() {
	t.Helper()
	if os.Geteuid() != 0 {
		if err := os.Chmod(dir, 0o555); err != nil {
			t.Fatal(err)
		}
		return func() { os.Chmod(dir, 0o755) }
	}
	if out, err := exec.Command("chattr", "+i", dir).CombinedOutput(); err != nil {
		t.Skipf("chattr +i: %v %s", err, out)
	}
	undo := func() { exec.Command("chattr", "-i", dir).Run() }
	t.Cleanup(undo)
	return undo
}

// TestRotationRenameRefused: the directory refuses the rotation's rename
// (made read-only under a running weir). A batch that reaches max_size
// part way has its first lines synced into the file before the rename is
// tried; the sink must count and log the failure, keep running, and once
// the directory is writable again have every record in exactly one file:
// the retry must not write again the lines that were already there.
func TestRotationRenameRefused(t *testing.T) {
	b := sinktest.Broker(t)
	dir := t.TempDir()
	c := configs.Sink{Type: "file", Name: "archive", Topics: []string{"events"}, Path: filepath.Join(dir, "events.jsonl"),
		MaxSize: 64 << 10, Keep: keep(100), BatchSize: 400, FlushInterval: configs.Duration(20 * time.Millisecond),
		Retry: configs.SinkRetry{Initial: configs.Duration(20 * time.Millisecond), Max: configs.Duration(50 * time.Millisecond)}}
	s, err := file.NewSink(c, time.Now)
	if err != nil {
		t.Fatal(err)
	}
	var log strings.Builder
	r := sinktest.StartLogging(t, b, c, s, &syncWriter{w: &log})
	key := func(i int) string { return fmt.Sprintf("r%d", i) }
	sinktest.Produce(t, b, "events", telemetry.SchemaEvent, key, events(100, 0)) // ~30 KiB: no rotation
	sinktest.Eventually(t, "the first records written", func() bool {
		return r.Counter("weir_sink_records_total", map[string]string{"sink": "archive"}) >= 100
	})
	unlock := lockDir(t, dir)
	// ~120 KiB more: the file reaches max_size part way through.
	sinktest.Produce(t, b, "events", telemetry.SchemaEvent, func(i int) string { return key(100 + i) }, events(400, 100))
	sinktest.Eventually(t, "the refused rename retried", func() bool {
		return r.Counter("weir_sink_retries_total", map[string]string{"sink": "archive", "reason": "permission"}) >= 3
	})
	unlock()
	sinktest.Eventually(t, "every record written", func() bool {
		return r.Counter("weir_sink_records_total", map[string]string{"sink": "archive"}) >= 500
	})
	if err := r.Stop(); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(log.String(), "rotate") {
		t.Errorf("the log does not say the rotation failed:\n%s", log.String())
	}
	lines, files := readLines(t, dir)
	for i := range 500 {
		if n := lines["events/"+key(i)]; n != 1 {
			t.Errorf("%s written %d times, want once (files %v)", key(i), n, files)
		}
	}
	if len(files) < 2 {
		t.Errorf("files %v: no rotation once the directory was writable", files)
	}
}
