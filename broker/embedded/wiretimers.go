package embedded

import (
	"fmt"
	"time"
)

// nextDeadline is the group's earliest deadline, zero if none.
func (g *wireGroup) nextDeadline() time.Time {
	var next time.Time
	earlier := func(t time.Time) {
		if !t.IsZero() && (next.IsZero() || t.Before(next)) {
			next = t
		}
	}
	for _, t := range g.pending {
		earlier(t)
	}
	switch g.state {
	case wirePreparing:
		earlier(g.joinDeadline)
	case wireCompleting:
		earlier(g.syncDeadline)
	}
	for _, m := range g.members {
		if !m.waiting() {
			earlier(m.deadline)
		}
	}
	return next
}

// schedule arms the group's timer for its earliest deadline. Deadlines that
// move later (every heartbeat) do not re-arm it: the timer fires at the old
// time, finds nothing due and re-arms, so a heartbeat costs no timer work.
func (c *wireCoordinator) schedule(g *wireGroup) {
	next := g.nextDeadline()
	if next.IsZero() {
		if g.timer != nil {
			g.timer.Stop()
		}
		g.timerAt = time.Time{}
		return
	}
	if !g.timerAt.IsZero() && !g.timerAt.After(next) {
		return
	}
	d := time.Until(next)
	if g.timer == nil {
		g.timer = time.AfterFunc(d, func() { c.expire(g) })
	} else {
		g.timer.Reset(d)
	}
	g.timerAt = next
}

// expire runs from the group's timer: it drops pending member IDs that
// were not used, ends a join or sync phase that ran out of time and removes
// members whose session expired.
func (c *wireCoordinator) expire(g *wireGroup) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed || c.groups[g.name] != g {
		return
	}
	g.timerAt = time.Time{}
	now := time.Now()
	for id, t := range g.pending {
		if !now.Before(t) {
			delete(g.pending, id)
		}
	}
	switch {
	case g.state == wirePreparing && !now.Before(g.joinDeadline):
		c.completeJoin(g, now)
	case g.state == wirePreparing:
		c.maybeCompleteJoin(g, now) // a pending member may have been all it waited for
	case g.state == wireCompleting && !now.Before(g.syncDeadline):
		for _, m := range g.sortedMembers() {
			if m.syncCh == nil {
				c.dropMember(g, m, "did not sync within the rebalance timeout")
			}
		}
		c.rebalance(g, now)
	}
	for _, m := range g.sortedMembers() {
		if g.members[m.id] == m && !m.waiting() && !now.Before(m.deadline) {
			c.removeMember(g, m, now, fmt.Sprintf("session timeout (%s) expired", m.session))
		}
	}
	c.schedule(g)
	c.forgetIfEmpty(g)
}

// forgetIfEmpty drops a group without members or pending members from the
// coordinator, so groups used once do not accumulate; its committed
// offsets stay (ListGroups and DescribeGroups report such a group as
// Empty).
func (c *wireCoordinator) forgetIfEmpty(g *wireGroup) {
	if len(g.members) > 0 || len(g.pending) > 0 || c.groups[g.name] != g {
		return
	}
	if g.timer != nil {
		g.timer.Stop()
	}
	delete(c.groups, g.name)
}
