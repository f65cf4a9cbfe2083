package shard

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/weirnet/weir/broker"
	"github.com/weirnet/weir/broker/embedded"
	"github.com/weirnet/weir/broker/kafkacluster"
)

func names(n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = fmt.Sprintf("sim%d", i)
	}
	return out
}

// waitFor polls ok until it holds or d passes.
func waitFor(t *testing.T, d time.Duration, what string, ok func() bool) {
	t.Helper()
	deadline := time.Now().Add(d)
	for !ok() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %v waiting for %s", d, what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// owners returns, per name, how many of members own it.
func owners(members []*Member, targets []string) map[string]int {
	out := map[string]int{}
	for _, n := range targets {
		for _, m := range members {
			if m.Owns(n) {
				out[n]++
			}
		}
	}
	return out
}

func exactlyOnce(members []*Member, targets []string) bool {
	o := owners(members, targets)
	for _, n := range targets {
		if o[n] != 1 {
			return false
		}
	}
	return true
}

type running struct {
	m    *Member
	stop context.CancelFunc
	done chan struct{}
}

func start(t *testing.T, cfg Config) *running {
	t.Helper()
	m, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	r := &running{m: m, stop: cancel, done: make(chan struct{})}
	go func() {
		defer close(r.done)
		if err := m.Run(ctx); err != nil {
			t.Error(err)
		}
	}()
	t.Cleanup(func() { cancel(); <-r.done })
	return r
}

func (r *running) halt() { r.stop(); <-r.done }

func TestSpread(t *testing.T) {
	perPartition := make([]int, DefaultPartitions)
	for _, n := range names(3000) {
		perPartition[broker.PartitionForKey([]byte(n), DefaultPartitions)]++
	}
	// 50 per partition on average; murmur2 keeps every one near it.
	if lo, hi := slices.Min(perPartition), slices.Max(perPartition); lo < 25 || hi > 80 {
		t.Fatalf("3000 names over 60 partitions: %d to %d per partition", lo, hi)
	}
}

// TestEmbeddedMembersShare: three members of one group on the embedded log
// (several in-process members share a group's partitions there): each
// target is owned by exactly one, all three get some, and when one leaves
// the two others own everything.
func TestEmbeddedMembersShare(t *testing.T) {
	b, err := embedded.Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	targets := names(300)
	var rs []*running
	for i := range 3 {
		rs = append(rs, start(t, Config{Broker: b, Group: "g", MemberID: fmt.Sprint("m", i), CheckInterval: 10 * time.Millisecond}))
	}
	members := []*Member{rs[0].m, rs[1].m, rs[2].m}
	waitFor(t, 10*time.Second, "three members owning every target once", func() bool {
		for _, m := range members {
			if owned, _ := m.Partitions(); len(owned) != 20 {
				return false
			}
		}
		return exactlyOnce(members, targets)
	})
	for i, m := range members {
		n := 0
		for _, name := range targets {
			if m.Owns(name) {
				n++
			}
		}
		if n < 60 || n > 140 {
			t.Errorf("member %d owns %d of 300 targets", i, n)
		}
	}
	changed := members[0].Changed()
	rs[2].halt()
	select {
	case <-changed:
	case <-time.After(10 * time.Second):
		t.Fatal("no change signalled after a member left")
	}
	waitFor(t, 10*time.Second, "two members owning every target once", func() bool {
		return exactlyOnce(members[:2], targets)
	})
}

// TestKafkaTakeoverAfterSessionTimeout: on a Kafka cluster (kfake) a member
// that dies without leaving (a static member closing, like a killed
// process, sends no LeaveGroup) has its partitions taken over by the
// others after the session timeout, and not before.
func TestKafkaTakeoverAfterSessionTimeout(t *testing.T) {
	cluster, err := kfake.NewCluster(kfake.NumBrokers(3), kfake.GroupMinSessionTimeout(100*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	defer cluster.Close()
	b, err := kafkacluster.New(cluster.ListenAddrs())
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	const session = 2 * time.Second
	targets := names(300)
	cfg := Config{Broker: b, Group: "weir-collect-test", SessionTimeout: session, CheckInterval: 20 * time.Millisecond}
	a, c := start(t, cfg), start(t, cfg)
	members := []*Member{a.m, c.m}
	waitFor(t, 20*time.Second, "two members owning every target", func() bool {
		pa, _ := a.m.Partitions()
		pc, _ := c.m.Partitions()
		return len(pa) == 30 && len(pc) == 30 && exactlyOnce(members, targets)
	})

	// A third process joins as a static member and takes its share...
	got := make(chan struct{}, 1)
	doomed, err := kgo.NewClient(kgo.SeedBrokers(cluster.ListenAddrs()...), kgo.ConsumerGroup(cfg.Group),
		kgo.ConsumeTopics(DefaultTopic), kgo.InstanceID("doomed"), kgo.SessionTimeout(session),
		kgo.HeartbeatInterval(300*time.Millisecond), kgo.RebalanceTimeout(session),
		kgo.OnPartitionsAssigned(func(_ context.Context, _ *kgo.Client, m map[string][]int32) {
			if len(m[DefaultTopic]) > 0 {
				select {
				case got <- struct{}{}:
				default:
				}
			}
		}))
	if err != nil {
		t.Fatal(err)
	}
	select {
	case <-got:
	case <-time.After(20 * time.Second):
		t.Fatal("the third member got no partitions")
	}
	waitFor(t, 5*time.Second, "the two others to own 40 partitions", func() bool {
		pa, _ := a.m.Partitions()
		pc, _ := c.m.Partitions()
		return len(pa)+len(pc) == 40
	})
	o := owners(members, targets)
	for _, n := range targets {
		if o[n] > 1 {
			t.Fatalf("%s owned twice", n)
		}
	}
	// The death is of a member of a settled group: kfake (unlike Kafka)
	// expires a member's session while its JoinGroup waits, so a death
	// during the cooperative rebalance's second round could drop a
	// survivor too, which then waits out its join request (about 12 s)
	// before joining again.
	adm := kadm.NewClient(doomed)
	waitFor(t, 10*time.Second, "the group of three to settle", func() bool {
		gs, err := adm.DescribeGroups(context.Background(), cfg.Group)
		if err != nil {
			return false
		}
		g := gs[cfg.Group]
		if g.Err != nil || g.State != "Stable" || len(g.Members) != 3 {
			return false
		}
		n := 0
		for _, m := range g.Members {
			if a, ok := m.Assigned.AsConsumer(); ok {
				for _, tp := range a.Topics {
					n += len(tp.Partitions)
				}
			}
		}
		return n == DefaultPartitions
	})
	// ...and dies.
	doomed.Close()
	died := time.Now()
	waitFor(t, session+10*time.Second, "the survivors to own every target", func() bool { return exactlyOnce(members, targets) })
	took := time.Since(died)
	t.Logf("taken over %v after the death (session timeout %v)", took.Round(time.Millisecond), session)
	if took < session/2 {
		t.Errorf("taken over after %v, before the session timeout %v: did the member leave?", took, session)
	}
}

// fakeBroker is a cluster whose group assignment and reachability the test
// sets.
type fakeBroker struct {
	broker.Broker
	mu       sync.Mutex
	assigned []broker.TopicPartition
	down     bool
	describe int // DescribeTopics calls
}

func (f *fakeBroker) set(parts []int32, down bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.assigned = nil
	for _, p := range parts {
		f.assigned = append(f.assigned, broker.TopicPartition{Topic: DefaultTopic, Partition: p})
	}
	f.down = down
}

func (f *fakeBroker) DescribeTopics(ctx context.Context, names ...string) ([]broker.TopicInfo, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.describe++
	if f.down {
		return nil, errors.New("dial tcp: connection refused")
	}
	return []broker.TopicInfo{{Name: DefaultTopic, Partitions: make([]broker.PartitionInfo, 4)}}, nil
}

func (f *fakeBroker) describeCalls() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.describe
}

func (f *fakeBroker) Consume(ctx context.Context, group string, topics []string, opts ...broker.ConsumerOption) (broker.Consumer, error) {
	return fakeConsumer{f}, nil
}

type fakeConsumer struct{ f *fakeBroker }

func (c fakeConsumer) Poll(ctx context.Context) ([]broker.Record, error) {
	<-ctx.Done()
	return nil, ctx.Err()
}
func (c fakeConsumer) Commit(context.Context) error { return nil }
func (c fakeConsumer) Close() error                 { return nil }
func (c fakeConsumer) Assigned() []broker.TopicPartition {
	c.f.mu.Lock()
	defer c.f.mu.Unlock()
	return slices.Clone(c.f.assigned)
}

// TestLostMembershipKeepsLastAssignment: when the assignment goes empty
// while the cluster does not answer, the process keeps collecting what it
// had (neither everything nor nothing); once the cluster answers and still
// assigns nothing for the grace period, it gives the targets up.
func TestLostMembershipKeepsLastAssignment(t *testing.T) {
	f := &fakeBroker{}
	reg := prometheus.NewRegistry()
	r := start(t, Config{Broker: f, Group: "g", Grace: 300 * time.Millisecond, CheckInterval: 5 * time.Millisecond, Registerer: reg})
	m := r.m
	targets := names(200)
	m.Track("snmp", targets)
	ownedBy := func(parts ...int32) []string {
		var out []string
		for _, n := range targets {
			if slices.Contains(parts, broker.PartitionForKey([]byte(n), 4)) {
				out = append(out, n)
			}
		}
		return out
	}
	same := func(want []string) bool {
		var got []string
		for _, n := range targets {
			if m.Owns(n) {
				got = append(got, n)
			}
		}
		return slices.Equal(got, want)
	}
	if m.Owns("sim1") {
		t.Fatal("owns a target before any assignment")
	}
	f.set([]int32{0, 2}, false)
	waitFor(t, 5*time.Second, "partitions 0 and 2", func() bool { return same(ownedBy(0, 2)) })
	if got := testutil.ToFloat64(m.m.targets.WithLabelValues("snmp")); int(got) != len(ownedBy(0, 2)) {
		t.Fatalf("weir_shard_owned_targets %v, want %d", got, len(ownedBy(0, 2)))
	}
	if got := testutil.ToFloat64(m.m.member); got != 1 {
		t.Fatalf("weir_shard_member %v", got)
	}

	// The cluster goes away and the membership with it.
	f.set(nil, true)
	time.Sleep(time.Second) // > grace
	if !same(ownedBy(0, 2)) {
		t.Fatal("the last assignment was not kept while the cluster was away")
	}
	if got := testutil.ToFloat64(m.m.member); got != 0 {
		t.Fatalf("weir_shard_member %v while detached", got)
	}
	// It comes back and assigns something else.
	f.set([]int32{1}, false)
	waitFor(t, 5*time.Second, "partition 1", func() bool { return same(ownedBy(1)) })

	// It answers but assigns nothing: given up after the grace period.
	changed := m.Changed()
	f.set(nil, false)
	time.Sleep(100 * time.Millisecond)
	if !same(ownedBy(1)) {
		t.Fatal("given up before the grace period")
	}
	select {
	case <-changed:
	case <-time.After(5 * time.Second):
		t.Fatal("no change signalled")
	}
	if !same(nil) {
		t.Fatal("still owns targets")
	}
}

func TestOwnsDoesNotAllocate(t *testing.T) {
	m, err := New(Config{Broker: &fakeBroker{}, Group: "g"})
	if err != nil {
		t.Fatal(err)
	}
	m.publish("g", 60, make([]bool, 60), 1, "test")
	name := "edge-router-17.ams1"
	if n := testing.AllocsPerRun(100, func() { m.Owns(name) }); n != 0 {
		t.Fatalf("Owns allocates %v times", n)
	}
}

func TestGroupName(t *testing.T) {
	a := GroupName("weir-collect", []string{"b", "a"})
	if a != GroupName("weir-collect", []string{"a", "b"}) {
		t.Fatal("order matters")
	}
	if a == GroupName("weir-collect", []string{"a", "b", "c"}) {
		t.Fatal("other targets, same group")
	}
	if len(a) != len("weir-collect-")+8 {
		t.Fatalf("group %q", a)
	}
}

// TestCoordinationTopicRetryLogThrottled: while the cluster does not
// answer, the coordination topic is asked again at each retry, but the
// warning is logged once per throttle.Every with how many times, not at
// every attempt (every 2 s for as long as the cluster is down).
func TestCoordinationTopicRetryLogThrottled(t *testing.T) {
	f := &fakeBroker{}
	f.set(nil, true)
	frozen := time.Unix(1_800_000_000, 0)
	logs := runUntil(t, f, "20 attempts to read the coordination topic", func() bool { return f.describeCalls() >= 20 },
		func(m *Member) { m.now = func() time.Time { return frozen } }) // no throttle interval passes
	if n := strings.Count(logs, "cannot read or create the coordination topic"); n != 1 {
		t.Errorf("logged %d times over %d attempts within one throttle interval, want once:\n%s", n, f.describeCalls(), logs)
	}
	if !strings.Contains(logs, "times=1") {
		t.Errorf("the first line does not say times=1:\n%s", logs)
	}
}
