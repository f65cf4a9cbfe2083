package webhook_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/weirnet/weir/broker"
	"github.com/weirnet/weir/broker/kafkacluster"
	"github.com/weirnet/weir/configs"
	"github.com/weirnet/weir/sinks"
	"github.com/weirnet/weir/sinks/internal/sinktest"
	"github.com/weirnet/weir/sinks/webhook"
	"github.com/weirnet/weir/telemetry"
)

// groupReceiver takes the events of the members of one sink group, each
// member posting to its own server, and notes per member and device the
// Counts taken in order. Devices named "stuck..." are refused (503) until
// release is closed.
type groupReceiver struct {
	release chan struct{}
	mu      sync.Mutex
	got     map[string]map[string][]int // member: device: Counts in the order taken
	refused map[string]int              // device: posts refused
}

// eventServer is a receiver that decodes each post as an event for
// handle (a body that is none gets 400), closed when the test ends.
func eventServer(t *testing.T, handle func(w http.ResponseWriter, e telemetry.Event)) *httptest.Server {
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var e telemetry.Event
		if err := json.NewDecoder(r.Body).Decode(&e); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		handle(w, e)
	}))
	t.Cleanup(hs.Close)
	return hs
}

func (g *groupReceiver) server(t *testing.T, member string) *httptest.Server {
	return eventServer(t, func(w http.ResponseWriter, e telemetry.Event) {
		g.mu.Lock()
		defer g.mu.Unlock()
		if strings.HasPrefix(e.Device, "stuck") {
			select {
			case <-g.release:
			default:
				g.refused[e.Device]++
				http.Error(w, "not now", http.StatusServiceUnavailable)
				return
			}
		}
		if g.got[member] == nil {
			g.got[member] = map[string][]int{}
		}
		g.got[member][e.Device] = append(g.got[member][e.Device], e.Count)
	})
}

// taken reports whether every device in devs had its record numbered
// count taken, by any member.
func (g *groupReceiver) taken(count int, devs ...string) bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	for _, d := range devs {
		found := false
		for _, byDev := range g.got {
			for _, c := range byDev[d] {
				found = found || c == count
			}
		}
		if !found {
			return false
		}
	}
	return true
}

// groupSpread reports whether group is stable with members members, each
// assigned at least one partition.
func groupSpread(adm *kadm.Client, group string, members int) bool {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	ds, err := adm.DescribeGroups(ctx, group)
	if err != nil {
		return false
	}
	g := ds[group]
	if g.State != "Stable" || len(g.Members) != members {
		return false
	}
	for _, m := range g.Members {
		c, ok := m.Assigned.AsConsumer()
		if !ok || len(c.Topics) == 0 || len(c.Topics[0].Partitions) == 0 {
			return false
		}
	}
	return true
}

// rebalanceGroup is the consumer group of the sink rebalanceRig starts.
var rebalanceGroup = sinks.Group("chat")

// rebalanceRig is a Kafka cluster (kfake) with a topic "events" of two
// partitions, each with its devices, and webhook sinks of one group
// (lanes) started as its members.
type rebalanceRig struct {
	t      *testing.T
	b      *kafkacluster.Broker
	adm    *kadm.Client
	devs   [2][]string
	counts map[string]int // records produced, per device
}

func newRebalanceRig(t *testing.T, devs [2][]string) *rebalanceRig {
	kf, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.SeedTopics(2, "events"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(kf.Close)
	b, err := kafkacluster.New(kf.ListenAddrs())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { b.Close() })
	cl, err := kgo.NewClient(kgo.SeedBrokers(kf.ListenAddrs()...))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(cl.Close)
	return &rebalanceRig{t: t, b: b, adm: kadm.NewClient(cl), devs: devs, counts: map[string]int{}}
}

// round produces one record of every device, each numbered in Count
// (1, 2, ... per device), to its partition.
func (r *rebalanceRig) round() {
	r.t.Helper()
	for p, ds := range r.devs {
		recs := make([]broker.Record, len(ds))
		for i, d := range ds {
			r.counts[d]++
			e := ev("interface_down", d, "Ethernet1", 0)
			e.Count = r.counts[d]
			v, err := json.Marshal(e)
			if err != nil {
				r.t.Fatal(err)
			}
			recs[i] = broker.Record{Key: []byte(d), Value: v, Headers: []broker.Header{
				{Key: telemetry.HeaderSource, Value: []byte("test")},
				{Key: telemetry.HeaderSchema, Value: []byte(telemetry.SchemaEvent)}}}
		}
		if err := r.b.ProducePartition(context.Background(), "events", int32(p), recs); err != nil {
			r.t.Fatal(err)
		}
	}
}

// start starts a member posting to url.
func (r *rebalanceRig) start(url string) *sinktest.Running {
	cfg := configs.Sink{Type: "webhook", Name: "chat", Topics: []string{"events"}, URL: url,
		Concurrency: 4, BatchSize: 16, FlushInterval: configs.Duration(10 * time.Millisecond),
		Retry: configs.SinkRetry{Initial: configs.Duration(time.Millisecond), Max: configs.Duration(5 * time.Millisecond)}}
	s, err := webhook.NewSink(cfg, sinks.Env{}, time.Now, time.Hour)
	if err != nil {
		r.t.Fatal(err)
	}
	return sinktest.Start(r.t, r.b, cfg, s)
}

// committed reports whether the group committed both partitions up to
// their ends.
func (r *rebalanceRig) committed() bool {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	ends, err := r.adm.ListEndOffsets(ctx, "events")
	if err != nil {
		return false
	}
	offs, err := r.adm.FetchOffsets(ctx, rebalanceGroup)
	if err != nil {
		return false
	}
	for p := range int32(2) {
		end, _ := ends.Lookup("events", p)
		o, ok := offs.Lookup("events", p)
		if !ok || o.At != end.Offset {
			return false
		}
	}
	return true
}

// TestGroupRebalanceWithAKeyHeld: two members of a webhook sink group
// (lanes) share the two partitions of a Kafka cluster's topic, each with
// a device ("stuck0" on partition 0, "stuck1" on 1) whose posts the
// receiver refuses. A member joining and then a member leaving (while it
// holds a refused key) move partitions: the other devices' records polled
// after each move are delivered while the refused keys still are, and
// once the receiver takes them every record has arrived, each device's
// in its order except what a member read again after a move. Draining
// the lanes at a rebalance, a member stopped delivering every key until
// the refused ones went through (with retry.max_attempts 0: never).
func TestGroupRebalanceWithAKeyHeld(t *testing.T) {
	r := newRebalanceRig(t, [2][]string{{"stuck0", "a0", "a1", "a2"}, {"stuck1", "b0", "b1", "b2"}})
	others := []string{"a0", "a1", "a2", "b0", "b1", "b2"}

	g := &groupReceiver{release: make(chan struct{}), got: map[string]map[string][]int{}, refused: map[string]int{}}
	start := func(member string) *sinktest.Running { return r.start(g.server(t, member).URL) }

	a := start("a")
	r.round()
	sinktest.Eventually(t, "round 1 taken by member a, the stuck devices refused", func() bool {
		g.mu.Lock()
		refused := g.refused["stuck0"] > 0 && g.refused["stuck1"] > 0
		g.mu.Unlock()
		return refused && g.taken(1, others...)
	})

	// Member b joins: the partitions are shared.
	start("b")
	sinktest.Eventually(t, "the group's two members each have a partition", func() bool { return groupSpread(r.adm, rebalanceGroup, 2) })
	r.round()
	sinktest.Eventually(t, "round 2 taken after b joined, the stuck devices still refused", func() bool { return g.taken(2, others...) })

	// Member a leaves, holding a refused key.
	if err := a.Stop(); err != nil {
		t.Fatal(err)
	}
	sinktest.Eventually(t, "member b has both partitions", func() bool { return groupSpread(r.adm, rebalanceGroup, 1) })
	r.round()
	sinktest.Eventually(t, "round 3 taken after a left, the stuck devices still refused", func() bool { return g.taken(3, others...) })

	close(g.release)
	all := append([]string{"stuck0", "stuck1"}, others...)
	sinktest.Eventually(t, "every record taken and committed", func() bool { return g.taken(3, all...) && r.committed() })

	g.mu.Lock()
	defer g.mu.Unlock()
	for _, d := range all {
		for c := 1; c <= r.counts[d]; c++ {
			found := false
			for _, byDev := range g.got {
				for _, n := range byDev[d] {
					found = found || n == c
				}
			}
			if !found {
				t.Errorf("%s: record %d never taken", d, c)
			}
		}
	}
	// Per member, a device's records come in order: each the one after
	// the last, or an earlier one (read again after a move) from which
	// the order goes on.
	for member, byDev := range g.got {
		for d, seq := range byDev {
			for i := 1; i < len(seq); i++ {
				if seq[i] > seq[i-1]+1 {
					t.Errorf("member %s, %s: taken in the order %v", member, d, seq)
					break
				}
			}
		}
	}
	t.Log(fmt.Sprint(g.got))
}

// lossReceiver takes the posts of two members of one sink group, each
// member posting to its own server, and notes every post (refused or
// taken) in the order they came. Member a's server refuses devices named
// "stuck..." (500) until release is closed; member b's takes everything.
type lossReceiver struct {
	release chan struct{}
	mu      sync.Mutex
	posts   []lossPost
}

type lossPost struct {
	member, device string
	count          int
	taken          bool
}

func (g *lossReceiver) server(t *testing.T, member string) *httptest.Server {
	return eventServer(t, func(w http.ResponseWriter, e telemetry.Event) {
		g.mu.Lock()
		defer g.mu.Unlock()
		p := lossPost{member: member, device: e.Device, count: e.Count, taken: true}
		if member == "a" && strings.HasPrefix(e.Device, "stuck") {
			select {
			case <-g.release:
			default:
				p.taken = false
			}
		}
		g.posts = append(g.posts, p)
		if !p.taken {
			http.Error(w, "not now", http.StatusInternalServerError)
		}
	})
}

// took is what member took of device, in order.
func (g *lossReceiver) took(member, device string) []int {
	g.mu.Lock()
	defer g.mu.Unlock()
	var got []int
	for _, p := range g.posts {
		if p.taken && p.member == member && p.device == device {
			got = append(got, p.count)
		}
	}
	return got
}

// TestGroupRebalanceStopsTheLostKey: member a of a webhook sink group
// (lanes) owns both partitions of a Kafka cluster's topic, each with a
// device ("stuck0" on partition 0, "stuck1" on 1) whose posts a's
// receiver refuses, so that a's lanes retry one record of each and hold
// the next one queued. Member b joins and takes one partition: from b's
// first post of the stuck device of that partition on, a posts none of
// it (neither the record it retried nor those queued), b delivers all of
// its records in order, and a goes on with the partition it kept. The
// lanes going on with a partition taken away, a posted its records
// twice, interleaved with b's, and held a lane on a key it no longer
// owned.
func TestGroupRebalanceStopsTheLostKey(t *testing.T) {
	r := newRebalanceRig(t, [2][]string{{"stuck0", "a0", "a1"}, {"stuck1", "b0", "b1"}})
	others := []string{"a0", "a1", "b0", "b1"}
	g := &lossReceiver{release: make(chan struct{})}
	takenBy := func(count int, devs ...string) bool {
		for _, d := range devs {
			if !slices.Contains(g.took("a", d), count) && !slices.Contains(g.took("b", d), count) {
				return false
			}
		}
		return true
	}
	refusedA := func(d string) bool {
		g.mu.Lock()
		defer g.mu.Unlock()
		return slices.ContainsFunc(g.posts, func(p lossPost) bool { return p.member == "a" && p.device == d && !p.taken })
	}
	start := func(member string) *sinktest.Running { return r.start(g.server(t, member).URL) }

	start("a")
	r.round()
	r.round()
	sinktest.Eventually(t, "rounds 1 and 2 taken by member a, the stuck devices refused", func() bool {
		return refusedA("stuck0") && refusedA("stuck1") && takenBy(2, others...)
	})

	start("b")
	sinktest.Eventually(t, "the group's two members each have a partition", func() bool { return groupSpread(r.adm, rebalanceGroup, 2) })
	r.round()
	var moved, kept string
	sinktest.Eventually(t, "member b took every record of the stuck device of its partition", func() bool {
		for i, d := range []string{"stuck0", "stuck1"} {
			if len(g.took("b", d)) >= r.counts[d] {
				moved, kept = d, []string{"stuck1", "stuck0"}[i]
				return takenBy(3, others...)
			}
		}
		return false
	})

	close(g.release)
	all := append([]string{"stuck0", "stuck1"}, others...)
	sinktest.Eventually(t, "every record taken and committed", func() bool { return takenBy(3, all...) && r.committed() })

	want := []int{1, 2, 3}
	if got := g.took("b", moved); !slices.Equal(got, want) {
		t.Errorf("member b took %s in the order %v, want %v", moved, got, want)
	}
	if got := g.took("a", kept); !slices.Equal(got, want) {
		t.Errorf("member a took %s (the partition it kept) in the order %v, want %v", kept, got, want)
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	first := slices.IndexFunc(g.posts, func(p lossPost) bool { return p.member == "b" && p.device == moved })
	var after []lossPost
	for _, p := range g.posts[first:] {
		if p.member == "a" && p.device == moved {
			after = append(after, p)
		}
	}
	if len(after) > 0 {
		t.Errorf("member a posted %s %d times after b's first post of it (its partition gone): %v", moved, len(after), after)
	}
	// Per member, a device's records come in order: each the one after
	// the last, or an earlier one (read again after a move).
	seqs := map[[2]string][]int{}
	for _, p := range g.posts {
		if p.taken {
			k := [2]string{p.member, p.device}
			seqs[k] = append(seqs[k], p.count)
		}
	}
	for k, seq := range seqs {
		for i := 1; i < len(seq); i++ {
			if seq[i] > seq[i-1]+1 {
				t.Errorf("member %s, %s: taken in the order %v", k[0], k[1], seq)
				break
			}
		}
	}
}
