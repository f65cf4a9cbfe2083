package kafkacluster

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/weirnet/weir/broker"
)

// TestPositionsOfATopicAskedOnce: the positions of a topic's partitions
// franz-go does not know yet (a warm-up asks for each in a round) come
// from one question to the cluster, not one each; and when the cluster
// does not answer, the round waits out one timeout, not one per
// partition, and a caller whose context ends does not wait for it. A
// change of assignment forgets the answer.
func TestPositionsOfATopicAskedOnce(t *testing.T) {
	kf, b := newKfake(t)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	const parts = 8
	if err := b.CreateTopic(ctx, "wide", broker.TopicConfig{Partitions: parts}); err != nil {
		t.Fatal(err)
	}
	if err := b.ProducePartition(ctx, "wide", 0, []broker.Record{{Value: []byte("x")}}); err != nil {
		t.Fatal(err)
	}
	var offsetFetches, listOffsets atomic.Int32
	var hang atomic.Bool
	released := make(chan struct{}) // ends the hanging
	count := func(n *atomic.Int32) func(kmsg.Request) (kmsg.Response, error, bool) {
		return func(kmsg.Request) (kmsg.Response, error, bool) {
			kf.KeepControl()
			n.Add(1)
			if hang.Load() {
				// Answered with nothing: the request times out.
				kf.SleepControl(func() { <-released })
			}
			return nil, nil, false
		}
	}
	c, err := b.Consume(ctx, "starts", []string{"wide"})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if got, err := c.Poll(ctx); err != nil || len(got) != 1 {
		t.Fatalf("poll: %d records, %v", len(got), err)
	}
	kf.ControlKey(int16(kmsg.OffsetFetch), count(&offsetFetches))
	kf.ControlKey(int16(kmsg.ListOffsets), count(&listOffsets))
	pc := c.(broker.Positioner)
	round := func() (known int) {
		for p := int32(1); p < parts; p++ {
			if pos, ok := pc.Position(ctx, broker.TopicPartition{Topic: "wide", Partition: p}); ok {
				if pos != 0 {
					t.Errorf("partition %d: position %d, want 0 (no commit: the log's start)", p, pos)
				}
				known++
			}
		}
		return known
	}
	if known := round(); known != parts-1 {
		t.Fatalf("%d positions known, want %d", known, parts-1)
	}
	// ListOffsets goes to each partition's leader: one request per
	// broker (3); the client may retry one. Asked per partition, it was
	// 7 OffsetFetch and 21 ListOffsets.
	if n, m := offsetFetches.Load(), listOffsets.Load(); n > 2 || m > 6 {
		t.Errorf("%d positions asked with %d OffsetFetch and %d ListOffsets requests, want 1 and 3 (a retry or two more at most)", parts-1, n, m)
	}

	// A change of assignment forgets the answer: a partition given since
	// may have a newer commit, its last owner's.
	c.(*consumer).updateAssigned(map[string][]int32{"wide": {0}}, true)
	before := offsetFetches.Load()
	if round(); offsetFetches.Load() == before {
		t.Error("after an assignment, the positions were not asked again")
	}

	time.Sleep(startsFresh) // the next round asks again
	hang.Store(true)
	offsetFetches.Store(0)
	start := time.Now()
	if known := round(); known != 0 {
		t.Errorf("%d positions known from a cluster that did not answer", known)
	}
	took := time.Since(start)
	// A worker stopping does not wait out the timeout.
	time.Sleep(startsFresh)
	stopping, stop := context.WithTimeout(ctx, 100*time.Millisecond)
	asked := time.Now()
	if _, ok := pc.Position(stopping, broker.TopicPartition{Topic: "wide", Partition: 1}); ok {
		t.Error("a position known from a cluster that did not answer")
	}
	stop()
	if waited := time.Since(asked); waited > 2*time.Second {
		t.Errorf("a Position whose context ended after 100 ms took %v", waited)
	}
	close(released)
	if n := offsetFetches.Load(); n > 2 {
		t.Errorf("a cluster not answering was asked %d times in a round, want once (or a retry)", n)
	}
	t.Logf("a round of %d unknown positions, the cluster not answering: %v", parts-1, took.Round(time.Millisecond))
}
