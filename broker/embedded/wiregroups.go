package embedded

import (
	"bytes"
	"cmp"
	"crypto/rand"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/weirnet/weir/internal/throttle"
)

// Kafka's group.min.session.timeout.ms and group.max.session.timeout.ms:
// clients tuned for Kafka ask for session timeouts in this range.
const (
	defaultMinSessionTimeout = 6 * time.Second
	defaultMaxSessionTimeout = 30 * time.Minute
)

// wireCoordinator is the group coordinator for Kafka clients of the
// listener: Kafka's classic group protocol (JoinGroup, SyncGroup,
// Heartbeat, LeaveGroup) with coordinator-assigned member IDs (KIP-394), a
// leader member that computes the assignment, generations, session and
// rebalance timeouts.
//
// Its groups are a membership namespace of their own: in-process consumers
// (groups.go) assign partitions without the protocol, so they never appear
// as members here, and groupKinds keeps the two kinds out of one group at
// the same time. Committed offsets are shared (one offsetStore).
//
// Everything is under one mutex: group requests are few (a heartbeat every
// few seconds per member) and short. JoinGroup and SyncGroup wait for the
// rebalance outside the mutex, on a channel the completing request or timer
// answers. Each group has at most one timer, armed for its earliest
// deadline, so an idle group costs nothing and nothing polls.
type wireCoordinator struct {
	b     *Broker
	kinds *groupKinds

	mu     sync.Mutex
	groups map[string]*wireGroup
	closed bool
	// done is closed by close, waking every waiting JoinGroup and
	// SyncGroup.
	done chan struct{}

	// minSession and maxSession bound the session timeouts members may
	// ask for (tests lower minSession).
	minSession, maxSession time.Duration

	// members counts the members of all groups; maxGroupMembers and
	// maxMembers bound them (defaultMaxGroupMembers, defaultMaxMembers;
	// tests lower them). refusedMembers counts the joins refused at the
	// bound, refusedLog throttles their warning.
	members                     int
	maxGroupMembers, maxMembers int
	refusedMembers              atomic.Int64
	refusedLog                  throttle.Throttle

	// maxOffsetGroups bounds the groups with committed offsets a Kafka
	// client's commit may add to (defaultMaxOffsetGroups; tests lower
	// it). refusedCommits counts the commits refused at the bound,
	// refusedCommitLog throttles their warning: OffsetCommit runs
	// without mu, on each connection's goroutine.
	maxOffsetGroups  int
	refusedCommits   atomic.Int64
	refusedCommitLog throttle.Shared

	// clampLog throttles the log of rebalance timeouts cut to maxSession.
	clampLog throttle.Throttle
}

type wireState int8

// The classic group states, named as Kafka names them (DescribeGroups and
// ListGroups report these strings).
const (
	wireEmpty      wireState = iota // no members (possibly pending ones)
	wirePreparing                   // waiting for members to (re)join
	wireCompleting                  // joined; waiting for the leader's assignment
	wireStable                      // assignment distributed
)

func (s wireState) String() string {
	switch s {
	case wirePreparing:
		return "PreparingRebalance"
	case wireCompleting:
		return "CompletingRebalance"
	case wireStable:
		return "Stable"
	}
	return "Empty"
}

type wireGroup struct {
	name         string
	state        wireState
	generation   int32
	protocolType string
	protocol     string // selected at the end of each join phase
	leader       string
	members      map[string]*wireMember
	// pending holds member IDs handed out with MEMBER_ID_REQUIRED and the
	// time by which the client must join with them (KIP-394).
	pending map[string]time.Time
	nextSeq int64

	// joinDeadline ends the join phase (wirePreparing) without the members
	// that did not rejoin: the largest rebalance timeout of the members.
	joinDeadline time.Time
	// syncDeadline removes members that did not send SyncGroup
	// (wireCompleting), so a leader that never assigns cannot hold the
	// group forever.
	syncDeadline time.Time

	timer   *time.Timer
	timerAt time.Time // when timer fires; zero when not armed
}

type wireMember struct {
	id         string
	instanceID *string // reported; replaces (and fences) a member with the same one
	clientID   string
	clientHost string
	seq        int64 // join order: the oldest member becomes leader
	session    time.Duration
	rebalance  time.Duration
	protocols  []kmsg.JoinGroupRequestProtocol // copies; never modified in place
	assignment []byte

	// deadline is when the session expires; it does not run while the
	// member waits in JoinGroup or SyncGroup (Kafka keeps those alive).
	deadline time.Time

	// Set while the member waits for its JoinGroup or SyncGroup answer.
	joinCh   chan *kmsg.JoinGroupResponse
	joinResp *kmsg.JoinGroupResponse
	syncCh   chan *kmsg.SyncGroupResponse
	syncResp *kmsg.SyncGroupResponse
}

func newWireCoordinator(b *Broker, kinds *groupKinds) *wireCoordinator {
	return &wireCoordinator{
		b:          b,
		kinds:      kinds,
		groups:     make(map[string]*wireGroup),
		done:       make(chan struct{}),
		minSession: defaultMinSessionTimeout,
		maxSession: defaultMaxSessionTimeout,

		maxGroupMembers: defaultMaxGroupMembers,
		maxMembers:      defaultMaxMembers,
		maxOffsetGroups: defaultMaxOffsetGroups,
	}
}

// supports reports whether a member joining with req can be in g: the same
// protocol type, and a protocol every other member supports (Kafka's
// check; the first member sets the type).
func (g *wireGroup) supports(self *wireMember, req *kmsg.JoinGroupRequest) bool {
	others := len(g.members)
	if self != nil {
		others--
	}
	if others == 0 {
		return true
	}
	if req.ProtocolType != g.protocolType {
		return false
	}
	for _, p := range req.Protocols {
		n := 0
		for _, m := range g.members {
			if m != self && m.supportsProtocol(p.Name) {
				n++
			}
		}
		if n == others {
			return true
		}
	}
	return false
}

func (m *wireMember) supportsProtocol(name string) bool {
	return slices.ContainsFunc(m.protocols, func(p kmsg.JoinGroupRequestProtocol) bool { return p.Name == name })
}

func (m *wireMember) sameProtocols(req *kmsg.JoinGroupRequest) bool {
	return slices.EqualFunc(m.protocols, req.Protocols, func(a, b kmsg.JoinGroupRequestProtocol) bool {
		return a.Name == b.Name && bytes.Equal(a.Metadata, b.Metadata)
	})
}

func (m *wireMember) setClient(clientID, clientHost string, req *kmsg.JoinGroupRequest, session, rebalance time.Duration) {
	m.clientID, m.clientHost = clientID, clientHost
	m.session, m.rebalance = session, rebalance
	m.instanceID = nil
	if req.InstanceID != nil {
		id := *req.InstanceID
		m.instanceID = &id
	}
}

// copyProtocols copies join protocols: the request's metadata points into
// a connection buffer that is reused for the next request.
func copyProtocols(ps []kmsg.JoinGroupRequestProtocol) []kmsg.JoinGroupRequestProtocol {
	out := make([]kmsg.JoinGroupRequestProtocol, len(ps))
	for i, p := range ps {
		out[i] = kmsg.JoinGroupRequestProtocol{Name: p.Name, Metadata: bytes.Clone(p.Metadata)}
	}
	return out
}

// metadata is the member's metadata for protocol.
func (m *wireMember) metadata(protocol string) []byte {
	for _, p := range m.protocols {
		if p.Name == protocol {
			return p.Metadata
		}
	}
	return nil
}

// waiting reports whether the member waits in JoinGroup or SyncGroup.
func (m *wireMember) waiting() bool { return m.joinCh != nil || m.syncCh != nil }

// fenced reports whether instanceID is now held by another member than
// memberID: a member replaced by a new one joining with its
// group.instance.id is told FENCED_INSTANCE_ID, as Kafka does, so that it
// stops instead of joining again and taking the instance ID back.
func (g *wireGroup) fenced(memberID string, instanceID *string) bool {
	if g == nil || instanceID == nil {
		return false
	}
	for _, m := range g.members {
		if m.instanceID != nil && *m.instanceID == *instanceID {
			return m.id != memberID
		}
	}
	return false
}

func (g *wireGroup) sortedMembers() []*wireMember {
	ms := make([]*wireMember, 0, len(g.members))
	for _, m := range g.members {
		ms = append(ms, m)
	}
	slices.SortFunc(ms, func(a, b *wireMember) int { return cmp.Compare(a.seq, b.seq) })
	return ms
}

// close answers every waiting request and stops the timers. Later requests
// get COORDINATOR_NOT_AVAILABLE.
func (c *wireCoordinator) close() {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return
	}
	c.closed = true
	for _, g := range c.groups {
		if g.timer != nil {
			g.timer.Stop()
		}
	}
	close(c.done)
}

// newMemberID makes a member ID the way Kafka does: the client ID, a dash
// and a random UUID.
func newMemberID(clientID string) string {
	var u [16]byte
	rand.Read(u[:])
	u[6] = u[6]&0x0f | 0x40 // version 4
	u[8] = u[8]&0x3f | 0x80 // RFC 4122 variant
	return fmt.Sprintf("%s-%x-%x-%x-%x-%x", clientID, u[0:4], u[4:6], u[6:8], u[8:10], u[10:])
}
