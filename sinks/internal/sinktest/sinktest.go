// Package sinktest holds what the sink tests share: an embedded broker as
// the source, producing telemetry records, running a sink, and waiting
// with a deadline instead of fixed sleeps (the tests run on a loaded
// two-core machine).
package sinktest

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"sync"
	"testing"
	"time"

	"github.com/weirnet/weir/internal/peers"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/weirnet/weir/broker"
	"github.com/weirnet/weir/broker/embedded"
	"github.com/weirnet/weir/configs"
	"github.com/weirnet/weir/sinks"
	"github.com/weirnet/weir/telemetry"
)

// Timeout bounds every wait; generous because the machine is shared.
const Timeout = 60 * time.Second

// Broker opens an embedded broker in a temporary directory.
func Broker(t testing.TB) *embedded.Broker {
	t.Helper()
	b, err := embedded.Open(t.TempDir(), embedded.WithTopicDefaults(broker.TopicConfig{Partitions: 3}))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { b.Close() })
	return b
}

// Produce writes values as records of schema to topic, keyed by key(i).
func Produce[T any](t testing.TB, b broker.Broker, topic, schema string, key func(i int) string, values []T) {
	t.Helper()
	recs := make([]broker.Record, len(values))
	for i := range values {
		v, err := json.Marshal(values[i])
		if err != nil {
			t.Fatal(err)
		}
		recs[i] = broker.Record{Key: []byte(key(i)), Value: v, Headers: []broker.Header{
			{Key: telemetry.HeaderSource, Value: []byte("test")},
			{Key: telemetry.HeaderSchema, Value: []byte(schema)}}}
	}
	if err := b.Produce(context.Background(), topic, recs); err != nil {
		t.Fatal(err)
	}
}

// Running is a sink running in the background.
type Running struct {
	Metrics *sinks.Metrics
	Reg     *prometheus.Registry
	cancel  context.CancelFunc
	done    chan error
	once    sync.Once
	err     error
}

// Start runs a sink over b delivering to dest until Stop (or the end of the
// test).
func Start(t testing.TB, b broker.Broker, cfg configs.Sink, dest sinks.Destination) *Running {
	t.Helper()
	return StartLogging(t, b, cfg, dest, t.Output())
}

// StartLogging is Start with the sink's log written to w, and opts.
func StartLogging(t testing.TB, b broker.Broker, cfg configs.Sink, dest sinks.Destination, w io.Writer, opts ...sinks.Option) *Running {
	t.Helper()
	reg := prometheus.NewRegistry()
	m := sinks.NewMetrics(reg)
	s, err := sinks.New(b, cfg, dest, append([]sinks.Option{sinks.WithMetrics(m),
		sinks.WithLogger(slog.New(slog.NewTextHandler(w, &slog.HandlerOptions{Level: slog.LevelInfo})))}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	r := &Running{Metrics: m, Reg: reg, cancel: cancel, done: make(chan error, 1)}
	go func() { r.done <- s.Run(ctx) }()
	t.Cleanup(func() {
		if err := r.Stop(); err != nil {
			t.Errorf("sink run: %v", err)
		}
	})
	return r
}

// Stop stops the sink and waits for it; it fails if it does not stop.
func (r *Running) Stop() error {
	r.once.Do(func() {
		r.cancel()
		select {
		case r.err = <-r.done:
		case <-time.After(Timeout):
			r.err = errors.New("sink did not stop")
		}
	})
	return r.err
}

// Eventually polls cond until it holds or Timeout passes.
func Eventually(t testing.TB, what string, cond func() bool) {
	t.Helper()
	peers.Within(t, Timeout, what, cond)
}

// Counter reads a counter of the registry by name and labels: the sum of
// the series that have those labels (0 if none), so a label left out
// (weir_sink_retries_total's reason) counts every value of it.
func (r *Running) Counter(name string, labels map[string]string) float64 {
	mfs, err := r.Reg.Gather()
	if err != nil {
		return -1
	}
	sum := 0.0
	for _, mf := range mfs {
		if mf.GetName() != name {
			continue
		}
	next:
		for _, m := range mf.GetMetric() {
			have := map[string]string{}
			for _, l := range m.GetLabel() {
				have[l.GetName()] = l.GetValue()
			}
			for k, v := range labels {
				if have[k] != v {
					continue next
				}
			}
			if c := m.GetCounter(); c != nil {
				sum += c.GetValue()
			}
		}
	}
	return sum
}

// ReadAll reads every record of topic from the start (copied).
func ReadAll(t testing.TB, b broker.Broker, topic string) []broker.Record {
	t.Helper()
	infos, err := b.DescribeTopics(context.Background(), topic)
	if errors.Is(err, broker.ErrUnknownTopic) {
		return nil
	}
	if err != nil {
		t.Fatal(err)
	}
	var out []broker.Record
	for _, p := range infos[0].Partitions {
		var res broker.FetchResult
		for off := p.LogStartOffset; off < p.HighWatermark; {
			if err := b.Fetch(context.Background(), topic, p.Partition, off, broker.FetchOptions{}, &res); err != nil {
				t.Fatal(err)
			}
			if len(res.Records) == 0 {
				break
			}
			for _, r := range res.Records {
				c := r
				c.Key = append([]byte(nil), r.Key...)
				c.Value = append([]byte(nil), r.Value...)
				c.Headers = nil
				for _, h := range r.Headers {
					c.Headers = append(c.Headers, broker.Header{Key: h.Key, Value: append([]byte(nil), h.Value...)})
				}
				out = append(out, c)
				off = r.Offset + 1
			}
		}
	}
	return out
}

// Header returns the value of header key of r.
func Header(r broker.Record, key string) string {
	for _, h := range r.Headers {
		if h.Key == key {
			return string(h.Value)
		}
	}
	return ""
}
