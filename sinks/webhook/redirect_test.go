package webhook_test

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/weirnet/weir/configs"
	"github.com/weirnet/weir/internal/syncbuf"
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
	hook := movedHook(t, http.StatusMovedPermanently)
	cfg := configs.Sink{Type: "webhook", Name: "chat", Topics: []string{"events"}, URL: hook.url,
		FlushInterval: configs.Duration(10 * time.Millisecond),
		Retry:         configs.SinkRetry{Initial: configs.Duration(10 * time.Millisecond), Max: configs.Duration(50 * time.Millisecond)}}
	r := startHookSink(t, cfg, ev("interface_down", "edge1", "Ethernet7", 0), ev("interface_down", "edge1", "Ethernet8", 0))
	sinktest.Eventually(t, "the redirected posts answered", func() bool {
		posts, gets := hook.counts()
		return gets+posts > 0 || r.Counter("weir_sink_retries_total", map[string]string{"sink": "chat"}) > 0
	})
	time.Sleep(300 * time.Millisecond)
	posts, gets := hook.counts()
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
	hook := movedHook(t, http.StatusTemporaryRedirect)
	cfg := configs.Sink{Type: "webhook", Name: "chat", Topics: []string{"events"}, URL: hook.url,
		FlushInterval: configs.Duration(10 * time.Millisecond)}
	r := startHookSink(t, cfg, ev("interface_down", "edge1", "Ethernet7", 0))
	sinktest.Eventually(t, "1 record delivered through the 307", func() bool {
		posts, _ := hook.counts()
		return posts == 1 && r.Counter("weir_sink_records_total", map[string]string{"sink": "chat"}) == 1
	})
}

// redirectedHook is a receiver whose old URL redirects to its new one
// with a status of the test's.
type redirectedHook struct {
	url         string // the old one
	mu          sync.Mutex
	posts, gets int // at the new one: POSTs with a body, and the rest
}

func movedHook(t *testing.T, status int) *redirectedHook {
	h := &redirectedHook{}
	mux := http.NewServeMux()
	mux.HandleFunc("/old", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "/new", status)
	})
	mux.HandleFunc("/new", func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		h.mu.Lock()
		defer h.mu.Unlock()
		if r.Method == http.MethodPost && len(b) > 0 {
			h.posts++
		} else {
			h.gets++
		}
		w.WriteHeader(http.StatusOK) // a landing page for GET, an accepted POST
	})
	hs := httptest.NewServer(mux)
	t.Cleanup(hs.Close)
	h.url = hs.URL + "/old"
	return h
}

func (h *redirectedHook) counts() (posts, gets int) {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.posts, h.gets
}

// startHookSink runs a webhook sink of cfg over events in a test log.
func startHookSink(t *testing.T, cfg configs.Sink, events ...telemetry.Event) *sinktest.Running {
	b := sinktest.Broker(t)
	s, err := webhook.NewSink(cfg, sinks.Env{}, time.Now, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	sinktest.Produce(t, b, "events", telemetry.SchemaEvent, func(int) string { return "edge1" }, events)
	return sinktest.Start(t, b, cfg, s)
}

// TestRedirectToAnotherHostSaysTheTokenWasDropped: a 307 to another host
// is followed, but Go's client does not send the Authorization header
// there, so the receiver answers 401: the error said only "HTTP 401", as
// for a wrong token; it now says where the redirect went and that the
// header was not sent.
func TestRedirectToAnotherHostSaysTheTokenWasDropped(t *testing.T) {
	moved := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "Bearer s3cret" {
			http.Error(w, "unauthorized", http.StatusUnauthorized)
			return
		}
		w.WriteHeader(http.StatusOK)
	}))
	t.Cleanup(moved.Close)
	elsewhere := strings.Replace(moved.URL, "127.0.0.1", "localhost", 1) + "/hook"
	old := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, elsewhere, http.StatusTemporaryRedirect)
	}))
	t.Cleanup(old.Close)
	cfg := configs.Sink{Type: "webhook", Name: "chat", Topics: []string{"events"}, URL: old.URL + "/hook",
		Headers:       map[string]string{"Authorization": "Bearer s3cret"},
		FlushInterval: configs.Duration(10 * time.Millisecond),
		Retry:         configs.SinkRetry{Initial: configs.Duration(10 * time.Millisecond), Max: configs.Duration(50 * time.Millisecond)}}
	b := sinktest.Broker(t)
	s, err := webhook.NewSink(cfg, sinks.Env{}, time.Now, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	sinktest.Produce(t, b, "events", telemetry.SchemaEvent, func(int) string { return "edge1" }, []telemetry.Event{ev("interface_down", "edge1", "Ethernet7", 0)})
	var logs syncbuf.Buffer
	sinktest.StartLogging(t, b, cfg, s, &logs)
	sinktest.Eventually(t, "the redirect named in the error", func() bool {
		// The same path as the sink's url: said, not shown (it may hold a token).
		return strings.Contains(logs.String(), "after a redirect to "+strings.TrimSuffix(elsewhere, "/hook")+"/<the same path>, where the Authorization header is not sent")
	})
}
