package syslog

import (
	"bytes"
	"strconv"
	"testing"
)

// FuzzOctetCountedRoundTrip: messages of any bytes sent octet-counted
// (RFC 6587 3.4.1), with or without a newline after each frame, come back
// as sent, less the trailer trimNewline takes (a counted LF, CRLF or NUL).
// The first frame is not empty: see below.
func FuzzOctetCountedRoundTrip(f *testing.F) {
	f.Add([]byte("<13>hello<14>world\n"), []byte{9, 10}, false)
	f.Add([]byte("<13>a\x00b\n\n5 <1>"), []byte{3, 0, 5, 4}, true)
	f.Add([]byte("x"), []byte{0, 1}, false)
	f.Fuzz(func(t *testing.T, data, lens []byte, lf bool) {
		const max = 64
		if len(lens) == 0 || lens[0]%max == 0 || len(data) == 0 {
			// A connection's first frame empty ("0 ") is read as the
			// start of a line: detection wants a count from 1.
			return
		}
		var stream []byte
		var want []string
		for _, l := range lens {
			n := min(int(l)%max, len(data))
			msg := data[:n]
			data = data[n:]
			stream = strconv.AppendInt(stream, int64(n), 10)
			stream = append(stream, ' ')
			stream = append(stream, msg...)
			if lf {
				stream = append(stream, '\n')
			}
			want = append(want, string(trimNewline(msg)))
		}
		got, _ := frames(t, stream, max)
		if len(got) != len(want) {
			t.Fatalf("%q: %d messages %q, want %d %q", stream, len(got), got, len(want), want)
		}
		for i := range want {
			if got[i] != want[i] {
				t.Fatalf("%q: message %d is %q, want %q", stream, i, got[i], want[i])
			}
		}
	})
}

// FuzzLineFramedRoundTrip: lines of any other bytes sent newline-framed
// (LF, CRLF or NUL after each, RFC 6587 3.4.2) come back as sent.
func FuzzLineFramedRoundTrip(f *testing.F) {
	f.Add([]byte("<13>hello<14>world"), []byte{9, 10}, byte(0))
	f.Add([]byte("<13>a\tb<1>c d"), []byte{6, 5}, byte(1))
	f.Add([]byte("<13>x<13>y"), []byte{5, 5}, byte(2))
	f.Fuzz(func(t *testing.T, data, lens []byte, trailer byte) {
		const max = 64
		end := [][]byte{{'\n'}, {'\r', '\n'}, {0}}[int(trailer)%3]
		var stream []byte
		var want []string
		for _, l := range lens {
			n := min(int(l)%max, len(data))
			line := data[:n]
			data = data[n:]
			if n == 0 || bytes.ContainsAny(line, "\n\x00") || line[n-1] == '\r' {
				return // not one line, or one a trailer would cut
			}
			stream = append(append(stream, line...), end...)
			want = append(want, string(line))
		}
		if len(want) == 0 || want[0][0] != '<' {
			return // a first line that is not syslog may be taken for a count or TLS
		}
		got, _ := frames(t, stream, max)
		if len(got) != len(want) {
			t.Fatalf("%q: %d messages %q, want %d %q", stream, len(got), got, len(want), want)
		}
		for i := range want {
			if got[i] != want[i] {
				t.Fatalf("%q: message %d is %q, want %q", stream, i, got[i], want[i])
			}
		}
	})
}
