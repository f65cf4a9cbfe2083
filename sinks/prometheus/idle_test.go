package prometheus

import (
	"bufio"
	"context"
	"io"
	"net"
	"net/http"
	"testing"
	"time"

	"github.com/weirnet/weir/configs"
)

// TestIdleScrapeConnectionsClosed: a client that scrapes once and keeps its
// connection open without another request (a crashed scraper behind a NAT,
// or one holding connections on purpose) has it closed after the idle
// timeout. Without one, net/http kept every such connection, and its file
// descriptor, for as long as weir ran.
func TestIdleScrapeConnectionsClosed(t *testing.T) {
	s, err := NewSink(configs.Sink{Name: "prom", Listen: "127.0.0.1:0"}, time.Now)
	if err != nil {
		t.Fatal(err)
	}
	s.idleTimeout = 300 * time.Millisecond
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- s.Run(ctx) }()
	defer func() { cancel(); <-done }()

	conn, err := net.Dial("tcp", s.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if _, err := io.WriteString(conn, "GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n"); err != nil {
		t.Fatal(err)
	}
	br := bufio.NewReader(conn)
	resp, err := http.ReadResponse(br, nil)
	if err != nil {
		t.Fatal(err)
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("scrape: %s", resp.Status)
	}
	// Idle past the timeout: the server closes its side, and the read
	// ends (EOF) rather than waiting on until our deadline.
	conn.SetReadDeadline(time.Now().Add(3 * time.Second))
	start := time.Now()
	_, err = br.ReadByte()
	if ne, ok := err.(net.Error); ok && ne.Timeout() {
		t.Fatalf("idle scrape connection still open after %v (idle timeout %v)", time.Since(start).Round(time.Millisecond), s.idleTimeout)
	}
	if err != io.EOF {
		t.Fatalf("reading an idle connection: %v, want EOF", err)
	}
}
