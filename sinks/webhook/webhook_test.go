package webhook_test

import (
	"context"
	"encoding/json"
	"fmt"
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

type recorder struct {
	mu     sync.Mutex
	bodies [][]byte
	at     []time.Time // when each body came
	fail   int
}

func (r *recorder) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if req.Method != http.MethodPost || req.Header.Get("Content-Type") != "application/json" || req.Header.Get("X-Test") != "yes" {
		http.Error(w, "bad request", http.StatusBadRequest)
		return
	}
	if r.fail > 0 {
		r.fail--
		http.Error(w, "down", http.StatusServiceUnavailable)
		return
	}
	b, _ := io.ReadAll(req.Body)
	r.bodies = append(r.bodies, b)
	r.at = append(r.at, time.Now())
}

// alerts are the alerts posted, in order, as Alertmanager takes them: a
// firing alert is posted with an endsAt after its post (past the next
// re-send), and comes back with EndsAt nil; only a resolved one, whose
// endsAt had passed when it came, keeps its EndsAt. A minute's slack: a
// firing alert's endsAt is only four re-sends (80 ms in these tests)
// after its post, which a loaded machine under -race may take to deliver,
// and the events resolved here are timed days before.
func (r *recorder) alerts(t *testing.T) []webhook.Alert {
	r.mu.Lock()
	defer r.mu.Unlock()
	var all []webhook.Alert
	for i, b := range r.bodies {
		var as []webhook.Alert
		if err := json.Unmarshal(b, &as); err != nil {
			t.Fatalf("body %s: %v", b, err)
		}
		for j := range as {
			if as[j].EndsAt != nil && as[j].EndsAt.After(r.at[i].Add(-firingSlack)) {
				as[j].EndsAt = nil
			}
		}
		all = append(all, as...)
	}
	return all
}

var t0 = time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)

// firingSlack is how late a post may arrive for its endsAt still to be
// read as firing (see recorder.alerts).
const firingSlack = time.Minute

func ev(typ, dev, obj string, at time.Duration) telemetry.Event {
	return telemetry.Event{V: 1, Type: typ, Device: dev, Object: obj, Severity: "error", Message: typ + " " + obj,
		Tags: map[string]string{"site": "ams1"}, Time: t0.Add(at)}
}

func TestAlertmanagerFiringThenResolved(t *testing.T) {
	rec := &recorder{fail: 1}
	hs := httptest.NewServer(rec)
	defer hs.Close()
	b := sinktest.Broker(t)
	cfg := configs.Sink{Type: "webhook", Name: "alerts", Topics: []string{"events"}, URL: hs.URL + "/api/v2/alerts",
		Format: "alertmanager", Headers: map[string]string{"X-Test": "yes"}, FlushInterval: configs.Duration(10 * time.Millisecond),
		Retry: configs.SinkRetry{Initial: configs.Duration(10 * time.Millisecond)}}
	s, err := webhook.NewSink(cfg, sinks.Env{}, time.Now, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	dev := func(int) string { return "edge1" } // one key: one partition, in order
	sinktest.Produce(t, b, "events", telemetry.SchemaEvent, dev, []telemetry.Event{
		ev("interface_down", "edge1", "Ethernet7", 0),
		ev("bgp_peer_down", "edge1", "192.0.2.1", time.Second),
		ev("interface_flapping", "edge1", "Ethernet9", 2*time.Second),
	})
	r := sinktest.Start(t, b, cfg, s)
	sinktest.Eventually(t, "3 firing alerts", func() bool { return len(rec.alerts(t)) == 3 })
	for _, a := range rec.alerts(t) {
		if a.EndsAt != nil || a.Labels["device"] != "edge1" || a.Labels["site"] != "ams1" || a.Labels["object"] == "" {
			t.Fatalf("firing alert %+v", a)
		}
	}
	if r.Counter("weir_sink_retries_total", map[string]string{"sink": "alerts"}) != 1 {
		t.Error("the 503 was not retried once")
	}
	sinktest.Produce(t, b, "events", telemetry.SchemaEvent, dev, []telemetry.Event{
		ev("interface_up", "edge1", "Ethernet7", time.Minute),
		ev("bgp_peer_up", "edge1", "192.0.2.1", time.Minute),
		ev("interface_flapping_cleared", "edge1", "Ethernet9", time.Minute),
	})
	sinktest.Eventually(t, "3 resolved alerts", func() bool { return len(rec.alerts(t)) == 6 })
	all := rec.alerts(t)
	firing := map[string]webhook.Alert{}
	for _, a := range all[:3] {
		firing[a.Labels["alertname"]+"/"+a.Labels["object"]] = a
	}
	for _, a := range all[3:] {
		f, ok := firing[a.Labels["alertname"]+"/"+a.Labels["object"]]
		if !ok || a.EndsAt == nil || !a.EndsAt.Equal(t0.Add(time.Minute)) || !a.StartsAt.Equal(f.StartsAt) || fmt.Sprint(a.Labels) != fmt.Sprint(f.Labels) {
			t.Fatalf("resolved %+v does not end firing %+v", a, f)
		}
	}
}

func TestAlertmanagerResendsFiring(t *testing.T) {
	rec := &recorder{}
	hs := httptest.NewServer(rec)
	defer hs.Close()
	b := sinktest.Broker(t)
	cfg := configs.Sink{Type: "webhook", Name: "alerts", Topics: []string{"events"}, URL: hs.URL,
		Format: "alertmanager", Headers: map[string]string{"X-Test": "yes"}, FlushInterval: configs.Duration(10 * time.Millisecond)}
	s, _ := webhook.NewSink(cfg, sinks.Env{}, time.Now, 20*time.Millisecond)
	sinktest.Produce(t, b, "events", telemetry.SchemaEvent, func(int) string { return "edge1" },
		[]telemetry.Event{ev("interface_down", "edge1", "Ethernet7", 0)})
	sinktest.Start(t, b, cfg, s)
	sinktest.Eventually(t, "the firing alert sent again", func() bool { return len(rec.alerts(t)) >= 3 })
}

func TestJSONTemplate(t *testing.T) {
	rec := &recorder{}
	hs := httptest.NewServer(rec)
	defer hs.Close()
	b := sinktest.Broker(t)
	cfg := configs.Sink{Type: "webhook", Name: "hook", Topics: []string{"events"}, URL: hs.URL,
		Headers: map[string]string{"X-Test": "yes"}, FlushInterval: configs.Duration(10 * time.Millisecond),
		Template: `{"text": {{json (printf "%s on %s: %s" .Event.Type .Event.Device .Event.Object)}}}`}
	s, err := webhook.NewSink(cfg, sinks.Env{}, time.Now, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	sinktest.Produce(t, b, "events", telemetry.SchemaEvent, func(int) string { return "edge1" },
		[]telemetry.Event{ev("interface_down", "edge1", "Ethernet7", 0), ev("interface_up", "edge1", "Ethernet7", time.Second)})
	sinktest.Start(t, b, cfg, s)
	sinktest.Eventually(t, "2 posts", func() bool { rec.mu.Lock(); defer rec.mu.Unlock(); return len(rec.bodies) == 2 })
	var m map[string]string
	if err := json.Unmarshal(rec.bodies[0], &m); err != nil || m["text"] != "interface_down on edge1: Ethernet7" {
		t.Fatalf("body %s: %v", rec.bodies[0], err)
	}
}

// TestAlertmanagerFiringSurvivesRestart: a firing alert is kept in the
// state directory, so a sink built after a restart still re-sends it, and
// forgets it once resolved.
func TestAlertmanagerFiringSurvivesRestart(t *testing.T) {
	rec := &recorder{}
	hs := httptest.NewServer(rec)
	defer hs.Close()
	dir := t.TempDir()
	cfg := configs.Sink{Type: "webhook", Name: "alerts", Topics: []string{"events"}, URL: hs.URL, Format: "alertmanager",
		Headers: map[string]string{"X-Test": "yes"}}
	first, err := webhook.NewSink(cfg, sinks.Env{StateDir: dir}, time.Now, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	down := ev("interface_down", "edge1", "Ethernet7", 0)
	if err := first.Write(context.Background(), []sinks.Item{{Schema: telemetry.SchemaEvent, Event: &down}}); err != nil {
		t.Fatal(err)
	}
	first.Close()

	// After the restart: re-sent without any new event.
	second, err := webhook.NewSink(cfg, sinks.Env{StateDir: dir}, time.Now, 20*time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	before := len(rec.alerts(t))
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { second.Run(ctx); close(done) }()
	sinktest.Eventually(t, "the firing alert re-sent after the restart", func() bool { return len(rec.alerts(t)) > before })
	cancel()
	<-done
	got := rec.alerts(t)
	if a := got[len(got)-1]; a.Labels["object"] != "Ethernet7" || a.EndsAt != nil {
		t.Fatalf("re-sent %+v", a)
	}
	up := ev("interface_up", "edge1", "Ethernet7", time.Minute)
	if err := second.Write(context.Background(), []sinks.Item{{Schema: telemetry.SchemaEvent, Event: &up}}); err != nil {
		t.Fatal(err)
	}
	third, err := webhook.NewSink(cfg, sinks.Env{StateDir: dir}, time.Now, 20*time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	before = len(rec.alerts(t))
	ctx, cancel = context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	third.Run(ctx)
	if n := len(rec.alerts(t)); n != before {
		t.Fatalf("a resolved alert was re-sent after a restart: %d new", n-before)
	}
}

// Tag keys that are not label names are rewritten; two keys that become
// one name keep the smaller value, the same for the firing and the
// resolving alert, so the resolve matches.
func TestAlertmanagerLabelNames(t *testing.T) {
	rec := &recorder{}
	hs := httptest.NewServer(rec)
	defer hs.Close()
	b := sinktest.Broker(t)
	cfg := configs.Sink{Type: "webhook", Name: "alerts", Topics: []string{"events"}, URL: hs.URL,
		Format: "alertmanager", Headers: map[string]string{"X-Test": "yes"}, FlushInterval: configs.Duration(10 * time.Millisecond)}
	s, err := webhook.NewSink(cfg, sinks.Env{}, time.Now, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	down, up := ev("interface_down", "edge1", "Ethernet7", 0), ev("interface_up", "edge1", "Ethernet7", time.Second)
	tags := map[string]string{"rack-id": "r9", "rack_id": "r1", "1st": "x", "ok_Name2": "y", "-": "z", "alertname": "no"}
	down.Tags, up.Tags = tags, tags
	dev := func(int) string { return "edge1" }
	sinktest.Produce(t, b, "events", telemetry.SchemaEvent, dev, []telemetry.Event{down, up})
	sinktest.Start(t, b, cfg, s)
	sinktest.Eventually(t, "2 alerts", func() bool { return len(rec.alerts(t)) == 2 })
	all := rec.alerts(t)
	want := "map[_:z _1st:x alertname:interface_down device:edge1 object:Ethernet7 ok_Name2:y rack_id:r1]"
	for _, a := range all {
		if got := fmt.Sprint(a.Labels); got != want {
			t.Fatalf("labels %s, want %s", got, want)
		}
	}
}
