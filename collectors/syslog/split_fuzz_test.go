package syslog

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"slices"
	"testing"
)

// cutReader reads a stream in the pieces given by cuts (offsets), then the
// rest: as a TCP stream arrives split anywhere.
type cutReader struct {
	b    []byte
	cuts []int
	off  int
}

func (c *cutReader) Read(p []byte) (int, error) {
	if c.off == len(c.b) {
		return 0, io.EOF
	}
	end := len(c.b)
	for _, cut := range c.cuts {
		if cut > c.off {
			end = min(end, cut)
			break
		}
	}
	n := copy(p, c.b[c.off:end])
	c.off += n
	return n, nil
}

type cutConn struct {
	streamConn
	cr *cutReader
}

func (c *cutConn) Read(p []byte) (int, error) { return c.cr.Read(p) }

// frameAll frames stream read in the pieces cuts gives, through a read
// buffer of bufSize, and describes every message (with its truncated flag)
// and the error that ended it.
func frameAll(t testing.TB, stream []byte, cuts []int, bufSize, max int) []string {
	conn := &cutConn{cr: &cutReader{b: stream, cuts: cuts}}
	m := newMetrics()
	r := &frameReader{conn: conn, br: bufio.NewReaderSize(conn, bufSize), max: max, stats: m.forListener("split")}
	var out []string
	for range len(stream) + 2 {
		msg, truncated, err := r.next()
		if msg != nil {
			out = append(out, fmt.Sprintf("%q %v", msg, truncated))
		}
		if err != nil {
			return append(out, "err: "+err.Error())
		}
	}
	t.Fatalf("framing did not end on a %d-byte stream", len(stream))
	return nil
}

// lineModel is newline framing as documented: a message ends at LF or NUL,
// loses that trailer and a CR before it; empty ones are skipped; the last
// one needs no trailer.
func lineModel(stream []byte) []string {
	var out []string
	for len(stream) > 0 {
		i := bytes.IndexAny(stream, "\n\x00")
		var msg []byte
		if i < 0 {
			msg, stream = stream, nil
		} else {
			msg, stream = stream[:i], stream[i+1:]
		}
		msg = bytes.TrimSuffix(msg, []byte("\r"))
		if len(msg) > 0 {
			out = append(out, fmt.Sprintf("%q %v", msg, false))
		}
	}
	return append(out, "err: EOF")
}

// FuzzFramingSplitReads: a stream frames the same however its bytes arrive
// (split at any byte, or one byte a read) and whatever the read buffer's
// size; a newline-framed one (no count, no TLS) as lineModel says.
func FuzzFramingSplitReads(f *testing.F) {
	f.Add([]byte("<13>a\x00<13>b\x00\n<13>c\r\n<13>d\x00"))
	f.Add([]byte("5 hello6 world!\n7 <13>a\x00\n"))
	f.Add([]byte("<13>a long line that passes the small read buffer\x00<13>b\r\x00x"))
	f.Add([]byte("\x00\x00\n\n<13>x\r"))
	f.Add([]byte("1733150000 dev1 app: up\x00next\n"))
	f.Fuzz(func(t *testing.T, stream []byte) {
		if len(stream) > 300 {
			return
		}
		const max = 1 << 10 // no message is cut
		want := frameAll(t, stream, nil, 64<<10, max)
		if len(stream) > 0 && (stream[0] < '0' || stream[0] > '9') && stream[0] != tlsHandshake {
			if m := lineModel(stream); !slices.Equal(want, m) {
				t.Fatalf("%q: framed %q, want %q", stream, want, m)
			}
		}
		ones := make([]int, len(stream))
		for i := range ones {
			ones[i] = i + 1
		}
		for _, bufSize := range []int{16, 64 << 10} {
			if got := frameAll(t, stream, ones, bufSize, max); !slices.Equal(got, want) {
				t.Fatalf("%q a byte a read, %d byte buffer: %q, want %q", stream, bufSize, got, want)
			}
			for cut := 1; cut < len(stream); cut++ {
				if got := frameAll(t, stream, []int{cut}, bufSize, max); !slices.Equal(got, want) {
					t.Fatalf("%q split at %d, %d byte buffer: %q, want %q", stream, cut, bufSize, got, want)
				}
			}
		}
	})
}
