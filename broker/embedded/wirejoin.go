package embedded

import (
	"context"
	"log/slog"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// JoinGroup handles a Kafka JoinGroup request (v0-v9). It blocks until the
// rebalance it joins completes, ctx is done or the broker closes. Client ID
// and host are what DescribeGroups reports for the member. Byte slices of
// req may alias a connection buffer; what is kept is copied.
func (b *Broker) JoinGroup(ctx context.Context, clientID, clientHost string, req *kmsg.JoinGroupRequest) *kmsg.JoinGroupResponse {
	return b.wire.join(ctx, clientID, clientHost, req)
}

// SyncGroup handles a Kafka SyncGroup request (v0-v5). Members wait until
// the leader's assignment arrives.
func (b *Broker) SyncGroup(ctx context.Context, req *kmsg.SyncGroupRequest) *kmsg.SyncGroupResponse {
	return b.wire.sync(ctx, req)
}

// Heartbeat handles a Kafka Heartbeat request (v0-v4).
func (b *Broker) Heartbeat(req *kmsg.HeartbeatRequest) *kmsg.HeartbeatResponse {
	return b.wire.heartbeat(req)
}

// LeaveGroup handles a Kafka LeaveGroup request: one member (v0-v2) or a
// batch of members (v3-v5).
func (b *Broker) LeaveGroup(req *kmsg.LeaveGroupRequest) *kmsg.LeaveGroupResponse {
	return b.wire.leave(req)
}

func millisDuration(ms int32) time.Duration { return time.Duration(ms) * time.Millisecond }

func (c *wireCoordinator) join(ctx context.Context, clientID, clientHost string, req *kmsg.JoinGroupRequest) *kmsg.JoinGroupResponse {
	resp, wait := c.joinLocked(clientID, clientHost, req)
	if wait == nil {
		return resp
	}
	return waitAnswer(ctx, c.done, wait, func() *kmsg.JoinGroupResponse {
		r := req.ResponseKind().(*kmsg.JoinGroupResponse)
		r.ErrorCode = kerr.CoordinatorNotAvailable.Code
		return r
	})
}

// joinLocked does the work of JoinGroup under the lock. It returns the
// answer, or a channel the answer comes on once the rebalance completes.
func (c *wireCoordinator) joinLocked(clientID, clientHost string, req *kmsg.JoinGroupRequest) (*kmsg.JoinGroupResponse, chan *kmsg.JoinGroupResponse) {
	resp := req.ResponseKind().(*kmsg.JoinGroupResponse)
	fail := func(e *kerr.Error) (*kmsg.JoinGroupResponse, chan *kmsg.JoinGroupResponse) {
		resp.ErrorCode = e.Code
		return resp, nil
	}
	session := millisDuration(req.SessionTimeoutMillis)
	rebalance := session // v0 has no rebalance timeout: Kafka uses the session's
	if req.Version >= 1 && req.RebalanceTimeoutMillis > 0 {
		rebalance = millisDuration(req.RebalanceTimeoutMillis)
	}
	// A join phase lasts for its members' longest rebalance timeout, the
	// client's to choose (Kafka bounds only the session's): one member
	// asking for days held its group's rebalance open for days. At most
	// the longest session timeout, as a member silent for that long is
	// gone anyway (Kafka Streams asks for MaxInt32: 30 min is plenty).
	if rebalance > c.maxSession {
		c.clampRebalance(req.Group, clientID, clientHost, rebalance)
		rebalance = c.maxSession
	}
	switch {
	case req.Group == "" || len(req.Group) > maxGroupNameLen:
		return fail(kerr.InvalidGroupID)
	case session < c.minSession || session > c.maxSession:
		return fail(kerr.InvalidSessionTimeout)
	case req.ProtocolType == "" || len(req.Protocols) == 0:
		return fail(kerr.InconsistentGroupProtocol)
	}

	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return fail(kerr.CoordinatorNotAvailable)
	}
	if c.kinds.hasLocal(req.Group) {
		c.b.opts.logger.Warn("kafka client cannot join a group that has in-process members",
			slog.String("group", req.Group), slog.String("client", clientID), slog.String("host", clientHost))
		return fail(kerr.InconsistentGroupProtocol)
	}
	g := c.groups[req.Group]
	if g == nil {
		if req.MemberID != "" {
			return fail(kerr.UnknownMemberID)
		}
		if len(c.groups) >= maxWireGroups {
			// Clients need no credentials here: bound what they can
			// make the coordinator hold.
			return fail(kerr.CoordinatorNotAvailable)
		}
		g = &wireGroup{name: req.Group, members: make(map[string]*wireMember), pending: make(map[string]time.Time)}
		c.groups[req.Group] = g
	}
	defer c.forgetIfEmpty(g)
	now := time.Now()
	m := g.members[req.MemberID]
	if !g.supports(m, req) {
		return fail(kerr.InconsistentGroupProtocol)
	}

	_, isPending := g.pending[req.MemberID]
	switch {
	case req.MemberID == "" && req.Version >= 4 && req.InstanceID == nil:
		// KIP-394: the client first learns its member ID and joins
		// again with it, so clients that give up and retry do not pile
		// up as members; until then it is only pending.
		if len(g.pending) >= maxPendingMembers {
			return fail(kerr.GroupMaxSizeReached)
		}
		id := newMemberID(clientID)
		// A pending ID only waits for the client's second JoinGroup.
		g.pending[id] = now.Add(min(session, maxPendingWait))
		c.schedule(g)
		resp.MemberID = id
		return fail(kerr.MemberIDRequired)
	case req.MemberID == "" || isPending:
		// A restarted static member replaces its old self (below): it
		// adds no member.
		replaces := 0
		if req.InstanceID != nil && g.hasInstance(*req.InstanceID) {
			replaces = 1
		}
		if len(g.members)-replaces >= c.maxGroupMembers || c.members-replaces >= c.maxMembers {
			c.refuseMember(g, clientID, clientHost)
			return fail(kerr.GroupMaxSizeReached)
		}
		id := req.MemberID
		if id == "" {
			id = newMemberID(clientID)
		}
		if !c.kinds.acquire(g.name, true) {
			return fail(kerr.InconsistentGroupProtocol)
		}
		delete(g.pending, id)
		if req.InstanceID != nil {
			// No static membership, but a restarted static member
			// (which does not leave when it stops) replaces its
			// old self at once instead of stalling the rebalance
			// until the old one times out.
			for _, old := range g.sortedMembers() {
				if old.instanceID != nil && *old.instanceID == *req.InstanceID {
					c.dropMember(g, old, "replaced by a new member with its group.instance.id")
				}
			}
		}
		g.nextSeq++
		m = &wireMember{id: id, seq: g.nextSeq}
		if len(g.members) == 0 {
			g.protocolType = req.ProtocolType
		}
		g.members[id] = m
		c.members++
		c.b.opts.logger.Debug("kafka group member joined", slog.String("group", g.name), slog.String("member", id))
	case m == nil && g.fenced(req.MemberID, req.InstanceID):
		return fail(kerr.FencedInstanceID)
	case m == nil:
		return fail(kerr.UnknownMemberID)
	case (g.state == wireCompleting || g.state == wireStable && m.id != g.leader) && m.sameProtocols(req):
		// Kafka answers a follower that rejoins with unchanged
		// metadata at once, with the current generation; a leader
		// rejoining or a member changing its subscription rebalances.
		m.setClient(clientID, clientHost, req, session, rebalance)
		m.deadline = now.Add(m.session)
		c.fillJoin(g, m, resp)
		return resp, nil
	}
	m.setClient(clientID, clientHost, req, session, rebalance)
	m.protocols = copyProtocols(req.Protocols)
	if m.joinCh != nil {
		// The client gave up on an earlier JoinGroup (a retry on a new
		// connection): that request gets no real answer.
		m.joinResp.ErrorCode = kerr.RebalanceInProgress.Code
		m.joinCh <- m.joinResp
	}
	ch := make(chan *kmsg.JoinGroupResponse, 1)
	m.joinCh, m.joinResp = ch, resp
	c.rebalance(g, now)
	return nil, ch
}

// waitAnswer waits for a JoinGroup or SyncGroup answer. When ctx ends (the
// connection or listener is closing) or the coordinator closes first, it
// returns gone(): a fresh response, since the one the coordinator holds may
// still be filled in concurrently.
func waitAnswer[T any](ctx context.Context, done <-chan struct{}, ch <-chan T, gone func() T) T {
	select {
	case r := <-ch:
		return r
	case <-ctx.Done():
		return gone()
	case <-done:
		select {
		case r := <-ch:
			return r
		default:
			return gone()
		}
	}
}

func (c *wireCoordinator) sync(ctx context.Context, req *kmsg.SyncGroupRequest) *kmsg.SyncGroupResponse {
	resp, wait := c.syncLocked(req)
	if wait == nil {
		return resp
	}
	return waitAnswer(ctx, c.done, wait, func() *kmsg.SyncGroupResponse {
		r := req.ResponseKind().(*kmsg.SyncGroupResponse)
		r.ErrorCode = kerr.CoordinatorNotAvailable.Code
		return r
	})
}

// syncLocked does the work of SyncGroup under the lock: it answers, or
// returns the channel the answer comes on once the leader has synced.
func (c *wireCoordinator) syncLocked(req *kmsg.SyncGroupRequest) (*kmsg.SyncGroupResponse, chan *kmsg.SyncGroupResponse) {
	resp := req.ResponseKind().(*kmsg.SyncGroupResponse)
	fail := func(e *kerr.Error) (*kmsg.SyncGroupResponse, chan *kmsg.SyncGroupResponse) {
		resp.ErrorCode = e.Code
		return resp, nil
	}
	if req.Group == "" {
		return fail(kerr.InvalidGroupID)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return fail(kerr.CoordinatorNotAvailable)
	}
	g := c.groups[req.Group]
	var m *wireMember
	if g != nil {
		m = g.members[req.MemberID]
	}
	switch {
	case g.fenced(req.MemberID, req.InstanceID):
		return fail(kerr.FencedInstanceID)
	case m == nil:
		return fail(kerr.UnknownMemberID)
	case req.Generation != g.generation:
		return fail(kerr.IllegalGeneration)
	case req.ProtocolType != nil && *req.ProtocolType != g.protocolType,
		req.Protocol != nil && *req.Protocol != g.protocol:
		return fail(kerr.InconsistentGroupProtocol)
	}
	now := time.Now()
	switch g.state {
	case wirePreparing:
		m.deadline = now.Add(m.session)
		return fail(kerr.RebalanceInProgress)
	case wireStable:
		// A member that got its JoinGroup answer after the leader
		// had already synced.
		m.deadline = now.Add(m.session)
		c.fillSync(g, m, resp)
		return resp, nil
	case wireCompleting:
	default:
		return fail(kerr.UnknownMemberID)
	}
	if m.syncCh != nil { // an earlier SyncGroup the client gave up on
		m.syncResp.ErrorCode = kerr.RebalanceInProgress.Code
		m.syncCh <- m.syncResp
	}
	ch := make(chan *kmsg.SyncGroupResponse, 1)
	m.syncCh, m.syncResp = ch, resp
	if m.id == g.leader {
		c.completeSync(g, req.GroupAssignment, now)
	}
	c.schedule(g)
	return nil, ch
}

func (c *wireCoordinator) heartbeat(req *kmsg.HeartbeatRequest) *kmsg.HeartbeatResponse {
	resp := req.ResponseKind().(*kmsg.HeartbeatResponse)
	resp.ErrorCode = c.touch(req.Group, req.MemberID, req.InstanceID, req.Generation)
	return resp
}

// touch validates a member's heartbeat and extends its session. A
// heartbeat during a join phase answers REBALANCE_IN_PROGRESS, which is how
// members that are not joining learn they must.
func (c *wireCoordinator) touch(group, memberID string, instanceID *string, generation int32) int16 {
	if group == "" {
		return kerr.InvalidGroupID.Code
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return kerr.CoordinatorNotAvailable.Code
	}
	g := c.groups[group]
	if g.fenced(memberID, instanceID) {
		return kerr.FencedInstanceID.Code
	}
	if g == nil || g.members[memberID] == nil || g.state == wireEmpty {
		return kerr.UnknownMemberID.Code
	}
	m := g.members[memberID]
	if generation != g.generation {
		return kerr.IllegalGeneration.Code
	}
	m.deadline = time.Now().Add(m.session)
	if g.state == wirePreparing {
		return kerr.RebalanceInProgress.Code
	}
	return 0
}

func (c *wireCoordinator) leave(req *kmsg.LeaveGroupRequest) *kmsg.LeaveGroupResponse {
	resp := req.ResponseKind().(*kmsg.LeaveGroupResponse)
	leaving := req.Members
	if req.Version < 3 {
		leaving = []kmsg.LeaveGroupRequestMember{{MemberID: req.MemberID}}
	}
	if req.Group == "" {
		resp.ErrorCode = kerr.InvalidGroupID.Code
		return resp
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		resp.ErrorCode = kerr.CoordinatorNotAvailable.Code
		return resp
	}
	g := c.groups[req.Group]
	now := time.Now()
	for _, lm := range leaving {
		r := kmsg.NewLeaveGroupResponseMember()
		r.MemberID, r.InstanceID = lm.MemberID, lm.InstanceID
		r.ErrorCode = c.leaveOne(g, lm, now)
		resp.Members = append(resp.Members, r)
	}
	if g != nil {
		c.schedule(g)
		c.forgetIfEmpty(g)
	}
	if req.Version < 3 {
		// One member: its error is the request's.
		resp.ErrorCode = resp.Members[0].ErrorCode
		resp.Members = nil
	}
	return resp
}

func (c *wireCoordinator) leaveOne(g *wireGroup, lm kmsg.LeaveGroupRequestMember, now time.Time) int16 {
	if g == nil {
		return kerr.UnknownMemberID.Code
	}
	id := lm.MemberID
	if id == "" && lm.InstanceID != nil {
		for _, m := range g.members {
			if m.instanceID != nil && *m.instanceID == *lm.InstanceID {
				id = m.id
			}
		}
	}
	if _, ok := g.pending[id]; ok {
		delete(g.pending, id)
		c.maybeCompleteJoin(g, now)
		return 0
	}
	m := g.members[id]
	switch {
	case g.fenced(id, lm.InstanceID):
		return kerr.FencedInstanceID.Code
	case m == nil:
		return kerr.UnknownMemberID.Code
	case lm.InstanceID != nil && m.instanceID != nil && *lm.InstanceID != *m.instanceID:
		return kerr.FencedInstanceID.Code
	}
	c.removeMember(g, m, now, reasonLeft)
	return 0
}

// Bounds on what Kafka clients, which need no credentials on the
// listener, can make the group coordinator hold.
const (
	maxWireGroups     = 10000
	maxPendingMembers = 1000
	maxPendingWait    = time.Minute
	// A member joining without a member ID (JoinGroup v0-v3, or with a
	// group.instance.id) is made at once, and one waiting in a join
	// phase does not expire, however long the phase (its length is a
	// client's rebalance timeout) and whether or not its client is
	// still connected: members past these, of one group or of all, are
	// refused GROUP_MAX_SIZE_REACHED (Kafka's group.max.size).
	defaultMaxGroupMembers = 1000
	defaultMaxMembers      = 10000
	// A Kafka client's OffsetCommit stores offsets under any group name
	// (a simple commit needs no member), kept on disk and exported per
	// group until offsets_retention passes without a commit: one that
	// would add a group when this many have offsets is refused
	// POLICY_VIOLATION. Groups with offsets commit on; weir's in-process
	// groups (enrich, sink-*) commit without the listener and are never
	// refused, though they count.
	defaultMaxOffsetGroups = 10000
)

// hasInstance reports whether a member of g has the group.instance.id id.
func (g *wireGroup) hasInstance(id string) bool {
	for _, m := range g.members {
		if m.instanceID != nil && *m.instanceID == id {
			return true
		}
	}
	return false
}

// clampRebalance logs a rebalance timeout cut to the longest session
// timeout, at most once per throttle.Every.
func (c *wireCoordinator) clampRebalance(group, clientID, clientHost string, asked time.Duration) {
	if n, ok := c.clampLog.Due(time.Now()); ok {
		c.b.opts.logger.Info("kafka group join: rebalance timeout cut to the longest session timeout",
			slog.String("group", group), slog.Duration("asked", asked), slog.Duration("used", c.maxSession),
			slog.String("client", clientID), slog.String("host", clientHost), slog.Int("times", n))
	}
}

// refuseMember counts a join refused at the members' bound, and logs it
// at most once per throttle.Every with how many there were. c.mu is held.
func (c *wireCoordinator) refuseMember(g *wireGroup, clientID, clientHost string) {
	c.refusedMembers.Add(1)
	if n, ok := c.refusedLog.Due(time.Now()); ok {
		c.b.opts.logger.Warn("kafka group join refused: too many members (GROUP_MAX_SIZE_REACHED)",
			slog.String("group", g.name), slog.Int("group_members", len(g.members)), slog.Int("max_group_members", c.maxGroupMembers),
			slog.Int("members", c.members), slog.Int("max_members", c.maxMembers),
			slog.String("client", clientID), slog.String("host", clientHost), slog.Int("times", n))
	}
}
