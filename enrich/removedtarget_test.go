package enrich

import (
	"context"
	"encoding/json"
	"slices"
	"testing"
	"time"

	"github.com/weirnet/weir/broker"
	"github.com/weirnet/weir/broker/embedded"
	"github.com/weirnet/weir/telemetry"
)

// TestRemovedTargetEndsItsOutage: the record the SNMP poller publishes for
// a target a reload removed (snmp_status, removed true) ends an outage the
// target was in with device_unreachable_cleared, which resolves its alert;
// a target removed while reachable raises nothing; a target removed and
// added back, still unreachable, is unreachable anew (its first poll a
// first, not the state it was last reported in, nor a repeat).
func TestRemovedTargetEndsItsOutage(t *testing.T) {
	b, err := embedded.Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	t0 := time.Date(2026, 12, 6, 14, 0, 0, 0, time.UTC)
	at := func(sec int) time.Time { return t0.Add(time.Duration(sec) * time.Second) }
	status := func(target string, sec int, up int64) telemetry.Metric {
		return telemetry.Metric{V: 1, Measurement: "snmp_status", Device: target, Tags: map[string]string{"agent": "192.0.2.9"},
			Fields: map[string]any{"snmp_up": up}, Time: at(sec), Source: "snmp"}
	}
	removal := func(target string, sec int) telemetry.Metric {
		return telemetry.Metric{V: 1, Measurement: "snmp_status", Device: target, Tags: map[string]string{"agent": "192.0.2.9"},
			Fields: map[string]any{"removed": true}, Time: at(sec), Source: "snmp"}
	}
	var recs []broker.Record
	for i, m := range []telemetry.Metric{
		status("decom", 0, 1), status("decom", 60, 0), removal("decom", 90), // down, then taken out
		status("fine", 0, 1), removal("fine", 90),
		status("back", 0, 0), removal("back", 10), status("back", 20, 0), // added back within the de-duplication window
		status("last", 100, 0),
	} {
		v, _ := json.Marshal(&m)
		recs = append(recs, broker.Record{Key: []byte("one-partition"), Value: v, Timestamp: at(i)})
	}
	if err := b.Produce(context.Background(), telemetry.TopicRawSNMP, recs); err != nil {
		t.Fatal(err)
	}
	want := []string{
		"decom device_unreachable", "decom device_unreachable_cleared",
		"back device_unreachable", "back device_unreachable_cleared", "back device_unreachable",
		"last device_unreachable",
	}
	runMetricsWorker(t, b, func() bool { return len(readTopic(t, b, telemetry.TopicEvents)) >= len(want) })
	var got []string
	for _, r := range readTopic(t, b, telemetry.TopicEvents) {
		var ev telemetry.Event
		if err := json.Unmarshal(r.Value, &ev); err != nil {
			t.Fatal(err)
		}
		got = append(got, ev.Device+" "+ev.Type)
		if ev.Type == typeUnreachableCleared && (ev.Severity != "notice" || ev.Object != "") {
			t.Errorf("%s: severity %q, object %q; want notice and none (as the outage's)", ev.Type, ev.Severity, ev.Object)
		}
	}
	if !slices.Equal(got, want) {
		t.Errorf("events %q,\nwant %q", got, want)
	}
}
