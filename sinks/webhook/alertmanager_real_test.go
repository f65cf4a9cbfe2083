package webhook_test

import (
	"encoding/json"
	"net/http"
	"testing"
	"time"

	"github.com/weirnet/weir/configs"
	"github.com/weirnet/weir/internal/peers"
	"github.com/weirnet/weir/sinks"
	"github.com/weirnet/weir/sinks/internal/sinktest"
	"github.com/weirnet/weir/sinks/webhook"
	"github.com/weirnet/weir/telemetry"
)

// TestRealAlertmanager posts events to Debian's Alertmanager, which checks
// label names as classic Prometheus names: a tag key such as "rack-id" must
// not get the whole batch refused. The alerts are read back from its API.
func TestRealAlertmanager(t *testing.T) {
	amAddr := peers.Alertmanager(t, "")
	b := sinktest.Broker(t)
	cfg := configs.Sink{Type: "webhook", Name: "alerts", Topics: []string{"events"}, URL: "http://" + amAddr + "/api/v2/alerts",
		Format: "alertmanager", FlushInterval: configs.Duration(10 * time.Millisecond),
		Retry: configs.SinkRetry{Initial: configs.Duration(10 * time.Millisecond)}}
	s, err := webhook.NewSink(cfg, sinks.Env{}, time.Now, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now().UTC()
	down := telemetry.Event{V: 1, Type: "interface_down", Device: "edge1", Object: "Ethernet7", Severity: "error",
		Message: "Ethernet7 down", Time: now,
		Tags: map[string]string{"site": "ams1", "rack-id": "r12", "9th.floor": "yes"}}
	dev := func(int) string { return "edge1" }
	sinktest.Produce(t, b, "events", telemetry.SchemaEvent, dev, []telemetry.Event{down})
	r := sinktest.Start(t, b, cfg, s)
	sinktest.Eventually(t, "the alert accepted", func() bool {
		return r.Counter("weir_sink_records_total", map[string]string{"sink": "alerts"}) == 1
	})
	var got []struct {
		Labels map[string]string `json:"labels"`
	}
	sinktest.Eventually(t, "Alertmanager lists the alert", func() bool {
		resp, err := http.Get("http://" + amAddr + "/api/v2/alerts")
		if err != nil {
			return false
		}
		defer resp.Body.Close()
		return json.NewDecoder(resp.Body).Decode(&got) == nil && len(got) == 1
	})
	l := got[0].Labels
	if l["alertname"] != "interface_down" || l["device"] != "edge1" || l["object"] != "Ethernet7" ||
		l["site"] != "ams1" || l["rack_id"] != "r12" || l["_9th_floor"] != "yes" {
		t.Fatalf("labels in Alertmanager: %v", l)
	}

	up := down
	up.Type, up.Severity, up.Time = "interface_up", "info", now.Add(time.Second)
	sinktest.Produce(t, b, "events", telemetry.SchemaEvent, dev, []telemetry.Event{up})
	sinktest.Eventually(t, "the alert resolved", func() bool {
		resp, err := http.Get("http://" + amAddr + "/api/v2/alerts?active=true")
		if err != nil {
			return false
		}
		defer resp.Body.Close()
		return json.NewDecoder(resp.Body).Decode(&got) == nil && len(got) == 0
	})
}
