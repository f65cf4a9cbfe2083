package trap

import (
	"net"
	"testing"
	"time"
)

// TestInformMemo: copies of a queued inform wait for its acknowledgement,
// copies of a published one are acknowledged at once, and an inform not
// published, or published longer ago than informMemoTTL, is new again.
func TestInformMemo(t *testing.T) {
	m := newInformMemo()
	to := &net.UDPAddr{IP: net.IPv4(192, 0, 2, 1), Port: 40000}
	k := informKey{from: to.String(), version: "2c", principal: "public", requestID: 7}
	now := time.Now()
	if copied, _ := m.receive(k, []byte("a1"), to, now); copied {
		t.Fatal("a first inform taken for a copy")
	}
	if copied, ack := m.receive(k, []byte("a2"), to, now.Add(time.Second)); !copied || ack != nil {
		t.Fatalf("a copy of a queued inform: copied %v, ack %q", copied, ack)
	}
	if w := m.published(k, now.Add(2*time.Second)); len(w) != 1 || string(w[0].ack) != "a2" {
		t.Fatalf("published: waiting %v, want the copy's acknowledgement", w)
	}
	if copied, ack := m.receive(k, []byte("a3"), to, now.Add(3*time.Second)); !copied || string(ack) != "a3" {
		t.Fatalf("a copy of a published inform: copied %v, ack %q", copied, ack)
	}
	if copied, _ := m.receive(k, []byte("a4"), to, now.Add(2*time.Second+informMemoTTL+time.Second)); copied {
		t.Fatal("an inform published longer ago than the TTL taken for a copy")
	}
	m.dropped(k)
	if copied, _ := m.receive(k, []byte("a5"), to, now.Add(time.Hour)); copied {
		t.Fatal("a copy of a dropped inform not tried again")
	}
	other := k
	other.requestID = 8
	if copied, _ := m.receive(other, nil, to, now.Add(time.Hour)); copied {
		t.Fatal("another request ID taken for a copy")
	}
}
