package syslog

import (
	"net"

	"golang.org/x/sys/unix"
)

// The socket options the listeners use where Linux has them; elsewhere
// (sockopt_other.go) they do what the platform allows.

// udpReaders is how many sockets, each with its own reader, a UDP listener
// of this many readers opens: Linux spreads the senders over sockets that
// share a port (SO_REUSEPORT), one sender always to the same socket.
func udpReaders(n int) int { return max(n, 1) }

// reusePort lets a UDP listener's reader sockets share its port.
func reusePort(fd uintptr) error {
	return unix.SetsockoptInt(int(fd), unix.SOL_SOCKET, unix.SO_REUSEPORT, 1)
}

// msgTrunc is the flag recvmmsg sets on a datagram longer than its buffer.
const msgTrunc = unix.MSG_TRUNC

// setReadBuffer sets SO_RCVBUF; as root SO_RCVBUFFORCE goes past
// net.core.rmem_max, which on most systems is far below what a burst of
// syslog needs.
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
// reports twice that (the other half is for its bookkeeping), and caps it
// at net.core.rmem_max.
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

// unreadBytes is what a TCP socket holds unread (SIOCINQ).
func unreadBytes(fd uintptr) int {
	n, _ := unix.IoctlGetInt(int(fd), unix.SIOCINQ)
	return n
}
