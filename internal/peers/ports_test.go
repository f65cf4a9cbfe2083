package peers

import (
	"fmt"
	"net"
	"testing"
)

// TestFreePortsAreOutsideTheEphemeralRangeAndNeverTwice: no listen(":0")
// or outgoing connection can take a port handed out, and no two tests of
// a process are handed the same one.
func TestFreePortsAreOutsideTheEphemeralRangeAndNeverTwice(t *testing.T) {
	lo, hi := portRange()
	seen := map[int]bool{}
	// The ports handed out here are never used: give them back, or with
	// -count the 300 rounds of each run use up the process's range.
	t.Cleanup(func() {
		ports.Lock()
		defer ports.Unlock()
		for p := range seen {
			delete(ports.given, p)
		}
	})
	for i := range 300 {
		n := 1 + i%4
		base := FreePorts(t, n, "tcp", "udp")
		for p := base; p < base+n; p++ {
			if p < lo || p >= hi {
				t.Fatalf("port %d outside [%d, %d)", p, lo, hi)
			}
			if seen[p] {
				t.Fatalf("port %d handed out twice", p)
			}
			seen[p] = true
		}
	}
	// One taken by someone else is not handed out.
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	taken := l.Addr().(*net.TCPAddr).Port
	if free(taken, 1, []string{"tcp"}) {
		t.Fatalf("port %d is listened on, yet free says it is free", taken)
	}
	addr := FreeAddr(t)
	if addr == fmt.Sprintf("127.0.0.1:%d", taken) {
		t.Fatalf("FreeAddr gave the taken port %s", addr)
	}
	var p int
	fmt.Sscanf(addr, "127.0.0.1:%d", &p)
	seen[p] = true
}
