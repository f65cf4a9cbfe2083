package syslog

import (
	"errors"
	"fmt"
	"log/slog"
	"net"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/weirnet/weir/configs"
)

// waitFor polls raw.syslog until n records are there or d has passed, and
// returns how many there are.
func (h *harness) waitFor(n int, d time.Duration) int {
	deadline := time.Now().Add(d)
	for {
		got := len(h.readLogs())
		if got >= n || time.Now().After(deadline) {
			return got
		}
		time.Sleep(25 * time.Millisecond)
	}
}

// TestCompleteMessagePublishedBeforePartialNext: a complete message is
// published while the connection stays open, though the bytes after it
// are not a whole message yet (a newline the octet count leaves out, the
// start of the next line). Held until the next message completes, it was
// lost if weir stopped in between.
func TestCompleteMessagePublishedBeforePartialNext(t *testing.T) {
	msg := "<13>Nov 29 14:08:12 host2 app: complete"
	for _, tc := range []struct{ name, stream string }{
		{"octet count, newline after the frame", fmt.Sprintf("%d %s\n", len(msg), msg)},
		{"octet count, part of the next frame", fmt.Sprintf("%d %s40 <13>Nov", len(msg), msg)},
		{"newline framing, part of the next line", msg + "\n<13>Nov 29 14:08:13 host2 app: part"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := startCollector(t, listener("tcp"))
			conn, err := net.Dial("tcp", h.addrs["tcp"])
			if err != nil {
				t.Fatal(err)
			}
			defer conn.Close()
			if _, err := conn.Write([]byte(tc.stream)); err != nil {
				t.Fatal(err)
			}
			if got := h.waitFor(1, 3*time.Second); got != 1 {
				t.Fatalf("after 3s with the connection open, %d of 1 messages published", got)
			}
			if l := h.readLogs()[0]; l.Raw != msg {
				t.Fatalf("published %q, want %q", l.Raw, msg)
			}
		})
	}
}

// TestOversizedFrameSkipsOnlyThatFrame: an octet-counted frame over
// max_message_size is dropped and counted once; the frames the sender
// pipelined behind it are published. Closing the connection instead lost
// them uncounted.
func TestOversizedFrameSkipsOnlyThatFrame(t *testing.T) {
	l := listener("tcp")
	l.MaxMessageSize = 1024
	h := startCollector(t, l)
	conn, err := net.Dial("tcp", h.addrs["tcp"])
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	big := "<13>Nov 29 14:08:12 host2 app: " + strings.Repeat("x", 2000)
	fmt.Fprintf(&b, "%d %s", len(big), big)
	for i := range 10 {
		m := fmt.Sprintf("<13>Nov 29 14:08:12 host2 app: after %d", i)
		fmt.Fprintf(&b, "%d %s", len(m), m)
	}
	if _, err := conn.Write([]byte(b.String())); err != nil {
		t.Fatal(err)
	}
	conn.Close()
	logs := byRaw(t, h.waitLogs(10))
	for i := range 10 {
		if _, ok := logs[fmt.Sprintf("<13>Nov 29 14:08:12 host2 app: after %d", i)]; !ok {
			t.Errorf("frame %d after the oversized one not published", i)
		}
	}
	name := "tcp://" + h.addrs["tcp"]
	if got := testutil.ToFloat64(h.c.metrics.dropped.WithLabelValues(name, "frame_too_large")); got != 1 {
		t.Errorf("dropped{frame_too_large} %v, want 1", got)
	}
	if got := testutil.ToFloat64(h.c.metrics.connsRejected.WithLabelValues(name, "frame_too_large")); got != 0 {
		t.Errorf("connection closed for the oversized frame (%v)", got)
	}
}

// TestLineOfExactlyMaxSizeIsWhole: a line of exactly max_message_size
// bytes arrives whole, not marked truncated, whether it ends in LF or CRLF.
func TestLineOfExactlyMaxSizeIsWhole(t *testing.T) {
	h := startCollector(t, listener("tcp"))
	line := "<13>Nov 29 14:08:12 host2 app: "
	lf := line + strings.Repeat("y", DefaultMaxMessageSize-len(line))
	crlf := line + strings.Repeat("z", DefaultMaxMessageSize-len(line))
	conn, err := net.Dial("tcp", h.addrs["tcp"])
	if err != nil {
		t.Fatal(err)
	}
	if _, err := conn.Write([]byte(lf + "\n" + crlf + "\r\n")); err != nil {
		t.Fatal(err)
	}
	conn.Close()
	logs := byRaw(t, h.waitLogs(2))
	for _, want := range []string{lf, crlf} {
		l, ok := logs[want]
		if !ok || l.ParseError != "" {
			t.Errorf("line of exactly %d bytes: found %v, parse_error %q", DefaultMaxMessageSize, ok, l.ParseError)
		}
	}
	name := "tcp://" + h.addrs["tcp"]
	if got := testutil.ToFloat64(h.c.metrics.truncated.WithLabelValues(name)); got != 0 {
		t.Errorf("truncated %v, want 0", got)
	}
}

// TestTrickleIsIdle: a sender that trickles a byte now and then without
// completing a message (a slowloris) is closed as idle after idle_timeout
// from its last complete message, however often its bytes come; one that
// completes messages slowly is kept.
func TestTrickleIsIdle(t *testing.T) {
	l := listener("tcp")
	// Wide margins: under -race on 2 busy cores a sender 250ms apart
	// was once closed with idle_timeout 400ms.
	l.IdleTimeout = configs.Duration(time.Second)
	h := startCollector(t, l)
	trickle, err := net.Dial("tcp", h.addrs["tcp"])
	if err != nil {
		t.Fatal(err)
	}
	defer trickle.Close()
	slow, err := net.Dial("tcp", h.addrs["tcp"])
	if err != nil {
		t.Fatal(err)
	}
	defer slow.Close()
	trickleClosed := make(chan time.Duration, 1)
	start := time.Now()
	go func() {
		trickle.Write([]byte("<13>Nov 29 14:08:10 h app: never"))
		for time.Since(start) < 6*time.Second {
			if _, err := trickle.Write([]byte("x")); err != nil {
				break
			}
			time.Sleep(100 * time.Millisecond)
			trickle.SetReadDeadline(time.Now().Add(time.Millisecond))
			if _, err := trickle.Read(make([]byte, 1)); err != nil && !errors.Is(err, os.ErrDeadlineExceeded) {
				break // closed by the collector
			}
		}
		trickleClosed <- time.Since(start)
	}()
	for i := range 6 { // a message every 250ms, under idle_timeout apart
		if _, err := fmt.Fprintf(slow, "<13>Nov 29 14:08:10 h app: slow %d\n", i); err != nil {
			t.Fatalf("slow sender closed after %d messages: %v", i, err)
		}
		time.Sleep(250 * time.Millisecond)
	}
	if d := <-trickleClosed; d > 4*time.Second {
		t.Errorf("trickling sender kept %v with idle_timeout 1s", d)
	}
	if logs := h.waitLogs(6); len(logs) < 6 {
		t.Errorf("slow sender: %d of 6 messages", len(logs))
	}
}

// TestHeldUpFullBatchIsNotIdleness: a full batch's flush that the broker
// holds up past idle_timeout does not make the connection idle: the
// sender was not.
func TestHeldUpFullBatchIsNotIdleness(t *testing.T) {
	l := listener("tcp")
	l.IdleTimeout = configs.Duration(300 * time.Millisecond)
	r := runRefusing(t, l)
	conn, err := net.Dial("tcp", r.addr)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	conn.Write([]byte(strings.Repeat("<13>x\n", batchRecords))) // one full batch: add flushes it
	time.Sleep(time.Second)                                     // the broker down past idle_timeout
	r.fb.fail.Store(false)
	time.Sleep(100 * time.Millisecond)
	if _, err := fmt.Fprintf(conn, "<13>Nov 29 14:08:10 h app: after recovery\n"); err != nil {
		t.Fatal(err)
	}
	h := &harness{t: t, b: r.b}
	if n := h.waitFor(batchRecords+1, 3*time.Second); n != batchRecords+1 {
		t.Fatalf("%d of %d messages: the connection was closed as idle while the broker held a full batch", n, batchRecords+1)
	}
}

// TestIdleCloseMidMessage: a connection closed for idleness in the middle
// of a message ends as one that the sender closed there: a partial line
// (newline framing) is still published, as at EOF; a partial octet-counted
// frame is counted dropped{truncated_frame}. Both were lost uncounted.
func TestIdleCloseMidMessage(t *testing.T) {
	l := listener("tcp")
	l.IdleTimeout = configs.Duration(300 * time.Millisecond)
	h := startCollector(t, l)
	name := "tcp://" + h.addrs["tcp"]
	whole := "<13>Nov 29 14:08:10 h app: whole"
	part := "<13>Nov 29 14:08:10 h app: stalled mid-line"
	for _, stream := range []string{
		whole + " 1\n" + part,
		fmt.Sprintf("%d %s 2%d <13>Nov 29 14:08:10 h app: stalled mid-frame", len(whole)+2, whole, 100),
	} {
		conn, err := net.Dial("tcp", h.addrs["tcp"])
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close()
		if _, err := conn.Write([]byte(stream)); err != nil {
			t.Fatal(err)
		}
	}
	deadline := time.Now().Add(5 * time.Second)
	for testutil.ToFloat64(h.c.metrics.connsRejected.WithLabelValues(name, "idle")) < 2 {
		if time.Now().After(deadline) {
			t.Fatal("connections not closed as idle")
		}
		time.Sleep(20 * time.Millisecond)
	}
	logs := byRaw(t, h.waitLogs(3))
	if l, ok := logs[part]; !ok {
		t.Errorf("partial line of the idle connection not published: %v", logs)
	} else if !strings.Contains(l.ParseError, "truncated") {
		t.Errorf("partial line not marked truncated: %+v", l)
	}
	if l := logs[whole+" 1"]; l.ParseError != "" {
		t.Errorf("whole line marked: %+v", l)
	}
	if got := testutil.ToFloat64(h.c.metrics.truncated.WithLabelValues(name)); got != 1 {
		t.Errorf("truncated_total %v, want 1 for the line the idle close cut", got)
	}
	if got := testutil.ToFloat64(h.c.metrics.dropped.WithLabelValues(name, "truncated_frame")); got != 1 {
		t.Errorf("dropped{truncated_frame} %v, want 1 for the frame the idle close cut", got)
	}
}

// TestEOFInFrameHeader: a connection that ends inside an octet-counted
// frame's header ("57" and no space yet) ended inside a frame, as one that
// ends inside its body does: counted closed and dropped{truncated_frame}.
func TestEOFInFrameHeader(t *testing.T) {
	h := startCollector(t, listener("tcp"))
	name := "tcp://" + h.addrs["tcp"]
	whole := "<13>Nov 29 14:08:10 h app: whole"
	conn, err := net.Dial("tcp", h.addrs["tcp"])
	if err != nil {
		t.Fatal(err)
	}
	if _, err := fmt.Fprintf(conn, "%d %s57", len(whole), whole); err != nil {
		t.Fatal(err)
	}
	conn.Close()
	h.waitLogs(1)
	deadline := time.Now().Add(5 * time.Second)
	for testutil.ToFloat64(h.c.metrics.connsRejected.WithLabelValues(name, "truncated_frame")) < 1 {
		if time.Now().After(deadline) {
			t.Fatal("a connection that ended inside a frame header not counted as truncated_frame")
		}
		time.Sleep(20 * time.Millisecond)
	}
	if got := testutil.ToFloat64(h.c.metrics.dropped.WithLabelValues(name, "truncated_frame")); got != 1 {
		t.Errorf("dropped{truncated_frame} %v, want 1", got)
	}
}

// TestFrameErrorReasonsLoggedEach: a connection closed for one framing
// reason (a sender cut off mid-frame) must not hold back the line of
// another (junk on the port) for the throttle's interval: the second was
// counted but never logged, so its sender's address was never seen.
func TestFrameErrorReasonsLoggedEach(t *testing.T) {
	h, logBuf := startLoggedCollector(t, slog.LevelWarn, listener("tcp"))
	addr := h.addrs["tcp"]
	send := func(b string) {
		conn, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		conn.Write([]byte(b))
		conn.Close()
	}
	logged := func(reason string) {
		t.Helper()
		for deadline := time.Now().Add(30 * time.Second); !strings.Contains(logBuf.String(), `reason="`+reason); time.Sleep(20 * time.Millisecond) {
			if time.Now().After(deadline) {
				t.Fatalf("no line for a connection closed for %s:\n%s", reason, logBuf.String())
			}
		}
	}
	send("57 <13>Nov 29 14:08:10 h app: cut") // ends inside the frame
	logged("truncated_frame")
	send("1 <x") // a frame, then no count
	logged("bad_frame")
}
