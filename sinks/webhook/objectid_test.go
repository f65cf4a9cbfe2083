package webhook_test

import (
	"net/http/httptest"
	"testing"
	"time"

	"github.com/weirnet/weir/configs"
	"github.com/weirnet/weir/sinks"
	"github.com/weirnet/weir/sinks/internal/sinktest"
	"github.com/weirnet/weir/sinks/webhook"
	"github.com/weirnet/weir/telemetry"
)

// TestAlertResolvedAcrossPaths: enrichment publishes a link's
// interface_down from the syslog line (IOS spells GigabitEthernet0/1) and
// its interface_up from the next SNMP poll (ifName Gi0/1), each with its
// own spelling as object and the shared one as object_id. The same for a
// BGP peer over IPv6: IOS syslog 2001:DB8::1, trap/gNMI 2001:db8::1. The
// sink keys its alerts by object_id, so the up resolves the down (keyed by
// object, the alert would be re-posted every minute for ever, and kept
// across restarts in the .alerts.json file).
func TestAlertResolvedAcrossPaths(t *testing.T) {
	rec := &recorder{}
	hs := httptest.NewServer(rec)
	defer hs.Close()
	b := sinktest.Broker(t)
	cfg := configs.Sink{Type: "webhook", Name: "alerts", Topics: []string{"events"}, URL: hs.URL + "/api/v2/alerts",
		Format: "alertmanager", Headers: map[string]string{"X-Test": "yes"}, FlushInterval: configs.Duration(10 * time.Millisecond)}
	s, err := webhook.NewSink(cfg, sinks.Env{}, time.Now, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	dev := func(int) string { return "edge1" }
	sinktest.Produce(t, b, "events", telemetry.SchemaEvent, dev, []telemetry.Event{
		// what enrich publishes: the syslog line's down ...
		{V: 1, Type: "interface_down", Device: "edge1", Object: "GigabitEthernet0/1", ObjectID: "gi0/1", Severity: "error",
			Tags: map[string]string{"site": "ams1"}, Time: t0,
			Cause: telemetry.Cause{Topic: "raw.syslog", Offset: 1}},
		{V: 1, Type: "bgp_peer_down", Device: "edge1", Object: "2001:DB8::1", ObjectID: "2001:db8::1", Severity: "notice",
			Tags: map[string]string{"site": "ams1"}, Time: t0,
			Cause: telemetry.Cause{Topic: "raw.syslog", Offset: 2}},
		// ... and the poll's (or trap's, or gNMI's) up, in their own spelling.
		{V: 1, Type: "interface_up", Device: "edge1", Object: "Gi0/1", ObjectID: "gi0/1",
			Tags: map[string]string{"site": "ams1", "ifName": "Gi0/1", "ifIndex": "1", "agent": "192.0.2.1"}, Time: t0.Add(time.Minute),
			Cause: telemetry.Cause{Topic: "raw.snmp", Offset: 7}},
		{V: 1, Type: "bgp_peer_up", Device: "edge1", Object: "2001:db8::1", ObjectID: "2001:db8::1",
			Tags: map[string]string{"site": "ams1"}, Time: t0.Add(time.Minute),
			Cause: telemetry.Cause{Topic: "raw.traps", Offset: 3}},
	})
	sinktest.Start(t, b, cfg, s)
	sinktest.Eventually(t, "4 alerts posted", func() bool { return len(rec.alerts(t)) >= 4 })
	firing := map[string]bool{}
	for _, a := range rec.alerts(t) {
		if a.EndsAt == nil {
			firing[a.Labels["alertname"]+" "+a.Labels["object"]] = true
		}
	}
	for _, a := range rec.alerts(t) {
		if a.EndsAt != nil && firing[a.Labels["alertname"]+" "+a.Labels["object"]] {
			delete(firing, a.Labels["alertname"]+" "+a.Labels["object"])
		}
	}
	if len(firing) != 0 {
		t.Errorf("alerts never resolved (the up event spelled the object differently): %v", firing)
	}
}
