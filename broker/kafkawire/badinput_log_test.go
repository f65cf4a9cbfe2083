package kafkawire

import (
	"encoding/binary"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"strings"
	"testing"
	"time"

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
		WithLogger(slog.New(slog.NewTextHandler(&logs, nil))), WithMaxBufferedRequestBytes(1000),
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

	// A request refused for want of request memory, right after the
	// flood, is still said: it is the server's limit, not junk.
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	// A Produce of 200 kB, 100 kB of it sent: past the first 64 KiB its
	// buffer takes request memory, which has room for 1,000 bytes.
	c.Write(append(binary.BigEndian.AppendUint32(nil, 200_000), make([]byte, 100_000)...))
	expectClosed(t, c)
	<-closed
	if !strings.Contains(logs.String(), "request memory") {
		t.Errorf("a refusal for want of request memory after the flood is not logged:\n%s", logs.String())
	}
}

// TestHalfSentRequestIsATimeout: a connection closed because its request
// stalled half-sent (a length, then a few bytes, then nothing) is a
// timeout to the metrics (weir_kafka_connections_closed_total{reason=
// "timeout"}: "stalled in a request or a response"), not an error; the
// log still says what stalled.
func TestHalfSentRequestIsATimeout(t *testing.T) {
	closed := make(chan error, 1)
	_, addr := startServer(t, newFakeLog(), WithFrameTimeout(100*time.Millisecond),
		WithMetrics(&Metrics{ConnClosed: func(_ net.Addr, err error) { closed <- err }}))
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	// An ApiVersions request of 100000 bytes, three of them sent.
	c.Write(append(binary.BigEndian.AppendUint32(nil, 100000), 0, 18, 0))
	expectClosed(t, c)
	err = <-closed
	var ne net.Error
	if !errors.As(err, &ne) || !ne.Timeout() {
		t.Fatalf("ConnClosed(%v), want a timeout", err)
	}
	if !strings.Contains(err.Error(), "did not arrive in time") {
		t.Errorf("ConnClosed(%v): does not say the request stalled", err)
	}
	if Malformed(err) {
		t.Errorf("Malformed(%v): a request that stalled is a timeout", err)
	}
}

// TestMalformedClosesAreTold: a connection closed because what the client
// sent is no Kafka request (random bytes, a TLS ClientHello, a negative
// frame length, an unknown API key) is Malformed, for the metrics'
// malformed reason; an ordinary hang-up and a refusal for want of request
// memory are not.
func TestMalformedClosesAreTold(t *testing.T) {
	closed := make(chan error, 1)
	_, addr := startServer(t, newFakeLog(), WithMetrics(&Metrics{ConnClosed: func(_ net.Addr, err error) { closed <- err }}))
	for _, c := range []struct {
		name      string
		send      []byte
		malformed bool
	}{
		{"negative length", []byte{0xff, 0xff, 0xff, 0xf0}, true},
		{"TLS ClientHello", []byte{0x16, 0x03, 0x01, 0x02, 0x00, 0x01, 0x00, 0x01, 0xfc, 0x03, 0x03}, true},
		{"unknown API key", append(binary.BigEndian.AppendUint32(nil, 10), 0x7f, 0x00, 0, 0, 0, 0, 0, 1, 0xff, 0xff), true},
		{"hang-up", nil, false},
	} {
		conn, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		conn.Write(c.send)
		if c.send == nil {
			conn.Close()
		} else {
			expectClosed(t, conn)
			conn.Close()
		}
		if err := <-closed; Malformed(err) != c.malformed {
			t.Errorf("%s: ConnClosed(%v): Malformed %v, want %v", c.name, err, !c.malformed, c.malformed)
		}
	}
	full := &protocolError{reason: "a request buffer of 1000 bytes: the server's request memory is held by other requests", limit: true}
	if Malformed(full) {
		t.Errorf("Malformed(%v): the server's memory is full, the request may be well formed", full)
	}
}

// TestLargeLengthAloneIsATimeout: a client that sends only the length of a
// request larger than a control request may be (here 9 MiB) and nothing
// after it is closed at the request timeout (broker.request_timeout), as
// one that sent a few bytes more is: reading the API key it waited for the
// idle timeout (10 minutes by default), so such connections were held 20
// times as long as the README says.
func TestLargeLengthAloneIsATimeout(t *testing.T) {
	closed := make(chan error, 1)
	_, addr := startServer(t, newFakeLog(), WithFrameTimeout(100*time.Millisecond), WithIdleTimeout(time.Hour),
		WithMetrics(&Metrics{ConnClosed: func(_ net.Addr, err error) { closed <- err }}))
	for _, sent := range [][]byte{nil, {0}} {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		c.Write(append(binary.BigEndian.AppendUint32(nil, 9<<20), sent...))
		select {
		case err = <-closed:
		case <-time.After(time.Minute):
			t.Fatalf("%d bytes after a 9 MiB length: not closed after a minute, the request timeout being 100ms (the idle timeout an hour)", len(sent))
		}
		c.Close()
		if !strings.Contains(fmt.Sprint(err), "did not arrive in time") {
			t.Errorf("%d bytes after a 9 MiB length: ConnClosed(%v), want the request timeout", len(sent), err)
		}
	}
}
