package enrich

import (
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/weirnet/weir/broker"
	"github.com/weirnet/weir/collectors/syslog"
	"github.com/weirnet/weir/telemetry"
)

// TestSyslogEventSeverity: a syslog event has its line's severity; a line
// without a PRI (a relay that strips it) gives its event its mnemonic's,
// or else its type's, as trap and poll events have, so a sink's
// severities filter takes it.
func TestSyslogEventSeverity(t *testing.T) {
	inv, _ := ParseInventory([]byte(testInventory))
	w := NewWorker(nil, inv, NewClassifier())
	w.out = newOutputs(nil, telemetry.TopicRawSyslog, w.logger, w.m, false) // as Run makes it
	var p syslog.Parser
	var recs []broker.Record
	for i, raw := range []string{
		"<187>Nov 29 14:00:00 edge1 %LINK-3-UPDOWN: Interface GigabitEthernet0/1, changed state to down",
		"Nov 29 14:00:01 edge1 %LINEPROTO-5-UPDOWN: Line protocol on Interface GigabitEthernet0/2, changed state to down",
		"Nov 29 14:00:02 edge1 Interface GigabitEthernet0/3 is down",
	} {
		var l telemetry.Log
		p.ParseCopy([]byte(raw), &l)
		l.SourceAddr = "192.0.2.1:514"
		recs = append(recs, broker.Record{Topic: telemetry.TopicRawSyslog, Offset: int64(i), Value: l.AppendJSON(nil)})
	}
	_, events := w.enrichSyslogBatch(recs, nil, nil)
	got := map[string]string{}
	for _, o := range events {
		var ev telemetry.Event
		if err := json.Unmarshal(o.rec.Value, &ev); err != nil {
			t.Fatal(err)
		}
		got[ev.Object] = ev.Severity
	}
	want := map[string]string{"GigabitEthernet0/1": "error", "GigabitEthernet0/2": "notice", "GigabitEthernet0/3": "error"}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("severities by interface: %v, want %v (the PRI's, the mnemonic's, the type's)", got, want)
	}
}

// TestFlappingEventSeverity: a flapping event and its cleared one have
// their type's severity (warning, notice), whichever change tipped them:
// not the down's error or the up's notice they were made from.
func TestFlappingEventSeverity(t *testing.T) {
	d := newDetector(time.Second, 3, time.Minute)
	t0 := time.Date(2026, 11, 29, 14, 0, 0, 0, time.UTC)
	got := map[string]string{}
	for i := range 6 {
		typ := "interface_down"
		if i%2 == 1 {
			typ = "interface_up"
		}
		at := t0.Add(time.Duration(i) * time.Second)
		for _, ev := range d.observe(telemetry.Event{Type: typ, Device: "edge1", Object: "Gi0/1", Severity: typeSeverity(typ), Time: at,
			Cause: telemetry.Cause{Topic: telemetry.TopicRawSNMP, Offset: int64(i)}}, at) {
			got[ev.Type] = ev.Severity
		}
	}
	cleared, _ := d.settleClears(t0.Add(2 * time.Minute))
	for _, ev := range cleared {
		got[ev.Type] = ev.Severity
	}
	for typ, want := range map[string]string{"interface_flapping": "warning", "interface_flapping_cleared": "notice"} {
		if got[typ] != want {
			t.Errorf("%s: severity %q, want %q (all: %v)", typ, got[typ], want, got)
		}
	}
}
