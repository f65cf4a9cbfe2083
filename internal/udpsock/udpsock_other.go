//go:build !linux

package udpsock

import "net"

func setReadBuffer(conn *net.UDPConn, n int) { conn.SetReadBuffer(n) }

// readBuffer is not known here.
func readBuffer(*net.UDPConn) (int, bool) { return 0, false }
