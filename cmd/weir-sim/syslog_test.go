package main

import (
	"bufio"
	"context"
	"net"
	"net/netip"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/weirnet/weir/internal/peers"
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
	var counts sendCounts
	go func() {
		done <- sendSyslog(ctx, "tcp", "octet", ln.Addr().String(), "r", 0, 10_000_000, 10, 0, &counts)
	}()
	select {
	case err := <-done:
		if err == nil {
			t.Fatal("returned no error after its context ended with messages unsent")
		}
	case <-time.After(30 * time.Second): // generous: a stuck write never returns
		t.Fatalf("still writing 30 s after it was started with a context of 300ms (%d sent)", counts.sent.Load())
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
	var counts sendCounts
	const n = 200
	if err := sendSyslog(context.Background(), "udp", "octet", addr, "r", 0, n, 10, 0, &counts); err != nil {
		t.Fatalf("sender stopped with nothing listening: %v", err)
	}
	if got := counts.sent.Load(); got > n {
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

// TestSendSyslogTCPOutlivesTargetRestart: a TCP target that breaks the
// connection (weir restarting) is connected to again and the run goes on
// to its last message, as a device's TCP syslog does; every message is
// counted once, sent or cut (in a write the break failed). The simulator
// stopped at the first broken connection, which ended a soak test's load.
func TestSendSyslogTCPOutlivesTargetRestart(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	var mu sync.Mutex
	seen := map[int]bool{}
	go func() {
		for conn := 0; ; conn++ {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				r := bufio.NewReader(c)
				read := 0
				for {
					line, err := r.ReadString('\n')
					if err != nil {
						return
					}
					read += len(line)
					if m := seqRE.FindStringSubmatch(line); m != nil {
						n, _ := strconv.Atoi(m[2])
						mu.Lock()
						seen[n] = true
						mu.Unlock()
					}
					if conn == 0 && read > 1<<20 {
						// The first connection ends abruptly (RST),
						// its unread bytes lost, as a process killed.
						c.(*net.TCPConn).SetLinger(0)
						return
					}
				}
			}()
		}
	}()
	const n = 100_000 // some 12 MB: many writes after the break
	var counts sendCounts
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	if err := sendSyslog(ctx, "tcp", "newline", ln.Addr().String(), "r", 0, n, 10, 0, &counts); err != nil {
		t.Fatalf("sender stopped at the broken connection: %v", err)
	}
	if counts.reconnects.Load() < 1 {
		t.Errorf("no reconnect counted")
	}
	if sent, cut := counts.sent.Load(), counts.cut.Load(); sent+cut != n {
		t.Errorf("sent %d + cut %d = %d, want every one of %d messages counted once", sent, cut, sent+cut, n)
	}
	waitFor(t, "the last message on the new connection", func() bool {
		mu.Lock()
		defer mu.Unlock()
		return seen[n-1]
	})
}

// TestSendSyslogTCPStopsWhileTargetIsGone: a target that stays away ends
// the run when its context ends (Ctrl-C), with an error, not a hang.
func TestSendSyslogTCPStopsWhileTargetIsGone(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go func() {
		c, err := ln.Accept()
		if err != nil {
			return
		}
		c.Read(make([]byte, 1)) // the sender is connected and writing
		ln.Close()              // gone for good
		c.(*net.TCPConn).SetLinger(0)
		c.Close()
	}()
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	var counts sendCounts
	err = sendSyslog(ctx, "tcp", "newline", ln.Addr().String(), "r", 0, 10_000_000, 10, 0, &counts)
	if err == nil || ctx.Err() == nil {
		t.Fatalf("returned %v before its context ended; want an error after it", err)
	}
}

// waitFor waits up to 30 s for cond.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(30 * time.Second); !cond(); time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("no %s after 30 s", what)
		}
	}
}

// TestSendSyslogTCPStopsWhileConnecting: a target that takes no new
// connection (its accept queue full, as a wedged weir's is; or a firewall
// dropping SYNs) keeps the first connect waiting for the kernel's SYN
// retries, some two minutes: the end of the context (Ctrl-C) must end it.
func TestSendSyslogTCPStopsWhileConnecting(t *testing.T) {
	addr := fullListener(t)
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	var counts sendCounts
	done := make(chan error, 1)
	go func() { done <- sendSyslog(ctx, "tcp", "newline", addr, "r", 0, 10, 10, 0, &counts) }()
	select {
	case err := <-done:
		if err == nil {
			t.Fatal("returned no error for a connect that never completed")
		}
	case <-time.After(30 * time.Second): // generous: the kernel gives up after some 127 s
		t.Fatal("still connecting 30 s after its context of 300ms ended")
	}
}

// fullListener is the address of a TCP socket listening with a backlog of
// 0 whose accept queue is full: a connect to it waits (SYNs dropped).
func fullListener(t *testing.T) string {
	t.Helper()
	fd, err := syscall.Socket(syscall.AF_INET, syscall.SOCK_STREAM, 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { syscall.Close(fd) })
	if err := syscall.Bind(fd, &syscall.SockaddrInet4{Addr: [4]byte{127, 0, 0, 1}}); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Listen(fd, 0); err != nil {
		t.Fatal(err)
	}
	sa, err := syscall.Getsockname(fd)
	if err != nil {
		t.Fatal(err)
	}
	addr := net.JoinHostPort("127.0.0.1", strconv.Itoa(sa.(*syscall.SockaddrInet4).Port))
	// Connect until one does not complete: the queue is full.
	for i := 0; ; i++ {
		c, err := net.DialTimeout("tcp", addr, 2*time.Second)
		if err != nil {
			return addr
		}
		t.Cleanup(func() { c.Close() })
		if i > 16 {
			t.Skip("the kernel keeps taking connections past the backlog")
		}
	}
}

// TestSendSyslogRateWaitStopsWithContext: with --rate the sender waits
// between bursts of 100 (at 1 msg/s, 100 s after the first hundred); the
// end of the context (Ctrl-C) must end that wait too.
func TestSendSyslogRateWaitStopsWithContext(t *testing.T) {
	pc, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer pc.Close()
	var counts sendCounts
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- sendSyslog(ctx, "udp", "octet", pc.LocalAddr().String(), "r", 0, 1000, 10, 1, &counts) }()
	waitFor(t, "the first hundred messages", func() bool { return counts.sent.Load() >= 100 })
	cancel()
	select {
	case err := <-done:
		if err == nil {
			t.Fatal("returned no error after its context ended with messages unsent")
		}
	case <-time.After(30 * time.Second): // generous: the wait it was in is 100 s
		t.Fatal("still waiting to send 30 s after its context ended")
	}
}

// TestSyslogRateBelowConnections: --rate 5 over --connections 10 gave
// each connection 5/10 = 0 msg/s in integers, which is no pacing at all:
// the run went as fast as it could. Each now paces at 0.5 msg/s, so after
// its first burst of 100 it waits, and the run ends only when stopped.
func TestSyslogRateBelowConnections(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	var got atomic.Int64
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				for r := bufio.NewReader(c); ; got.Add(1) {
					if _, err := r.ReadString('\n'); err != nil {
						return
					}
				}
			}()
		}
	}()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan error, 1)
	go func() {
		done <- syslogCmd(ctx, []string{"--target", ln.Addr().String(), "--framing", "newline",
			"--rate", "5", "--connections", "10", "--count", "20000"})
	}()
	waitFor(t, "each connection's first 100 messages", func() bool { return got.Load() >= 1000 })
	cancel()
	if err := <-done; err == nil {
		t.Fatalf("all 20000 messages sent at --rate 5 (%d arrived): not paced", got.Load())
	}
}

// TestSendSyslogTCPWaitsForListener: `weir-sim syslog --tcp` started
// before weir gave up at once ("connection refused"); only later breaks
// were retried. The first connect is retried the same way, and every
// message arrives once the listener is there.
func TestSendSyslogTCPWaitsForListener(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close() // nothing listens there yet
	const n = 1000
	var counts sendCounts
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- sendSyslog(ctx, "tcp", "newline", addr, "r", 0, n, 10, 0, &counts) }()
	// Not a bound: long enough for the first connect and a retry to fail.
	time.Sleep(500 * time.Millisecond)
	select {
	case err := <-done:
		t.Fatalf("gave up before the listener was there: %v", err)
	default:
	}
	ln, err = net.Listen("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	c, err := ln.Accept()
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	lines := 0
	for r := bufio.NewReader(c); ; lines++ {
		if _, err := r.ReadString('\n'); err != nil {
			break
		}
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if lines != n || counts.sent.Load() != n {
		t.Errorf("%d lines arrived, %d counted sent; want %d", lines, counts.sent.Load(), n)
	}
	if got := counts.reconnects.Load(); got != 0 {
		t.Errorf("the first connect counted as %d reconnects", got)
	}
}

// TestSendSyslogTCPStopsWhileWaitingForListener: the end of the context
// (Ctrl-C) ends the wait for a listener that never comes, with an error.
func TestSendSyslogTCPStopsWhileWaitingForListener(t *testing.T) {
	addr := peers.FreeAddr(t)
	ctx, cancel := context.WithTimeout(context.Background(), 500*time.Millisecond)
	defer cancel()
	var counts sendCounts
	err := sendSyslog(ctx, "tcp", "newline", addr, "r", 0, 10, 10, 0, &counts)
	if err == nil || ctx.Err() == nil {
		t.Fatalf("returned %v before its context ended; want an error after it", err)
	}
}

// TestSendSyslogTCPKeepsRateAfterReconnect: after a reconnect the sender
// caught up at full speed, writing at once all that --rate would have
// sent while the target was down: a burst, not the load asked for. It
// now goes on at the rate from the reconnect, and counts what was due
// while down.
func TestSendSyslogTCPKeepsRateAfterReconnect(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	const n, rate = 2000, 1000.0 // a batch of 100 every 100ms
	var counts sendCounts
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- sendSyslog(ctx, "tcp", "newline", addr, "r", 0, n, 10, rate, &counts) }()
	c, err := ln.Accept()
	if err != nil {
		t.Fatal(err)
	}
	r := bufio.NewReader(c)
	for range 100 {
		if _, err := r.ReadString('\n'); err != nil {
			t.Fatal(err)
		}
	}
	// The target goes away: the connection reset, nothing listening.
	ln.Close()
	c.(*net.TCPConn).SetLinger(0)
	c.Close()
	waitFor(t, "the break noticed", func() bool { return counts.cut.Load() > 0 })
	time.Sleep(time.Second) // down a second: some 1000 messages due meanwhile
	ln, err = net.Listen("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	c, err = ln.Accept()
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	back := time.Now()
	lines := 0
	for r := bufio.NewReader(c); ; lines++ {
		if _, err := r.ReadString('\n'); err != nil {
			break
		}
	}
	took := time.Since(back)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	// The batch in hand at the reconnect goes at once, the rest at the
	// rate: a lower bound, with a batch to spare.
	if least := time.Duration(float64(lines-200) / rate * float64(time.Second)); took < least {
		t.Errorf("%d messages after the reconnect in %v: a burst; at %v/s they take at least %v", lines, took, rate, least)
	}
	if sent, cut := counts.sent.Load(), counts.cut.Load(); sent+cut != n {
		t.Errorf("sent %d + cut %d, want %d", sent, cut, n)
	}
	// A second down at 1000/s: several hundred were due meanwhile.
	if d := counts.delayed.Load(); d < 100 {
		t.Errorf("%d messages counted as due while down, want some hundreds", d)
	}
}

// TestSendSyslogTCPWrongAddressFails: an address that cannot be right is
// an error at once, not a wait for a listener.
func TestSendSyslogTCPWrongAddressFails(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var counts sendCounts
	err := sendSyslog(ctx, "tcp", "newline", "127.0.0.1", "r", 0, 10, 10, 0, &counts)
	if err == nil || !strings.Contains(err.Error(), "missing port") {
		t.Fatalf("got %v, want the address's error", err)
	}
}
