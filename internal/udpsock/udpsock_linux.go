package udpsock

import (
	"net"

	"golang.org/x/sys/unix"
)

// setReadBuffer tries SO_RCVBUFFORCE, which passes net.core.rmem_max, then
// the capped SO_RCVBUF.
func setReadBuffer(conn *net.UDPConn, n int) {
	raw, err := conn.SyscallConn()
	if err != nil {
		return
	}
	raw.Control(func(fd uintptr) {
		if unix.SetsockoptInt(int(fd), unix.SOL_SOCKET, unix.SO_RCVBUFFORCE, n) != nil {
			unix.SetsockoptInt(int(fd), unix.SOL_SOCKET, unix.SO_RCVBUF, n)
		}
	})
}

// readBuffer is the size of conn's receive buffer as it was set: Linux
// reports twice that (the other half is for its bookkeeping).
func readBuffer(conn *net.UDPConn) (int, bool) {
	raw, err := conn.SyscallConn()
	if err != nil {
		return 0, false
	}
	var got int
	var gerr error
	if err := raw.Control(func(fd uintptr) {
		got, gerr = unix.GetsockoptInt(int(fd), unix.SOL_SOCKET, unix.SO_RCVBUF)
	}); err != nil || gerr != nil {
		return 0, false
	}
	return got / 2, true
}
