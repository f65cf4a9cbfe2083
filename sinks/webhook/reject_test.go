package webhook_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/weirnet/weir/configs"
	"github.com/weirnet/weir/internal/syncbuf"
	"github.com/weirnet/weir/sinks"
	"github.com/weirnet/weir/sinks/internal/sinktest"
	"github.com/weirnet/weir/sinks/webhook"
	"github.com/weirnet/weir/telemetry"
)

// TestRejectingReceiverLogsThrottled: a chat hook that refuses every post
// (400: a payload shape it does not take). Each record is dead-lettered,
// as documented, and the log says so once per 10 s with a count, not once
// per record: a receiver refusing thousands a minute must not flood it.
func TestRejectingReceiverLogsThrottled(t *testing.T) {
	var posts atomic.Int64
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		posts.Add(1)
		http.Error(w, "invalid_payload", http.StatusBadRequest)
	}))
	defer hs.Close()
	b := sinktest.Broker(t)
	const n = 500
	evs := make([]telemetry.Event, n)
	for i := range evs {
		evs[i] = telemetry.Event{V: 1, Type: "interface_down", Device: "edge1", Object: fmt.Sprintf("Ethernet%d", i)}
	}
	sinktest.Produce(t, b, "events", telemetry.SchemaEvent, func(int) string { return "edge1" }, evs)
	cfg := configs.Sink{Type: "webhook", Name: "chat", Topics: []string{"events"}, URL: hs.URL, BatchSize: n,
		FlushInterval: configs.Duration(10 * time.Millisecond)}
	s, err := webhook.NewSink(cfg, sinks.Env{}, time.Now, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	var log syncbuf.Buffer
	r := sinktest.StartLogging(t, b, cfg, s, &log)
	sinktest.Eventually(t, "500 dead letters", func() bool {
		return r.Counter("weir_sink_dead_letters_total", map[string]string{"sink": "chat", "reason": "http_400"}) == n
	})
	r.Stop()
	lines := strings.Count(log.String(), "sink destination rejected a record")
	t.Logf("%d posts, %d 'rejected a record' log lines for %d records", posts.Load(), lines, n)
	if lines > 10 {
		t.Errorf("%d log lines for %d refused records: one per record", lines, n)
	}
}

// TestRejectedRecordPostedOnce: the JSON form posts record by record; a
// receiver refusing one (a 400 for its payload) got it posted a second
// time, as the sink looked for the bad record of a batch by sending each
// again alone, though the webhook had said which one it was.
func TestRejectedRecordPostedOnce(t *testing.T) {
	var mu sync.Mutex
	posts := map[string]int{}
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var ev telemetry.Event
		json.NewDecoder(r.Body).Decode(&ev)
		mu.Lock()
		posts[ev.Object]++
		mu.Unlock()
		if ev.Object == "Ethernet0" || ev.Object == "Ethernet3" {
			http.Error(w, "invalid_payload", http.StatusBadRequest)
		}
	}))
	defer hs.Close()
	b := sinktest.Broker(t)
	const n = 6
	evs := make([]telemetry.Event, n)
	for i := range evs {
		evs[i] = telemetry.Event{V: 1, Type: "interface_down", Device: "edge1", Object: fmt.Sprintf("Ethernet%d", i)}
	}
	sinktest.Produce(t, b, "events", telemetry.SchemaEvent, func(int) string { return "edge1" }, evs)
	cfg := configs.Sink{Type: "webhook", Name: "chat", Topics: []string{"events"}, URL: hs.URL, BatchSize: n,
		FlushInterval: configs.Duration(10 * time.Millisecond)}
	s, err := webhook.NewSink(cfg, sinks.Env{}, time.Now, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	r := sinktest.Start(t, b, cfg, s)
	// The records after the second refused one are posted after its dead
	// letter is counted: wait for them too.
	sinktest.Eventually(t, "2 dead letters and every record posted", func() bool {
		mu.Lock()
		posted := len(posts)
		mu.Unlock()
		return posted == n && r.Counter("weir_sink_dead_letters_total", map[string]string{"sink": "chat", "reason": "http_400"}) == 2
	})
	r.Stop()
	mu.Lock()
	defer mu.Unlock()
	for i := range n {
		if obj := fmt.Sprintf("Ethernet%d", i); posts[obj] != 1 {
			t.Errorf("%s posted %d times, want once", obj, posts[obj])
		}
	}
}
