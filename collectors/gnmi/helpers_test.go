package gnmi

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"net"
	"os"
	"sync"
	"testing"
	"time"

	gpb "github.com/openconfig/gnmi/proto/gnmi"
	"github.com/prometheus/client_golang/prometheus"
	"google.golang.org/grpc"

	"github.com/weirnet/weir/broker"
	"github.com/weirnet/weir/collectors/gnmi/sim"
	"github.com/weirnet/weir/configs"
	"github.com/weirnet/weir/telemetry"
)

// memBroker keeps what is produced; only Produce is implemented.
type memBroker struct {
	broker.Broker
	mu   sync.Mutex
	recs []broker.Record
}

func (b *memBroker) Produce(_ context.Context, topic string, recs []broker.Record) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	for _, r := range recs {
		r.Topic = topic
		r.Value = bytes.Clone(r.Value)
		b.recs = append(b.recs, r)
	}
	return nil
}

// metric is a decoded record with its numbers kept exact.
type metric struct {
	telemetry.Metric
	Key, Topic string
	Headers    map[string]string
}

func (b *memBroker) metrics(t testing.TB) []metric {
	b.mu.Lock()
	defer b.mu.Unlock()
	out := make([]metric, 0, len(b.recs))
	for _, r := range b.recs {
		var m metric
		dec := json.NewDecoder(bytes.NewReader(r.Value))
		dec.UseNumber()
		if err := dec.Decode(&m.Metric); err != nil {
			t.Fatalf("record %s: %v", r.Value, err)
		}
		m.Key, m.Topic = string(r.Key), r.Topic
		m.Headers = map[string]string{}
		for _, h := range r.Headers {
			m.Headers[h.Key] = string(h.Value)
		}
		out = append(out, m)
	}
	return out
}

func (b *memBroker) where(t testing.TB, f func(metric) bool) []metric {
	var out []metric
	for _, m := range b.metrics(t) {
		if f(m) {
			out = append(out, m)
		}
	}
	return out
}

// isStatus reports whether m is a gnmi_status record (a failed attempt,
// or the first session after), not the target's data.
func isStatus(m metric) bool { return m.Measurement == StatusMeasurement }

// waitFor polls cond until it holds or the deadline passes.
func waitFor(t testing.TB, d time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(d)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %v waiting for %s", d, what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func testLogger(t testing.TB) *slog.Logger {
	if os.Getenv("GNMI_TEST_LOG") != "" {
		return slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelDebug}))
	}
	return slog.New(slog.DiscardHandler)
}

// startSim serves a simulated target on addr ("127.0.0.1:0" for any
// port) until the returned stop is called (also at cleanup).
func startSim(t testing.TB, addr string, cfg sim.Config) (*sim.Server, string, func()) {
	t.Helper()
	var lis net.Listener
	var err error
	// A restarted target may find its port in TIME_WAIT for a moment.
	waitFor(t, 5*time.Second, "listen on "+addr, func() bool {
		lis, err = net.Listen("tcp", addr)
		return err == nil
	})
	s := sim.New(cfg)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		if err := s.Serve(ctx, lis); err != nil {
			t.Errorf("sim: %v", err)
		}
	}()
	var once sync.Once
	stop := func() { once.Do(func() { cancel(); <-done }) }
	t.Cleanup(stop)
	return s, lis.Addr().String(), stop
}

// run starts a collector over cfg; stop cancels it and waits for Run.
type running struct {
	c   *Collector
	b   *memBroker
	m   *Metrics
	reg *prometheus.Registry
}

func startCollector(t testing.TB, cfg configs.GNMI, opts ...Option) *running {
	t.Helper()
	reg := prometheus.NewRegistry()
	m, err := NewMetrics(reg)
	if err != nil {
		t.Fatal(err)
	}
	if cfg.RetryMin == 0 {
		cfg.RetryMin = configs.Duration(50 * time.Millisecond)
	}
	if cfg.RetryMax == 0 {
		cfg.RetryMax = configs.Duration(200 * time.Millisecond)
	}
	for i := range cfg.Targets {
		if cfg.Targets[i].Timeout == 0 {
			cfg.Targets[i].Timeout = configs.Duration(5 * time.Second)
		}
	}
	b := &memBroker{}
	c, err := New(cfg, b, append([]Option{WithMetrics(m), WithLogger(testLogger(t))}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- c.Run(ctx) }()
	t.Cleanup(func() {
		cancel()
		select {
		case err := <-done:
			if err != nil {
				t.Errorf("Run: %v", err)
			}
		case <-time.After(10 * time.Second):
			t.Errorf("Run did not return after cancel")
		}
	})
	return &running{c: c, b: b, m: m, reg: reg}
}

func sub(path, mode, streamMode string, interval time.Duration) configs.GNMISubscription {
	s := configs.GNMISubscription{Path: path, Mode: mode, StreamMode: streamMode}
	if mode == "poll" {
		s.PollInterval = configs.Duration(interval)
	} else {
		s.SampleInterval = configs.Duration(interval)
	}
	return s
}

// serveGNMI serves s as a gNMI target on a port of 127.0.0.1 until the
// test ends, and returns its address.
func serveGNMI(t testing.TB, s gpb.GNMIServer) string {
	t.Helper()
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := grpc.NewServer()
	gpb.RegisterGNMIServer(srv, s)
	go srv.Serve(lis)
	t.Cleanup(srv.Stop)
	return lis.Addr().String()
}

// testBudget is a queue_memory of max bytes, its gauge registered nowhere.
func testBudget(max int64) *memBudget {
	return newMemBudget(max, prometheus.NewGauge(prometheus.GaugeOpts{Name: "test_queue_memory_bytes"}))
}
