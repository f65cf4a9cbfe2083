package embedded

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/weirnet/weir/broker"
)

// joinReq is a JoinGroup v9 of a "consumer" member that supports
// protocols, in order of preference.
func joinReq(group, member string, session, rebalance time.Duration, protocols ...string) *kmsg.JoinGroupRequest {
	req := kmsg.NewPtrJoinGroupRequest()
	req.Version = 9
	req.Group, req.MemberID, req.ProtocolType = group, member, "consumer"
	req.SessionTimeoutMillis = int32(session.Milliseconds())
	req.RebalanceTimeoutMillis = int32(rebalance.Milliseconds())
	if len(protocols) == 0 {
		protocols = []string{"range"}
	}
	for _, p := range protocols {
		req.Protocols = append(req.Protocols, kmsg.JoinGroupRequestProtocol{Name: p, Metadata: []byte("meta-" + member)})
	}
	return req
}

// goJoin runs JoinGroup in the background, as a client waiting for the
// rebalance does.
func goJoin(b *Broker, req *kmsg.JoinGroupRequest) <-chan *kmsg.JoinGroupResponse {
	ch := make(chan *kmsg.JoinGroupResponse, 1)
	go func() { ch <- b.JoinGroup(context.Background(), "client-"+req.MemberID, "/127.0.0.1", req) }()
	return ch
}

func goSync(b *Broker, req *kmsg.SyncGroupRequest) <-chan *kmsg.SyncGroupResponse {
	ch := make(chan *kmsg.SyncGroupResponse, 1)
	go func() { ch <- b.SyncGroup(context.Background(), req) }()
	return ch
}

func recv[T any](t *testing.T, ch <-chan T, what string) T {
	t.Helper()
	select {
	case v := <-ch:
		return v
	case <-time.After(10 * time.Second):
		t.Fatalf("%s: no answer", what)
		panic("unreachable")
	}
}

// notYet checks that a waiting request has not been answered.
func notYet[T any](t *testing.T, ch <-chan T, what string) {
	t.Helper()
	select {
	case v := <-ch:
		t.Fatalf("%s answered early: %+v", what, v)
	case <-time.After(50 * time.Millisecond):
	}
}

// memberID does the KIP-394 first join and returns the member ID handed out.
func memberID(t *testing.T, b *Broker, group string) string {
	t.Helper()
	resp := b.JoinGroup(context.Background(), "client", "/127.0.0.1", joinReq(group, "", 10*time.Second, 10*time.Second))
	if resp.ErrorCode != kerr.MemberIDRequired.Code || resp.MemberID == "" {
		t.Fatalf("first join: error %d, member %q; want MEMBER_ID_REQUIRED with an ID", resp.ErrorCode, resp.MemberID)
	}
	return resp.MemberID
}

func syncReq(group, member string, gen int32, assign map[string]string) *kmsg.SyncGroupRequest {
	req := kmsg.NewPtrSyncGroupRequest()
	req.Version = 5
	req.Group, req.MemberID, req.Generation = group, member, gen
	for m, a := range assign {
		req.GroupAssignment = append(req.GroupAssignment, kmsg.SyncGroupRequestGroupAssignment{MemberID: m, MemberAssignment: []byte(a)})
	}
	return req
}

func heartbeat(b *Broker, group, member string, gen int32) int16 {
	req := kmsg.NewPtrHeartbeatRequest()
	req.Version = 4
	req.Group, req.MemberID, req.Generation = group, member, gen
	return b.Heartbeat(req).ErrorCode
}

func wantCode(t *testing.T, what string, got int16, want *kerr.Error) {
	t.Helper()
	wantCode := int16(0)
	if want != nil {
		wantCode = want.Code
	}
	if got != wantCode {
		t.Fatalf("%s: error %v, want %v", what, kerr.ErrorForCode(got), want)
	}
}

// stableGroup makes a group of two members, a (the leader) and b, in
// generation 2 with assignments "A" and "B".
func stableGroup(t *testing.T, b *Broker, group string, session, rebalance time.Duration) (a, m2 string, gen int32) {
	t.Helper()
	a = memberID(t, b, group)
	ra := recv(t, goJoin(b, joinReq(group, a, session, rebalance)), "join a")
	wantCode(t, "join a", ra.ErrorCode, nil)
	recv(t, goSync(b, syncReq(group, a, ra.Generation, map[string]string{a: "A"})), "sync a")

	m2 = memberID(t, b, group)
	jb := goJoin(b, joinReq(group, m2, session, rebalance))
	notYet(t, jb, "join b before a rejoins")
	wantCode(t, "heartbeat of a during the rebalance", heartbeat(b, group, a, ra.Generation), kerr.RebalanceInProgress)
	ja := goJoin(b, joinReq(group, a, session, rebalance))
	ra, rb := recv(t, ja, "rejoin a"), recv(t, jb, "join b")
	wantCode(t, "rejoin a", ra.ErrorCode, nil)
	wantCode(t, "join b", rb.ErrorCode, nil)
	sb := goSync(b, syncReq(group, m2, rb.Generation, nil))
	notYet(t, sb, "follower sync before the leader's")
	sa := recv(t, goSync(b, syncReq(group, a, ra.Generation, map[string]string{a: "A", m2: "B"})), "leader sync")
	wantCode(t, "leader sync", sa.ErrorCode, nil)
	if got := string(recv(t, sb, "follower sync").MemberAssignment); got != "B" {
		t.Fatalf("follower assignment %q", got)
	}
	return a, m2, ra.Generation
}

func TestWireGroupJoinSyncHeartbeatLeave(t *testing.T) {
	b := openTest(t, t.TempDir())
	const g = "g1"

	a := memberID(t, b, g)
	ra := recv(t, goJoin(b, joinReq(g, a, 10*time.Second, 10*time.Second, "cooperative-sticky", "range")), "join")
	wantCode(t, "join", ra.ErrorCode, nil)
	if ra.Generation != 1 || ra.LeaderID != a || ra.MemberID != a || *ra.Protocol != "cooperative-sticky" || *ra.ProtocolType != "consumer" {
		t.Fatalf("join answer %+v", ra)
	}
	if len(ra.Members) != 1 || string(ra.Members[0].ProtocolMetadata) != "meta-"+a {
		t.Fatalf("leader's member list %+v", ra.Members)
	}
	sa := recv(t, goSync(b, syncReq(g, a, 1, map[string]string{a: "all"})), "sync")
	if sa.ErrorCode != 0 || string(sa.MemberAssignment) != "all" {
		t.Fatalf("sync answer %+v", sa)
	}
	wantCode(t, "heartbeat", heartbeat(b, g, a, 1), nil)

	// A second member supporting only range: the group moves to range,
	// the protocol both support.
	m2 := memberID(t, b, g)
	jb := goJoin(b, joinReq(g, m2, 10*time.Second, 10*time.Second, "range"))
	notYet(t, jb, "join of the second member")
	wantCode(t, "heartbeat during rebalance", heartbeat(b, g, a, 1), kerr.RebalanceInProgress)
	ja := goJoin(b, joinReq(g, a, 10*time.Second, 10*time.Second, "cooperative-sticky", "range"))
	ra, rb := recv(t, ja, "rejoin"), recv(t, jb, "join b")
	if ra.Generation != 2 || rb.Generation != 2 || *ra.Protocol != "range" || rb.LeaderID != a {
		t.Fatalf("second generation: a %+v, b %+v", ra, rb)
	}
	if len(ra.Members) != 2 || len(rb.Members) != 0 {
		t.Fatalf("only the leader gets the members: %d, %d", len(ra.Members), len(rb.Members))
	}
	// A member with no protocol in common is refused.
	wantCode(t, "join with another protocol",
		b.JoinGroup(context.Background(), "c", "/h", joinReq(g, "", 10*time.Second, 10*time.Second, "other")).ErrorCode,
		kerr.InconsistentGroupProtocol)

	sb := goSync(b, syncReq(g, m2, 2, nil))
	sa = recv(t, goSync(b, syncReq(g, a, 2, map[string]string{a: "half-a", m2: "half-b"})), "leader sync")
	if string(sa.MemberAssignment) != "half-a" || string(recv(t, sb, "follower sync").MemberAssignment) != "half-b" {
		t.Fatal("assignments not distributed")
	}

	wantCode(t, "old generation", heartbeat(b, g, a, 1), kerr.IllegalGeneration)
	wantCode(t, "unknown member", heartbeat(b, g, "nobody", 2), kerr.UnknownMemberID)
	wantCode(t, "unknown group", heartbeat(b, "nogroup", a, 2), kerr.UnknownMemberID)
	wantCode(t, "sync of an old generation", b.SyncGroup(context.Background(), syncReq(g, m2, 1, nil)).ErrorCode, kerr.IllegalGeneration)

	desc := b.DescribeGroups(&kmsg.DescribeGroupsRequest{Version: 5, Groups: []string{g, "missing"}})
	d := desc.Groups[0]
	if d.State != "Stable" || d.Protocol != "range" || len(d.Members) != 2 ||
		d.Members[0].MemberID != a || d.Members[0].ClientID != "client-"+a || d.Members[0].ClientHost != "/127.0.0.1" ||
		string(d.Members[1].MemberAssignment) != "half-b" {
		t.Fatalf("describe %+v", d)
	}
	if desc.Groups[1].State != "Dead" {
		t.Fatalf("unknown group described as %q", desc.Groups[1].State)
	}

	// A batch leave (v3+): one known member, one unknown.
	lv := kmsg.NewPtrLeaveGroupRequest()
	lv.Version, lv.Group = 5, g
	lv.Members = []kmsg.LeaveGroupRequestMember{{MemberID: m2}, {MemberID: "nobody"}}
	lr := b.LeaveGroup(lv)
	if lr.ErrorCode != 0 || len(lr.Members) != 2 || lr.Members[0].ErrorCode != 0 || lr.Members[1].ErrorCode != kerr.UnknownMemberID.Code {
		t.Fatalf("batch leave %+v", lr)
	}
	wantCode(t, "heartbeat after a member left", heartbeat(b, g, a, 2), kerr.RebalanceInProgress)
	ra = recv(t, goJoin(b, joinReq(g, a, 10*time.Second, 10*time.Second, "range")), "rejoin alone")
	if ra.Generation != 3 || len(ra.Members) != 1 {
		t.Fatalf("third generation %+v", ra)
	}

	// A v0 leave answers with the top-level error.
	lv = kmsg.NewPtrLeaveGroupRequest()
	lv.Version, lv.Group, lv.MemberID = 0, g, a
	wantCode(t, "leave v0", b.LeaveGroup(lv).ErrorCode, nil)
	wantCode(t, "leave v0 again", b.LeaveGroup(lv).ErrorCode, kerr.UnknownMemberID)
	if groups := b.ListGroups(kmsg.NewPtrListGroupsRequest()).Groups; len(groups) != 0 {
		t.Fatalf("an empty group without offsets is still listed: %+v", groups)
	}
	b.wire.mu.Lock()
	n := len(b.wire.groups)
	b.wire.mu.Unlock()
	if n != 0 {
		t.Fatalf("coordinator still holds %d groups", n)
	}
}

func TestWireGroupJoinValidation(t *testing.T) {
	b := openTest(t, t.TempDir())
	ctx := context.Background()
	wantCode(t, "empty group", b.JoinGroup(ctx, "c", "/h", joinReq("", "", 10*time.Second, time.Minute)).ErrorCode, kerr.InvalidGroupID)
	wantCode(t, "short session", b.JoinGroup(ctx, "c", "/h", joinReq("g", "", time.Second, time.Minute)).ErrorCode, kerr.InvalidSessionTimeout)
	wantCode(t, "unknown member of a new group", b.JoinGroup(ctx, "c", "/h", joinReq("g", "made-up", 10*time.Second, time.Minute)).ErrorCode, kerr.UnknownMemberID)
	noProto := joinReq("g", "", 10*time.Second, time.Minute)
	noProto.Protocols = nil
	wantCode(t, "no protocols", b.JoinGroup(ctx, "c", "/h", noProto).ErrorCode, kerr.InconsistentGroupProtocol)

	// Before v4 there is no MEMBER_ID_REQUIRED round trip.
	old := joinReq("g", "", 10*time.Second, time.Minute)
	old.Version = 3
	r := recv(t, goJoin(b, old), "v3 join")
	if r.ErrorCode != 0 || r.MemberID == "" || r.Generation != 1 {
		t.Fatalf("v3 join %+v", r)
	}
	if !strings.HasPrefix(r.MemberID, "client--") || len(r.MemberID) != len("client--")+36 {
		t.Fatalf("member ID %q is not client ID, dash, UUID", r.MemberID)
	}
}

// TestWireGroupSessionTimeout stops heartbeating one of two members: it is
// removed after its session timeout and the other rejoins alone.
func TestWireGroupSessionTimeout(t *testing.T) {
	b := openTest(t, t.TempDir())
	b.wire.minSession = 10 * time.Millisecond
	const g = "expiring"
	a, m2, gen := stableGroup(t, b, g, 300*time.Millisecond, 5*time.Second)

	// a heartbeats, m2 goes silent.
	deadline := time.Now().Add(5 * time.Second)
	for {
		code := heartbeat(b, g, a, gen)
		if code == kerr.RebalanceInProgress.Code {
			break
		}
		wantCode(t, "heartbeat", code, nil)
		if time.Now().After(deadline) {
			t.Fatal("the silent member's session never expired")
		}
		time.Sleep(50 * time.Millisecond)
	}
	ra := recv(t, goJoin(b, joinReq(g, a, 300*time.Millisecond, 5*time.Second)), "rejoin")
	if ra.Generation != gen+1 || len(ra.Members) != 1 || ra.Members[0].MemberID != a {
		t.Fatalf("after expiry: %+v", ra)
	}
	wantCode(t, "heartbeat of the expired member", heartbeat(b, g, m2, gen), kerr.UnknownMemberID)

	// A member ID handed out with MEMBER_ID_REQUIRED and never used
	// expires too, rather than holding up the next rebalance.
	recv(t, goSync(b, syncReq(g, a, ra.Generation, nil)), "sync")
	first := b.JoinGroup(context.Background(), "c", "/h", joinReq(g, "", 300*time.Millisecond, 5*time.Second))
	wantCode(t, "first join", first.ErrorCode, kerr.MemberIDRequired)
	for range 10 { // keep a alive meanwhile
		time.Sleep(50 * time.Millisecond)
		wantCode(t, "heartbeat", heartbeat(b, g, a, ra.Generation), nil)
	}
	b.wire.mu.Lock()
	pending := -1
	if wg := b.wire.groups[g]; wg != nil {
		pending = len(wg.pending)
	}
	b.wire.mu.Unlock()
	if pending != 0 {
		t.Fatalf("%d pending member IDs after their session timeout (-1: group gone)", pending)
	}
}

// TestWireGroupRebalanceTimeout: a member that does not rejoin within the
// rebalance timeout is dropped and the rebalance completes without it.
func TestWireGroupRebalanceTimeout(t *testing.T) {
	b := openTest(t, t.TempDir())
	const g = "slow"
	a, m2, gen := stableGroup(t, b, g, 30*time.Second, 300*time.Millisecond)
	start := time.Now()
	// m2 rejoins (with new metadata), a never does.
	r := recv(t, goJoin(b, joinReq(g, m2, 30*time.Second, 300*time.Millisecond, "range", "roundrobin")), "rejoin")
	if took := time.Since(start); took < 250*time.Millisecond || took > 5*time.Second {
		t.Fatalf("rebalance completed after %v, want about the 300ms rebalance timeout", took)
	}
	if r.ErrorCode != 0 || r.Generation != gen+1 || r.LeaderID != m2 || len(r.Members) != 1 {
		t.Fatalf("rejoin after the timeout: %+v", r)
	}
	wantCode(t, "heartbeat of the dropped member", heartbeat(b, g, a, gen), kerr.UnknownMemberID)
}

// TestWireGroupLeaderNeverSyncs: followers waiting for an assignment are
// told to rejoin when the leader does not sync within the rebalance timeout.
func TestWireGroupLeaderNeverSyncs(t *testing.T) {
	b := openTest(t, t.TempDir())
	const g = "nosync"
	a, m2, gen := stableGroup(t, b, g, 30*time.Second, 300*time.Millisecond)
	ja := goJoin(b, joinReq(g, a, 30*time.Second, 300*time.Millisecond))
	notYet(t, ja, "the leader's rejoin") // the rebalance has started
	jb := goJoin(b, joinReq(g, m2, 30*time.Second, 300*time.Millisecond))
	recv(t, ja, "join a")
	rb := recv(t, jb, "join b")
	sb := recv(t, goSync(b, syncReq(g, m2, rb.Generation, nil)), "follower sync")
	wantCode(t, "follower sync without a leader", sb.ErrorCode, kerr.RebalanceInProgress)
	wantCode(t, "heartbeat of the leader that never synced", heartbeat(b, g, a, gen+1), kerr.UnknownMemberID)
}

func commitReq(group, member string, gen int32, topic string, offsets map[int32]int64) *kmsg.OffsetCommitRequest {
	req := kmsg.NewPtrOffsetCommitRequest()
	req.Version = 8
	req.Group, req.MemberID, req.Generation = group, member, gen
	t := kmsg.NewOffsetCommitRequestTopic()
	t.Topic = topic
	for p, o := range offsets {
		t.Partitions = append(t.Partitions, kmsg.OffsetCommitRequestTopicPartition{Partition: p, Offset: o, LeaderEpoch: -1})
	}
	req.Topics = append(req.Topics, t)
	return req
}

func commitCode(t *testing.T, resp *kmsg.OffsetCommitResponse) int16 {
	t.Helper()
	var code int16
	for _, rt := range resp.Topics {
		for _, p := range rt.Partitions {
			if p.ErrorCode != 0 {
				code = p.ErrorCode
			}
		}
	}
	return code
}

func fetchCommitted(b *Broker, group, topic string, partitions ...int32) map[int32]int64 {
	req := kmsg.NewPtrOffsetFetchRequest()
	req.Version = 8
	rg := kmsg.NewOffsetFetchRequestGroup()
	rg.Group = group
	if topic != "" {
		rg.Topics = []kmsg.OffsetFetchRequestGroupTopic{{Topic: topic, Partitions: partitions}}
	}
	req.Groups = append(req.Groups, rg)
	out := map[int32]int64{}
	for _, t := range b.OffsetFetch(req).Groups[0].Topics {
		for _, p := range t.Partitions {
			out[p.Partition] = p.Offset
		}
	}
	return out
}

func TestWireGroupOffsetCommitChecks(t *testing.T) {
	b := openTest(t, t.TempDir())
	ctx := context.Background()
	if err := b.CreateTopic(ctx, "t", broker.TopicConfig{Partitions: 3}); err != nil {
		t.Fatal(err)
	}
	const g = "committer"
	a, _, gen := stableGroup(t, b, g, 10*time.Second, 10*time.Second)

	wantCode(t, "member commit", commitCode(t, b.OffsetCommit(commitReq(g, a, gen, "t", map[int32]int64{0: 5, 1: 7}))), nil)
	wantCode(t, "old generation", commitCode(t, b.OffsetCommit(commitReq(g, a, gen-1, "t", map[int32]int64{0: 9}))), kerr.IllegalGeneration)
	wantCode(t, "unknown member", commitCode(t, b.OffsetCommit(commitReq(g, "nobody", gen, "t", map[int32]int64{0: 9}))), kerr.UnknownMemberID)
	wantCode(t, "simple commit to an active group", commitCode(t, b.OffsetCommit(commitReq(g, "", -1, "t", map[int32]int64{0: 9}))), kerr.UnknownMemberID)
	wantCode(t, "unknown topic", commitCode(t, b.OffsetCommit(commitReq(g, a, gen, "nope", map[int32]int64{0: 9}))), kerr.UnknownTopicOrPartition)
	wantCode(t, "unknown partition", commitCode(t, b.OffsetCommit(commitReq(g, a, gen, "t", map[int32]int64{3: 9}))), kerr.UnknownTopicOrPartition)
	if got := fetchCommitted(b, g, "t", 0, 1, 2); got[0] != 5 || got[1] != 7 || got[2] != -1 {
		t.Fatalf("committed %v", got)
	}

	// v1 fetch of everything the group committed (null topics).
	req := kmsg.NewPtrOffsetFetchRequest()
	req.Version, req.Group = 1, g
	resp := b.OffsetFetch(req)
	if len(resp.Topics) != 1 || len(resp.Topics[0].Partitions) != 2 {
		t.Fatalf("fetch all: %+v", resp.Topics)
	}

	wantCode(t, "delete an active group", b.DeleteGroups(&kmsg.DeleteGroupsRequest{Groups: []string{g}}).Groups[0].ErrorCode, kerr.NonEmptyGroup)
	wantCode(t, "delete an unknown group", b.DeleteGroups(&kmsg.DeleteGroupsRequest{Groups: []string{"unknown"}}).Groups[0].ErrorCode, kerr.GroupIDNotFound)

	// Everybody leaves: the group is Empty but listed (it has offsets),
	// accepts simple commits, and can be deleted.
	lv := kmsg.NewPtrLeaveGroupRequest()
	lv.Version, lv.Group = 3, g
	for _, m := range b.DescribeGroups(&kmsg.DescribeGroupsRequest{Groups: []string{g}}).Groups[0].Members {
		lv.Members = append(lv.Members, kmsg.LeaveGroupRequestMember{MemberID: m.MemberID})
	}
	b.LeaveGroup(lv)
	lg := b.ListGroups(&kmsg.ListGroupsRequest{Version: 4, StatesFilter: []string{"empty"}})
	if len(lg.Groups) != 1 || lg.Groups[0].Group != g || lg.Groups[0].GroupState != "Empty" {
		t.Fatalf("list empty groups: %+v", lg.Groups)
	}
	wantCode(t, "simple commit to an empty group", commitCode(t, b.OffsetCommit(commitReq(g, "", -1, "t", map[int32]int64{2: 1}))), nil)
	wantCode(t, "delete", b.DeleteGroups(&kmsg.DeleteGroupsRequest{Groups: []string{g}}).Groups[0].ErrorCode, nil)
	if got := fetchCommitted(b, g, ""); len(got) != 0 {
		t.Fatalf("offsets after delete: %v", got)
	}
}

// TestWireAndInProcessShareOffsets: a Kafka client of group "shared"
// commits, then an in-process consumer of the same group resumes there, and
// the other way round. While one kind has members, the other is refused.
func TestWireAndInProcessShareOffsets(t *testing.T) {
	b := openTest(t, t.TempDir())
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if err := b.CreateTopic(ctx, "t", broker.TopicConfig{Partitions: 2}); err != nil {
		t.Fatal(err)
	}
	for p := range int32(2) {
		if err := b.ProducePartition(ctx, "t", p, makeRecords(10, 0)); err != nil {
			t.Fatal(err)
		}
	}
	const g = "shared"
	id := memberID(t, b, g)
	r := recv(t, goJoin(b, joinReq(g, id, 10*time.Second, 10*time.Second)), "join")
	recv(t, goSync(b, syncReq(g, id, r.Generation, nil)), "sync")
	wantCode(t, "commit", commitCode(t, b.OffsetCommit(commitReq(g, id, r.Generation, "t", map[int32]int64{0: 4, 1: 8}))), nil)

	if _, err := b.Consume(ctx, g, []string{"t"}); !errors.Is(err, ErrGroupInUse) {
		t.Fatalf("in-process consumer joined a group with Kafka client members: %v", err)
	}
	lv := kmsg.NewPtrLeaveGroupRequest()
	lv.Version, lv.Group, lv.MemberID = 1, g, id
	wantCode(t, "leave", b.LeaveGroup(lv).ErrorCode, nil)

	c, err := b.Consume(ctx, g, []string{"t"})
	if err != nil {
		t.Fatal(err)
	}
	first := map[int32]int64{}
	got := 0
	for got < 8 { // 6 left on partition 0, 2 on partition 1
		recs, err := c.Poll(ctx)
		if err != nil {
			t.Fatal(err)
		}
		for _, rec := range recs {
			if _, ok := first[rec.Partition]; !ok {
				first[rec.Partition] = rec.Offset
			}
			got++
		}
	}
	if first[0] != 4 || first[1] != 8 {
		t.Fatalf("in-process consumer started at %v, want the Kafka client's commits 4 and 8", first)
	}
	if err := c.Commit(ctx); err != nil {
		t.Fatal(err)
	}

	// While the in-process member is there, Kafka clients are kept out.
	wantCode(t, "kafka join while in-process members", b.JoinGroup(ctx, "c", "/h", joinReq(g, "", 10*time.Second, time.Minute)).ErrorCode, kerr.InconsistentGroupProtocol)
	wantCode(t, "simple commit while in-process members", commitCode(t, b.OffsetCommit(commitReq(g, "", -1, "t", map[int32]int64{0: 0}))), kerr.UnknownMemberID)
	d := b.DescribeGroups(&kmsg.DescribeGroupsRequest{Groups: []string{g}}).Groups[0]
	if d.State != "Stable" || len(d.Members) != 1 || d.Members[0].ClientHost != inProcessHost {
		t.Fatalf("in-process group described as %+v", d)
	}
	var a kmsg.ConsumerMemberAssignment
	if err := a.ReadFrom(d.Members[0].MemberAssignment); err != nil || len(a.Topics) != 1 || len(a.Topics[0].Partitions) != 2 {
		t.Fatalf("in-process assignment %+v: %v", a, err)
	}
	if dg := b.DeleteGroups(&kmsg.DeleteGroupsRequest{Groups: []string{g}}); dg.Groups[0].ErrorCode != kerr.NonEmptyGroup.Code {
		t.Fatalf("deleted a group with in-process members: %+v", dg)
	}
	c.Close()

	// The Kafka side sees the in-process commits.
	if got := fetchCommitted(b, g, "t", 0, 1); got[0] != 10 || got[1] != 10 {
		t.Fatalf("committed after the in-process consumer: %v", got)
	}
	wantCode(t, "kafka join after the in-process member left",
		b.JoinGroup(ctx, "c", "/h", joinReq(g, "", 10*time.Second, time.Minute)).ErrorCode, kerr.MemberIDRequired)
}

// TestWireGroupCloseWakesWaiters: a JoinGroup waiting for a rebalance
// returns when the broker closes, and one whose ctx ends returns too.
func TestWireGroupCloseWakesWaiters(t *testing.T) {
	b, err := Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	const g = "closing"
	a, _, _ := stableGroup(t, b, g, 30*time.Second, time.Minute)

	ctx, cancel := context.WithCancel(context.Background())
	ch := make(chan *kmsg.JoinGroupResponse, 1)
	third := memberID(t, b, g)
	go func() { ch <- b.JoinGroup(ctx, "c", "/h", joinReq(g, third, 30*time.Second, time.Minute)) }()
	notYet(t, ch, "join")
	cancel()
	wantCode(t, "join after its ctx ended", recv(t, ch, "join with cancelled ctx").ErrorCode, kerr.CoordinatorNotAvailable)

	j := goJoin(b, joinReq(g, a, 30*time.Second, time.Minute))
	notYet(t, j, "join")
	if err := b.Close(); err != nil {
		t.Fatal(err)
	}
	wantCode(t, "join after close", recv(t, j, "join at close").ErrorCode, kerr.CoordinatorNotAvailable)
	wantCode(t, "heartbeat after close", heartbeat(b, g, a, 2), kerr.CoordinatorNotAvailable)
}

// TestWireGroupInstanceIDReplaces: a member joining with the
// group.instance.id of an existing member replaces it at once.
func TestWireGroupInstanceIDReplaces(t *testing.T) {
	b := openTest(t, t.TempDir())
	const g = "static"
	join := func() *kmsg.JoinGroupResponse {
		req := joinReq(g, "", 30*time.Second, time.Minute)
		id := "host-1"
		req.InstanceID = &id
		return recv(t, goJoin(b, req), "static join")
	}
	first := join()
	wantCode(t, "first static join", first.ErrorCode, nil)
	recv(t, goSync(b, syncReq(g, first.MemberID, first.Generation, nil)), "sync")
	second := join()
	if second.ErrorCode != 0 || second.MemberID == first.MemberID || second.Generation != first.Generation+1 || len(second.Members) != 1 {
		t.Fatalf("replacing join %+v", second)
	}
	if m := second.Members[0]; m.InstanceID == nil || *m.InstanceID != "host-1" {
		t.Fatalf("member list %+v", second.Members)
	}
	wantCode(t, "heartbeat of the replaced member", heartbeat(b, g, first.MemberID, first.Generation), kerr.UnknownMemberID)
}

// TestCollectorGroupNotUTF8: Kafka lets a client name its group with any
// bytes (`kcat -G $'bad\xffgroup'`), and the broker keeps its committed
// offsets. A label value that is not UTF-8 makes client_golang refuse the
// metric: weir's whole /metrics answered HTTP 500 (Prometheus showing weir
// down) for as long as the group's offsets were kept, restarts included.
// The group's series are exported with the bad bytes as U+FFFD instead.
func TestCollectorGroupNotUTF8(t *testing.T) {
	b := openTest(t, t.TempDir())
	if err := b.CreateTopic(ctx, "t", broker.TopicConfig{Partitions: 1}); err != nil {
		t.Fatal(err)
	}
	if err := b.ProducePartition(ctx, "t", 0, []broker.Record{{Value: []byte("a")}, {Value: []byte("b")}}); err != nil {
		t.Fatal(err)
	}
	const g = "bad\xffgroup"
	a := memberID(t, b, g)
	ra := recv(t, goJoin(b, joinReq(g, a, 10*time.Second, time.Minute)), "join")
	wantCode(t, "join", ra.ErrorCode, nil)
	recv(t, goSync(b, syncReq(g, a, ra.Generation, map[string]string{a: "A"})), "sync")
	wantCode(t, "commit", commitCode(t, b.OffsetCommit(commitReq(g, a, ra.Generation, "t", map[int32]int64{0: 1}))), nil)

	reg := prometheus.NewPedanticRegistry()
	reg.MustRegister(b.Collector())
	exp := `# HELP weir_consumer_lag Records between a group's committed offset (or, for a partition it consumes without one, the log start) and the log end.
# TYPE weir_consumer_lag gauge
weir_consumer_lag{group="bad` + "\uFFFD" + `group",partition="0",topic="t"} 1
# HELP weir_consumer_group_members Members of a consumer group, in-process and Kafka clients.
# TYPE weir_consumer_group_members gauge
weir_consumer_group_members{group="bad` + "\uFFFD" + `group"} 1
`
	if err := testutil.GatherAndCompare(reg, strings.NewReader(exp), "weir_consumer_lag", "weir_consumer_group_members"); err != nil {
		t.Fatal(err)
	}
}

// TestWireGroupReplacedStaticMemberIsFenced: the member a group.instance.id
// was taken from is told FENCED_INSTANCE_ID when it comes back with that
// instance ID, as Kafka does, and not UNKNOWN_MEMBER_ID: on that answer
// librdkafka and franz-go join again with the instance ID, which replaced
// the other holder, which joined again in turn, for ever. Two consumers
// started with the same group.instance.id by mistake took the group from
// each other every few seconds, each re-reading from the last commit,
// instead of the older one stopping with an error.
func TestWireGroupReplacedStaticMemberIsFenced(t *testing.T) {
	b := openTest(t, t.TempDir())
	const g = "static"
	id := "host-1"
	join := func(member string) *kmsg.JoinGroupResponse {
		req := joinReq(g, member, 30*time.Second, time.Minute)
		req.InstanceID = &id
		return recv(t, goJoin(b, req), "static join")
	}
	first := join("")
	wantCode(t, "first static join", first.ErrorCode, nil)
	recv(t, goSync(b, syncReq(g, first.MemberID, first.Generation, nil)), "sync")
	second := join("")
	wantCode(t, "replacing join", second.ErrorCode, nil)
	recv(t, goSync(b, syncReq(g, second.MemberID, second.Generation, nil)), "sync of the new member")

	hb := kmsg.NewPtrHeartbeatRequest()
	hb.Version = 4
	hb.Group, hb.MemberID, hb.Generation, hb.InstanceID = g, first.MemberID, first.Generation, &id
	wantCode(t, "heartbeat of the replaced member", b.Heartbeat(hb).ErrorCode, kerr.FencedInstanceID)

	sr := syncReq(g, first.MemberID, first.Generation, nil)
	sr.InstanceID = &id
	wantCode(t, "sync of the replaced member", recv(t, goSync(b, sr), "sync").ErrorCode, kerr.FencedInstanceID)

	cr := commitReq(g, first.MemberID, first.Generation, "t", map[int32]int64{0: 1})
	cr.InstanceID = &id
	if code := commitCode(t, b.OffsetCommit(cr)); code != kerr.FencedInstanceID.Code {
		t.Fatalf("commit of the replaced member: %v, want FENCED_INSTANCE_ID", kerr.ErrorForCode(code))
	}

	wantCode(t, "rejoin of the replaced member with its ID", join(first.MemberID).ErrorCode, kerr.FencedInstanceID)

	lr := kmsg.NewPtrLeaveGroupRequest()
	lr.Version = 5
	lr.Group = g
	lr.Members = []kmsg.LeaveGroupRequestMember{{MemberID: first.MemberID, InstanceID: &id}}
	if resp := b.LeaveGroup(lr); len(resp.Members) != 1 || resp.Members[0].ErrorCode != kerr.FencedInstanceID.Code {
		t.Fatalf("leave of the replaced member: %+v, want FENCED_INSTANCE_ID", resp.Members)
	}

	// The member holding the instance ID is not disturbed.
	hb.MemberID, hb.Generation = second.MemberID, second.Generation
	wantCode(t, "heartbeat of the current member", b.Heartbeat(hb).ErrorCode, nil)
}
