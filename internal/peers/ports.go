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
// with a README's config) come from below the kernel's ephemeral range:
// a port taken from ":0" and closed again can be handed to any other
// listen(":0") or outgoing connection (Prometheus scraping, an HTTP
// client) before the program binds it, and with tests in parallel that
// happened. Below the range only an explicit bind takes a port; the ones
// this process handed out are never handed out again, and other test
// processes pick at random among some ten thousand.
var ports = struct {
	sync.Mutex
	given map[int]bool
}{given: map[int]bool{}}

// lowestPort is where the ports handed out start: above the registered
// ports most daemons on a test machine listen on.
const lowestPort = 20000

// ephemeralStart is the first port of the kernel's ephemeral range
// (Linux's default when it cannot be read).
func ephemeralStart() int {
	start := 32768
	if b, err := os.ReadFile("/proc/sys/net/ipv4/ip_local_port_range"); err == nil {
		var lo, hi int
		if n, _ := fmt.Sscan(string(b), &lo, &hi); n == 2 && lo > lowestPort+1000 {
			start = lo
		}
	}
	return start
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
	top := ephemeralStart() - n
	for range 200 {
		base := lowestPort + rand.IntN(top-lowestPort)
		if free(base, n, networks) {
			for p := base; p < base+n; p++ {
				ports.given[p] = true
			}
			return base
		}
	}
	t.Fatalf("no %d consecutive loopback ports free for %v below %d", n, networks, top+n)
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
