package kafka_test

import (
	"context"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/weirnet/weir/broker"
	"github.com/weirnet/weir/configs"
	"github.com/weirnet/weir/sinks"
	"github.com/weirnet/weir/sinks/internal/sinktest"
	"github.com/weirnet/weir/sinks/kafka"
)

// writeWithin runs d.Write(ctx, items) and reports whether it returned
// within limit (the Write goes on in the background if not).
func writeWithin(d sinks.Destination, ctx context.Context, items []sinks.Item, limit time.Duration) (error, bool) {
	done := make(chan error, 1)
	go func() { done <- d.Write(ctx, items) }()
	select {
	case err := <-done:
		return err, true
	case <-time.After(limit):
		return nil, false
	}
}

// TestHungClusterWriteBoundedByTimeout: a cluster that takes the produce
// request but never answers it (a broker stuck on its disk, a network
// black hole once the connection is up) fails the batch after `timeout`,
// as the README says, and a stop (SIGTERM) ends Write promptly. Without
// kgo.AllowIdempotentProduceCancellation both hang for as long as the
// cluster does not answer: the idempotent producer refuses to fail
// in-flight records.
func TestHungClusterWriteBoundedByTimeout(t *testing.T) {
	kf := hungCluster(t)
	c := configs.Sink{Type: "kafka", Name: "mirror", Topics: []string{"events"}, Brokers: kf.ListenAddrs(),
		TopicPrefix: "weir.", Timeout: configs.Duration(time.Second)}
	d, err := kafka.New(c, sinks.Env{})
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	items := []sinks.Item{{Record: broker.Record{Topic: "events", Key: []byte("r1"), Value: []byte(`{"v":1}`), Timestamp: time.Now()}}}

	start := time.Now()
	if err, ok := writeWithin(d, context.Background(), items, 15*time.Second); !ok {
		t.Errorf("Write with timeout 1s still blocked after %v", time.Since(start).Round(time.Second))
	} else if _, retry := err.(*sinks.RetryableError); !retry {
		t.Errorf("Write with timeout 1s: %v (%T) after %v, want a retryable error", err, err, time.Since(start))
	} else if addr := kf.ListenAddrs()[0]; !strings.Contains(err.Error(), addr) {
		// A cluster that connects and never answers: the log must say
		// which one, as it does for one that refuses connections.
		t.Errorf("Write with timeout 1s: %q does not name the cluster %s", err, addr)
	} else if r := sinks.RetryReason(err); r != "timeout" {
		// weir_sink_retries_total{reason} must say the cluster did not
		// answer in time, as for an HTTP destination that hangs, not
		// "error".
		t.Errorf("Write with timeout 1s: retry reason %q, want timeout (%v)", r, err)
	} else {
		t.Logf("Write with timeout 1s: %v after %v", err, time.Since(start))
	}

	// A stop (the sink's context cancelled) while a batch is in flight.
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(200*time.Millisecond, cancel)
	start = time.Now()
	if err, ok := writeWithin(d, ctx, items, 15*time.Second); !ok {
		t.Errorf("Write cancelled after 200ms still blocked after %v", time.Since(start).Round(time.Second))
	} else {
		t.Logf("Write cancelled: %v after %v", err, time.Since(start))
	}
}

// TestHungClusterRetriedAndStopped: the whole sink (weir's SIGTERM path)
// with a cluster that swallows produce requests: the sink counts its
// retries, and cancelling its context stops it.
func TestHungClusterRetriedAndStopped(t *testing.T) {
	kf := hungCluster(t)
	b := sinktest.Broker(t)
	if err := b.Produce(context.Background(), "events", []broker.Record{{Key: []byte("r1"), Value: []byte(`{"v":1}`)}}); err != nil {
		t.Fatal(err)
	}
	c := configs.Sink{Type: "kafka", Name: "mirror", Topics: []string{"events"}, Brokers: kf.ListenAddrs(),
		TopicPrefix: "weir.", Timeout: configs.Duration(time.Second), FlushInterval: configs.Duration(20 * time.Millisecond),
		Retry: configs.SinkRetry{Initial: configs.Duration(50 * time.Millisecond), Max: configs.Duration(100 * time.Millisecond)}}
	d, err := kafka.New(c, sinks.Env{})
	if err != nil {
		t.Fatal(err)
	}
	reg := prometheus.NewRegistry()
	m := sinks.NewMetrics(reg)
	s, err := sinks.New(b, c, d, sinks.WithMetrics(m))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- s.Run(ctx) }()
	time.Sleep(3 * time.Second) // three timeouts' worth
	if n, err := testutil.GatherAndCount(reg, "weir_sink_retries_total"); err != nil || n == 0 {
		t.Errorf("no retry counted after three timeouts of a hung cluster (%v)", err)
	}
	cancel() // SIGTERM
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Errorf("sink with timeout 1s not stopped 10s after its context was cancelled")
	}
}

// hungCluster is a kfake cluster with topic weir.events that takes produce
// requests and never answers them, until the test ends.
func hungCluster(t *testing.T) *kfake.Cluster {
	t.Helper()
	kf, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.SeedTopics(1, "weir.events"))
	if err != nil {
		t.Fatal(err)
	}
	var hang atomic.Bool
	hang.Store(true)
	kf.ControlKey(int16(kmsg.Produce), func(kmsg.Request) (kmsg.Response, error, bool) {
		kf.KeepControl()
		if !hang.Load() {
			return nil, nil, false // answer normally: the test is over
		}
		return nil, nil, true // swallow: never answer
	})
	t.Cleanup(func() { hang.Store(false); kf.Close() })
	return kf
}
