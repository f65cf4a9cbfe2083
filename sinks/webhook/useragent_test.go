package webhook_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/weirnet/weir/broker"
	"github.com/weirnet/weir/configs"
	"github.com/weirnet/weir/sinks"
	"github.com/weirnet/weir/sinks/webhook"
	"github.com/weirnet/weir/telemetry"
)

// TestUserAgentNamesWeir: a receiver's access log names weir as the
// client (it said Go-http-client/1.1), unless the sink's headers give
// their own User-Agent.
func TestUserAgentNamesWeir(t *testing.T) {
	for _, tc := range []struct {
		headers map[string]string
		want    string
	}{{nil, "weir"}, {map[string]string{"User-Agent": "noc-hook/2"}, "noc-hook/2"}} {
		var mu sync.Mutex
		var got string
		hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			mu.Lock()
			got = r.Header.Get("User-Agent")
			mu.Unlock()
		}))
		s, err := webhook.NewSink(configs.Sink{Type: "webhook", Name: "hook", Topics: []string{"events"}, URL: hs.URL, Headers: tc.headers},
			sinks.Env{}, time.Now, time.Hour)
		if err != nil {
			t.Fatal(err)
		}
		item := sinks.Item{Schema: telemetry.SchemaEvent, Event: &telemetry.Event{Type: "interface_down"},
			Record: broker.Record{Topic: "events", Value: []byte(`{"type":"interface_down"}`)}}
		if err := s.Write(context.Background(), []sinks.Item{item}); err != nil {
			t.Fatal(err)
		}
		hs.Close()
		mu.Lock()
		if got != tc.want {
			t.Errorf("headers %v: User-Agent %q, want %q", tc.headers, got, tc.want)
		}
		mu.Unlock()
	}
}
