package kafkawire

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net"
	"strconv"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// countingConn serves pipelined requests from a buffer, every byte there at
// once as a client that writes ahead leaves them in the socket, and counts
// the server's system calls.
type countingConn struct {
	net.Conn // nil: only the methods below are used
	in       *bytes.Reader
	reads    int
	writes   int
	written  int
}

func (c *countingConn) Read(p []byte) (int, error) { c.reads++; return c.in.Read(p) }
func (c *countingConn) Write(p []byte) (int, error) {
	c.writes++
	c.written += len(p)
	return len(p), nil
}
func (c *countingConn) Close() error { return nil }
func (c *countingConn) LocalAddr() net.Addr {
	return &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 9092}
}
func (c *countingConn) RemoteAddr() net.Addr {
	return &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 40000}
}
func (c *countingConn) SetDeadline(time.Time) error      { return nil }
func (c *countingConn) SetReadDeadline(time.Time) error  { return nil }
func (c *countingConn) SetWriteDeadline(time.Time) error { return nil }

// TestPipelinedRequestsFewSyscalls: requests a client pipelines (librdkafka
// keeps up to a million in flight) are read in large reads and answered in
// few writes. With only a 4 KiB read buffer, 3 KiB produce requests were
// read about one per system call and, the next never wholly buffered,
// answered one write each: half the throughput of a 64 KiB buffer.
func TestPipelinedRequestsFewSyscalls(t *testing.T) {
	for _, size := range []int{200, 3000, 8 << 10, 40 << 10} {
		t.Run(strconv.Itoa(size), func(t *testing.T) {
			fl := newFakeLog()
			newTopic(t, fl, "t", 1)
			s := New(fl, WithLogger(testLogger(t)))
			const n = 64
			var in []byte
			for i := range n {
				req := produceReq(7, 1, "t", 0, batch(string(make([]byte, size))))
				// AppendRequest sizes its frame from the start of dst.
				in = append(in, kmsg.NewRequestFormatter(kmsg.FormatterClientID("p")).AppendRequest(nil, req, int32(i))...)
			}
			nc := &countingConn{in: bytes.NewReader(in)}
			c := s.newConn(nc, s.cfg.logger)
			if err := c.run(context.Background()); !errors.Is(err, io.EOF) {
				t.Fatalf("run: %v, want EOF", err)
			}
			if got := fl.hwm("t", 0); got != n {
				t.Fatalf("%d records appended, want %d", got, n)
			}
			t.Logf("%d bytes of requests in %d reads; %d bytes of responses in %d writes", len(in), nc.reads, nc.written, nc.writes)
			want := len(in)/(32<<10) + 4
			if nc.reads > want {
				t.Errorf("%d reads for %d bytes of pipelined requests, want at most %d", nc.reads, len(in), want)
			}
			if nc.writes > want {
				t.Errorf("%d writes for %d pipelined responses, want at most %d", nc.writes, n, want)
			}
		})
	}
}
