package kafkawire

import (
	"encoding/binary"
	"log/slog"
	"net"
	"strings"
	"testing"

	"github.com/weirnet/weir/internal/syncbuf"
)

// TestBadFramesLogThrottled: a client that connects in a loop and sends a
// frame that cannot be read (random bytes, a port scanner, a TLS client at a
// plaintext port) gets every connection closed and counted, but the log
// says so at most every 10 s with how many there were, as it does for
// failed authentications and for syslog's bad frames: one line per
// connection let such a loop write thousands of lines a second.
func TestBadFramesLogThrottled(t *testing.T) {
	const conns = 200
	var logs syncbuf.Buffer
	closed := make(chan error, conns)
	_, addr := startServer(t, newFakeLog(),
		WithLogger(slog.New(slog.NewTextHandler(&logs, nil))),
		WithMetrics(&Metrics{ConnClosed: func(_ net.Addr, err error) { closed <- err }}))

	bad := binary.BigEndian.AppendUint32(nil, 0xffffffff) // a negative length
	for i := 0; i < conns; i++ {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		c.Write(bad)
		expectClosed(t, c)
		c.Close()
	}
	for i := 0; i < conns; i++ {
		if err := <-closed; err == nil {
			t.Fatalf("connection %d closed without an error", i)
		}
	}

	lines := strings.Count(logs.String(), "closing connection")
	if lines == 0 {
		t.Fatalf("no bad frame logged:\n%s", logs.String())
	}
	// The loop takes far less than the throttle's interval per line.
	if lines > conns/10 {
		t.Errorf("%d bad connections logged %d lines, want a few", conns, lines)
	}
	if !strings.Contains(logs.String(), "times=") {
		t.Errorf("the line does not say how many there were:\n%s", logs.String())
	}
}
