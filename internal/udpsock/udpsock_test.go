package udpsock

import (
	"net"
	"os"
	"strconv"
	"strings"
	"testing"
)

// TestReadBufferIsTheSizeSet: the size the warning compares with the
// configured read_buffer is the one that was set, not the doubled one
// Linux reports, so a buffer capped at net.core.rmem_max between half the
// configured size and all of it is still reported as too small.
func TestReadBufferIsTheSizeSet(t *testing.T) {
	rmemMax, err := os.ReadFile("/proc/sys/net/core/rmem_max")
	if err != nil {
		t.Skip("no /proc/sys/net/core/rmem_max: not Linux")
	}
	const want = 100_000
	if m, _ := strconv.Atoi(strings.TrimSpace(string(rmemMax))); m < want {
		t.Skipf("net.core.rmem_max %d is below %d", m, want)
	}
	conn, err := net.ListenUDP("udp", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if err := conn.SetReadBuffer(want); err != nil {
		t.Fatal(err)
	}
	got, ok := readBuffer(conn)
	if !ok || got != want {
		t.Fatalf("readBuffer = %d, %v; want %d, true", got, ok, want)
	}
}
