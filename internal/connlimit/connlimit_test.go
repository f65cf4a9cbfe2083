package connlimit

import (
	"net"
	"net/netip"
	"testing"
)

func tcp(s string) net.Addr { return net.TCPAddrFromAddrPort(netip.MustParseAddrPort(s)) }

func TestPerIP(t *testing.T) {
	p := New(2, map[netip.Addr]int{netip.MustParseAddr("10.0.0.5"): 3, netip.MustParseAddr("10.0.0.6"): 0})
	var held []netip.Addr
	for _, r := range []string{"10.0.0.1:1", "10.0.0.1:2"} {
		ip, ok := p.Add(tcp(r))
		if !ok {
			t.Fatalf("%s refused", r)
		}
		held = append(held, ip)
	}
	// The same host as an IPv4-mapped IPv6 address (a dual-stack socket).
	if ip, ok := p.Add(tcp("[::ffff:10.0.0.1]:3")); ok || ip != netip.MustParseAddr("10.0.0.1") {
		t.Fatalf("third from 10.0.0.1: %v %v, want refused", ip, ok)
	}
	if _, ok := p.Add(tcp("10.0.0.2:1")); !ok {
		t.Fatal("another address refused")
	}
	for i := range 3 {
		if _, ok := p.Add(tcp("10.0.0.5:1")); !ok {
			t.Fatalf("override: connection %d refused", i)
		}
	}
	if _, ok := p.Add(tcp("10.0.0.5:1")); ok {
		t.Fatal("override: fourth accepted")
	}
	for range 10 {
		if ip, ok := p.Add(tcp("10.0.0.6:1")); !ok || ip.IsValid() {
			t.Fatal("override 0: not unbounded")
		}
	}
	p.Done(held[0])
	if n := p.Count(netip.MustParseAddr("10.0.0.1")); n != 1 {
		t.Fatalf("count after Done %d, want 1", n)
	}
	if _, ok := p.Add(tcp("10.0.0.1:4")); !ok {
		t.Fatal("slot freed by Done not taken")
	}
	if _, ok := p.Add(&net.UnixAddr{Name: "@x", Net: "unix"}); !ok {
		t.Fatal("a non-IP address bounded")
	}
	if _, ok := New(0, nil).Add(tcp("10.0.0.1:1")); !ok {
		t.Fatal("0: bounded")
	}
}
