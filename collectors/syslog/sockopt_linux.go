package syslog

import "golang.org/x/sys/unix"

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

// unreadBytes is what a TCP socket holds unread (SIOCINQ).
func unreadBytes(fd uintptr) int {
	n, _ := unix.IoctlGetInt(int(fd), unix.SIOCINQ)
	return n
}
