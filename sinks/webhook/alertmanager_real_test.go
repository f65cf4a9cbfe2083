package webhook_test

import (
	"encoding/json"
	"net/http"
	"testing"
	"time"

	"github.com/weirnet/weir/broker/embedded"
	"github.com/weirnet/weir/configs"
	"github.com/weirnet/weir/internal/peers"
	"github.com/weirnet/weir/sinks"
	"github.com/weirnet/weir/sinks/internal/sinktest"
	"github.com/weirnet/weir/sinks/webhook"
	"github.com/weirnet/weir/telemetry"
)

// alertSink is an Alertmanager sink of the events topic of a test broker
// to Debian's Alertmanager, and that Alertmanager's address.
func alertSink(t *testing.T) (string, *embedded.Broker, configs.Sink, *webhook.Sink) {
	t.Helper()
	amAddr := peers.Alertmanager(t, "")
	cfg := configs.Sink{Type: "webhook", Name: "alerts", Topics: []string{"events"}, URL: "http://" + amAddr + "/api/v2/alerts",
		Format: "alertmanager", FlushInterval: configs.Duration(10 * time.Millisecond),
		Retry: configs.SinkRetry{Initial: configs.Duration(10 * time.Millisecond)}}
	s, err := webhook.NewSink(cfg, sinks.Env{}, time.Now, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	return amAddr, sinktest.Broker(t), cfg, s
}

// TestRealAlertmanager posts events to Debian's Alertmanager, which checks
// label names as classic Prometheus names: a tag key such as "rack-id" must
// not get the whole batch refused. The alerts are read back from its API.
func TestRealAlertmanager(t *testing.T) {
	amAddr, b, cfg, s := alertSink(t)
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

// TestRealAlertmanagerDeviceClockAhead: a device whose clock is ahead of
// weir's, such as one stamping its syslog in local time east of UTC
// (`clock timezone CET 1`, read as UTC), gives events timed in the future.
// Posted with that time as startsAt and no endsAt, Alertmanager refuses the
// alert ("start time must be before end time": it ends it after
// resolve_timeout, 5m, which is before it starts), so the link down was
// dead-lettered and never alerted; and the up's endsAt two hours ahead
// would keep it firing for two hours after the link came back. An alert
// starts, and ends, no later than weir posts it.
func TestRealAlertmanagerDeviceClockAhead(t *testing.T) {
	amAddr, b, cfg, s := alertSink(t)
	ahead := time.Now().UTC().Add(2 * time.Hour)
	down := telemetry.Event{V: 1, Type: "interface_down", Device: "cet1", Object: "GigabitEthernet0/9", Severity: "error",
		Message: "Gi0/9 down", Time: ahead}
	dev := func(int) string { return "cet1" }
	sinktest.Produce(t, b, "events", telemetry.SchemaEvent, dev, []telemetry.Event{down})
	r := sinktest.Start(t, b, cfg, s)
	active := func() (n int) {
		resp, err := http.Get("http://" + amAddr + "/api/v2/alerts?active=true")
		if err != nil {
			return -1
		}
		defer resp.Body.Close()
		var got []json.RawMessage
		if json.NewDecoder(resp.Body).Decode(&got) != nil {
			return -1
		}
		return len(got)
	}
	sinktest.Eventually(t, "the alert posted", func() bool {
		return r.Counter("weir_sink_records_total", map[string]string{"sink": "alerts"})+
			r.Counter("weir_sink_dead_letters_total", map[string]string{"sink": "alerts", "reason": "http_400"}) == 1
	})
	if n := r.Counter("weir_sink_dead_letters_total", map[string]string{"sink": "alerts", "reason": "http_400"}); n != 0 {
		t.Fatalf("the link down from a device two hours ahead was dead-lettered (%v), not alerted", n)
	}
	sinktest.Eventually(t, "Alertmanager lists the alert", func() bool { return active() == 1 })

	up := down
	up.Type, up.Severity, up.Time = "interface_up", "info", ahead.Add(time.Second)
	sinktest.Produce(t, b, "events", telemetry.SchemaEvent, dev, []telemetry.Event{up})
	sinktest.Eventually(t, "the up posted", func() bool {
		return r.Counter("weir_sink_records_total", map[string]string{"sink": "alerts"}) == 2
	})
	sinktest.Eventually(t, "the alert resolved now, not in two hours", func() bool { return active() == 0 })
}

// TestRealAlertmanagerFilterResolves: a filter chooses which alerts fire
// (severities: [error]: the downs), and the events that end them pass it
// as what they end would (the ups, notices): filtered out, every alert
// fired would stay firing for good, re-sent every minute. Events that end
// nothing the filter takes stay out.
func TestRealAlertmanagerFilterResolves(t *testing.T) {
	amAddr, b, cfg, s := alertSink(t)
	cfg.Filter = configs.SinkFilter{Severities: []string{"error"}, Tags: map[string]string{"site": "ams1"}}
	now := time.Now().UTC()
	down := telemetry.Event{V: 1, Type: "interface_down", Device: "edge1", Object: "Ethernet7", Severity: "error",
		Message: "Ethernet7 down", Time: now, Tags: map[string]string{"site": "ams1"}}
	up := down
	up.Type, up.Severity, up.Message, up.Time = "interface_up", "notice", "Ethernet7 up", now.Add(time.Second)
	elsewhere := up
	elsewhere.Device, elsewhere.Tags = "edge9", map[string]string{"site": "fra1"}
	login := down
	login.Type, login.Severity, login.Object = "login_succeeded", "notice", "admin"
	dev := func(int) string { return "edge1" }
	sinktest.Produce(t, b, "events", telemetry.SchemaEvent, dev, []telemetry.Event{down, elsewhere, login})
	r := sinktest.Start(t, b, cfg, s)
	active := func() int {
		var got []json.RawMessage
		resp, err := http.Get("http://" + amAddr + "/api/v2/alerts?active=true")
		if err != nil {
			return -1
		}
		defer resp.Body.Close()
		if json.NewDecoder(resp.Body).Decode(&got) != nil {
			return -1
		}
		return len(got)
	}
	sinktest.Eventually(t, "the down firing", func() bool { return active() == 1 })
	sinktest.Produce(t, b, "events", telemetry.SchemaEvent, dev, []telemetry.Event{up})
	sinktest.Eventually(t, "the up resolving it", func() bool { return active() == 0 })
	if n := r.Counter("weir_sink_filtered_total", map[string]string{"sink": "alerts"}); n != 2 {
		t.Errorf("filtered %v, want 2 (the other site's up, the login)", n)
	}
}

// TestRealAlertmanagerRemovedTargetResolves: a target taken out of the
// config while unreachable (a device decommissioned) ends its outage with
// device_unreachable_cleared (see enrich), which resolves its alert in
// Alertmanager; before, the sink re-sent it as firing for good.
func TestRealAlertmanagerRemovedTargetResolves(t *testing.T) {
	amAddr, b, cfg, s := alertSink(t)
	now := time.Now().UTC()
	down := telemetry.Event{V: 1, Type: "device_unreachable", Device: "old-edge", Severity: "error", Time: now,
		Tags: map[string]string{"agent": "192.0.2.9", "site": "ams1"}}
	dev := func(int) string { return "old-edge" }
	sinktest.Produce(t, b, "events", telemetry.SchemaEvent, dev, []telemetry.Event{down})
	sinktest.Start(t, b, cfg, s)
	active := func(want int) func() bool {
		return func() bool {
			resp, err := http.Get("http://" + amAddr + "/api/v2/alerts?active=true")
			if err != nil {
				return false
			}
			defer resp.Body.Close()
			var got []json.RawMessage
			return json.NewDecoder(resp.Body).Decode(&got) == nil && len(got) == want
		}
	}
	sinktest.Eventually(t, "the outage's alert firing", active(1))
	cleared := down
	cleared.Type, cleared.Severity, cleared.Time = "device_unreachable_cleared", "notice", now.Add(time.Second)
	sinktest.Produce(t, b, "events", telemetry.SchemaEvent, dev, []telemetry.Event{cleared})
	sinktest.Eventually(t, "the alert resolved", active(0))
}

// TestRealAlertmanagerRenamedDeviceResolves: a link down fired under
// edge1; an inventory reload renamed the device edge1-ams (device_renamed,
// see enrich), and the link up under the new name resolves the alert in
// Alertmanager, labelled as it fired. A filter (site ams*, downs) that
// does not name device_renamed lets it through all the same. Before, the
// alert was re-sent as firing for good.
func TestRealAlertmanagerRenamedDeviceResolves(t *testing.T) {
	amAddr, b, cfg, s := alertSink(t)
	cfg.Filter = configs.SinkFilter{EventTypes: []string{"interface_down"}, Tags: map[string]string{"site": "ams*"}}
	now := time.Now().UTC()
	site := map[string]string{"site": "ams1"}
	down := telemetry.Event{V: 1, Type: "interface_down", Device: "edge1", Object: "Ethernet7", ObjectID: "et7", Severity: "error", Time: now, Tags: site}
	renamed := telemetry.Event{V: 1, Type: telemetry.TypeDeviceRenamed, Device: "edge1-ams", Object: "edge1", Severity: "notice", Time: now.Add(time.Second), Tags: site}
	up := down
	up.Type, up.Device, up.Severity, up.Time = "interface_up", "edge1-ams", "notice", now.Add(2*time.Second)
	sinktest.Produce(t, b, "events", telemetry.SchemaEvent, func(int) string { return "edge1" }, []telemetry.Event{down})
	sinktest.Start(t, b, cfg, s)
	firing := func(want int) func() bool {
		return func() bool {
			resp, err := http.Get("http://" + amAddr + "/api/v2/alerts?active=true")
			if err != nil {
				return false
			}
			defer resp.Body.Close()
			var got []struct{ Labels map[string]string }
			if json.NewDecoder(resp.Body).Decode(&got) != nil || len(got) != want {
				return false
			}
			return want == 0 || got[0].Labels["device"] == "edge1"
		}
	}
	sinktest.Eventually(t, "the down firing under edge1", firing(1))
	sinktest.Produce(t, b, "events", telemetry.SchemaEvent, func(int) string { return "edge1-ams" }, []telemetry.Event{renamed, up})
	sinktest.Eventually(t, "the up under the new name resolving it", firing(0))
}
