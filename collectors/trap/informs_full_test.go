package trap

import (
	"net"
	"testing"
	"time"
)

// fullMemo is an inform memo full of informs published at now.
func fullMemo(now time.Time) *informMemo {
	m := newInformMemo()
	to := &net.UDPAddr{IP: net.IPv4(192, 0, 2, 1), Port: 40000}
	for i := range maxInformMemo {
		k := informKey{from: to.String(), version: "2c", principal: "public", requestID: uint32(i)}
		m.receive(k, nil, to, now)
		m.published(k, now)
	}
	return m
}

// TestMemoFullCost: with the memo full of informs published less than
// informMemoTTL ago, a new inform does not sweep the whole map under the
// lock (in the read loop) each time, only once a second at most. Checked
// on when the memo last swept, not on the time the informs take (a
// loaded machine under -race makes any bound on that flaky): the cost is
// BenchmarkMemoFull's.
func TestMemoFullCost(t *testing.T) {
	now := time.Now()
	m := fullMemo(now)
	to := &net.UDPAddr{IP: net.IPv4(192, 0, 2, 1), Port: 40000}
	receive := func(i int, at time.Time) {
		k := informKey{from: to.String(), version: "2c", principal: "public", requestID: uint32(maxInformMemo + i)}
		m.receive(k, nil, to, at)
	}
	// 20 informs over 0.8 s from 2 s after the fill's sweep: the first
	// sweeps, the others do not.
	first := now.Add(2 * time.Second)
	const n = 20
	for i := range n {
		receive(i, first.Add(time.Duration(i)*40*time.Millisecond))
	}
	if !m.swept.Equal(first) {
		t.Errorf("memo full: last swept %v after the first of %d informs over 0.8 s, want at the first (once a second at most)", m.swept.Sub(first), n)
	}
	// A second later it sweeps again.
	later := first.Add(1500 * time.Millisecond)
	receive(n, later)
	if !m.swept.Equal(later) {
		t.Errorf("memo full: not swept again 1.5 s after the last sweep (last swept %v)", m.swept.Sub(first))
	}
}

// BenchmarkMemoFull: the read loop's cost of a new inform with the memo
// full (it is not remembered).
func BenchmarkMemoFull(b *testing.B) {
	now := time.Now()
	m := fullMemo(now)
	to := &net.UDPAddr{IP: net.IPv4(192, 0, 2, 1), Port: 40000}
	at := now.Add(2 * time.Second)
	b.ResetTimer()
	for i := 0; b.Loop(); i++ {
		k := informKey{from: to.String(), version: "2c", principal: "public", requestID: uint32(maxInformMemo + i)}
		m.receive(k, nil, to, at)
	}
}
