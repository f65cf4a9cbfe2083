package webhook

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
)

// TestFiringAlertsOutliveTheNextResend: a firing alert that an event
// resolves is posted with an endsAt past the next re-send (as Prometheus
// posts its alerts), first and at each re-send. Posted without one,
// Alertmanager ended it after its resolve_timeout: with resolve_timeout
// 30s (found live against Alertmanager 0.25), a link that stayed down was
// resolved for 30 s of every minute, a resolved and a firing notification
// each minute; at 1m, whenever a re-send came late.
func TestFiringAlertsOutliveTheNextResend(t *testing.T) {
	var mu sync.Mutex
	var posts [][]Alert
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		var as []Alert
		if err := json.Unmarshal(b, &as); err != nil {
			http.Error(w, err.Error(), 400)
			return
		}
		mu.Lock()
		posts = append(posts, as)
		mu.Unlock()
	}))
	defer hs.Close()
	clock := amT0.Add(time.Hour)
	now := func() time.Time { mu.Lock(); defer mu.Unlock(); return clock }
	const resend = time.Minute
	s, err := NewSink(configs.Sink{Name: "am", URL: hs.URL, Format: "alertmanager"}, sinks.Env{}, now, resend)
	if err != nil {
		t.Fatal(err)
	}
	changed := amEv("config_changed", "admin", "admin", 0)
	amWrite(t, s, amEv("interface_down", "Gi0/1", "gi0/1", 0), changed)
	mu.Lock()
	clock = clock.Add(resend + 3*time.Second) // a re-send a little late
	mu.Unlock()
	s.resendRound(context.Background())

	mu.Lock()
	defer mu.Unlock()
	if len(posts) != 2 || len(posts[0]) != 2 || len(posts[1]) != 1 {
		t.Fatalf("posts %v, want the batch of 2 alerts and a re-send of 1", posts)
	}
	check := func(what string, a Alert, postedAt time.Time) {
		t.Helper()
		if a.EndsAt == nil {
			t.Errorf("%s posted without endsAt: Alertmanager ends it after its resolve_timeout, which may come before the next re-send", what)
		} else if next := postedAt.Add(resend); !a.EndsAt.After(next) {
			t.Errorf("%s posted with endsAt %v, not after the next re-send at %v", what, a.EndsAt, next)
		}
	}
	check("the firing interface_down", posts[0][0], amT0.Add(time.Hour))
	check("the re-sent interface_down", posts[1][0], clock)
	if a := posts[0][1]; a.EndsAt != nil {
		t.Errorf("config_changed, which no event resolves, posted with endsAt %v: it is meant to end after resolve_timeout", a.EndsAt)
	}
}
