//go:build !linux

package trap

import "net"

// setReadBuffer sizes the socket's receive buffer, as far as the OS allows.
func setReadBuffer(c *net.UDPConn, size int) { _ = c.SetReadBuffer(size) }
