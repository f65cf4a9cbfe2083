//go:build !unix

package snmp

import "net"

// dropStale is not done here: a datagram waiting may still be taken for
// an answer with another request ID (see target.poll).
func dropStale(net.Conn) int { return 0 }
