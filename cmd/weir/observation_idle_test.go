package main

import (
	"bufio"
	"io"
	"log/slog"
	"net"
	"net/http"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// TestObservationServerClosesIdleConnections: a client that scraped
// /metrics once and holds its connection has it closed after the idle
// timeout; net/http's default kept it, and its file descriptor, for as
// long as weir ran.
func TestObservationServerClosesIdleConnections(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var ready atomic.Bool
	hs := observationServer(httpHandler(prometheus.NewRegistry(), &ready), slog.New(slog.DiscardHandler), 300*time.Millisecond)
	go hs.Serve(ln)
	defer hs.Close()
	conn, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	io.WriteString(conn, "GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n")
	br := bufio.NewReader(conn)
	resp, err := http.ReadResponse(br, nil)
	if err != nil {
		t.Fatal(err)
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	conn.SetReadDeadline(time.Now().Add(3 * time.Second))
	if _, err := br.ReadByte(); err != io.EOF {
		t.Fatalf("an idle connection after the idle timeout: %v, want EOF (closed)", err)
	}
	if observationIdleTimeout <= 0 {
		t.Fatal("weir run's observation server has no idle timeout")
	}
}
