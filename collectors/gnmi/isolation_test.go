package gnmi

import (
	"context"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/weirnet/weir/broker"
	"github.com/weirnet/weir/collectors/gnmi/sim"
	"github.com/weirnet/weir/configs"
)

// stallBroker blocks Produce for one device's records until ctx ends.
type stallBroker struct {
	memBroker
	stall string
}

func (b *stallBroker) Produce(ctx context.Context, topic string, recs []broker.Record) error {
	if len(recs) > 0 && string(recs[0].Key) == b.stall {
		<-ctx.Done()
		return ctx.Err()
	}
	return b.memBroker.Produce(ctx, topic, recs)
}

// TestIsolation: a target whose TCP port accepts and never answers, and a
// target that floods while its records cannot be published, do not stall
// a healthy target; the flood costs counted drops.
func TestIsolation(t *testing.T) {
	// A black hole: accepts connections, never speaks.
	hole, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var conns sync.WaitGroup
	var mu sync.Mutex
	var held []net.Conn
	conns.Go(func() {
		for {
			c, err := hole.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			held = append(held, c)
			mu.Unlock()
		}
	})
	defer func() {
		hole.Close()
		conns.Wait()
		mu.Lock()
		for _, c := range held {
			c.Close()
		}
		mu.Unlock()
	}()
	_, floodAddr, _ := startSim(t, "127.0.0.1:0", sim.Config{Interfaces: 50, ToggleEvery: -1})
	_, goodAddr, _ := startSim(t, "127.0.0.1:0", sim.Config{Interfaces: 1, ToggleEvery: -1})

	hung := simTarget("hung", hole.Addr().String(), sub(countersPath, "stream", "sample", time.Second))
	hung.Timeout = configs.Duration(200 * time.Millisecond)
	flood := simTarget("flood", floodAddr, sub(countersPath, "stream", "sample", time.Microsecond))
	good := simTarget("good", goodAddr, sub(countersPath, "stream", "sample", 20*time.Millisecond))

	m, err := NewMetrics(nil)
	if err != nil {
		t.Fatal(err)
	}
	b := &stallBroker{stall: "flood"}
	cfg := configs.GNMI{QueueSize: 100, RetryMin: configs.Duration(50 * time.Millisecond), RetryMax: configs.Duration(100 * time.Millisecond),
		Targets: []configs.GNMITarget{hung, flood, good}}
	c, err := New(cfg, b, WithMetrics(m), WithLogger(testLogger(t)))
	if err != nil {
		t.Fatal(err)
	}
	c.grace = 100 * time.Millisecond // the broker never takes the queue: do not wait for it at the end
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); _ = c.Run(ctx) }()
	defer func() { cancel(); <-done }()

	waitFor(t, 10*time.Second, "the flood to overflow its queue", func() bool {
		return testutil.ToFloat64(m.Dropped.WithLabelValues("flood", DropQueueFull)) > 100
	})
	waitFor(t, 10*time.Second, "the hung target to time out", func() bool { return c.Status()[0].LastError != nil })
	if e := c.Status()[0].LastError.Error(); !strings.Contains(e, "gnmi hung: capabilities") || !strings.Contains(e, "DeadlineExceeded") {
		t.Errorf("hung target error: %v", e)
	}
	before := len(b.where(t, func(m metric) bool { return m.Device == "good" }))
	waitFor(t, 10*time.Second, "the good target to keep publishing", func() bool {
		return len(b.where(t, func(m metric) bool { return m.Device == "good" })) >= before+5
	})
	if n := len(b.where(t, func(m metric) bool { return m.Device != "good" && !isStatus(m) })); n != 0 {
		t.Errorf("%d records from the stalled targets", n)
	}
}

func TestUpdatesOnly(t *testing.T) {
	s, addr, _ := startSim(t, "127.0.0.1:0", sim.Config{Neighbors: 2, ToggleEvery: -1})
	sb := sub(bgpPath, "stream", "on_change", 0)
	sb.UpdatesOnly = true
	r := startCollector(t, configs.GNMI{Targets: []configs.GNMITarget{simTarget("sim1", addr, sb)}})
	waitFor(t, 10*time.Second, "sync", func() bool { return testutil.ToFloat64(r.m.Syncs.WithLabelValues("sim1")) == 1 })
	if n := len(r.b.metrics(t)); n != 0 {
		t.Fatalf("updates_only: %d records before any change", n)
	}
	s.Toggle(0)
	waitFor(t, 10*time.Second, "the change", func() bool { return len(r.b.metrics(t)) == 1 })
	if m := r.b.metrics(t)[0]; m.Fields["session-state"] != "IDLE" || m.Tags["neighbor-address"] != "10.0.0.1" {
		t.Errorf("change: %+v", m)
	}
}

func TestSuppressRedundantHeartbeat(t *testing.T) {
	_, addr, _ := startSim(t, "127.0.0.1:0", sim.Config{Neighbors: 1, ToggleEvery: -1})
	sb := sub(bgpPath, "stream", "sample", 10*time.Millisecond)
	sb.SuppressRedundant = true
	sb.HeartbeatInterval = configs.Duration(300 * time.Millisecond)
	start := time.Now()
	r := startCollector(t, configs.GNMI{Targets: []configs.GNMITarget{simTarget("sim1", addr, sb)}})
	waitFor(t, 10*time.Second, "a heartbeat after the initial state", func() bool { return len(r.b.metrics(t)) >= 2 })
	time.Sleep(300 * time.Millisecond)
	// Sampled every 10ms but unchanged: only the initial state and one
	// record per heartbeat.
	n, el := len(r.b.metrics(t)), time.Since(start)
	if max := int(el/(300*time.Millisecond)) + 2; n > max {
		t.Errorf("%d records in %v, want at most %d (suppress_redundant with heartbeats)", n, el, max)
	}
}
