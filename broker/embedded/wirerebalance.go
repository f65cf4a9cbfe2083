package embedded

import (
	"bytes"
	"context"
	"log/slog"
	"slices"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// rebalance starts (or continues) a join phase: every member must send
// JoinGroup again. Members waiting for an assignment that will now never
// come are told to rejoin.
func (c *wireCoordinator) rebalance(g *wireGroup, now time.Time) {
	if g.state == wireCompleting {
		for _, m := range g.members {
			m.assignment = nil
			if m.syncCh != nil {
				m.syncResp.ErrorCode = kerr.RebalanceInProgress.Code
				c.answerSync(m, now)
			}
		}
	}
	if g.state != wirePreparing {
		g.state = wirePreparing
		g.syncDeadline = time.Time{}
		var longest time.Duration
		for _, m := range g.members {
			longest = max(longest, m.rebalance)
		}
		g.joinDeadline = now.Add(longest)
	}
	c.maybeCompleteJoin(g, now)
	c.schedule(g)
}

// maybeCompleteJoin ends the join phase once every member has rejoined and
// no member is still to come back with its new ID.
func (c *wireCoordinator) maybeCompleteJoin(g *wireGroup, now time.Time) {
	if g.state != wirePreparing || len(g.pending) > 0 {
		return
	}
	for _, m := range g.members {
		if m.joinCh == nil {
			return
		}
	}
	c.completeJoin(g, now)
}

// completeJoin starts a new generation with the members that rejoined:
// the others are removed, a protocol is chosen, and every member gets its
// JoinGroup answer (the leader with everybody's metadata).
func (c *wireCoordinator) completeJoin(g *wireGroup, now time.Time) {
	for _, m := range g.sortedMembers() {
		if m.joinCh == nil {
			c.dropMember(g, m, "did not rejoin within the rebalance timeout")
		}
	}
	g.joinDeadline = time.Time{}
	g.generation++
	if len(g.members) == 0 {
		g.state, g.protocol, g.leader = wireEmpty, "", ""
		c.b.opts.logger.Debug("kafka group empty", slog.String("group", g.name), slog.Int("generation", int(g.generation)))
		return
	}
	members := g.sortedMembers()
	if g.members[g.leader] == nil {
		g.leader = members[0].id
	}
	g.protocol = selectProtocol(members)
	g.state = wireCompleting
	var longest time.Duration
	for _, m := range members {
		longest = max(longest, m.rebalance)
	}
	g.syncDeadline = now.Add(longest)
	for _, m := range members {
		resp := m.joinResp
		c.fillJoin(g, m, resp)
		m.joinCh <- resp
		m.joinCh, m.joinResp = nil, nil
		m.deadline = now.Add(m.session)
	}
	c.b.opts.logger.Debug("kafka group rebalanced", slog.String("group", g.name),
		slog.Int("generation", int(g.generation)), slog.Int("members", len(members)),
		slog.String("protocol", g.protocol), slog.String("leader", g.leader))
}

// selectProtocol picks, among the protocols every member supports, the one
// most members prefer (each votes for its first supported candidate), as
// Kafka does; ties go to the earliest vote of the oldest members.
func selectProtocol(members []*wireMember) string {
	var order []string
	votes := map[string]int{}
	for _, m := range members {
		for _, p := range m.protocols {
			if !slices.ContainsFunc(members, func(o *wireMember) bool { return !o.supportsProtocol(p.Name) }) {
				if votes[p.Name] == 0 {
					order = append(order, p.Name)
				}
				votes[p.Name]++
				break
			}
		}
	}
	best := ""
	for _, name := range order {
		if best == "" || votes[name] > votes[best] {
			best = name
		}
	}
	return best
}

func (c *wireCoordinator) fillJoin(g *wireGroup, m *wireMember, resp *kmsg.JoinGroupResponse) {
	resp.ErrorCode = 0
	resp.Generation = g.generation
	protocolType, protocol := g.protocolType, g.protocol
	resp.ProtocolType, resp.Protocol = &protocolType, &protocol
	resp.LeaderID = g.leader
	resp.MemberID = m.id
	resp.Members = nil
	if m.id != g.leader {
		return
	}
	for _, o := range g.sortedMembers() {
		jm := kmsg.NewJoinGroupResponseMember()
		jm.MemberID, jm.InstanceID = o.id, o.instanceID
		jm.ProtocolMetadata = o.metadata(g.protocol)
		resp.Members = append(resp.Members, jm)
	}
}

// emptyConsumerAssignment is what a "consumer" member the leader assigned
// nothing gets: an encoded empty assignment rather than no bytes, which
// some clients cannot decode.
func emptyConsumerAssignment() []byte {
	a := kmsg.NewConsumerMemberAssignment()
	return a.AppendTo(nil)
}

// completeSync stores the leader's assignment, makes the group stable and
// answers every member waiting in SyncGroup.
func (c *wireCoordinator) completeSync(g *wireGroup, assignments []kmsg.SyncGroupRequestGroupAssignment, now time.Time) {
	for _, m := range g.members {
		m.assignment = nil
	}
	for _, a := range assignments {
		if m := g.members[a.MemberID]; m != nil {
			m.assignment = bytes.Clone(a.MemberAssignment)
		}
	}
	for _, m := range g.members {
		if len(m.assignment) == 0 && g.protocolType == "consumer" {
			m.assignment = emptyConsumerAssignment()
		}
	}
	g.state = wireStable
	g.syncDeadline = time.Time{}
	for _, m := range g.sortedMembers() {
		if m.syncCh != nil {
			c.fillSync(g, m, m.syncResp)
			c.answerSync(m, now)
		}
	}
}

func (c *wireCoordinator) fillSync(g *wireGroup, m *wireMember, resp *kmsg.SyncGroupResponse) {
	protocolType, protocol := g.protocolType, g.protocol
	resp.ProtocolType, resp.Protocol = &protocolType, &protocol
	resp.MemberAssignment = m.assignment
}

func (c *wireCoordinator) answerSync(m *wireMember, now time.Time) {
	m.syncCh <- m.syncResp
	m.syncCh, m.syncResp = nil, nil
	m.deadline = now.Add(m.session)
}

// removeMember takes a member out (it left or its session expired) and
// rebalances the others.
func (c *wireCoordinator) removeMember(g *wireGroup, m *wireMember, now time.Time, why string) {
	c.dropMember(g, m, why)
	switch g.state {
	case wireStable, wireCompleting:
		c.rebalance(g, now)
	case wirePreparing:
		c.maybeCompleteJoin(g, now)
	}
}

// reasonLeft is why a member that sent LeaveGroup was removed.
const reasonLeft = "left the group"

// dropMember deletes a member without changing the group's state; a
// request it still waits in is answered UNKNOWN_MEMBER_ID.
func (c *wireCoordinator) dropMember(g *wireGroup, m *wireMember, why string) {
	if m.joinCh != nil {
		m.joinResp.ErrorCode = kerr.UnknownMemberID.Code
		m.joinCh <- m.joinResp
		m.joinCh, m.joinResp = nil, nil
	}
	if m.syncCh != nil {
		m.syncResp.ErrorCode = kerr.UnknownMemberID.Code
		m.syncCh <- m.syncResp
		m.syncCh, m.syncResp = nil, nil
	}
	if _, ok := g.members[m.id]; ok {
		c.members--
	}
	delete(g.members, m.id)
	c.kinds.release(g.name, true)
	if g.leader == m.id {
		g.leader = ""
	}
	// Leaving is routine; being thrown out is worth an operator's eye.
	level := slog.LevelInfo
	if why == reasonLeft {
		level = slog.LevelDebug
	}
	c.b.opts.logger.Log(context.Background(), level, "kafka group member removed", slog.String("group", g.name),
		slog.String("member", m.id), slog.String("client", m.clientID), slog.String("reason", why))
}
