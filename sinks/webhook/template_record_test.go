package webhook_test

import (
	"context"
	"encoding/json"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/weirnet/weir/broker"
	"github.com/weirnet/weir/configs"
	"github.com/weirnet/weir/sinks"
	"github.com/weirnet/weir/sinks/webhook"
)

// TestTemplateRecordAsText: a template's .Record key, value and header
// values are text, as a user reads them, not byte slices (which json
// quoted as base64 and printing wrote as "[101 100 ...]").
func TestTemplateRecordAsText(t *testing.T) {
	rec := &recorder{}
	hs := httptest.NewServer(rec)
	defer hs.Close()
	cfg := configs.Sink{Type: "webhook", Name: "hook", Topics: []string{"raw.syslog"}, URL: hs.URL, Headers: map[string]string{"X-Test": "yes"},
		Template: `{"k": {{json .Record.Key}}, "v": {{json .Record.Value}}, "t": "{{.Record.Topic}}", "plain": "{{.Record.Key}}", ` +
			`"h": {{range .Record.Headers}}{{if eq .Key "source"}}{{json .Value}}{{end}}{{end}}}`}
	s, err := webhook.NewSink(cfg, sinks.Env{}, time.Now, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	item := sinks.Item{Record: broker.Record{Topic: "raw.syslog", Key: []byte("edge1"), Value: []byte(`<13>hello "x"`),
		Headers: []broker.Header{{Key: "source", Value: []byte("syslog")}}}}
	if err := s.Write(context.Background(), []sinks.Item{item}); err != nil {
		t.Fatal(err)
	}
	if len(rec.bodies) != 1 {
		t.Fatalf("%d posts", len(rec.bodies))
	}
	var m map[string]string
	if err := json.Unmarshal(rec.bodies[0], &m); err != nil {
		t.Fatalf("body %s: %v", rec.bodies[0], err)
	}
	want := map[string]string{"k": "edge1", "v": `<13>hello "x"`, "t": "raw.syslog", "plain": "edge1", "h": "syslog"}
	for k, v := range want {
		if m[k] != v {
			t.Errorf("%s = %q, want %q (body %s)", k, m[k], v, rec.bodies[0])
		}
	}
}
