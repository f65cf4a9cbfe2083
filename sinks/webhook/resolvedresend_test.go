package webhook

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/weirnet/weir/configs"
	"github.com/weirnet/weir/sinks"
)

// TestResolutionResentAfterAStaleFiringPost: a firing post that
// Alertmanager takes after the resolution (found live: a re-send stuck in
// a hung Alertmanager's socket, or behind a proxy, and run when it came
// back, after the retried resolution) fires the alert again there. Sent
// once, the resolution was then lost: the link, up, stayed alerting until
// the stale post's end. Resolved alerts are re-sent as resolved for a while
// (as Prometheus does, 15 minutes), so the next re-send ends it again;
// one fired again since is re-sent firing, not resolved.
func TestResolutionResentAfterAStaleFiringPost(t *testing.T) {
	var mu sync.Mutex
	clock := amT0.Add(time.Hour)
	now := func() time.Time { mu.Lock(); defer mu.Unlock(); return clock }
	am := &amModel{last: map[string]bool{}, clock: now}
	hs := httptest.NewServer(am)
	defer hs.Close()
	s, err := NewSink(configs.Sink{Name: "am", URL: hs.URL, Format: "alertmanager"}, sinks.Env{}, now, time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	amWrite(t, s, amEv("interface_down", "Gi0/1", "gi0/1", time.Hour), amEv("interface_down", "Gi0/2", "gi0/2", time.Hour))
	// The re-send of both, held up in a hung Alertmanager.
	until := s.firingUntil(now())
	var stale []Alert
	for _, a := range s.active {
		a.EndsAt = &until
		stale = append(stale, a)
	}
	amWrite(t, s, amEv("interface_up", "Gi0/1", "gi0/1", time.Hour), amEv("interface_up", "Gi0/2", "gi0/2", time.Hour))
	amWrite(t, s, amEv("interface_down", "Gi0/2", "gi0/2", time.Hour)) // fired again since
	body, _ := json.Marshal(stale)
	resp, err := http.Post(hs.URL, "application/json", bytes.NewReader(body)) // taken last
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	gi01 := map[string]string{"alertname": "interface_down", "device": "edge1", "object": "Gi0/1", "site": "ams1"}
	gi02 := map[string]string{"alertname": "interface_down", "device": "edge1", "object": "Gi0/2", "site": "ams1"}
	if firing, _ := am.firing(gi01); !firing {
		t.Fatal("the stale post did not fire Gi0/1 again: the test tests nothing")
	}

	mu.Lock()
	clock = clock.Add(time.Minute)
	mu.Unlock()
	s.resendRound(context.Background())
	if firing, _ := am.firing(gi01); firing {
		t.Error("Gi0/1, resolved, still firing in Alertmanager after the next re-send: its resolution was not sent again")
	}
	if firing, _ := am.firing(gi02); !firing {
		t.Error("Gi0/2, fired again after its resolution, re-sent as resolved")
	}
}
