package enrich

import (
	"encoding/json"
	"fmt"
	"testing"

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
