package webhook_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"slices"
	"testing"
	"time"

	"github.com/weirnet/weir/broker"
	"github.com/weirnet/weir/configs"
	"github.com/weirnet/weir/sinks"
	"github.com/weirnet/weir/sinks/internal/sinktest"
	"github.com/weirnet/weir/sinks/webhook"
)

// oldLaneOf is the lane a record of key went to among n before lanes took
// keys as they came free (a fixed FNV-1a hash, mixed as MurmurHash3 ends):
// the test picks devices that shared the held device's lane under it.
func oldLaneOf(key string, n int) int {
	h := uint64(14695981039346656037)
	for i := range len(key) {
		h = (h ^ uint64(key[i])) * 1099511628211
	}
	h ^= h >> 33
	h *= 0xff51afd7ed558ccd
	h ^= h >> 33
	return int(h % uint64(n))
}

// TestHeldKeyHoldsNoOtherKey: 8 devices, one of which the receiver
// refuses (503) until the test releases it. Every other device's records
// are delivered meanwhile, those of the devices that shared its lane
// under the fixed hash too (they waited behind it there), and once it is
// released its records arrive in order and everything is committed.
func TestHeldKeyHoldsNoOtherKey(t *testing.T) {
	const lanes = 4
	held := "stuck"
	var sharing, others []string
	for i := 0; len(sharing) < 3 || len(others) < 4; i++ {
		dev := fmt.Sprintf("edge%d", i)
		if oldLaneOf(dev, lanes) == oldLaneOf(held, lanes) {
			if len(sharing) < 3 {
				sharing = append(sharing, dev)
			}
		} else if len(others) < 4 {
			others = append(others, dev)
		}
	}
	rcv := &stuckReceiver{release: make(chan struct{}), othersBefore: -1}
	hs := httptest.NewServer(rcv)
	defer hs.Close()
	b := sinktest.Broker(t)
	if err := b.CreateTopic(context.Background(), "events", broker.TopicConfig{Partitions: 1}); err != nil {
		t.Fatal(err)
	}
	cfg := configs.Sink{Type: "webhook", Name: "chat", Topics: []string{"events"}, URL: hs.URL, Concurrency: lanes,
		FlushInterval: configs.Duration(10 * time.Millisecond),
		Retry:         configs.SinkRetry{Initial: configs.Duration(time.Millisecond), Max: configs.Duration(5 * time.Millisecond)}}
	s, err := webhook.NewSink(cfg, sinks.Env{}, time.Now, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	// The held device's record first, then 3 rounds of the 7 others and
	// the held device.
	devs := []string{held}
	for range 3 {
		devs = append(devs, sharing...)
		devs = append(devs, others...)
		devs = append(devs, held)
	}
	produceNumbered(t, b, 0, devs...)
	r := sinktest.Start(t, b, cfg, s)
	want := len(devs) - 4 // all but the held device's
	sinktest.Eventually(t, "every other device's records taken while one is held", func() bool {
		taken, refused, _ := rcv.snapshot()
		return refused > 0 && len(taken) == want
	})
	if _, _, before := rcv.snapshot(); before != -1 {
		t.Fatal("the held device's record went through before the test let it")
	}
	if off, _ := b.Committed(sinks.Group("chat"), "events", 0); off != 0 {
		t.Fatalf("committed %d while the first record is held", off)
	}
	close(rcv.release)
	sinktest.Eventually(t, "everything committed once released", func() bool {
		off, _ := b.Committed(sinks.Group("chat"), "events", 0)
		return off == int64(len(devs))
	})
	if err := r.Stop(); err != nil {
		t.Fatal(err)
	}
	taken, _, _ := rcv.snapshot()
	var heldSeq []int
	for _, c := range taken {
		if devs[c] == held {
			heldSeq = append(heldSeq, c)
		}
	}
	if want := []int{0, 8, 16, 24}; !slices.Equal(heldSeq, want) {
		t.Fatalf("the held device's records arrived as %v, want %v", heldSeq, want)
	}
}

// TestKeyOrderUnderRandomFailures: many devices over three partitions, a
// receiver failing posts at random (seeded, logged) and answering after
// random delays, so that keys move between lanes in every order: every
// record arrives once, each device's in its order, and the lag drains.
func TestKeyOrderUnderRandomFailures(t *testing.T) {
	seed := uint64(time.Now().UnixNano())
	t.Logf("seed %d", seed)
	rnd := rand.New(rand.NewPCG(seed, 0))
	f := &flakyReceiver{got: map[string][]int{}}
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		f.mu.Lock()
		fail, delay := rnd.IntN(6) == 0, time.Duration(rnd.IntN(300))*time.Microsecond
		f.mu.Unlock()
		time.Sleep(delay)
		if fail {
			http.Error(w, "try again", http.StatusServiceUnavailable)
			return
		}
		f.ServeHTTP(w, r)
	}))
	defer hs.Close()
	b := sinktest.Broker(t)
	const devices, perDevice = 200, 6
	cfg := configs.Sink{Type: "webhook", Name: "chat", Topics: []string{"events"}, URL: hs.URL, Concurrency: 4,
		BatchSize: 8, FlushInterval: configs.Duration(10 * time.Millisecond),
		Retry: configs.SinkRetry{Initial: configs.Duration(time.Millisecond), Max: configs.Duration(2 * time.Millisecond)}}
	f.deliverAll(t, b, cfg, devices, perDevice)
}
