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

	"github.com/weirnet/weir/broker"
	"github.com/weirnet/weir/configs"
	"github.com/weirnet/weir/internal/syncbuf"
	"github.com/weirnet/weir/sinks"
	"github.com/weirnet/weir/sinks/internal/sinktest"
	"github.com/weirnet/weir/sinks/webhook"
	"github.com/weirnet/weir/telemetry"
)

// stuckReceiver answers 503 to device "stuck" until release is closed,
// and notes, in the order taken, the Count (the record's offset) of every
// event it took and how many of the others it had taken before the first
// of "stuck".
type stuckReceiver struct {
	release      chan struct{}
	mu           sync.Mutex
	taken        []int // Counts, in the order taken
	stuckRefused int
	othersBefore int // taken before the first "stuck" went through; -1 until then
}

func (s *stuckReceiver) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	var e telemetry.Event
	if err := json.NewDecoder(r.Body).Decode(&e); err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if e.Device == "stuck" {
		select {
		case <-s.release:
		default:
			s.stuckRefused++
			http.Error(w, "not now", http.StatusServiceUnavailable)
			return
		}
		if s.othersBefore < 0 {
			s.othersBefore = len(s.taken)
		}
	}
	s.taken = append(s.taken, e.Count)
}

func (s *stuckReceiver) snapshot() (taken []int, refused, othersBefore int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.taken), s.stuckRefused, s.othersBefore
}

// produceNumbered writes events of devs (one a record, keyed by device)
// to the one partition of "events", each numbered in Count with the
// offset it gets (from first on).
func produceNumbered(t *testing.T, b broker.Broker, first int, devs ...string) {
	t.Helper()
	evs := make([]telemetry.Event, len(devs))
	for i, d := range devs {
		evs[i] = ev("interface_down", d, "Ethernet1", 0)
		evs[i].Count = first + i
	}
	sinktest.Produce(t, b, "events", telemetry.SchemaEvent, func(i int) string { return devs[i] }, evs)
}

// TestLaterPollsGoPastARetriedKey: one device's record is refused (503)
// for as long as the test says; records of other devices polled after it
// are delivered meanwhile (the lanes it is not in take new records),
// the partition is committed up to the refused record and not past it,
// and after a stop and a restart the refused record and what came after
// it come again, nothing before it. Delivering a poll as one batch, the
// retried record held up every later poll until it went through.
func TestLaterPollsGoPastARetriedKey(t *testing.T) {
	rcv := &stuckReceiver{release: make(chan struct{}), othersBefore: -1}
	hs := httptest.NewServer(rcv)
	defer hs.Close()
	b := sinktest.Broker(t)
	if err := b.CreateTopic(context.Background(), "events", broker.TopicConfig{Partitions: 1}); err != nil {
		t.Fatal(err)
	}
	cfg := configs.Sink{Type: "webhook", Name: "chat", Topics: []string{"events"}, URL: hs.URL, Concurrency: 4,
		FlushInterval: configs.Duration(10 * time.Millisecond),
		Retry:         configs.SinkRetry{Initial: configs.Duration(time.Millisecond), Max: configs.Duration(5 * time.Millisecond)}}
	newSink := func() *webhook.Sink {
		s, err := webhook.NewSink(cfg, sinks.Env{}, time.Now, time.Hour)
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	// Offsets 0-4 others, 5 the stuck device's, 6-9 others.
	const stuckAt = 5
	produceNumbered(t, b, 0, "edge0", "edge1", "edge2", "edge3", "edge4", "stuck", "edge5", "edge6", "edge7", "edge8")
	r := sinktest.Start(t, b, cfg, newSink())
	sinktest.Eventually(t, "the records before the stuck one taken, and it refused", func() bool {
		taken, refused, _ := rcv.snapshot()
		return len(taken) >= stuckAt && refused > 0
	})
	// Polls after the stuck record: more devices, each several records.
	const later = 3
	for round := range later {
		var devs []string
		for d := range 12 {
			devs = append(devs, fmt.Sprintf("late%d", d))
		}
		produceNumbered(t, b, 10+round*12, devs...)
	}
	// Most later records are in the other lanes (a quarter of the devices
	// share the stuck one's: those wait behind it).
	sinktest.Eventually(t, "later polls' records taken while the stuck one is refused", func() bool {
		taken, _, _ := rcv.snapshot()
		n := 0
		for _, c := range taken {
			if c >= 10 {
				n++
			}
		}
		return n >= later*12/2
	})
	sinktest.Eventually(t, "the records before the stuck one committed", func() bool {
		off, _ := b.Committed(sinks.Group("chat"), "events", 0)
		return off == stuckAt
	})
	if err := r.Stop(); err != nil {
		t.Fatal(err)
	}
	if off, _ := b.Committed(sinks.Group("chat"), "events", 0); off != stuckAt {
		t.Fatalf("committed at the stop: %d, want %d (the record still refused)", off, stuckAt)
	}
	_, _, before := rcv.snapshot()
	if before != -1 {
		t.Fatalf("the stuck record went through before the test let it")
	}

	// A post of the stuck record the first sink gave up on at the stop
	// may still be in the receiver's handler: closing the server waits
	// for it, so that it does not land after release (as a post the
	// receiver took twice: the sink never saw its answer).
	hs.Close()
	// Restart with the receiver taking it: the stuck record and those
	// after it come again, none before it.
	hs2 := httptest.NewServer(rcv)
	defer hs2.Close()
	cfg.URL = hs2.URL
	close(rcv.release)
	rcv.mu.Lock()
	rcv.taken = nil
	rcv.mu.Unlock()
	r2 := sinktest.Start(t, b, cfg, newSink())
	end := 10 + later*12
	sinktest.Eventually(t, "everything from the stuck record on taken again", func() bool {
		off, _ := b.Committed(sinks.Group("chat"), "events", 0)
		return off == int64(end)
	})
	r2.Stop()
	// Each once: the sink is the group's one member, and nothing failed.
	taken, _, _ := rcv.snapshot()
	slices.Sort(taken)
	want := make([]int, 0, end-stuckAt)
	for i := stuckAt; i < end; i++ {
		want = append(want, i)
	}
	if !slices.Equal(taken, want) {
		t.Fatalf("after the restart the receiver took %v, want %v (the stuck record on)", taken, want)
	}
}

// TestKeyOrderAcrossPollsUnderFailures: many devices over three
// partitions, produced in several rounds while the sink runs, a receiver
// failing one post in seven: every record arrives once, each device's in
// its order, and the lag drains.
func TestKeyOrderAcrossPollsUnderFailures(t *testing.T) {
	f := &flakyReceiver{failEvery: 7, got: map[string][]int{}}
	hs := httptest.NewServer(f)
	defer hs.Close()
	b := sinktest.Broker(t)
	const devices, rounds, perRound = 50, 6, 4
	cfg := configs.Sink{Type: "webhook", Name: "chat", Topics: []string{"events"}, URL: hs.URL, Concurrency: 4,
		BatchSize: 16, FlushInterval: configs.Duration(10 * time.Millisecond),
		Retry: configs.SinkRetry{Initial: configs.Duration(time.Millisecond), Max: configs.Duration(5 * time.Millisecond)}}
	s, err := webhook.NewSink(cfg, sinks.Env{}, time.Now, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	r := sinktest.Start(t, b, cfg, s)
	byDevice := func(i int) string { return fmt.Sprintf("edge%d", i%devices) }
	for round := range rounds {
		evs := seqEvents(devices, perRound)
		for i := range evs {
			evs[i].Count += round * perRound
		}
		sinktest.Produce(t, b, "events", telemetry.SchemaEvent, byDevice, evs)
		sinktest.Eventually(t, fmt.Sprintf("round %d partly taken", round+1), func() bool { return f.taken() > round*devices*perRound })
	}
	const perDevice = rounds * perRound
	sinktest.Eventually(t, "every record taken", func() bool { return f.taken() >= devices*perDevice })
	sinktest.Eventually(t, "the lag drained", func() bool { return lagDrained(b, sinks.Group("chat"), "events") })
	r.Stop()
	f.checkEachOnceInOrder(t, devices, perDevice)
}

// TestLanesOutageLoggedOnce: a receiver down for every lane, then back:
// its first failures are logged and one recovery, not one per lane; a
// receiver failing one post in ten logs a few lines, not one per failure.
func TestLanesOutageLoggedOnce(t *testing.T) {
	var mu sync.Mutex
	down := true
	f := &flakyReceiver{failEvery: 10, got: map[string][]int{}}
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		d := down
		mu.Unlock()
		if d {
			http.Error(w, "down", http.StatusServiceUnavailable)
			return
		}
		f.ServeHTTP(w, r)
	}))
	defer hs.Close()
	b := sinktest.Broker(t)
	const devices, perDevice = 20, 30
	cfg := configs.Sink{Type: "webhook", Name: "chat", Topics: []string{"events"}, URL: hs.URL, Concurrency: 4,
		BatchSize: 50, FlushInterval: configs.Duration(200 * time.Millisecond),
		Retry: configs.SinkRetry{Initial: configs.Duration(time.Millisecond), Max: configs.Duration(5 * time.Millisecond)}}
	s, err := webhook.NewSink(cfg, sinks.Env{}, time.Now, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	var logs syncbuf.Buffer
	r := sinktest.StartLogging(t, b, cfg, s, &logs)
	byDevice := func(i int) string { return fmt.Sprintf("edge%d", i%devices) }
	sinktest.Produce(t, b, "events", telemetry.SchemaEvent, byDevice, seqEvents(devices, perDevice))
	sinktest.Eventually(t, "every lane failing", func() bool {
		return r.Counter("weir_sink_retries_total", map[string]string{"sink": "chat"}) >= 40
	})
	if n := strings.Count(logs.String(), "sink delivering again"); n != 0 {
		t.Fatalf("%d recoveries logged while the receiver is down:\n%s", n, logs.String())
	}
	mu.Lock()
	down = false
	mu.Unlock()
	sinktest.Eventually(t, "every record taken", func() bool { return f.taken() >= devices*perDevice })
	// The end of an outage is logged once no post failed for a flush
	// interval: posts failing one in ten go on failing until the end.
	sinktest.Eventually(t, "the outage's end logged", func() bool { return strings.Contains(logs.String(), "sink delivering again") })
	r.Stop()
	retries := r.Counter("weir_sink_retries_total", map[string]string{"sink": "chat"})
	failed := strings.Count(logs.String(), "sink delivery failed")
	again := strings.Count(logs.String(), "sink delivering again")
	if again == 0 {
		t.Fatalf("the outage's end is not in the log:\n%s", logs.String())
	}
	if failed+again > int(retries)/5 {
		t.Errorf("%d failure and %d recovery lines for %v failed posts, want them throttled:\n%s", failed, again, retries, logs.String())
	}
	if !strings.Contains(logs.String(), "lane=") {
		t.Errorf("no lane in the failure lines:\n%s", logs.String())
	}
}
