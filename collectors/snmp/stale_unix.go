//go:build unix

package snmp

import (
	"net"
	"syscall"
)

// dropStale reads and drops the datagrams waiting in conn's socket, and
// returns how many: answers that came after their request was done with
// (see target.poll). Go's sockets are non-blocking: a read of an empty one
// fails at once (EAGAIN), and a read of a datagram into a short buffer
// takes all of it.
func dropStale(conn net.Conn) int {
	if fc, ok := conn.(*filterConn); ok {
		conn = fc.UDPConn
	}
	udp, ok := conn.(*net.UDPConn) // a stream's bytes are not to be dropped
	if !ok {
		return 0
	}
	raw, err := udp.SyscallConn()
	if err != nil {
		return 0
	}
	n := 0
	var buf [1]byte
	_ = raw.Read(func(fd uintptr) bool {
		for n < 1024 { // bounded: a peer flooding the port is not waited out
			if _, err := syscall.Read(int(fd), buf[:]); err != nil {
				if err == syscall.EINTR {
					continue
				}
				break
			}
			n++
		}
		return true // done, whatever is left: no wait for more
	})
	return n
}
