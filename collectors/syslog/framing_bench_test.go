package syslog

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"testing"
)

// BenchmarkFraming reads a stream of typical lines, LF- or NUL-terminated
// or octet-counted, through a connection's read buffer.
//
//	go test -run '^$' -bench Framing ./collectors/syslog/
func BenchmarkFraming(b *testing.B) {
	for _, mode := range []string{"lf", "nul", "octet"} {
		b.Run(mode, func(b *testing.B) { benchFraming(b, mode) })
	}
}

func benchFraming(b *testing.B, mode string) {
	in := framingStream(mode)
	b.SetBytes(int64(len(in)))
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		frameStream(b, in)
	}
}

// framingStream is 1 MiB of typical lines, framed as mode says.
func framingStream(mode string) []byte {
	var stream bytes.Buffer
	for i := 0; stream.Len() < 1<<20; i++ {
		msg := fmt.Sprintf("<189>%d: *Nov 29 14:08:%02d.123: %%LINEPROTO-5-UPDOWN: Line protocol on Interface GigabitEthernet0/%d, changed state to down", i, i%60, i%48)
		switch mode {
		case "lf":
			stream.WriteString(msg + "\n")
		case "nul":
			stream.WriteString(msg + "\x00")
		case "octet":
			fmt.Fprintf(&stream, "%d %s", len(msg), msg)
		}
	}
	return stream.Bytes()
}

func frameStream(t testing.TB, in []byte) {
	conn := &streamConn{r: bytes.NewReader(in)}
	m := newMetrics()
	r := &frameReader{conn: conn, br: bufio.NewReaderSize(conn, readBufferSize), max: 8 << 10, stats: m.forListener("bench")}
	for {
		_, _, err := r.next()
		if err == io.EOF {
			return
		}
		if err != nil {
			t.Fatal(err)
		}
	}
}
