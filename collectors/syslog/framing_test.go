package syslog

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"net"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"
)

// streamConn is a net.Conn over a fixed byte stream, for the framing
// reader.
type streamConn struct {
	net.Conn
	r *bytes.Reader
}

func (s *streamConn) Read(p []byte) (int, error)      { return s.r.Read(p) }
func (s *streamConn) SetReadDeadline(time.Time) error { return nil }

func frames(t testing.TB, stream []byte, max int) (msgs []string, err error) {
	conn := &streamConn{r: bytes.NewReader(stream)}
	m := newMetrics()
	r := &frameReader{conn: conn, br: bufio.NewReaderSize(conn, 64<<10), max: max, stats: m.forListener("fuzz")}
	for i := 0; i < len(stream)+2; i++ {
		msg, _, err := r.next()
		if err != nil {
			return msgs, err
		}
		if len(msg) > max {
			t.Fatalf("message of %d bytes exceeds max %d", len(msg), max)
		}
		if msg != nil {
			msgs = append(msgs, string(msg))
		}
	}
	t.Fatalf("framing did not end on a %d-byte stream", len(stream))
	return nil, nil
}

func TestFraming(t *testing.T) {
	for _, tc := range []struct {
		stream string
		want   []string
	}{
		{"5 hello6 world!", []string{"hello", "world!"}},
		{"6 hello\n7 world!\n", []string{"hello", "world!"}},             // counted newline
		{"5 hello\n6 world!", []string{"hello", "world!"}},               // newline between frames
		{"<13>a\n<13>b\r\n\n<13>c", []string{"<13>a", "<13>b", "<13>c"}}, // newline framing, CRLF, empty line, no final newline
		// Digits not followed by a space: lines, not a count.
		{"2026-11-29T14:08:10Z dev1 app: up\n1 line\n", []string{"2026-11-29T14:08:10Z dev1 app: up", "1 line"}},
		{"12\n34\n", []string{"12", "34"}},
		{"123456789x\n", []string{"123456789x"}},
		{"1733150000 dev1 app: up\n", []string{"1733150000 dev1 app: up"}}, // a Unix time
	} {
		got, _ := frames(t, []byte(tc.stream), 1024)
		if len(got) != len(tc.want) {
			t.Errorf("%q: %q, want %q", tc.stream, got, tc.want)
			continue
		}
		for i := range got {
			if got[i] != tc.want[i] {
				t.Errorf("%q: %q, want %q", tc.stream, got, tc.want)
			}
		}
	}
	if _, err := frames(t, []byte("5 hel"), 1024); err == nil {
		t.Error("truncated frame not reported")
	}
	if got, _ := frames(t, []byte("12 hello world!5 hello"), 10); len(got) != 1 || got[0] != "hello" {
		t.Errorf("oversized frame then a good one: %q, want the good one", got)
	}
	if _, err := frames(t, []byte("12345678901 x"), 1024); err == nil {
		t.Error("octet count of 11 digits not refused")
	}
}

// TestFrameBufferGrowsWithData: the frame buffer holds the bytes that
// arrived, not the count the sender claims. Allocated up front, 1,000
// connections sending only "65536 " held 64 MiB.
func TestFrameBufferGrowsWithData(t *testing.T) {
	conn := &streamConn{r: bytes.NewReader([]byte("65536 <13>Nov 29 14:08:12 host2 app: and no more"))}
	m := newMetrics()
	r := &frameReader{conn: conn, br: bufio.NewReaderSize(conn, 16<<10), max: 64 << 10, stats: m.forListener("test")}
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	_, _, err := r.next()
	runtime.ReadMemStats(&after)
	if err == nil {
		t.Fatal("truncated frame not reported")
	}
	if got := after.TotalAlloc - before.TotalAlloc; got > 8<<10 {
		t.Fatalf("%d bytes allocated for a frame of which 42 bytes arrived", got)
	}
}

// TestLineOfExactlyMaxSize: a line of max bytes is whole whatever its
// terminator, one byte more is truncated, also for lines longer than the
// read buffer. The terminator used to count against the limit there.
func TestLineOfExactlyMaxSize(t *testing.T) {
	const max = 40
	line := "<13>" + strings.Repeat("y", max-4)
	for _, tc := range []struct {
		name, stream, want string
		truncated          bool
	}{
		{"LF", line + "\n", line, false},
		{"CRLF", line + "\r\n", line, false},
		{"no terminator at EOF", line, line, false},
		{"one byte over", line + "z\n", line, true},
		{"one byte over, CRLF", line + "z\r\n", line, true},
		{"far over", line + strings.Repeat("z", 100) + "\n", line, true},
	} {
		conn := &streamConn{r: bytes.NewReader([]byte(tc.stream))}
		m := newMetrics()
		// The smallest read buffer, shorter than the line.
		r := &frameReader{conn: conn, br: bufio.NewReaderSize(conn, 16), max: max, stats: m.forListener("test")}
		msg, truncated, err := r.next()
		if err != nil || string(msg) != tc.want || truncated != tc.truncated {
			t.Errorf("%s: %q truncated=%v err=%v, want %q truncated=%v", tc.name, msg, truncated, err, tc.want, tc.truncated)
		}
	}
}

// FuzzFraming feeds arbitrary TCP streams to the framing reader: it must
// end, never return more than max bytes per message, and never panic.
func FuzzFraming(f *testing.F) {
	f.Add([]byte("5 hello6 world!"))
	f.Add([]byte("<13>a\n<13>b\r\n"))
	f.Add([]byte("999999999 x"))
	f.Add([]byte("12 abc\n\n\n4 abcd"))
	f.Fuzz(func(t *testing.T, stream []byte) {
		frames(t, stream, 64)
	})
}

// TestEmptyOctetCountedFrameIsAMessage: an empty octet-counted frame
// ("0 ", or "1 \n" from a sender that counts the newline it appends) is an
// empty message, published malformed as an empty datagram is (the
// corpus's empty line), also when no frame before it on the connection
// was kept (here one over the maximum): that one was skipped.
func TestEmptyOctetCountedFrameIsAMessage(t *testing.T) {
	got, err := frames(t, []byte("9 123456789"+"0 5 hello1 \n0 5 world"), 8)
	if want := []string{"", "hello", "", "", "world"}; !slices.Equal(got, want) || err != io.EOF {
		t.Fatalf("got %q (%v), want %q", got, err, want)
	}
}

// TestUnframeDatagram: a datagram with an octet count (logger -d
// --octet-count) loses it; one whose count does not match its length, or
// that does not start with a count and a PRI, is kept as sent.
func TestUnframeDatagram(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"10 <13>hello", "10 <13>hello"}, // 9 bytes follow, not 10
		{"9 <13>hello", "<13>hello"},
		{"10 <13>hello\n", "<13>hello\n"}, // the count includes a newline
		{"9 <13>hello\n", "9 <13>hello\n"},
		{"5 hello", "5 hello"}, // no PRI behind it
		{"09 <13>hello", "09 <13>hello"},
		{"1234567 <13>x", "1234567 <13>x"},
		{"42 packets dropped", "42 packets dropped"},
		{"<13>Nov 29 14:03:01 h a: 1 <2", "<13>Nov 29 14:03:01 h a: 1 <2"},
		{"1 <", "<"},
		{"1 ", "1 "},
		{"", ""},
	} {
		if got := string(unframeDatagram([]byte(tc.in))); got != tc.want {
			t.Errorf("unframeDatagram(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

// TestFramingNULTrailer: RFC 6587 (3.4.2) names NUL as a trailer senders use
// instead of LF (Juniper NetScreen; rsyslog's imtcp has
// AddtlFrameDelimiter for it). Such a stream has no LF at all: read as
// LF-framed it was one line, cut at max_message_size, and every message
// after the first few lost.
func TestFramingNULTrailer(t *testing.T) {
	var stream bytes.Buffer
	var want []string
	for i := range 5000 {
		msg := fmt.Sprintf("<134>ns5gt: NetScreen device_id=ns5gt [Root]system-notification-00257(traffic): start_time=\"2026-12-03 10:00:00\" seq=%d", i)
		want = append(want, msg)
		stream.WriteString(msg)
		stream.WriteByte(0)
	}
	conn := &streamConn{r: bytes.NewReader(stream.Bytes())}
	m := newMetrics()
	r := &frameReader{conn: conn, br: bufio.NewReaderSize(conn, readBufferSize), max: 64 << 10, stats: m.forListener("nul")}
	var got []string
	for {
		msg, truncated, err := r.next()
		if truncated {
			t.Fatalf("message %d truncated (%d bytes)", len(got), len(msg))
		}
		if msg != nil {
			got = append(got, string(msg))
		}
		if err != nil {
			break
		}
	}
	if !slices.Equal(got, want) {
		t.Fatalf("got %d messages, want %d; first: %.200q", len(got), len(want), got[0])
	}

	// NUL, LF and CR LF mixed, a NUL before a LF: each ends one message,
	// empty ones skipped.
	msgs, _ := frames(t, []byte("<13>a\x00<13>b\x00\n<13>c\r\n<13>d\x00"), 1024)
	if w := []string{"<13>a", "<13>b", "<13>c", "<13>d"}; !slices.Equal(msgs, w) {
		t.Errorf("mixed trailers: %q, want %q", msgs, w)
	}
}

// TestTrimTrailer: a datagram may end in a NUL too (rsyslog drops it: "a
// frequent problem with a number of senders"), before or after its LF.
func TestTrimTrailer(t *testing.T) {
	for in, want := range map[string]string{
		"<13>x\x00": "<13>x", "<13>x\n\x00": "<13>x", "<13>x\r\n": "<13>x", "<13>x\x00\x00": "<13>x\x00", "<13>\x00x": "<13>\x00x",
	} {
		if got := string(trimNewline([]byte(in))); got != want {
			t.Errorf("%q: %q, want %q", in, got, want)
		}
	}
}

// TestFramingTLSOnPlainPort: a sender set up for TLS (rsyslog's gtls,
// syslog-ng's tls()) pointed at a plain TCP listener sends a ClientHello.
// It was published as a few malformed records of binary junk and the
// sender left waiting for the idle timeout, with nothing in the log.
func TestFramingTLSOnPlainPort(t *testing.T) {
	hello := []byte{0x16, 0x03, 0x01, 0x02, 0x00, 0x01, 0x00, 0x01, 0xfc, 0x03, 0x03, '\n', 0x00, '<', '1', '3', '>'}
	msgs, err := frames(t, hello, 1024)
	var fe *frameError
	if !errors.As(err, &fe) || fe.reason != "bad_frame" || !strings.Contains(fe.detail, "TLS") {
		t.Fatalf("err %v, want a bad_frame naming TLS", err)
	}
	if len(msgs) != 0 {
		t.Errorf("published %q", msgs)
	}
}
