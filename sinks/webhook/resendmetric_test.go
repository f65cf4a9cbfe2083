package webhook

import (
	"context"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/weirnet/weir/configs"
	"github.com/weirnet/weir/sinks"
)

// TestResendFailuresCounted: a re-send of the firing alerts that
// Alertmanager does not take (it is down, or answers 503) is counted in
// /metrics. Links that stay down post no new event, so the re-sends are
// the sink's only posts: counted nowhere, an Alertmanager gone for good
// showed no error at all in weir's metrics while its alerts expired there
// after resolve_timeout, only a log line said so.
func TestResendFailuresCounted(t *testing.T) {
	var failing atomic.Bool
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if failing.Load() {
			http.Error(w, "down", http.StatusServiceUnavailable)
		}
	}))
	defer hs.Close()
	reg := prometheus.NewRegistry()
	s, err := NewSink(configs.Sink{Name: "am", URL: hs.URL, Format: "alertmanager"},
		sinks.Env{Registerer: reg}, time.Now, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	amWrite(t, s, amEv("interface_down", "Gi0/1", "gi0/1", 0))
	count := func() float64 {
		t.Helper()
		mfs, err := reg.Gather()
		if err != nil {
			t.Fatal(err)
		}
		for _, mf := range mfs {
			if mf.GetName() != "weir_webhook_sink_resend_failures_total" {
				continue
			}
			for _, m := range mf.GetMetric() {
				for _, l := range m.GetLabel() {
					if l.GetName() == "sink" && l.GetValue() == "am" {
						return m.GetCounter().GetValue()
					}
				}
			}
		}
		return -1 // no such series
	}
	if n := count(); n != 0 {
		t.Fatalf("weir_webhook_sink_resend_failures_total{sink=\"am\"} before any re-send: %v, want 0 (-1: no series)", n)
	}
	s.resendRound(context.Background())
	failing.Store(true)
	s.resendRound(context.Background())
	s.resendRound(context.Background())
	if n := count(); n != 2 {
		t.Fatalf("weir_webhook_sink_resend_failures_total{sink=\"am\"} after two failed re-sends: %v, want 2 (-1: no series)", n)
	}
}
