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
