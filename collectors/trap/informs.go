package trap

import (
	"fmt"
	"hash/fnv"
	"net"
	"sync"
	"time"

	"github.com/gosnmp/gosnmp"
)

// informMemo remembers the informs being published and those published
// lately, by sender and request ID, so that a sender's retransmissions
// are not each published. A sender sends an inform again when no
// acknowledgement came within its timeout, as happens while the broker
// stalls (a full disk): each copy became a record of its own. Now a copy
// of an inform still queued waits for that inform's acknowledgement, and
// a copy of one published is acknowledged at once.
type informMemo struct {
	mu      sync.Mutex
	entries map[informKey]*informEntry
	swept   time.Time
}

// informKey tells one inform from another: a sender numbers its requests,
// and a copy carries the same varbinds (a device that numbers from 1 again
// after a reboot sends another inform under an old request ID).
type informKey struct {
	from      string // the sender's address and port
	version   string
	principal string // community or user
	requestID uint32
	varbinds  uint64 // varbindsDigest
}

type informEntry struct {
	published time.Time // zero: queued, not yet published
	// waiting are the acknowledgements of the copies that came while it
	// was queued: each answers its own copy (a v3 copy has its own
	// message ID), sent once it is published.
	waiting []pendingAck
}

type pendingAck struct {
	ack []byte
	to  net.Addr
}

const (
	// informMemoTTL is how long a published inform is remembered: longer
	// than senders go on retrying (Net-SNMP's defaults give up after 6 s,
	// IOS's after 3 retries of 30 s).
	informMemoTTL = 3 * time.Minute
	// maxInformMemo bounds the informs remembered; past it, a new inform
	// is published without being remembered (copies of it would be
	// published again).
	maxInformMemo = 65536
	// maxWaitingAcks bounds the copies of one queued inform answered
	// when it is published; more are dropped unanswered, and the sender
	// tries again.
	maxWaitingAcks = 16
)

func newInformMemo() *informMemo { return &informMemo{entries: map[informKey]*informEntry{}} }

// receive notes an inform arriving with its acknowledgement. It reports
// whether it is a copy of one remembered (to be counted, not published)
// and, for a copy of one published, the acknowledgement to send now.
func (m *informMemo) receive(k informKey, ack []byte, to net.Addr, now time.Time) (copied bool, ackNow []byte) {
	m.mu.Lock()
	defer m.mu.Unlock()
	e := m.entries[k]
	switch {
	case e == nil || !e.published.IsZero() && now.Sub(e.published) > informMemoTTL:
		if e == nil && len(m.entries) >= maxInformMemo {
			// Full: swept at most once a second, not at every inform
			// (65,536 entries under the lock, in the read loop).
			if now.Sub(m.swept) > time.Second {
				m.sweep(now)
			}
			if len(m.entries) >= maxInformMemo {
				return false, nil
			}
		}
		m.entries[k] = &informEntry{}
		if now.Sub(m.swept) > informMemoTTL {
			m.sweep(now)
		}
		return false, nil
	case !e.published.IsZero():
		return true, ack
	default:
		if len(e.waiting) < maxWaitingAcks {
			e.waiting = append(e.waiting, pendingAck{ack, to})
		}
		return true, nil
	}
}

// published marks the inform published and returns the acknowledgements
// of the copies that waited for it.
func (m *informMemo) published(k informKey, now time.Time) []pendingAck {
	m.mu.Lock()
	defer m.mu.Unlock()
	e := m.entries[k]
	if e == nil {
		return nil
	}
	e.published = now
	waiting := e.waiting
	e.waiting = nil
	return waiting
}

// dropped forgets an inform that was not published: a copy of it is a
// new try.
func (m *informMemo) dropped(k informKey) {
	m.mu.Lock()
	delete(m.entries, k)
	m.mu.Unlock()
}

// sweep forgets the informs published longer than informMemoTTL ago.
func (m *informMemo) sweep(now time.Time) {
	for k, e := range m.entries {
		if !e.published.IsZero() && now.Sub(e.published) > informMemoTTL {
			delete(m.entries, k)
		}
	}
	m.swept = now
}

// varbindsDigest hashes an inform's varbinds (names, types and values).
func varbindsDigest(vars []gosnmp.SnmpPDU) uint64 {
	h := fnv.New64a()
	for _, v := range vars {
		fmt.Fprintf(h, "%s\x00%d\x00%v\x00", v.Name, v.Type, v.Value)
	}
	return h.Sum64()
}
