package gnmi

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	gpb "github.com/openconfig/gnmi/proto/gnmi"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/weirnet/weir/broker"
	"github.com/weirnet/weir/configs"
)

// burstServer sends n notifications on each Subscribe stream, each of
// one update (one record), then the sync_response, and keeps the stream
// open; ended counts the streams that weir closed.
type burstServer struct {
	gpb.UnimplementedGNMIServer
	n     int
	ended atomic.Int32
}

func (s *burstServer) Subscribe(stream gpb.GNMI_SubscribeServer) error {
	if _, err := stream.Recv(); err != nil {
		return err
	}
	for i := range s.n {
		n := &gpb.Notification{Timestamp: time.Now().UnixNano(), Update: []*gpb.Update{{
			Path: &gpb.Path{Elem: []*gpb.PathElem{{Name: "a"}, {Name: "b"}}},
			Val:  &gpb.TypedValue{Value: &gpb.TypedValue_IntVal{IntVal: int64(i)}},
		}}}
		if err := stream.Send(&gpb.SubscribeResponse{Response: &gpb.SubscribeResponse_Update{Update: n}}); err != nil {
			return err
		}
	}
	if err := stream.Send(&gpb.SubscribeResponse{Response: &gpb.SubscribeResponse_SyncResponse{SyncResponse: true}}); err != nil {
		return err
	}
	<-stream.Context().Done()
	s.ended.Add(1)
	return nil
}

func startBurst(t *testing.T, n int) (*burstServer, string) {
	t.Helper()
	s := &burstServer{n: n}
	return s, serveGNMI(t, s)
}

func burstTarget(name, addr string) configs.GNMITarget {
	return configs.GNMITarget{Name: name, Address: addr, Insecure: true, Timeout: configs.Duration(5 * time.Second),
		Subscriptions: []configs.GNMISubscription{sub("/a", "stream", "on_change", 0)}}
}

// dropped sums weir_gnmi_dropped_total for target by reason.
func dropped(t *testing.T, reg *prometheus.Registry, target string) (map[string]float64, float64) {
	t.Helper()
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	by := map[string]float64{}
	sum := 0.0
	for _, mf := range mfs {
		if mf.GetName() != "weir_gnmi_dropped_total" {
			continue
		}
		for _, m := range mf.GetMetric() {
			labels := map[string]string{}
			for _, l := range m.GetLabel() {
				labels[l.GetName()] = l.GetValue()
			}
			if labels["target"] == target {
				by[labels["reason"]] += m.GetCounter().GetValue()
				sum += m.GetCounter().GetValue()
			}
		}
	}
	return by, sum
}

func newShutdownCollector(t *testing.T, b broker.Broker, targets ...configs.GNMITarget) (*Collector, *Metrics, *prometheus.Registry) {
	t.Helper()
	reg := prometheus.NewRegistry()
	m, err := NewMetrics(reg)
	if err != nil {
		t.Fatal(err)
	}
	c, err := New(configs.GNMI{RetryMin: configs.Duration(50 * time.Millisecond), Targets: targets}, b, WithMetrics(m), WithLogger(testLogger(t)))
	if err != nil {
		t.Fatal(err)
	}
	return c, m, reg
}

// TestShutdownDrainsQueue: when weir stops while a target's queue holds
// notifications behind a slow broker, the stream stops at once and the
// publisher still publishes everything queued, within the grace.
func TestShutdownDrainsQueue(t *testing.T) {
	const n = 200
	s, addr := startBurst(t, n)
	b := &gatedBroker{open: make(chan struct{})}
	c, m, reg := newShutdownCollector(t, b, burstTarget("a", addr))
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan struct{})
	go func() { c.Run(ctx); close(done) }()
	waitFor(t, 10*time.Second, "every notification queued", func() bool {
		return testutil.ToFloat64(m.Updates.WithLabelValues("a")) == n
	})
	cancel()
	// Up to a second short of the drain timeout: a stream held until the
	// drain ends still fails it, a loaded machine slow to stop it does not.
	waitFor(t, shutdownDrainTimeout-time.Second, "the stream to stop while the broker is held", func() bool { return s.ended.Load() == 1 })
	select {
	case <-done:
		t.Fatal("Run returned before its queue was published")
	default:
	}
	close(b.open)
	select {
	case <-done:
	case <-time.After(shutdownDrainTimeout):
		t.Fatal("Run did not return once the broker took the queue")
	}
	if got := len(b.metrics(t)); got != n {
		t.Errorf("%d records in the broker, want %d", got, n)
	}
	if p := testutil.ToFloat64(m.Published.WithLabelValues("a")); p != n {
		t.Errorf("published %v, want %d", p, n)
	}
	if by, sum := dropped(t, reg, "a"); sum != 0 {
		t.Errorf("dropped %v, want none", by)
	}
}

// downBroker never takes target full's records (a full disk: an error
// worth retrying), nor target away's (it waits for a cluster that does
// not answer, until its context ends), and holds the others' until open
// is closed.
type downBroker struct {
	gatedBroker
	attempts atomic.Int32 // full's
}

func (b *downBroker) Produce(ctx context.Context, topic string, recs []broker.Record) error {
	switch string(recs[0].Key) {
	case "full":
		b.attempts.Add(1)
		return fmt.Errorf("produce %s: %w", topic, broker.ErrStorage)
	case "away":
		<-ctx.Done()
		return fmt.Errorf("produce %s: %w", topic, ctx.Err())
	}
	return b.gatedBroker.Produce(ctx, topic, recs)
}

// TestShutdownBoundedAndCounted: with a broker that takes nothing from
// two targets, Run returns once the shared grace is up (not the 10 s of
// a removed target's drain), and every notification received is
// counted: published, or dropped with a reason (shutdown for what was in
// flight or queued). Another target, whose broker is only slow, still
// publishes all it queued.
func TestShutdownBoundedAndCounted(t *testing.T) {
	const n = 3 * maxBatch // more than a batch in flight: some stay queued
	names := []string{"full", "away", "slow"}
	var targets []configs.GNMITarget
	for _, name := range names {
		_, addr := startBurst(t, n)
		targets = append(targets, burstTarget(name, addr))
	}
	b := &downBroker{gatedBroker: gatedBroker{open: make(chan struct{})}}
	c, m, reg := newShutdownCollector(t, b, targets...)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan struct{})
	go func() { c.Run(ctx); close(done) }()
	for _, name := range names {
		waitFor(t, 10*time.Second, name+"'s notifications queued", func() bool {
			return testutil.ToFloat64(m.Updates.WithLabelValues(name)) == n
		})
	}
	waitFor(t, 5*time.Second, "the broker to fail full's batches", func() bool { return b.attempts.Load() >= 2 })
	cancel()
	start := time.Now()
	time.Sleep(100 * time.Millisecond)
	close(b.open)
	select {
	case <-done:
	case <-time.After(shutdownDrainTimeout + 3*time.Second):
		t.Fatalf("Run still running %v after the stop", time.Since(start))
	}
	if el := time.Since(start); el < shutdownDrainTimeout-time.Second {
		t.Errorf("Run returned %v after the stop, before the grace was up", el)
	}
	for _, name := range names {
		published := testutil.ToFloat64(m.Published.WithLabelValues(name))
		by, sum := dropped(t, reg, name)
		if published+sum != n {
			t.Errorf("%s: received %d, published %v + dropped %v: %v uncounted", name, n, published, by, n-published-sum)
		}
	}
	if p := testutil.ToFloat64(m.Published.WithLabelValues("slow")); p != n {
		t.Errorf("slow published %v of %d", p, n)
	}
	for _, name := range []string{"full", "away"} {
		if by, _ := dropped(t, reg, name); by[DropShutdown] != n {
			t.Errorf("%s dropped %v, want all %d as shutdown", name, by, n)
		}
	}
}

// TestRemovedTargetDrainLossCounted: what a removed target's drain could
// not publish in its 10 s is counted as dropped (shutdown), and that series
// stays when the target's others go (they were all deleted, so no scrape
// saw that the reload lost records).
func TestRemovedTargetDrainLossCounted(t *testing.T) {
	if testing.Short() {
		t.Skip("waits for the 10 s drain")
	}
	const n = 50
	_, addr := startBurst(t, n)
	b := &downBroker{gatedBroker: gatedBroker{open: make(chan struct{})}} // never takes "away"'s records
	c, _, reg := newShutdownCollector(t, b, burstTarget("away", addr))
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { c.Run(ctx); close(done) }()
	defer func() { cancel(); <-done }()
	waitFor(t, 10*time.Second, "away's notifications queued", func() bool {
		v, _ := gathered(t, reg, "weir_gnmi_updates_total", "away")
		return v == n
	})
	if err := c.Update(nil); err != nil {
		t.Fatal(err)
	}
	waitFor(t, drainTimeout+5*time.Second, "the removed target's drain to end", func() bool {
		ms, _ := c.set.Members()
		return len(ms) == 0
	})
	by, sum := dropped(t, reg, "away")
	if sum != n {
		t.Errorf("after the removed target's drain gave up on %d notifications, /metrics shows dropped %v (sum %v)", n, by, sum)
	}
}
