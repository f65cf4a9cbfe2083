package webhook_test

import (
	"context"
	"errors"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/weirnet/weir/broker"
	"github.com/weirnet/weir/configs"
	"github.com/weirnet/weir/sinks"
	"github.com/weirnet/weir/sinks/webhook"
	"github.com/weirnet/weir/telemetry"
)

// TestTemplateFailureReason: a template that fails on a record (.Event
// of a log record, a sink over events and enriched.syslog) dead-letters
// it with a reason that says "template" once, not "template: template:",
// and says which of .Event, .Log and .Metric the record has.
func TestTemplateFailureReason(t *testing.T) {
	rec := &recorder{}
	hs := httptest.NewServer(rec)
	defer hs.Close()
	cfg := configs.Sink{Type: "webhook", Name: "hook", Topics: []string{"enriched.syslog"}, URL: hs.URL,
		Template: `{"text": {{json .Event.Type}}}`}
	s, err := webhook.NewSink(cfg, sinks.Env{}, time.Now, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	item := sinks.Item{Schema: telemetry.SchemaLog, Log: &telemetry.EnrichedLog{},
		Record: broker.Record{Topic: "enriched.syslog", Value: []byte(`{}`)}}
	err = s.Write(context.Background(), []sinks.Item{item})
	var rej *sinks.RejectedError
	if !errors.As(err, &rej) {
		t.Fatalf("err = %v, want a rejection", err)
	}
	msg := rej.Error()
	if strings.Contains(msg, "template: template:") || !strings.HasPrefix(msg, "template: ") {
		t.Errorf("reason %q: want it to begin with template: once", msg)
	}
	if !strings.Contains(msg, "log/1") || !strings.Contains(msg, ".Log") {
		t.Errorf("reason %q: want it to name the record's schema and .Log", msg)
	}
	if len(rec.bodies) != 0 {
		t.Errorf("%d posts, want none", len(rec.bodies))
	}
}
