package main

import (
	"fmt"
	"net"
	"os"
	"testing"
	"time"
)

// TestObservationListenerBoundsConnections: http.listen took every
// connection offered, so one client holding connections open (a request
// never finished is closed only after ReadHeaderTimeout, 10 s; a
// keep-alive after 5 minutes idle), in a loop, took every file descriptor
// weir had: flushes of the log, sinks' posts, the Kafka and syslog
// listeners' accepts all failed with "too many open files" (seen with
// 20,000 half-sent requests against weir run). Connections past
// observationMaxConnections now wait in the kernel's accept queue, holding
// no descriptor of weir's, and are served once others close.
func TestObservationListenerBoundsConnections(t *testing.T) {
	if _, err := os.Stat("/proc/self/fd"); err != nil {
		t.Skip("no /proc")
	}
	p := startWeir(t, t.TempDir())
	fds := func() int {
		ents, err := os.ReadDir(fmt.Sprintf("/proc/%d/fd", p.Cmd.Process.Pid))
		if err != nil {
			t.Fatal(err)
		}
		return len(ents)
	}
	base := fds()
	const extra = 300
	var conns []net.Conn
	defer func() {
		for _, c := range conns {
			c.Close()
		}
	}()
	for range observationMaxConnections + extra {
		c, err := net.Dial("tcp", p.HTTPAddr)
		if err != nil {
			t.Fatal(err)
		}
		conns = append(conns, c)
		c.Write([]byte("GET /metrics HTTP/1.1\r\n")) // never finished
	}
	time.Sleep(time.Second)
	if n := fds() - base; n > observationMaxConnections+extra/2 {
		t.Errorf("weir holds %d more file descriptors with %d connections to http.listen open; want at most about %d",
			n, len(conns), observationMaxConnections)
	}
	for _, c := range conns {
		c.Close()
	}
	conns = nil
	// Served again once they are gone.
	p.Metrics(t)
}
