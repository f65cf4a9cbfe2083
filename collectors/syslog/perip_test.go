package syslog

import (
	"errors"
	"fmt"
	"net"
	"os"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/weirnet/weir/internal/peers"
)

// closedByPeer reports whether the server closed c (rather than keeping it
// open with nothing to say, as it does a connection it serves).
func closedByPeer(c net.Conn, wait time.Duration) bool {
	c.SetReadDeadline(time.Now().Add(wait))
	_, err := c.Read(make([]byte, 1))
	return err != nil && !errors.Is(err, os.ErrDeadlineExceeded)
}

// TestConnectionLimitPerIP: past max_connections_per_ip a connection from
// that address is closed on arrival and counted with its own reason, while
// another address is served; once one of the address's connections
// leaves, it may connect again. An override gives an address its own bound.
func TestConnectionLimitPerIP(t *testing.T) {
	l := listener("tcp")
	l.MaxConnectionsPerIP = 2
	l.MaxConnectionsPerIPOverrides = map[string]int{"127.0.0.3": 3}
	h := startCollector(t, l)
	addr := h.addrs["tcp"]
	closed := func(reason string) float64 {
		return testutil.ToFloat64(h.c.metrics.connsRejected.WithLabelValues("tcp://"+addr, reason))
	}
	send := func(c net.Conn, msg string) {
		t.Helper()
		if _, err := fmt.Fprintf(c, "<13>Nov 29 14:08:10 h app: %s\n", msg); err != nil {
			t.Fatal(err)
		}
	}

	a, b := peers.DialFrom(t, "127.0.0.1", addr), peers.DialFrom(t, "127.0.0.1", addr)
	send(a, "a")
	send(b, "b")
	h.waitLogs(2) // both served
	if !closedByPeer(peers.DialFrom(t, "127.0.0.1", addr), 10*time.Second) {
		t.Fatal("a third connection from 127.0.0.1 not closed")
	}
	if got := closed("too_many_connections_per_ip"); got != 1 {
		t.Errorf("too_many_connections_per_ip %v, want 1", got)
	}
	if got := closed("too_many_connections"); got != 0 {
		t.Errorf("too_many_connections %v, want 0", got)
	}

	// Another address is served; one with an override, up to its own.
	send(peers.DialFrom(t, "127.0.0.2", addr), "from .2")
	for i := range 3 {
		send(peers.DialFrom(t, "127.0.0.3", addr), fmt.Sprintf("from .3 #%d", i))
	}
	h.waitLogs(6)
	if !closedByPeer(peers.DialFrom(t, "127.0.0.3", addr), 10*time.Second) {
		t.Fatal("a fourth connection from 127.0.0.3 not closed")
	}
	send(a, "a again") // those served go on
	h.waitLogs(7)

	// One of 127.0.0.1's connections leaves: a slot is free for it again
	// (once weir has seen it leave).
	b.Close()
	for deadline := time.Now().Add(10 * time.Second); ; {
		if time.Now().After(deadline) {
			t.Fatal("127.0.0.1 not served again after one of its connections left")
		}
		c := peers.DialFrom(t, "127.0.0.1", addr)
		if !closedByPeer(c, 100*time.Millisecond) {
			send(c, "after b left")
			break
		}
	}
	h.waitLogs(8)
	if got := closed("too_many_connections"); got != 0 {
		t.Errorf("too_many_connections %v, want 0", got)
	}
}
