// Package udpsock sizes the receive buffers of the UDP sockets weir's
// receivers (syslog, traps) read from: a burst (a chassis losing power,
// a syslog storm) must wait in the kernel, not be dropped there.
package udpsock

import "net"

// SetReadBuffer sizes conn's receive buffer to n bytes, past
// net.core.rmem_max where it can (Linux, as root or with CAP_NET_ADMIN),
// and returns the size it got, or ok false where the platform does not
// tell.
func SetReadBuffer(conn *net.UDPConn, n int) (got int, ok bool) {
	setReadBuffer(conn, n)
	return readBuffer(conn)
}
