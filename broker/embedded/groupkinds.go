package embedded

import (
	"sync"

	"github.com/weirnet/weir/broker"
)

// ErrGroupInUse is returned by Consume for a group that Kafka clients (over
// the Kafka listener) are members of; Kafka clients joining a group that has
// in-process members get INCONSISTENT_GROUP_PROTOCOL for the same reason.
var ErrGroupInUse = broker.ErrGroupInUse

// groupKinds keeps the in-process coordinator (groups.go) and the Kafka
// protocol coordinator (wiregroups.go) from having members in one group at
// the same time. The two assign partitions independently, so a group with
// members of both kinds would have every partition consumed twice and its
// offsets committed over each other. Both share the committed offsets, so a
// group can move from one kind of member to the other (stop weir's
// in-process workers, then read on with a Kafka client).
//
// Its lock is a leaf: the coordinators call it while holding their own and
// it never calls out, so there is no lock-order problem between them.
type groupKinds struct {
	mu    sync.Mutex
	local map[string]int // in-process members per group
	wire  map[string]int // Kafka client members per group
}

func newGroupKinds() *groupKinds {
	return &groupKinds{local: make(map[string]int), wire: make(map[string]int)}
}

// acquire counts one more member of the given kind in group, unless the
// group has members of the other kind.
func (k *groupKinds) acquire(group string, wire bool) bool {
	k.mu.Lock()
	defer k.mu.Unlock()
	mine, other := k.local, k.wire
	if wire {
		mine, other = k.wire, k.local
	}
	if other[group] > 0 {
		return false
	}
	mine[group]++
	return true
}

// release counts one member of the given kind less in group.
func (k *groupKinds) release(group string, wire bool) {
	k.mu.Lock()
	defer k.mu.Unlock()
	m := k.local
	if wire {
		m = k.wire
	}
	if m[group] <= 1 {
		delete(m, group)
		return
	}
	m[group]--
}

// hasLocal reports whether group has in-process members.
func (k *groupKinds) hasLocal(group string) bool {
	k.mu.Lock()
	defer k.mu.Unlock()
	return k.local[group] > 0
}
