package embedded

import (
	"context"
	"fmt"
	"math"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// wireMemberCounts is the members of group and of every group.
func wireMemberCounts(b *Broker, group string) (inGroup, total int) {
	b.wire.mu.Lock()
	defer b.wire.mu.Unlock()
	for name, g := range b.wire.groups {
		total += len(g.members)
		if name == group {
			inGroup = len(g.members)
		}
	}
	return inGroup, total
}

// TestWireGroupMembersBounded: Kafka clients need no credentials, and a
// JoinGroup without a member ID (v0–v3, or v4+ with a group.instance.id)
// makes a member at once. One that joins a rebalance a silent member holds
// open (its rebalance timeout is the client's to choose) and hangs up
// waits for the phase's end, and a waiting member does not expire: each
// connection's JoinGroup left a member, with its metadata, for as long as
// the phase lasted. Members past the bound, of the group or of all
// groups, are refused with GROUP_MAX_SIZE_REACHED.
func TestWireGroupMembersBounded(t *testing.T) {
	b := openTest(t, t.TempDir())
	b.wire.maxGroupMembers, b.wire.maxMembers = 20, 30
	const g = "held-open"
	// A member that never rejoins, with a rebalance timeout of an hour.
	a := memberID(t, b, g)
	ra := recv(t, goJoin(b, joinReq(g, a, time.Minute, time.Hour)), "join a")
	wantCode(t, "join a", ra.ErrorCode, nil)
	recv(t, goSync(b, syncReq(g, a, ra.Generation, map[string]string{a: "A"})), "sync a")

	join := func(group string, i int) int16 {
		req := joinReq(group, "", time.Minute, time.Hour)
		req.Version = 3
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
		defer cancel() // the client hangs up
		return b.JoinGroup(ctx, fmt.Sprintf("c%d", i), "/192.0.2.1", req).ErrorCode
	}
	refused := 0
	for i := range 100 {
		if code := join(g, i); code == kerr.GroupMaxSizeReached.Code {
			refused++
		}
	}
	if n, _ := wireMemberCounts(b, g); n > 20 || refused != 100-19 {
		t.Fatalf("%d members after 100 joins (%d refused); want at most 20", n, refused)
	}
	// Other groups: the coordinator's bound.
	for i := range 40 {
		// v3 joins of empty groups complete at once: the members stay
		// until their session ends.
		join(fmt.Sprintf("other%d", i), i)
	}
	if _, total := wireMemberCounts(b, ""); total > 30 {
		t.Fatalf("%d members in all groups; want at most 30", total)
	}
	if got := b.wire.refusedMembers.Load(); got < 100-19 {
		t.Fatalf("%d joins counted refused", got)
	}
}

// TestWireRebalanceTimeoutBounded: a JoinGroup's rebalance timeout is the
// client's to choose (a 32-bit count of milliseconds: 24 days), and a join
// phase lasts until every member has rejoined or the longest rebalance
// timeout of its members: one silent member that asked for days held the
// group's rebalance (and every member joining it meanwhile) open for days.
// It is clamped to the longest session timeout (30 min).
func TestWireRebalanceTimeoutBounded(t *testing.T) {
	b := openTest(t, t.TempDir())
	const g = "days"
	forever := time.Duration(math.MaxInt32) * time.Millisecond
	a := memberID(t, b, g)
	ra := recv(t, goJoin(b, joinReq(g, a, time.Minute, forever)), "join a")
	wantCode(t, "join a", ra.ErrorCode, nil)
	recv(t, goSync(b, syncReq(g, a, ra.Generation, map[string]string{a: "A"})), "sync a")

	// A second member starts a join phase that a, silent, holds open.
	m2 := memberID(t, b, g)
	j2 := goJoin(b, joinReq(g, m2, time.Minute, time.Minute))
	notYet(t, j2, "join of a second member while a has not rejoined")
	b.wire.mu.Lock()
	deadline, rebalance := b.wire.groups[g].joinDeadline, b.wire.groups[g].members[a].rebalance
	b.wire.mu.Unlock()
	if rebalance > defaultMaxSessionTimeout || deadline.After(time.Now().Add(defaultMaxSessionTimeout)) {
		t.Fatalf("member's rebalance timeout %v, join phase ends in %v; want at most %v", rebalance, time.Until(deadline), defaultMaxSessionTimeout)
	}
}

// TestWireStaticMemberRejoinsFullGroup: a restarted static member (a
// group.instance.id, no member ID) replaces its old self, so it adds no
// member: it is not refused GROUP_MAX_SIZE_REACHED in a group at its bound.
func TestWireStaticMemberRejoinsFullGroup(t *testing.T) {
	b := openTest(t, t.TempDir())
	b.wire.maxGroupMembers, b.wire.maxMembers = 1, 1
	const g = "static"
	instance := "host-1"
	join := func(what string) *kmsg.JoinGroupResponse {
		req := joinReq(g, "", time.Minute, time.Minute)
		req.InstanceID = &instance
		r := recv(t, goJoin(b, req), what)
		wantCode(t, what, r.ErrorCode, nil)
		return r
	}
	first := join("first join")
	recv(t, goSync(b, syncReq(g, first.MemberID, first.Generation, map[string]string{first.MemberID: "A"})), "sync")
	again := join("join after a restart")
	if again.MemberID == first.MemberID {
		t.Fatalf("rejoin kept member ID %s", again.MemberID)
	}
	if n, total := wireMemberCounts(b, g); n != 1 || total != 1 {
		t.Fatalf("%d members in the group, %d in all; want 1", n, total)
	}
}
