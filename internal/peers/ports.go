package peers

import (
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"os"
	"sync"
	"testing"
)

// Ports for a program a test starts on a port it chooses (a peer, weir
// with a README's config) come from outside the kernel's ephemeral range:
// a port taken from ":0" and closed again can be handed to any other
// listen(":0") or outgoing connection (Prometheus scraping, an HTTP
// client) before the program binds it, and with tests in parallel that
// happened. Outside the range only an explicit bind takes a port; the ones
// this process handed out are never handed out again, and other test
// processes pick at random among some ten thousand.
var ports = struct {
	sync.Mutex
	given map[int]bool
}{given: map[int]bool{}}

// lowestPort is where the ports handed out start: above the registered
// ports most daemons on a test machine listen on.
const lowestPort = 20000

// portRange is where ports are handed out: from lowestPort to the kernel's
// ephemeral range, or past its end if it starts too low to leave room
// (Linux's default range when it cannot be read).
func portRange() (lo, hi int) {
	start, end := 32768, 60999
	if b, err := os.ReadFile("/proc/sys/net/ipv4/ip_local_port_range"); err == nil {
		if n, _ := fmt.Sscan(string(b), &start, &end); n != 2 {
			start, end = 32768, 60999
		}
	}
	switch {
	case start >= lowestPort+1000:
		return lowestPort, start
	case end <= 64535:
		return end + 1, 65536
	}
	return lowestPort, 65536 // no room outside it: ports may meet ephemeral ones
}

// FreePorts returns the first of n consecutive loopback ports, each free
// for every network given ("tcp", "udp") when it was checked and never
// handed out before in this process.
func FreePorts(t testing.TB, n int, networks ...string) int {
	t.Helper()
	if len(networks) == 0 {
		networks = []string{"tcp"}
	}
	ports.Lock()
	defer ports.Unlock()
	lo, hi := portRange()
	top := hi - n
	if top <= lo {
		t.Fatalf("no room for %d ports between %d and %d", n, lo, hi)
	}
	for range 200 {
		base := lo + rand.IntN(top-lo)
		if free(base, n, networks) {
			for p := base; p < base+n; p++ {
				ports.given[p] = true
			}
			return base
		}
	}
	t.Fatalf("no %d consecutive loopback ports free for %v in %d-%d", n, networks, lo, hi-1)
	return 0
}

// free says whether ports base to base+n-1 were never handed out and
// can be bound now for every network.
func free(base, n int, networks []string) bool {
	var held []io.Closer
	defer func() {
		for _, c := range held {
			c.Close()
		}
	}()
	for p := base; p < base+n; p++ {
		if ports.given[p] {
			return false
		}
		addr := fmt.Sprintf("127.0.0.1:%d", p)
		for _, network := range networks {
			var c io.Closer
			var err error
			if network == "udp" {
				c, err = net.ListenPacket("udp", addr)
			} else {
				c, err = net.Listen(network, addr)
			}
			if err != nil {
				return false
			}
			held = append(held, c)
		}
	}
	return true
}

// FreePort returns a loopback port free for every network given (TCP
// when none is), as FreePorts does.
func FreePort(t testing.TB, networks ...string) int {
	t.Helper()
	return FreePorts(t, 1, networks...)
}

// FreeAddr returns a loopback TCP address free when it was checked, for
// a peer to listen on (see FreePorts).
func FreeAddr(t testing.TB) string {
	t.Helper()
	return fmt.Sprintf("127.0.0.1:%d", FreePort(t, "tcp"))
}

// DialFrom connects to addr over TCP from the local address ip (any 127/8
// address works on Linux loopback), for tests of limits per client
// address; it skips the test where ip cannot be bound.
func DialFrom(t testing.TB, ip, addr string) net.Conn {
	t.Helper()
	d := net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(ip)}}
	c, err := d.Dial("tcp", addr)
	if err != nil {
		t.Skipf("cannot connect from %s: %v", ip, err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}
