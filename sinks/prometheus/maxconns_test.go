package prometheus

import (
	"context"
	"net"
	"os"
	"testing"
	"time"

	"github.com/weirnet/weir/configs"
)

// TestScrapeConnectionsBounded: the sink's listener took every connection
// offered, so one client holding connections open (a request never
// finished waits for ReadHeaderTimeout, 10 s; a keep-alive for the idle
// timeout) took every file descriptor weir had, and with them the log's
// flushes and the other listeners. Past maxConnections they now wait in
// the kernel's accept queue, and are served once others close.
func TestScrapeConnectionsBounded(t *testing.T) {
	if _, err := os.Stat("/proc/self/fd"); err != nil {
		t.Skip("no /proc")
	}
	fds := func() int {
		ents, err := os.ReadDir("/proc/self/fd")
		if err != nil {
			t.Fatal(err)
		}
		return len(ents)
	}
	s, err := NewSink(configs.Sink{Name: "prom", Listen: "127.0.0.1:0"}, time.Now)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- s.Run(ctx) }()
	defer func() { cancel(); <-done }()

	base := fds()
	const extra = 300
	var conns []net.Conn
	defer func() {
		for _, c := range conns {
			c.Close()
		}
	}()
	for range maxConnections + extra {
		c, err := net.Dial("tcp", s.Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		conns = append(conns, c)
		c.Write([]byte("GET /metrics HTTP/1.1\r\n")) // never finished
	}
	time.Sleep(time.Second)
	// The clients' own descriptors are in this process too.
	if served := fds() - base - len(conns); served > maxConnections+extra/2 {
		t.Errorf("the sink holds %d file descriptors for %d connections; want at most about %d", served, len(conns), maxConnections)
	}
}
