package webhook_test

import (
	"context"
	"encoding/json"
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

// rateLimited is a chat webhook that takes 3 requests, answers the 4th
// 429 (its window is full), takes 3 more, and so on.
type rateLimited struct {
	mu   sync.Mutex
	n    int
	seen map[string]int
}

func (l *rateLimited) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.n++
	if l.n%4 == 0 {
		w.Header().Set("Retry-After", "0")
		http.Error(w, "slow down", http.StatusTooManyRequests)
		return
	}
	b, _ := io.ReadAll(r.Body)
	var e telemetry.Event
	json.Unmarshal(b, &e)
	l.seen[e.Object]++
}

// TestRateLimitedWebhookGetsEveryEventOnce: the JSON form posts one record
// at a time; after a 429 it goes on from the record refused, rather than
// posting the batch's first records again on every retry (which never got
// past a limit of a few requests, and repeated notifications).
func TestRateLimitedWebhookGetsEveryEventOnce(t *testing.T) {
	l := &rateLimited{seen: map[string]int{}}
	hs := httptest.NewServer(l)
	defer hs.Close()
	b := sinktest.Broker(t)
	cfg := configs.Sink{Type: "webhook", Name: "chat", Topics: []string{"events"}, URL: hs.URL,
		FlushInterval: configs.Duration(10 * time.Millisecond),
		Retry:         configs.SinkRetry{Initial: configs.Duration(time.Millisecond), Max: configs.Duration(2 * time.Millisecond)}}
	s, err := webhook.NewSink(cfg, sinks.Env{}, time.Now, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	var evs []telemetry.Event
	for i := range 10 {
		evs = append(evs, ev("interface_down", "edge1", "Ethernet"+string(rune('0'+i)), 0))
	}
	sinktest.Produce(t, b, "events", telemetry.SchemaEvent, func(int) string { return "edge1" }, evs)
	r := sinktest.Start(t, b, cfg, s)
	sinktest.Eventually(t, "all 10 events posted", func() bool {
		l.mu.Lock()
		defer l.mu.Unlock()
		return len(l.seen) == 10 || l.n > 100
	})
	r.Stop()
	l.mu.Lock()
	defer l.mu.Unlock()
	if len(l.seen) != 10 || l.n != 13 {
		t.Fatalf("%d requests, %d of 10 events arrived: %v", l.n, len(l.seen), l.seen)
	}
	for obj, n := range l.seen {
		if n != 1 {
			t.Errorf("%s posted %d times", obj, n)
		}
	}
}

// TestResolveBeforeItsStartIsSent: an up event timed before its down (a
// device clock off, or a down from syslog with device time and an up from
// SNMP with receive time) resolves the alert with endsAt = startsAt, which
// Alertmanager takes; endsAt < startsAt it refuses (400), and the alert
// went on firing.
func TestResolveBeforeItsStartIsSent(t *testing.T) {
	var mu sync.Mutex
	var got []webhook.Alert
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		var as []webhook.Alert
		json.Unmarshal(b, &as)
		for _, a := range as {
			if a.EndsAt != nil && a.EndsAt.Before(a.StartsAt) { // as Alertmanager's validation
				http.Error(w, "start time must be before end time", http.StatusBadRequest)
				return
			}
		}
		mu.Lock()
		got = append(got, as...)
		mu.Unlock()
	}))
	defer hs.Close()
	cfg := configs.Sink{Type: "webhook", Name: "am", Topics: []string{"events"}, URL: hs.URL, Format: "alertmanager"}
	s, err := webhook.NewSink(cfg, sinks.Env{}, time.Now, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	down := ev("interface_down", "edge1", "Ethernet7", time.Minute)
	up := ev("interface_up", "edge1", "Ethernet7", 0) // a minute before
	for _, e := range []*telemetry.Event{&down, &up} {
		if err := s.Write(context.Background(), []sinks.Item{{Schema: telemetry.SchemaEvent, Event: e}}); err != nil {
			t.Fatalf("%s: %v", e.Type, err)
		}
	}
	mu.Lock()
	defer mu.Unlock()
	if len(got) != 2 || got[1].EndsAt == nil || !got[1].EndsAt.Equal(got[0].StartsAt) {
		t.Fatalf("alerts %+v, want the resolve to end when the alert started", got)
	}
}
