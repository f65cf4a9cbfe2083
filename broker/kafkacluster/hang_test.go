package kafkacluster

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/weirnet/weir/broker"
)

// TestHungClusterProduceBoundedByContext: the collectors (syslog's final
// flush with its 5 s grace, snmp's publish deadline, traps, gNMI) bound
// Produce with a context. A cluster that takes the produce request and
// never answers must not hold Produce past it (by default the idempotent
// producer waits for the answer; kgo.AllowIdempotentProduceCancellation).
func TestHungClusterProduceBoundedByContext(t *testing.T) {
	kf, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.SeedTopics(1, "weir.logs"))
	if err != nil {
		t.Fatal(err)
	}
	defer kf.Close()
	b, err := New(kf.ListenAddrs())
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	// One normal produce first: topic known, producer ID acquired.
	if err := b.Produce(context.Background(), "weir.logs", []broker.Record{{Key: []byte("k"), Value: []byte("v0")}}); err != nil {
		t.Fatal(err)
	}
	var hang atomic.Bool
	hang.Store(true)
	kf.ControlKey(int16(kmsg.Produce), func(kmsg.Request) (kmsg.Response, error, bool) {
		kf.KeepControl()
		if !hang.Load() {
			return nil, nil, false
		}
		return nil, nil, true // swallow: never answer
	})
	defer hang.Store(false)
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	done := make(chan error, 1)
	start := time.Now()
	go func() { done <- b.Produce(ctx, "weir.logs", []broker.Record{{Key: []byte("k"), Value: []byte("v1")}}) }()
	select {
	case err := <-done:
		t.Logf("Produce with a 1s context: %v after %v", err, time.Since(start))
		if err == nil {
			t.Error("Produce to a cluster that never answered returned no error")
		}
	case <-time.After(10 * time.Second):
		t.Errorf("Produce with a 1s context still blocked after %v: a hung cluster holds the collectors' publish (and weir's stop) past every deadline", time.Since(start).Round(time.Second))
	}
}

// TestHungClusterConsumerCloseBounded: weir's stop closes every consumer
// (each sink's, enrichment's) after its component returns, and waits for
// them. Closing leaves the group; a cluster that takes the LeaveGroup and
// never answers held Close (and so weir's exit, with nothing logged)
// for franz-go's request and retry timeouts, 45 s against a stopped
// broker. The leave is bounded instead: the cluster drops the member after
// its session timeout, as it does for one that died.
func TestHungClusterConsumerCloseBounded(t *testing.T) {
	for _, txn := range []bool{false, true} {
		name := "plain"
		if txn {
			name = "transactional"
		}
		t.Run(name, func(t *testing.T) {
			kf, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.SeedTopics(1, "weir.logs"))
			if err != nil {
				t.Fatal(err)
			}
			defer kf.Close()
			b, err := New(kf.ListenAddrs())
			if err != nil {
				t.Fatal(err)
			}
			defer b.Close()
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			if err := b.Produce(ctx, "weir.logs", []broker.Record{{Key: []byte("k"), Value: []byte("v0")}}); err != nil {
				t.Fatal(err)
			}
			var opts []broker.ConsumerOption
			if txn {
				opts = append(opts, broker.WithTransactions(), broker.WithMemberID("m1"), broker.WithSessionTimeout(6*time.Second))
			}
			c, err := b.Consume(ctx, "sink-x", []string{"weir.logs"}, opts...)
			if err != nil {
				t.Fatal(err)
			}
			if got, err := c.Poll(ctx); err != nil || len(got) != 1 {
				t.Fatalf("poll: %d records, %v", len(got), err)
			}
			var hang atomic.Bool
			hang.Store(true)
			defer hang.Store(false)
			kf.ControlKey(int16(kmsg.LeaveGroup), func(kmsg.Request) (kmsg.Response, error, bool) {
				kf.KeepControl()
				if !hang.Load() {
					return nil, nil, false
				}
				return nil, nil, true // swallow: never answer
			})
			done := make(chan struct{})
			start := time.Now()
			go func() { c.Close(); close(done) }()
			select {
			case <-done:
				t.Logf("Close returned after %v", time.Since(start).Round(time.Millisecond))
			case <-time.After(leaveTimeout + 5*time.Second):
				t.Errorf("Close still blocked after %v on a cluster that never answers the LeaveGroup", time.Since(start).Round(time.Second))
				hang.Store(false)
				<-done
			}
		})
	}
}
