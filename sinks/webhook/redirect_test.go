package webhook_test

import (
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/weirnet/weir/configs"
	"github.com/weirnet/weir/sinks"
	"github.com/weirnet/weir/sinks/internal/sinktest"
	"github.com/weirnet/weir/sinks/webhook"
	"github.com/weirnet/weir/telemetry"
)

// TestMovedHookIsRetriedNotDelivered: a hook that moved answers its old URL with a 301 (an http -> https
// upgrade, a renamed path). Go's client follows a 301/302/303 of a POST
// with a GET without the body; when the new URL answers that GET with a
// 200 (a landing page), the sink counted the records as delivered and
// committed them, though no POST ever reached the receiver. The sinks
// README says 3xx is retried, as a misconfigured endpoint.
func TestMovedHookIsRetriedNotDelivered(t *testing.T) {
	var mu sync.Mutex
	posts, gets := 0, 0
	mux := http.NewServeMux()
	mux.HandleFunc("/old", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "/new", http.StatusMovedPermanently)
	})
	mux.HandleFunc("/new", func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		mu.Lock()
		defer mu.Unlock()
		if r.Method == http.MethodPost && len(b) > 0 {
			posts++
		} else {
			gets++
		}
		w.WriteHeader(http.StatusOK) // a landing page for GET, an accepted POST
	})
	hs := httptest.NewServer(mux)
	defer hs.Close()

	b := sinktest.Broker(t)
	cfg := configs.Sink{Type: "webhook", Name: "chat", Topics: []string{"events"}, URL: hs.URL + "/old",
		FlushInterval: configs.Duration(10 * time.Millisecond),
		Retry:         configs.SinkRetry{Initial: configs.Duration(10 * time.Millisecond), Max: configs.Duration(50 * time.Millisecond)}}
	s, err := webhook.NewSink(cfg, sinks.Env{}, time.Now, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	sinktest.Produce(t, b, "events", telemetry.SchemaEvent, func(int) string { return "edge1" }, []telemetry.Event{
		ev("interface_down", "edge1", "Ethernet7", 0),
		ev("interface_down", "edge1", "Ethernet8", 0),
	})
	r := sinktest.Start(t, b, cfg, s)
	sinktest.Eventually(t, "the redirected posts answered", func() bool {
		mu.Lock()
		defer mu.Unlock()
		return gets+posts > 0 || r.Counter("weir_sink_retries_total", map[string]string{"sink": "chat"}) > 0
	})
	time.Sleep(300 * time.Millisecond)
	mu.Lock()
	defer mu.Unlock()
	delivered := r.Counter("weir_sink_records_total", map[string]string{"sink": "chat"})
	if delivered > float64(posts) {
		t.Fatalf("%v records counted delivered (and committed), but the receiver got %d POSTs with a body and %d bodiless GETs: the 301 turned each POST into a GET",
			delivered, posts, gets)
	}
	if r.Counter("weir_sink_retries_total", map[string]string{"sink": "chat"}) == 0 {
		t.Fatal("the 301 was not retried")
	}
}

// TestTemporaryRedirectDelivers: a 307 or 308 keeps the POST and its body,
// and is followed.
func TestTemporaryRedirectDelivers(t *testing.T) {
	var mu sync.Mutex
	posts := 0
	mux := http.NewServeMux()
	mux.HandleFunc("/old", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "/new", http.StatusTemporaryRedirect)
	})
	mux.HandleFunc("/new", func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		mu.Lock()
		defer mu.Unlock()
		if r.Method == http.MethodPost && len(b) > 0 {
			posts++
		}
	})
	hs := httptest.NewServer(mux)
	defer hs.Close()
	b := sinktest.Broker(t)
	cfg := configs.Sink{Type: "webhook", Name: "chat", Topics: []string{"events"}, URL: hs.URL + "/old",
		FlushInterval: configs.Duration(10 * time.Millisecond)}
	s, err := webhook.NewSink(cfg, sinks.Env{}, time.Now, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	sinktest.Produce(t, b, "events", telemetry.SchemaEvent, func(int) string { return "edge1" }, []telemetry.Event{
		ev("interface_down", "edge1", "Ethernet7", 0)})
	r := sinktest.Start(t, b, cfg, s)
	sinktest.Eventually(t, "1 record delivered through the 307", func() bool {
		mu.Lock()
		defer mu.Unlock()
		return posts == 1 && r.Counter("weir_sink_records_total", map[string]string{"sink": "chat"}) == 1
	})
}
