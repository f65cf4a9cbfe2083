package webhook_test

import (
	"context"
	"encoding/json"
	"net/http/httptest"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/weirnet/weir/configs"
	"github.com/weirnet/weir/sinks"
	"github.com/weirnet/weir/sinks/webhook"
	"github.com/weirnet/weir/telemetry"
)

// TestAlertFromPreviousBuildResolvedAfterUpgrade: a link down when weir is
// upgraded. The previous build keyed its firing alert (kept in
// <name>.alerts.json) by the event's object, "Ethernet7"; this one keys
// alerts by the object in the spelling all paths share ("et7"). The saved
// alert is keyed again from its labels when the file is read, so the up
// resolves it, and it is not re-posted as firing every minute for ever.
func TestAlertFromPreviousBuildResolvedAfterUpgrade(t *testing.T) {
	// What the previous build saved: the alert keyed by the object as
	// the event spelt it. The upgraded build gets the up, as enrichment
	// now publishes it.
	saved := map[string]webhook.Alert{"interface_down\x00edge1\x00Ethernet7": {
		Labels:   map[string]string{"alertname": "interface_down", "device": "edge1", "object": "Ethernet7", "site": "ams1"},
		StartsAt: t0}}
	up := ev("interface_up", "edge1", "Ethernet7", time.Minute)
	up.ObjectID = "et7"
	cfg, dir, rec := upgradeWith(t, saved, up)

	noneRepostedFiring(t, cfg, dir, rec, "after the up (saved by the previous build under object, looked up under object_id)")
}

// upgradeWith leaves saved as the firing alerts file an earlier build
// wrote, then runs this build's sink, posting to a recorder, on the one
// event e, and closes it: the sink's config, its state directory and the
// recorder, for the next run.
func upgradeWith(t *testing.T, saved map[string]webhook.Alert, e telemetry.Event) (configs.Sink, string, *recorder) {
	t.Helper()
	rec := &recorder{}
	hs := httptest.NewServer(rec)
	t.Cleanup(hs.Close)
	dir := t.TempDir()
	cfg := configs.Sink{Type: "webhook", Name: "alerts", Topics: []string{"events"}, URL: hs.URL, Format: "alertmanager",
		Headers: map[string]string{"X-Test": "yes"}}
	data, _ := json.Marshal(saved)
	if err := os.WriteFile(filepath.Join(dir, "alerts.alerts.json"), data, 0o644); err != nil {
		t.Fatal(err)
	}
	upgraded, err := webhook.NewSink(cfg, sinks.Env{StateDir: dir}, time.Now, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	if err := upgraded.Write(context.Background(), []sinks.Item{{Schema: telemetry.SchemaEvent, Event: &e}}); err != nil {
		t.Fatal(err)
	}
	upgraded.Close()
	return cfg, dir, rec
}

// noneRepostedFiring runs the sink of cfg on dir's state again for a few
// resend rounds: whatever runs next re-sends what it still takes for
// firing, and none may be.
func noneRepostedFiring(t *testing.T, cfg configs.Sink, dir string, rec *recorder, after string) {
	t.Helper()
	next, err := webhook.NewSink(cfg, sinks.Env{StateDir: dir}, time.Now, 20*time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	before := len(rec.alerts(t))
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	next.Run(ctx)
	for _, a := range rec.alerts(t)[before:] {
		if a.EndsAt == nil {
			t.Fatalf("alert %v re-posted as firing %s", a.Labels, after)
		}
	}
}

// TestStaleSavedAlertAfterInBatchResolution: an alert fired in an earlier
// batch (from syslog, object GigabitEthernet0/1) is resolved, fired again
// by the poll (Gi0/1) and resolved again within one batch (a flapping
// link, or a backlog after the sink was down). What the batch did comes
// before the remembered alert (updated only after the post): the second
// resolution ends the alert the poll fired, which would otherwise linger
// in Alertmanager until resolve_timeout, firing for a link that is up.
func TestStaleSavedAlertAfterInBatchResolution(t *testing.T) {
	rec := &recorder{}
	hs := httptest.NewServer(rec)
	defer hs.Close()
	cfg := configs.Sink{Type: "webhook", Name: "alerts", Topics: []string{"events"}, URL: hs.URL, Format: "alertmanager",
		Headers: map[string]string{"X-Test": "yes"}}
	s, err := webhook.NewSink(cfg, sinks.Env{}, time.Now, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	mk := func(typ, obj string, at time.Duration) *telemetry.Event {
		e := ev(typ, "edge1", obj, at)
		e.ObjectID = "gi0/1"
		return &e
	}
	item := func(e *telemetry.Event) sinks.Item { return sinks.Item{Schema: telemetry.SchemaEvent, Event: e} }
	if err := s.Write(context.Background(), []sinks.Item{item(mk("interface_down", "GigabitEthernet0/1", 0))}); err != nil {
		t.Fatal(err)
	}
	if err := s.Write(context.Background(), []sinks.Item{
		item(mk("interface_up", "GigabitEthernet0/1", time.Minute)),
		item(mk("interface_down", "Gi0/1", 2*time.Minute)),
		item(mk("interface_up", "GigabitEthernet0/1", 3*time.Minute)),
	}); err != nil {
		t.Fatal(err)
	}
	// The last state Alertmanager was told of each alert (by its labels).
	last := map[string]bool{} // object label -> firing
	for _, a := range rec.alerts(t) {
		last[a.Labels["alertname"]+" "+a.Labels["object"]] = a.EndsAt == nil
	}
	for k, firing := range last {
		if firing {
			t.Errorf("alert %s left firing in Alertmanager after the link's last event, an up", k)
		}
	}
}

// TestUnreachableFromPreviousBuildResolvedByItsTarget: an SNMP target the
// inventory names otherwise (its records tagged target=main) unreachable
// when weir is upgraded. The previous build's device_unreachable had no
// object; this one's reachability events name the target. The saved alert
// is keyed by its target label, so the target's device_reachable resolves
// it, and it is not re-posted as firing every minute for ever.
func TestUnreachableFromPreviousBuildResolvedByItsTarget(t *testing.T) {
	saved := map[string]webhook.Alert{"device_unreachable\x00edge1\x00": {
		Labels:   map[string]string{"alertname": "device_unreachable", "device": "edge1", "target": "main", "site": "ams1"},
		StartsAt: t0}}
	up := ev("device_reachable", "edge1", "main", time.Minute)
	up.Tags = map[string]string{"target": "main", "site": "ams1"}
	cfg, dir, rec := upgradeWith(t, saved, up)
	ended := false
	for _, a := range rec.alerts(t) {
		if a.Labels["alertname"] == "device_unreachable" && a.Labels["object"] == "" && a.EndsAt != nil {
			ended = true // ended with the labels it fired with
		}
	}
	if !ended {
		t.Errorf("the saved alert was not ended with its own labels: %+v", rec.alerts(t))
	}
	noneRepostedFiring(t, cfg, dir, rec, "after its target's device_reachable")
}
