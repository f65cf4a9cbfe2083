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

// TestReachabilityOfEachTarget: two targets that poll one device (found
// in the inventory by one agent address), one of them failing from its
// first poll (wrong v3 credentials), the other answering: the first
// target's failure is its own, and does not hide the other's outage
// later, nor does the other's recovery say the first came back. Each
// target's reachability events name it as their object.
func TestReachabilityOfEachTarget(t *testing.T) {
	b, err := embedded.Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	t0 := time.Date(2026, 11, 29, 14, 0, 0, 0, time.UTC)
	status := func(target string, sec int, up int64) telemetry.Metric {
		return telemetry.Metric{V: 1, Measurement: "snmp_status", Device: target, Tags: map[string]string{"agent": "192.0.2.1"},
			Fields: map[string]any{"snmp_up": up}, Time: t0.Add(time.Duration(sec) * time.Second), Source: "snmp"}
	}
	var recs []broker.Record
	for i, m := range []telemetry.Metric{
		status("v3bad", 0, 0), status("main", 1, 1),
		status("v3bad", 60, 0), status("main", 61, 1),
		status("v3bad", 120, 0), status("main", 121, 0), // the device's outage
		status("v3bad", 180, 0), status("main", 181, 1),
	} {
		v, _ := json.Marshal(&m)
		recs = append(recs, broker.Record{Key: []byte("edge1"), Value: v, Timestamp: t0.Add(time.Duration(i) * time.Second)})
	}
	if err := b.Produce(context.Background(), telemetry.TopicRawSNMP, recs); err != nil {
		t.Fatal(err)
	}
	want := []string{"edge1 device_unreachable v3bad", "edge1 device_unreachable main", "edge1 device_reachable main"}
	runMetricsWorker(t, b, func() bool { return len(readTopic(t, b, telemetry.TopicEvents)) >= len(want) })
	var got []string
	for _, r := range readTopic(t, b, telemetry.TopicEvents) {
		var ev telemetry.Event
		if err := json.Unmarshal(r.Value, &ev); err != nil {
			t.Fatal(err)
		}
		got = append(got, ev.Device+" "+ev.Type+" "+ev.Object)
	}
	if !slices.Equal(got, want) {
		t.Errorf("events %q, want %q", got, want)
	}
}
