package embedded

import (
	"bytes"
	"errors"
	"log/slog"
	"strings"
	"testing"
)

// TestFlushFailuresLogRecovery: a flush failing again and again is logged
// once, and its end once, so an operator who saw "flush failed" (a full
// disk) learns from the log that flushing works again.
func TestFlushFailuresLogRecovery(t *testing.T) {
	var buf bytes.Buffer
	f := flushFailures{logger: slog.New(slog.NewTextHandler(&buf, nil))}
	full := errors.New("no space left on device")
	for range 5 {
		f.report("t-0", full)
	}
	f.report("t-1", nil)
	f.report("t-0", nil)
	f.report("t-0", nil)
	out := buf.String()
	if n := strings.Count(out, "flush failed"); n != 1 {
		t.Errorf("%d lines of flush failed, want 1:\n%s", n, out)
	}
	if n := strings.Count(out, "flush works again"); n != 1 || !strings.Contains(out, "partition=t-0") {
		t.Errorf("%d lines of flush works again, want 1 for t-0:\n%s", n, out)
	}
}
