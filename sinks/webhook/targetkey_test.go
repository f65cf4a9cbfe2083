package webhook

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/weirnet/weir/sinks"
	"github.com/weirnet/weir/telemetry"
)

// savedLegacyUnreachable writes the firing alerts file an earlier build
// left: a device_unreachable of SNMP target main, which the inventory
// names edge1, saved without an object (its events had none) and with its
// target label.
func savedLegacyUnreachable(t *testing.T, dir string) {
	t.Helper()
	legacy := Alert{Labels: map[string]string{"alertname": "device_unreachable", "device": "edge1", "target": "main", "site": "ams1"}, StartsAt: amT0}
	data, _ := json.Marshal(map[string]Alert{string(appendKeyOf(nil, "device_unreachable", "edge1", "")): legacy})
	if err := os.WriteFile(filepath.Join(dir, "am.alerts.json"), data, 0o644); err != nil {
		t.Fatal(err)
	}
}

func reachEvent(typ, object, target string, at time.Duration) *telemetry.Event {
	return &telemetry.Event{V: 1, Type: typ, Device: "edge1", Object: object, Severity: typeSeverityOf(typ),
		Tags: map[string]string{"target": target, "site": "ams1"}, Time: amT0.Add(at)}
}

func typeSeverityOf(typ string) string {
	if typ == "device_unreachable" {
		return "error"
	}
	return "notice"
}

func discardServer(t *testing.T) *httptest.Server {
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.Copy(io.Discard, r.Body) }))
	t.Cleanup(hs.Close)
	return hs
}

func noneFiring(t *testing.T, s *Sink, when string) {
	t.Helper()
	for k, a := range s.active {
		t.Errorf("%s: alert %q (labels %v) still firing: re-posted every minute for ever", when, k, a.Labels)
	}
}

// TestUpgradedUnreachableEndedThenKilled: the earlier build's alert, ended
// by its target's device_reachable (which names the target as its object)
// after the upgraded build's first save, the end journaled (the save was
// within saveEvery), and the process killed before the next save. The next
// start must not have it firing again: the end is not read again.
func TestUpgradedUnreachableEndedThenKilled(t *testing.T) {
	hs := discardServer(t)
	dir := t.TempDir()
	savedLegacyUnreachable(t, dir)
	s := amSink(t, hs.URL, dir)
	if !s.saveActive() { // the upgraded build's first save
		t.Fatal("save failed")
	}
	s.savedAt = time.Now().Add(time.Hour) // the next change is journaled, not saved
	amWrite(t, s, sinks.Item{Schema: telemetry.SchemaEvent, Event: reachEvent("device_reachable", "main", "main", time.Minute)})
	noneFiring(t, s, "after the target's device_reachable")
	if _, err := os.Stat(filepath.Join(dir, "am.alerts.json.journal")); err != nil {
		t.Fatalf("the end was not journaled: %v", err)
	}
	// Killed: no Close. The next run loads what the first left.
	noneFiring(t, amSink(t, hs.URL, dir), "after a kill and a restart")
}

// TestUpgradedUnreachableEndedByEarlierBuildsEvent: the earlier build's
// alert, ended by the earlier build's device_reachable (no object), which
// the sink reads after the upgrade (its backlog across it).
func TestUpgradedUnreachableEndedByEarlierBuildsEvent(t *testing.T) {
	hs := discardServer(t)
	dir := t.TempDir()
	savedLegacyUnreachable(t, dir)
	s := amSink(t, hs.URL, dir)
	amWrite(t, s, sinks.Item{Schema: telemetry.SchemaEvent, Event: reachEvent("device_reachable", "", "main", time.Minute)})
	noneFiring(t, s, "after the earlier build's device_reachable")
}

// TestUnreachableOfTargetTaggedTargetAfterRestart: an SNMP target named as
// its device, so its reachability events have no object, that the config
// tags target: rack-a (a tag enrichment keeps: the record's own win). Its
// alert, saved, must be ended by its device_reachable after a restart.
func TestUnreachableOfTargetTaggedTargetAfterRestart(t *testing.T) {
	hs := discardServer(t)
	dir := t.TempDir()
	s := amSink(t, hs.URL, dir)
	amWrite(t, s, sinks.Item{Schema: telemetry.SchemaEvent, Event: reachEvent("device_unreachable", "", "rack-a", 0)})
	s.Close()
	s2 := amSink(t, hs.URL, dir)
	amWrite(t, s2, sinks.Item{Schema: telemetry.SchemaEvent, Event: reachEvent("device_reachable", "", "rack-a", time.Minute)})
	noneFiring(t, s2, "after its device_reachable")
}

// TestUpgradedUnreachableInOneBatch: the earlier build's alert, ended and
// fired again in one batch, then ended: one alert at a time, and none left
// firing; fired again and ended in one batch: none left firing.
func TestUpgradedUnreachableInOneBatch(t *testing.T) {
	hs := discardServer(t)
	item := func(typ string, at time.Duration) sinks.Item {
		return sinks.Item{Schema: telemetry.SchemaEvent, Event: reachEvent(typ, "main", "main", at)}
	}
	dir := t.TempDir()
	savedLegacyUnreachable(t, dir)
	s := amSink(t, hs.URL, dir)
	amWrite(t, s, item("device_reachable", time.Minute), item("device_unreachable", 2*time.Minute))
	if len(s.active) != 1 {
		t.Fatalf("%d alerts firing after an end and a new one, want 1: %v", len(s.active), s.active)
	}
	for _, a := range s.active {
		if a.Labels["object"] != "main" {
			t.Errorf("the new alert's labels are %v, want the new event's (object main)", a.Labels)
		}
	}
	amWrite(t, s, item("device_reachable", 3*time.Minute))
	noneFiring(t, s, "after the new alert's end")

	dir = t.TempDir()
	savedLegacyUnreachable(t, dir)
	s = amSink(t, hs.URL, dir)
	amWrite(t, s, item("device_unreachable", time.Minute), item("device_reachable", 2*time.Minute))
	noneFiring(t, s, "after the earlier alert was fired again and ended in one batch")
}
