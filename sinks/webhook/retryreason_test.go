package webhook_test

import (
	"net"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/weirnet/weir/configs"
	"github.com/weirnet/weir/sinks"
	"github.com/weirnet/weir/sinks/internal/sinktest"
	"github.com/weirnet/weir/sinks/webhook"
	"github.com/weirnet/weir/telemetry"
)

// TestRetriesCountedWithTheirReason: a receiver that is not listening
// yet, then rate-limits, then fails, then takes the record. Each retry is
// counted with why, as dead letters are, so /metrics tells a hook being
// rate-limited (wait) from one refusing the token or gone (act) without
// the log.
func TestRetriesCountedWithTheirReason(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close() // nothing listens there yet
	var mu sync.Mutex
	answers := []int{http.StatusTooManyRequests, http.StatusTooManyRequests, http.StatusServiceUnavailable}
	hs := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		defer mu.Unlock()
		if len(answers) > 0 {
			w.WriteHeader(answers[0])
			answers = answers[1:]
		}
	})}
	defer hs.Close()
	b := sinktest.Broker(t)
	sinktest.Produce(t, b, "events", telemetry.SchemaEvent, func(int) string { return "edge1" },
		[]telemetry.Event{{V: 1, Type: "interface_down", Device: "edge1", Object: "Ethernet1"}})
	cfg := configs.Sink{Type: "webhook", Name: "chat", Topics: []string{"events"}, URL: "http://" + addr + "/hook",
		FlushInterval: configs.Duration(10 * time.Millisecond),
		Retry:         configs.SinkRetry{Initial: configs.Duration(5 * time.Millisecond), Max: configs.Duration(20 * time.Millisecond)}}
	s, err := webhook.NewSink(cfg, sinks.Env{}, time.Now, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	r := sinktest.Start(t, b, cfg, s)
	retries := func(reason string) float64 {
		return r.Counter("weir_sink_retries_total", map[string]string{"sink": "chat", "reason": reason})
	}
	sinktest.Eventually(t, "retries while nothing listens", func() bool { return retries("refused") >= 2 })
	ln, err = net.Listen("tcp", addr)
	if err != nil {
		t.Skipf("port taken meanwhile: %v", err)
	}
	go hs.Serve(ln)
	sinktest.Eventually(t, "delivered", func() bool {
		return r.Counter("weir_sink_records_total", map[string]string{"sink": "chat"}) == 1
	})
	if n := retries("http_429"); n != 2 {
		t.Errorf("retries for 429: %v, want 2", n)
	}
	if n := retries("http_503"); n != 1 {
		t.Errorf("retries for 503: %v, want 1", n)
	}
}
