// Package connlimit counts a listener's connections by client address, to
// bound those from one address (Kafka's max.connections.per.ip): without
// it, one host reconnecting in a loop can hold every slot of a listener's
// overall bound and lock all other clients out.
package connlimit

import (
	"net"
	"net/netip"
	"sync"
)

// PerIP counts connections by IP address. IPv4-mapped IPv6 addresses count
// as their IPv4 address; IPv6 hosts count per address, not per prefix.
// Make it with New; it is safe for concurrent use.
type PerIP struct {
	max       int
	overrides map[netip.Addr]int

	mu sync.Mutex
	n  map[netip.Addr]int
}

// New bounds each address at max connections, and those in overrides at
// theirs; 0 or less: no bound.
func New(max int, overrides map[netip.Addr]int) *PerIP {
	p := &PerIP{max: max, n: map[netip.Addr]int{}}
	if len(overrides) > 0 {
		p.overrides = make(map[netip.Addr]int, len(overrides))
		for a, v := range overrides {
			p.overrides[a.Unmap().WithZone("")] = v
		}
	}
	return p
}

// Limit is the bound for ip; 0 or less: none.
func (p *PerIP) Limit(ip netip.Addr) int {
	if v, ok := p.overrides[ip]; ok {
		return v
	}
	return p.max
}

// Add counts a connection from remote and returns its address, to give
// Done; or reports false, counting nothing, when the address is at its
// bound (the address is returned then too, for Limit). A remote that is
// not an IP address (a pipe) is not bounded.
func (p *PerIP) Add(remote net.Addr) (netip.Addr, bool) {
	var ip netip.Addr
	switch a := remote.(type) {
	case *net.TCPAddr:
		ip, _ = netip.AddrFromSlice(a.IP)
	default:
		if remote != nil {
			if ap, err := netip.ParseAddrPort(remote.String()); err == nil {
				ip = ap.Addr()
			}
		}
	}
	if !ip.IsValid() {
		return netip.Addr{}, true
	}
	ip = ip.Unmap().WithZone("")
	limit := p.Limit(ip)
	if limit <= 0 {
		return netip.Addr{}, true // unbounded: not counted
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.n[ip] >= limit {
		return ip, false
	}
	p.n[ip]++
	return ip, true
}

// Done uncounts a connection Add counted, given the address Add returned.
func (p *PerIP) Done(ip netip.Addr) {
	if !ip.IsValid() {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.n[ip] <= 1 {
		delete(p.n, ip)
	} else {
		p.n[ip]--
	}
}

// Count is the number of connections counted from ip.
func (p *PerIP) Count(ip netip.Addr) int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.n[ip.Unmap().WithZone("")]
}
