package syslog

import (
	"fmt"
	"net"
	"testing"
	"time"
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
