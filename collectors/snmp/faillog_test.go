package snmp

import (
	"errors"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/weirnet/weir/internal/syncbuf"
)

// TestDeadTargetLoggedSparingly: a target that keeps failing is logged
// when it starts failing, when the way it fails changes, and then every
// failLogEvery, not at every poll (1,000 dead targets polled every minute
// were 1.4 million lines a day).
func TestDeadTargetLoggedSparingly(t *testing.T) {
	var buf syncbuf.Buffer
	tg := &target{log: slog.New(slog.NewTextHandler(&buf, nil))}
	t0 := time.Now()
	timeout := errors.New("request timeout")
	for i := range 30 { // 30 polls 5 s apart: 2.5 minutes
		tg.logFailure(ResultTimeout, time.Second, timeout, t0.Add(time.Duration(i)*5*time.Second))
	}
	tg.logFailure("auth_failure", time.Second, errors.New("wrong digest"), t0.Add(151*time.Second))
	tg.logFailure("auth_failure", time.Second, errors.New("wrong digest"), t0.Add(156*time.Second))
	tg.logFailure("auth_failure", time.Second, errors.New("wrong digest"), t0.Add(151*time.Second+failLogEvery))
	lines := strings.Split(strings.TrimSpace(buf.String()), "\n")
	if len(lines) != 3 || !strings.Contains(lines[0], "snmp poll failed") || !strings.Contains(lines[1], "result=auth_failure") ||
		!strings.Contains(lines[2], "still failing") || !strings.Contains(lines[2], "failed_polls=33") {
		t.Fatalf("%d lines:\n%s", len(lines), buf.String())
	}
}

// TestOverrunLoggedSparingly: a target whose polls keep running into the
// next slot, every other poll or every one, is logged when it starts and
// then at most every failLogEvery with the count since the last line.
func TestOverrunLoggedSparingly(t *testing.T) {
	var buf syncbuf.Buffer
	tg := &target{log: slog.New(slog.NewTextHandler(&buf, nil))}
	t0 := time.Now()
	for i := range 30 { // every other poll of 10 s overruns: 10 minutes less 40 s
		tg.logOverrun(10*time.Second, 1, t0.Add(time.Duration(i)*20*time.Second))
	}
	tg.logOverrun(10*time.Second, 2, t0.Add(failLogEvery))
	tg.logOverrun(10*time.Second, 1, t0.Add(failLogEvery+30*time.Second))
	tg.logOverrun(10*time.Second, 1, t0.Add(3*failLogEvery)) // a while later: the one since
	lines := strings.Split(strings.TrimSpace(buf.String()), "\n")
	if len(lines) != 3 || !strings.Contains(lines[0], "snmp poll overran its interval") ||
		!strings.Contains(lines[1], "still overrunning") || !strings.Contains(lines[1], "overran_polls=30") || !strings.Contains(lines[1], "skipped=31") ||
		!strings.Contains(lines[2], "still overrunning") || !strings.Contains(lines[2], "overran_polls=2") {
		t.Fatalf("%d lines:\n%s", len(lines), buf.String())
	}
}

// TestAlternatingFailureLoggedOnce: a slow agent that fails by turns in two
// ways (a timeout, then a poll cut off at its interval) is logged once for
// each way, not at every turn.
func TestAlternatingFailureLoggedOnce(t *testing.T) {
	var buf syncbuf.Buffer
	tg := &target{log: slog.New(slog.NewTextHandler(&buf, nil))}
	t0 := time.Now()
	for i := range 20 {
		result, err := ResultTimeout, errors.New("request timeout")
		if i%2 == 1 {
			result, err = ResultError, errors.New("poll cut off at the end of its interval")
		}
		tg.logFailure(result, time.Second, err, t0.Add(time.Duration(i)*20*time.Second))
	}
	if n := strings.Count(buf.String(), "snmp poll failed"); n != 2 {
		t.Fatalf("%d lines logged, want 2:\n%s", n, buf.String())
	}
}
