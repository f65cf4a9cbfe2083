package trap

import (
	"net"
	"testing"
	"time"
)

// TestMemoFullCost: with the memo full of informs published less than
// informMemoTTL ago, a new inform does not sweep the whole map under the
// lock (in the read loop) each time, only once a second at most.
func TestMemoFullCost(t *testing.T) {
	m := newInformMemo()
	to := &net.UDPAddr{IP: net.IPv4(192, 0, 2, 1), Port: 40000}
	now := time.Now()
	for i := range maxInformMemo {
		k := informKey{from: to.String(), version: "2c", principal: "public", requestID: uint32(i)}
		m.receive(k, nil, to, now)
		m.published(k, now)
	}
	const n = 2000
	start := time.Now()
	for i := range n {
		k := informKey{from: to.String(), version: "2c", principal: "public", requestID: uint32(maxInformMemo + i)}
		m.receive(k, nil, to, now.Add(time.Second))
	}
	per := time.Since(start) / n
	t.Logf("receive of a new inform with the memo full: %v each (%.0f/s at most)", per, float64(time.Second)/float64(per))
	if per > 50*time.Microsecond {
		t.Errorf("receive of a new inform with the memo full takes %v: the read loop handles at most %.0f datagrams/s", per, float64(time.Second)/float64(per))
	}
}
