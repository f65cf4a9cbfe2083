package snmp

import (
	"net"
	"sync"
	"sync/atomic"
	"testing"
)

// udpRelay relays UDP datagrams between its clients and upstream, one
// upstream socket per client, and returns the address it listens on.
// drop, when set, is given each client datagram's 1-based sequence number
// and drops it by returning true (packet loss on some PDUs); before, when
// set, is called with the listening socket, each answer and its client
// before the answer is relayed (to send the client datagrams of its own).
func udpRelay(t *testing.T, upstream string, drop func(seq int64) bool, before func(ln net.PacketConn, answer []byte, client net.Addr)) string {
	t.Helper()
	ln, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	up, err := net.ResolveUDPAddr("udp", upstream)
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	conns := map[string]*net.UDPConn{}
	var seq atomic.Int64
	go func() {
		buf := make([]byte, 65535)
		for {
			n, from, err := ln.ReadFrom(buf)
			if err != nil {
				return
			}
			if drop != nil && drop(seq.Add(1)) {
				continue
			}
			mu.Lock()
			c := conns[from.String()]
			if c == nil {
				if c, err = net.DialUDP("udp", nil, up); err != nil {
					mu.Unlock()
					continue
				}
				conns[from.String()] = c
				t.Cleanup(func() { c.Close() })
				go func(c *net.UDPConn, client net.Addr) {
					b := make([]byte, 65535)
					for {
						n, err := c.Read(b)
						if err != nil {
							return
						}
						if before != nil {
							before(ln, b[:n], client)
						}
						ln.WriteTo(b[:n], client)
					}
				}(c, from)
			}
			mu.Unlock()
			c.Write(buf[:n])
		}
	}()
	return ln.LocalAddr().String()
}
