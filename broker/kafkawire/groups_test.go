package kafkawire

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"net"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/weirnet/weir/broker"
	"github.com/weirnet/weir/broker/embedded"
)

// The embedded broker is what the listener serves in weir: a Log and a
// group coordinator.
var (
	_ Log    = (*embedded.Broker)(nil)
	_ Groups = (*embedded.Broker)(nil)
)

// startEmbedded serves a real embedded broker (not the fake: group
// coordination lives in it) until the test ends.
func startEmbedded(t *testing.T) (*embedded.Broker, string) {
	t.Helper()
	b, err := embedded.Open(t.TempDir(), embedded.WithLogger(testLogger(t)))
	if err != nil {
		t.Fatal(err)
	}
	_, addr := startServer(t, b)
	// Registered after startServer's cleanup, so it runs first: the
	// listener is stopped before the log closes, as in weir.
	t.Cleanup(func() { b.Close() })
	return b, addr
}

// groupMember is a franz-go group consumer that records its assignment.
type groupMember struct {
	cl *kgo.Client

	mu       sync.Mutex
	assigned map[int32]bool
}

func newGroupMember(t *testing.T, addr, group, topic string, extra ...kgo.Opt) *groupMember {
	t.Helper()
	m := &groupMember{assigned: map[int32]bool{}}
	track := func(add bool) func(context.Context, *kgo.Client, map[string][]int32) {
		return func(_ context.Context, _ *kgo.Client, tps map[string][]int32) {
			m.mu.Lock()
			defer m.mu.Unlock()
			for _, p := range tps[topic] {
				if add {
					m.assigned[p] = true
				} else {
					delete(m.assigned, p)
				}
			}
		}
	}
	opts := append([]kgo.Opt{
		kgo.ConsumerGroup(group),
		kgo.ConsumeTopics(topic),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()),
		kgo.DisableAutoCommit(),
		// Members notice a rebalance through their heartbeat: keep the
		// test fast.
		kgo.HeartbeatInterval(100 * time.Millisecond),
		kgo.OnPartitionsAssigned(track(true)),
		kgo.OnPartitionsRevoked(track(false)),
		kgo.OnPartitionsLost(track(false)),
	}, extra...)
	m.cl = newClient(t, addr, opts...)
	return m
}

func (m *groupMember) partitions() []int32 {
	m.mu.Lock()
	defer m.mu.Unlock()
	return slices.Sorted(maps.Keys(m.assigned))
}

// waitAssigned polls until each member owns want[i] partitions.
func waitAssigned(t *testing.T, want []int, members ...*groupMember) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		ok := true
		var got [][]int32
		for i, m := range members {
			ps := m.partitions()
			got = append(got, ps)
			ok = ok && len(ps) == want[i]
		}
		if ok {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("assignments %v, want sizes %v", got, want)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// consumeN polls m until it has n records and returns them by value.
func consumeN(t *testing.T, ctx context.Context, m *groupMember, n int) []*kgo.Record {
	t.Helper()
	var out []*kgo.Record
	for len(out) < n {
		fs := m.cl.PollFetches(ctx)
		if ctx.Err() != nil {
			t.Fatalf("consumed %d of %d records: %v", len(out), n, ctx.Err())
		}
		fs.EachError(func(topic string, p int32, err error) { t.Fatalf("fetch %s/%d: %v", topic, p, err) })
		out = append(out, fs.Records()...)
	}
	if len(out) != n {
		t.Fatalf("consumed %d records, want %d", len(out), n)
	}
	return out
}

func produceN(t *testing.T, ctx context.Context, b *embedded.Broker, topic string, from, n int) {
	t.Helper()
	recs := make([]broker.Record, n)
	for i := range recs {
		recs[i] = broker.Record{Key: fmt.Appendf(nil, "dev-%d", (from+i)%50), Value: fmt.Appendf(nil, "v%d", from+i)}
	}
	if err := b.Produce(ctx, topic, recs); err != nil {
		t.Fatal(err)
	}
}

// TestKgoConsumerGroup runs franz-go group consumers (cooperative-sticky,
// its default) against the embedded broker: two members split six
// partitions, one leaves and the other takes them all, and a member of the
// group started after everyone committed and left resumes at the commits.
func TestKgoConsumerGroup(t *testing.T) {
	b, addr := startEmbedded(t)
	ctx, cancel := context.WithTimeout(context.Background(), 45*time.Second)
	defer cancel()
	if err := b.CreateTopic(ctx, "events", broker.TopicConfig{Partitions: 6}); err != nil {
		t.Fatal(err)
	}
	const group = "workers"

	m1 := newGroupMember(t, addr, group, "events")
	waitAssigned(t, []int{6}, m1)
	m2 := newGroupMember(t, addr, group, "events")
	waitAssigned(t, []int{3, 3}, m1, m2)
	if p1, p2 := m1.partitions(), m2.partitions(); slices.ContainsFunc(p1, func(p int32) bool { return slices.Contains(p2, p) }) {
		t.Fatalf("both members own a partition: %v %v", p1, p2)
	}

	produceN(t, ctx, b, "events", 0, 600)
	// Each member reads exactly its partitions' records.
	counts := map[*groupMember]int{}
	for _, m := range []*groupMember{m1, m2} {
		for _, p := range m.partitions() {
			infos, _ := b.DescribeTopics(ctx, "events")
			counts[m] += int(infos[0].Partitions[p].HighWatermark)
		}
	}
	var wg sync.WaitGroup
	for _, m := range []*groupMember{m1, m2} {
		wg.Go(func() {
			recs := consumeN(t, ctx, m, counts[m])
			own := m.partitions()
			for _, r := range recs {
				if !slices.Contains(own, r.Partition) {
					t.Errorf("record of partition %d delivered to a member owning %v", r.Partition, own)
					return
				}
			}
			if err := m.cl.CommitUncommittedOffsets(ctx); err != nil {
				t.Errorf("commit: %v", err)
			}
		})
	}
	wg.Wait()
	if t.Failed() {
		return
	}

	adm := kadm.NewClient(newClient(t, addr))
	described, err := adm.DescribeGroups(ctx, group)
	if err != nil {
		t.Fatal(err)
	}
	d := described[group]
	if d.State != "Stable" || d.Protocol != "cooperative-sticky" || len(d.Members) != 2 || len(d.AssignedPartitions()["events"]) != 6 {
		t.Fatalf("described group %+v", d)
	}

	// m2 leaves (Close sends LeaveGroup): m1 takes over its partitions.
	m2.cl.Close()
	waitAssigned(t, []int{6}, m1)
	produceN(t, ctx, b, "events", 600, 60)
	consumeN(t, ctx, m1, 60)
	if err := m1.cl.CommitUncommittedOffsets(ctx); err != nil {
		t.Fatal(err)
	}
	m1.cl.Close()

	// The offsets are the log's own: in-process consumers see them.
	for p := range int32(6) {
		infos, _ := b.DescribeTopics(ctx, "events")
		hwm := infos[0].Partitions[p].HighWatermark
		if off, ok := b.Committed(group, "events", p); !ok || off != hwm {
			t.Errorf("partition %d: committed %d (%v), want the end %d", p, off, ok, hwm)
		}
	}

	// A new member resumes from the commits: it gets only what came after.
	produceN(t, ctx, b, "events", 660, 30)
	m3 := newGroupMember(t, addr, group, "events")
	for _, r := range consumeN(t, ctx, m3, 30) {
		var n int
		fmt.Sscanf(string(r.Value), "v%d", &n)
		if n < 660 {
			t.Fatalf("rejoined member got old record %s (offset %d of partition %d)", r.Value, r.Offset, r.Partition)
		}
	}
	if err := m3.cl.CommitUncommittedOffsets(ctx); err != nil {
		t.Fatal(err)
	}
	lags, err := adm.Lag(ctx, group)
	if err != nil {
		t.Fatal(err)
	}
	l := lags[group]
	if l.Error() != nil || l.Lag.Total() != 0 || len(l.Members) != 1 {
		t.Fatalf("lag after consuming everything: %+v (total %d)", l, l.Lag.Total())
	}
	listed, err := adm.ListGroups(ctx)
	if err != nil || !slices.Contains(listed.Groups(), group) {
		t.Fatalf("list groups: %v %v", listed.Groups(), err)
	}
	if _, err := adm.DeleteGroup(ctx, group); !errors.Is(err, kerr.NonEmptyGroup) {
		t.Fatalf("deleting a group with a member: %v", err)
	}
	m3.cl.Close()
	if _, err := adm.DeleteGroup(ctx, group); err != nil {
		t.Fatalf("deleting the empty group: %v", err)
	}
	if _, ok := b.Committed(group, "events", 0); ok {
		t.Fatal("offsets survived the group's deletion")
	}
}

// TestGroupAPIsAdvertised: with the embedded broker the group APIs are
// advertised (and used by clients only in the versions offered); with a Log
// that has no coordinator they are not, and WithGroups(nil) turns them off.
func TestGroupAPIsAdvertised(t *testing.T) {
	_, addr := startEmbedded(t)
	versions := func(addr string) map[int16][2]int16 {
		rc := dialRaw(t, addr)
		req := kmsg.NewPtrApiVersionsRequest()
		req.Version = 3
		req.ClientSoftwareName, req.ClientSoftwareVersion = "raw", "1.0"
		out := map[int16][2]int16{}
		for _, k := range rc.do(req).(*kmsg.ApiVersionsResponse).ApiKeys {
			out[k.ApiKey] = [2]int16{k.MinVersion, k.MaxVersion}
		}
		return out
	}
	got := versions(addr)
	for key, want := range map[kmsg.Key][2]int16{
		kmsg.FindCoordinator: {0, 4}, kmsg.JoinGroup: {0, 9}, kmsg.SyncGroup: {0, 5},
		kmsg.Heartbeat: {0, 4}, kmsg.LeaveGroup: {0, 5}, kmsg.OffsetCommit: {0, 8},
		kmsg.OffsetFetch: {0, 8}, kmsg.ListGroups: {0, 5}, kmsg.DescribeGroups: {0, 5},
		kmsg.DeleteGroups: {0, 2}, kmsg.DescribeConfigs: {0, 4}, kmsg.DescribeCluster: {0, 2},
		kmsg.DescribeLogDirs: {0, 4},
	} {
		if got[key.Int16()] != want {
			t.Errorf("%s: advertised %v, want %v", kmsg.NameForKey(key.Int16()), got[key.Int16()], want)
		}
	}
	if _, ok := got[kmsg.ConsumerGroupHeartbeat.Int16()]; ok {
		t.Error("KIP-848 ConsumerGroupHeartbeat advertised")
	}
	_, fakeAddr := startServer(t, newFakeLog())
	if _, ok := versions(fakeAddr)[kmsg.JoinGroup.Int16()]; ok {
		t.Error("group APIs advertised for a Log without a coordinator")
	}
	b2, err := embedded.Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	_, offAddr := startServer(t, b2, WithGroups(nil))
	t.Cleanup(func() { b2.Close() })
	if _, ok := versions(offAddr)[kmsg.FindCoordinator.Int16()]; ok {
		t.Error("group APIs advertised despite WithGroups(nil)")
	}
}

// TestGroupWireVersions exercises the version-dependent wire behaviour:
// FindCoordinator single and batched, JoinGroup with and without the
// KIP-394 round trip, LeaveGroup by member (v0) and in a batch (v3+).
func TestGroupWireVersions(t *testing.T) {
	_, addr := startEmbedded(t)
	rc := dialRaw(t, addr)

	for v := int16(0); v <= 3; v++ {
		fc := kmsg.NewPtrFindCoordinatorRequest()
		fc.Version, fc.CoordinatorKey = v, "g"
		r := rc.do(fc).(*kmsg.FindCoordinatorResponse)
		if r.ErrorCode != 0 || r.NodeID != 0 || r.Port <= 0 || r.Host == "" {
			t.Fatalf("FindCoordinator v%d: %+v", v, r)
		}
	}
	fc := kmsg.NewPtrFindCoordinatorRequest()
	fc.Version, fc.CoordinatorKeys = 4, []string{"a", "b"}
	r := rc.do(fc).(*kmsg.FindCoordinatorResponse)
	if len(r.Coordinators) != 2 || r.Coordinators[1].Key != "b" || r.Coordinators[1].ErrorCode != 0 || r.Coordinators[1].Port <= 0 {
		t.Fatalf("FindCoordinator v4: %+v", r)
	}
	fc.CoordinatorType = 1 // transactions
	if r := rc.do(fc).(*kmsg.FindCoordinatorResponse); r.Coordinators[0].ErrorCode != kerr.CoordinatorNotAvailable.Code {
		t.Fatalf("transaction coordinator: %+v", r.Coordinators[0])
	}

	join := func(version int16, member string) *kmsg.JoinGroupResponse {
		req := kmsg.NewPtrJoinGroupRequest()
		req.Version, req.Group, req.MemberID, req.ProtocolType = version, "raw", member, "consumer"
		req.SessionTimeoutMillis, req.RebalanceTimeoutMillis = 10000, 10000
		req.Protocols = []kmsg.JoinGroupRequestProtocol{{Name: "range", Metadata: []byte{1, 2, 3}}}
		return rc.do(req).(*kmsg.JoinGroupResponse)
	}
	jr := join(9, "")
	if jr.ErrorCode != kerr.MemberIDRequired.Code || jr.MemberID == "" {
		t.Fatalf("JoinGroup v9 without an ID: %+v", jr)
	}
	if jr = join(9, jr.MemberID); jr.ErrorCode != 0 || jr.Generation != 1 || len(jr.Members) != 1 ||
		string(jr.Members[0].ProtocolMetadata) != "\x01\x02\x03" || *jr.Protocol != "range" {
		t.Fatalf("JoinGroup v9: %+v", jr)
	}
	lv := kmsg.NewPtrLeaveGroupRequest()
	lv.Version, lv.Group, lv.MemberID = 0, "raw", jr.MemberID
	if r := rc.do(lv).(*kmsg.LeaveGroupResponse); r.ErrorCode != 0 {
		t.Fatalf("LeaveGroup v0: %+v", r)
	}
	if r := rc.do(lv).(*kmsg.LeaveGroupResponse); r.ErrorCode != kerr.UnknownMemberID.Code {
		t.Fatalf("LeaveGroup v0 twice: %+v", r)
	}

	// v3 joins at once (no KIP-394) and describes the client.
	jr = join(3, "")
	if jr.ErrorCode != 0 || jr.MemberID == "" {
		t.Fatalf("JoinGroup v3: %+v", jr)
	}
	dg := kmsg.NewPtrDescribeGroupsRequest()
	dg.Version, dg.Groups = 5, []string{"raw"}
	d := rc.do(dg).(*kmsg.DescribeGroupsResponse).Groups[0]
	if len(d.Members) != 1 || d.Members[0].ClientID != "raw-test" || d.Members[0].ClientHost != "/127.0.0.1" {
		t.Fatalf("described %+v", d)
	}
	lv = kmsg.NewPtrLeaveGroupRequest()
	lv.Version, lv.Group = 5, "raw"
	lv.Members = []kmsg.LeaveGroupRequestMember{{MemberID: jr.MemberID}, {MemberID: "stranger"}}
	lr := rc.do(lv).(*kmsg.LeaveGroupResponse)
	if lr.ErrorCode != 0 || len(lr.Members) != 2 || lr.Members[0].ErrorCode != 0 || lr.Members[1].ErrorCode != kerr.UnknownMemberID.Code {
		t.Fatalf("LeaveGroup v5: %+v", lr)
	}
}

// killSwitch dials for a client until killed; then it cuts the client's
// connections and refuses new ones, so the client vanishes without leaving
// its group, as a crashed process does.
type killSwitch struct {
	mu    sync.Mutex
	dead  bool
	conns []net.Conn
}

func (k *killSwitch) dial(ctx context.Context, network, host string) (net.Conn, error) {
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.dead {
		return nil, errors.New("killed")
	}
	var d net.Dialer
	c, err := d.DialContext(ctx, network, host)
	if err == nil {
		k.conns = append(k.conns, c)
	}
	return c, err
}

func (k *killSwitch) kill() {
	k.mu.Lock()
	defer k.mu.Unlock()
	k.dead = true
	for _, c := range k.conns {
		c.Close()
	}
}

// TestKgoGroupMemberDies: a member that stops without leaving is removed
// when its session times out, and the other member takes its partitions.
func TestKgoGroupMemberDies(t *testing.T) {
	b, addr := startEmbedded(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := b.CreateTopic(ctx, "events", broker.TopicConfig{Partitions: 6}); err != nil {
		t.Fatal(err)
	}
	const session = 6 * time.Second // Kafka's (and weir's) smallest
	var ks killSwitch
	m1 := newGroupMember(t, addr, "survivors", "events", kgo.SessionTimeout(session))
	waitAssigned(t, []int{6}, m1)
	m2 := newGroupMember(t, addr, "survivors", "events", kgo.SessionTimeout(session), kgo.Dialer(ks.dial))
	waitAssigned(t, []int{3, 3}, m1, m2)

	died := time.Now()
	ks.kill()
	waitAssigned(t, []int{6}, m1)
	if took := time.Since(died); took < session-time.Second {
		t.Fatalf("partitions moved after %v, before the %v session timeout", took, session)
	}
	produceN(t, ctx, b, "events", 0, 60)
	consumeN(t, ctx, m1, 60)
}

// TestEmbeddedLogDir: DescribeLogDirs names the embedded broker's data
// directory, as an operator looking for the bytes expects, not a
// placeholder.
func TestEmbeddedLogDir(t *testing.T) {
	dir := t.TempDir()
	b, err := embedded.Open(dir, embedded.WithLogger(testLogger(t)))
	if err != nil {
		t.Fatal(err)
	}
	_, addr := startServer(t, b)
	t.Cleanup(func() { b.Close() })
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	dirs, err := kadm.NewClient(newClient(t, addr)).DescribeAllLogDirs(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	dirs.Each(func(d kadm.DescribedLogDir) { got = append(got, d.Dir) })
	if len(got) != 1 || got[0] != dir {
		t.Fatalf("log dirs %q, want [%q]", got, dir)
	}
}
