package weirproc

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// script writes an executable shell script into a new directory and
// returns its path.
func script(t *testing.T, body string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "weir")
	if err := os.WriteFile(p, []byte("#!/bin/sh\n"+body), 0o755); err != nil {
		t.Fatal(err)
	}
	return p
}

// fakeT is a testing.TB whose Fatal ends the goroutine, as testing's
// does, and which keeps its cleanups for the test to run.
type fakeT struct {
	testing.TB
	mu       sync.Mutex
	failed   string
	cleanups []func()
}

func (f *fakeT) Helper() {}
func (f *fakeT) Fatalf(format string, args ...any) {
	f.mu.Lock()
	f.failed = fmt.Sprintf(format, args...)
	f.mu.Unlock()
	runtime.Goexit()
}
func (f *fakeT) Errorf(format string, args ...any) {}
func (f *fakeT) Cleanup(fn func()) {
	f.mu.Lock()
	f.cleanups = append(f.cleanups, fn)
	f.mu.Unlock()
}

// TestStartThatTimesOutStopsTheProcess: a weir that never says it runs
// fails Start, and is stopped when the test ends, not left running.
func TestStartThatTimesOutStopsTheProcess(t *testing.T) {
	defer func(d time.Duration) { startTimeout = d }(startTimeout)
	startTimeout = time.Second
	pidFile := filepath.Join(t.TempDir(), "pid")
	bin := script(t, "echo $$ > "+pidFile+"\nexec sleep 60\n")
	f := &fakeT{TB: t}
	done := make(chan struct{})
	go func() { defer close(done); Start(f, bin, "") }()
	<-done
	if f.failed == "" {
		t.Fatal("Start did not fail")
	}
	for i := len(f.cleanups) - 1; i >= 0; i-- {
		f.cleanups[i]()
	}
	b, err := os.ReadFile(pidFile)
	if err != nil {
		t.Fatal(err)
	}
	pid, _ := strconv.Atoi(strings.TrimSpace(string(b)))
	time.Sleep(100 * time.Millisecond)
	if syscall.Kill(pid, 0) == nil {
		syscall.Kill(pid, syscall.SIGKILL) // the process this test started
		t.Errorf("weir (pid %d) still running after the test that started it ended", pid)
	}
}

// TestLogsOfAnExitedProcessAreWhole: what weir logged before it exited,
// its last line (the error, mostly) included, is in Logs once Exited is
// closed: Running and Start print it to say why.
func TestLogsOfAnExitedProcessAreWhole(t *testing.T) {
	bin := script(t, `echo 'level=INFO msg="weir running"' >&2
sleep 0.2
i=0; while [ $i -lt 2000 ]; do echo "level=INFO msg=\"filler line $i of the log before the error\"" >&2; i=$((i+1)); done
echo 'level=ERROR msg="the reason weir exited"' >&2
exit 1
`)
	lost := 0
	for range 20 {
		p := Start(t, bin, "")
		<-p.Exited
		if !strings.Contains(p.Logs(), "the reason weir exited") {
			lost++
		}
	}
	if lost > 0 {
		t.Errorf("the last line missing from Logs after the exit in %d of 20 runs", lost)
	}
}
