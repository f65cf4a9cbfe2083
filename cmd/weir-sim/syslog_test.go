package main

import (
	"context"
	"net"
	"net/netip"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// TestSendSyslogStopsWhenTheTargetStopsReading: weir stops reading a TCP
// sender while its broker refuses writes (a full disk). The simulator's
// write then blocked for good, and Ctrl-C or SIGTERM, which cancel its
// context, did not stop it: only SIGKILL did.
func TestSendSyslogStopsWhenTheTargetStopsReading(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	end := make(chan struct{})
	defer close(end)
	go func() {
		c, err := ln.Accept()
		if err != nil {
			return
		}
		defer c.Close()
		<-end // accepts, never reads, never closes while the test runs
	}()
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	done := make(chan error, 1)
	var sent atomic.Int64
	go func() {
		done <- sendSyslog(ctx, "tcp", "octet", ln.Addr().String(), "r", 0, 10_000_000, 10, 0, &sent)
	}()
	select {
	case err := <-done:
		if err == nil {
			t.Fatal("returned no error after its context ended with messages unsent")
		}
	case <-time.After(30 * time.Second): // generous: a stuck write never returns
		t.Fatalf("still writing 30 s after it was started with a context of 300ms (%d sent)", sent.Load())
	}
}

// TestSendSyslogUDPOutlivesTargetRestart: a UDP sender whose target is
// not listening for a while (weir restarting) loses those datagrams, as a
// device's syslog does, and goes on. The simulator stopped with "write:
// connection refused" (the ICMP port unreachable a connected UDP socket
// reports), so a soak test's load ended at weir's first restart.
func TestSendSyslogUDPOutlivesTargetRestart(t *testing.T) {
	pc, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := pc.LocalAddr().String()
	pc.Close() // nothing listens there now
	var sent atomic.Int64
	const n = 200
	if err := sendSyslog(context.Background(), "udp", "octet", addr, "r", 0, n, 10, 0, &sent); err != nil {
		t.Fatalf("sender stopped with nothing listening: %v", err)
	}
	if got := sent.Load(); got > n {
		t.Errorf("sent = %d, want at most %d", got, n)
	}
}

// TestMixLinesAreWellFormed: every line of the mix formats without
// fmt's error marks, and a BGP peer's address is an IP address (it was
// 10.3.3.<seq>: 10.3.3.2392812 in a long run).
func TestMixLinesAreWellFormed(t *testing.T) {
	for _, seq := range []int{0, 4, 2392812, 1<<24 + 12} {
		for i := range len(mix) {
			line := string(mixLine(nil, seq+i, 100))
			if strings.Contains(line, "%!") {
				t.Errorf("seq %d: %q", seq+i, line)
			}
			if _, rest, ok := strings.Cut(line, " peer "); ok {
				addr, _, _ := strings.Cut(rest, " ")
				if _, err := netip.ParseAddr(addr); err != nil {
					t.Errorf("seq %d: peer %q: %v", seq+i, addr, err)
				}
			}
		}
	}
}
