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
// next slot is logged when it starts, then every failLogEvery with the
// count, then when a poll fits its interval again; the next overrun after
// that is logged at once.
func TestOverrunLoggedSparingly(t *testing.T) {
	var buf syncbuf.Buffer
	tg := &target{log: slog.New(slog.NewTextHandler(&buf, nil))}
	t0 := time.Now()
	for i := range 30 { // every other slot of 10 s: 10 minutes less 20 s
		tg.logOverrun(10*time.Second, 1, t0.Add(time.Duration(i)*20*time.Second))
	}
	tg.logOverrun(10*time.Second, 1, t0.Add(failLogEvery))
	tg.logInTime(t0.Add(failLogEvery + 20*time.Second))
	tg.logOverrun(10*time.Second, 2, t0.Add(failLogEvery+40*time.Second))
	lines := strings.Split(strings.TrimSpace(buf.String()), "\n")
	if len(lines) != 4 || !strings.Contains(lines[0], "snmp poll overran its interval") ||
		!strings.Contains(lines[1], "still overrunning") || !strings.Contains(lines[1], "overran_polls=31") || !strings.Contains(lines[1], "skipped=31") ||
		!strings.Contains(lines[2], "fit its interval again") || !strings.Contains(lines[3], "overran its interval") || !strings.Contains(lines[3], "skipped=2") {
		t.Fatalf("%d lines:\n%s", len(lines), buf.String())
	}
}
