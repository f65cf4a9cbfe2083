package embedded

import (
	"context"
	"errors"
	"fmt"
	"net"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/weirnet/weir/broker"
	"github.com/weirnet/weir/broker/kafkawire"
)

// serveWire serves b on weir's Kafka listener until the test ends and
// returns a kadm client of it.
func serveWire(t *testing.T, b *Broker) *kadm.Client {
	t.Helper()
	return kadm.NewClient(serveWireClient(t, b))
}

// serveWireClient is serveWire's client, for requests kadm does not make.
func serveWireClient(t *testing.T, b *Broker) *kgo.Client {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := kafkawire.New(b)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ctx, ln) }()
	cl, err := kgo.NewClient(kgo.SeedBrokers(ln.Addr().String()), kgo.RetryTimeout(5*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cl.Close()
		cancel()
		<-done
	})
	return cl
}

// TestOffsetGroupsBounded: Kafka clients need no credentials, and a
// simple OffsetCommit (generation -1, no member) stores offsets under any
// group name, kept on disk and exported per group for the offsets
// retention (7 days). A commit that would add a group past the bound is
// refused POLICY_VIOLATION, which kadm reports as such, and counted; a
// group that has offsets commits again, weir's in-process groups (enrich,
// the sinks) are never refused, and the bound holds after a restart.
func TestOffsetGroupsBounded(t *testing.T) {
	dir := t.TempDir()
	b := openTest(t, dir)
	b.wire.maxOffsetGroups = 5
	ctx := context.Background()
	if err := b.CreateTopic(ctx, "t", broker.TopicConfig{Partitions: 1}); err != nil {
		t.Fatal(err)
	}
	if err := b.ProducePartition(ctx, "t", 0, makeRecords(10, 0)); err != nil {
		t.Fatal(err)
	}
	adm := serveWire(t, b)
	commit := func(group string, off int64) error {
		t.Helper()
		var offs kadm.Offsets
		offs.AddOffset("t", 0, off, -1)
		resp, err := adm.CommitOffsets(ctx, group, offs)
		if err != nil {
			return err
		}
		return resp.Error()
	}
	for i := range 5 {
		if err := commit(fmt.Sprintf("g%d", i), 1); err != nil {
			t.Fatalf("commit of group %d: %v", i, err)
		}
	}
	err := commit("g5", 1)
	if !errors.Is(err, kerr.PolicyViolation) {
		t.Fatalf("commit of a 6th group: %v, want POLICY_VIOLATION", err)
	}
	t.Logf("kadm says: %v", err)
	if _, ok := b.Committed("g5", "t", 0); ok {
		t.Fatal("the refused group's offset was stored")
	}
	// A group with offsets commits again.
	if err := commit("g0", 7); err != nil {
		t.Fatalf("commit of a group with offsets: %v", err)
	}
	// A member's commit is bounded too (join, commit, leave, and again).
	m := memberID(t, b, "joined")
	rj := recv(t, goJoin(b, joinReq("joined", m, time.Minute, time.Minute)), "join")
	wantCode(t, "join", rj.ErrorCode, nil)
	recv(t, goSync(b, syncReq("joined", m, rj.Generation, map[string]string{m: "A"})), "sync")
	wantCode(t, "member's commit", commitCode(t, b.OffsetCommit(commitReq("joined", m, rj.Generation, "t", map[int32]int64{0: 3}))), kerr.PolicyViolation)

	// weir's own groups, in-process, are never refused.
	for _, g := range []string{"enrich", "sink-prom"} {
		c, err := b.Consume(ctx, g, []string{"t"})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := c.Poll(ctx); err != nil {
			t.Fatal(err)
		}
		if err := c.(broker.OffsetCommitter).CommitOffsets(ctx, map[broker.TopicPartition]int64{{Topic: "t", Partition: 0}: 5}); err != nil {
			t.Fatalf("%s commit past the bound: %v", g, err)
		}
		c.Close()
		if off, ok := b.Committed(g, "t", 0); !ok || off != 5 {
			t.Fatalf("%s committed %d %v", g, off, ok)
		}
	}
	if got := b.wire.refusedCommits.Load(); got != 2 {
		t.Fatalf("%d commits counted refused, want 2", got)
	}

	// Deleting a group makes room.
	if _, err := adm.DeleteGroup(ctx, "g1"); err != nil {
		t.Fatal(err)
	}
	if err := commit("g5", 1); !errors.Is(err, kerr.PolicyViolation) {
		// 4 Kafka clients' groups and weir's 2: still at the bound of 5.
		t.Fatalf("commit after deleting one group: %v, want POLICY_VIOLATION (weir's groups count)", err)
	}
	for _, g := range []string{"g2", "enrich", "sink-prom"} {
		if _, err := adm.DeleteGroup(ctx, g); err != nil {
			t.Fatal(err)
		}
	}
	if err := commit("g5", 1); err != nil {
		t.Fatalf("commit after deleting groups: %v", err)
	}

	// The groups are counted from the file after a restart.
	b.Close()
	b = openTest(t, dir)
	b.wire.maxOffsetGroups = 3
	wantCode(t, "new group after a restart", commitCode(t, b.OffsetCommit(commitReq("g6", "", -1, "t", map[int32]int64{0: 1}))), kerr.PolicyViolation)
	wantCode(t, "old group after a restart", commitCode(t, b.OffsetCommit(commitReq("g5", "", -1, "t", map[int32]int64{0: 2}))), nil)
}

// TestOffsetGroupsRefusedConcurrently: Kafka clients' OffsetCommits run
// on their connections' goroutines, so commits refused at the bound are
// counted and logged from several at once (go test -race).
func TestOffsetGroupsRefusedConcurrently(t *testing.T) {
	b := openTest(t, t.TempDir())
	b.wire.maxOffsetGroups = 1
	if err := b.CreateTopic(context.Background(), "t", broker.TopicConfig{Partitions: 1}); err != nil {
		t.Fatal(err)
	}
	wantCode(t, "first group", commitCode(t, b.OffsetCommit(commitReq("g0", "", -1, "t", map[int32]int64{0: 0}))), nil)
	var wg sync.WaitGroup
	codes := make([]int16, 8)
	for i := range codes {
		wg.Go(func() {
			codes[i] = b.OffsetCommit(commitReq(fmt.Sprintf("g%d", i+1), "", -1, "t", map[int32]int64{0: 0})).Topics[0].Partitions[0].ErrorCode
		})
	}
	wg.Wait()
	for i, code := range codes {
		wantCode(t, fmt.Sprintf("group %d", i+1), code, kerr.PolicyViolation)
	}
	if got := b.wire.refusedCommits.Load(); got != int64(len(codes)) {
		t.Errorf("%d commits counted refused, want %d", got, len(codes))
	}
}
