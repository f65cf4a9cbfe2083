package enrich

import (
	"encoding/json"
	"slices"
	"testing"
	"time"

	"github.com/weirnet/weir/broker"
	"github.com/weirnet/weir/telemetry"
)

// TestFirstSampleAgainstAnotherPathsState: a poller's or a gNMI
// subscription's first sample of an object is its baseline, no change of
// its own; but when another path reported the object in the other state
// within the state hold (syslog said the BGP session went down, and the
// subscription added since sees it established), the sample is a change
// all the same: without it the down stays the object's last event, and the
// next change the subscription sees (down again) is published as a second
// down with no up between. A first sample that agrees with the other path,
// or of an object no path reported, stays a baseline.
func TestFirstSampleAgainstAnotherPathsState(t *testing.T) {
	h := newPathsHarness(t, telemetry.TopicRawSNMP)
	t0, rec := h.t0, h.rec
	ifRow := func(name, index string, at time.Time, st int64) broker.Record {
		return rec(telemetry.TopicRawSNMP, telemetry.Metric{V: 1, Measurement: "snmp_interface", Device: "edge1",
			Tags: map[string]string{"ifName": name, "ifIndex": index}, Fields: map[string]any{"ifOperStatus": st}, Time: at, Source: "snmp"})
	}
	const nbrPath = "/network-instances/network-instance[name=default]/protocols/protocol[identifier=BGP][name=BGP]/bgp/neighbors/neighbor[neighbor-address=10.0.0.1]/state"
	bgpRow := func(at time.Time, state string) broker.Record {
		return rec(telemetry.TopicRawGNMI, telemetry.Metric{V: 1, Measurement: "network_instances_network_instance_protocols_protocol_bgp_neighbors_neighbor_state",
			Device: "edge1", Tags: map[string]string{"name": "default", "identifier": "BGP", "neighbor-address": "10.0.0.1", "path": nbrPath},
			Fields: map[string]any{"session-state": state}, Time: at, Source: "gnmi"})
	}
	syslog := func(typ, object string, at time.Time) { h.other(telemetry.TopicRawSyslog, typ, object, at) }
	batch := h.batch
	syslog("interface_down", "GigabitEthernet0/1", t0)
	syslog("interface_up", "GigabitEthernet0/2", t0)
	syslog("bgp_peer_down", "10.0.0.1", t0)
	// The first poll, 40 s later: Gi0/1 is up again, Gi0/2 still up, Gi0/3
	// never reported by another path.
	at := t0.Add(40 * time.Second)
	got := batch(at, ifRow("Gi0/1", "1", at, 1), ifRow("Gi0/2", "2", at, 1), ifRow("Gi0/3", "3", at, 2))
	if want := []string{"interface_up Gi0/1"}; !slices.Equal(got, want) {
		t.Errorf("first poll after syslog: events %q, want %q", got, want)
	}
	// The gNMI subscription's first update: the session is established.
	at = t0.Add(50 * time.Second)
	if got, want := batch(at, bgpRow(at, "ESTABLISHED")), []string{"bgp_peer_up 10.0.0.1"}; !slices.Equal(got, want) {
		t.Errorf("first gNMI update after a syslog down: events %q, want %q", got, want)
	}
	at = t0.Add(80 * time.Second)
	if got, want := batch(at, bgpRow(at, "IDLE")), []string{"bgp_peer_down 10.0.0.1"}; !slices.Equal(got, want) {
		t.Errorf("then down: events %q, want %q", got, want)
	}
	// Samples after the first are judged as before: no repeats.
	at = t0.Add(100 * time.Second)
	if got := batch(at, ifRow("Gi0/1", "1", at, 1), ifRow("Gi0/2", "2", at, 1), ifRow("Gi0/3", "3", at, 2)); len(got) != 0 {
		t.Errorf("second poll, nothing changed: events %q", got)
	}
}

// TestFirstSampleAfterDeleteAgainstAnotherPathsState: a BGP neighbor
// removed from the config (a gNMI delete) is new when configured again,
// and its first state a baseline, as any first sample is: so when syslog
// said the session went down meanwhile, the re-created neighbor seen
// established is that change (bgp_peer_up), not left with the down as
// its last event.
func TestFirstSampleAfterDeleteAgainstAnotherPathsState(t *testing.T) {
	h := newPathsHarness(t, telemetry.TopicRawGNMI)
	t0 := h.t0
	const nbr = "/network-instances/network-instance[name=default]/protocols/protocol[identifier=BGP][name=BGP]/bgp/neighbors/neighbor[neighbor-address=10.0.0.1]"
	tags := map[string]string{"name": "default", "identifier": "BGP", "neighbor-address": "10.0.0.1"}
	rec := func(m telemetry.Metric) broker.Record { return h.rec(telemetry.TopicRawGNMI, m) }
	state := func(at time.Time, s string) broker.Record {
		return rec(telemetry.Metric{V: 1, Measurement: "network_instances_network_instance_protocols_protocol_bgp_neighbors_neighbor_state",
			Device: "edge1", Tags: map[string]string{"name": "default", "identifier": "BGP", "neighbor-address": "10.0.0.1", "path": nbr + "/state"},
			Fields: map[string]any{"session-state": s}, Time: at, Source: "gnmi"})
	}
	deleted := func(at time.Time) broker.Record {
		return rec(telemetry.Metric{V: 1, Measurement: "network_instances_network_instance_protocols_protocol_bgp_neighbors_neighbor",
			Device: "edge1", Tags: tags, Fields: map[string]any{"deleted": true}, Time: at, Source: "gnmi"})
	}
	batch := h.batch
	if got := batch(t0, state(t0, "ESTABLISHED")); len(got) != 0 {
		t.Fatalf("first state: events %q", got)
	}
	at := t0.Add(10 * time.Second)
	if got := batch(at, deleted(at)); len(got) != 0 {
		t.Fatalf("delete: events %q", got)
	}
	at = t0.Add(11 * time.Second)
	h.other(telemetry.TopicRawSyslog, "bgp_peer_down", "10.0.0.1", at)
	at = t0.Add(40 * time.Second)
	if got, want := batch(at, state(at, "ESTABLISHED")), []string{"bgp_peer_up 10.0.0.1"}; !slices.Equal(got, want) {
		t.Errorf("configured again, established, after a syslog down: events %q, want %q", got, want)
	}
}

// batchEvents enriches recs as one batch of w at time at and returns the
// events published, as "type object".
func batchEvents(t *testing.T, w *MetricsWorker, at time.Time, recs ...broker.Record) []string {
	t.Helper()
	w.rates.setNow(at)
	_, out := w.enrichBatch(recs, nil, nil)
	var got []string
	for _, o := range out {
		var ev telemetry.Event
		if err := json.Unmarshal(o.rec.Value, &ev); err != nil {
			t.Fatal(err)
		}
		got = append(got, ev.Type+" "+ev.Object)
	}
	return got
}

// TestPollContradictingAnotherPathsState: a trap or syslog line said a
// link went down, it came back before the next poll, and the linkUp trap
// was lost (UDP): every poll says up, the poller's own state never
// changed, so no interface_up was ever published and an alert on the down
// stayed firing until the next real flap. A poll that says the opposite
// of the object's reported state, more than the de-duplication window
// after that report, is the change that was missed. One within the window
// may have been taken before the change (or read an agent's cache): it
// raises nothing.
func TestPollContradictingAnotherPathsState(t *testing.T) {
	h := newPathsHarness(t, telemetry.TopicRawSNMP)
	t0 := h.t0
	ifRow := func(at time.Time, st int64) broker.Record {
		return h.rec(telemetry.TopicRawSNMP, telemetry.Metric{V: 1, Measurement: "snmp_interface", Device: "edge1",
			Tags: map[string]string{"ifName": "Gi0/1", "ifIndex": "1"}, Fields: map[string]any{"ifOperStatus": st}, Time: at, Source: "snmp"})
	}
	poll := func(at time.Time, st int64) []string { return h.batch(at, ifRow(at, st)) }
	if got := poll(t0, 1); len(got) != 0 {
		t.Fatalf("first poll: %q", got)
	}
	down := t0.Add(100 * time.Second)
	h.other(telemetry.TopicRawTraps, "interface_down", "GigabitEthernet0/1", down)
	if got := poll(down.Add(10*time.Second), 1); len(got) != 0 {
		t.Errorf("a poll 10 s after the down, within the window, saying up: events %q, want none", got)
	}
	if got, want := poll(down.Add(60*time.Second), 1), []string{"interface_up Gi0/1"}; !slices.Equal(got, want) {
		t.Errorf("a poll a minute after the down saying up: events %q, want %q", got, want)
	}
	if got := poll(down.Add(120*time.Second), 1); len(got) != 0 {
		t.Errorf("the next poll, up again: events %q, want none", got)
	}
}

// pathsHarness is a metrics worker over input and a detector it shares
// with the test, which reports other paths' events into it: what a poll
// or gNMI update raises against the state syslog or a trap reported.
type pathsHarness struct {
	t     *testing.T
	t0    time.Time // when the test begins
	rules *EventRules
	w     *MetricsWorker
	off   int64 // the last offset given, records and other paths' events alike
}

func newPathsHarness(t *testing.T, input string) *pathsHarness {
	inv, _ := ParseInventory([]byte(testInventory))
	rules := NewEventRules(30*time.Second, 5, 10*time.Minute)
	w := NewMetricsWorker(nil, inv, WithSharedEventRules(rules), WithInputTopic(input))
	w.out = newOutputs(nil, input, w.logger, w.m, false)
	return &pathsHarness{t: t, t0: time.Date(2026, 11, 29, 14, 0, 0, 0, time.UTC), rules: rules, w: w}
}

// rec is m as a record of topic at the next offset, stamped with m's time.
func (h *pathsHarness) rec(topic string, m telemetry.Metric) broker.Record {
	v, err := json.Marshal(&m)
	if err != nil {
		h.t.Fatal(err)
	}
	h.off++
	return broker.Record{Topic: topic, Offset: h.off, Timestamp: m.Time, Value: v}
}

// other reports an event of edge1 from another path (a record of topic) at
// at, which must pass the detector.
func (h *pathsHarness) other(topic, typ, object string, at time.Time) {
	h.t.Helper()
	h.off++
	if evs := h.rules.d.observe(telemetry.Event{Type: typ, Device: "edge1", Object: object, Time: at,
		Cause: telemetry.Cause{Topic: topic, Offset: h.off}}, at); len(evs) != 1 {
		h.t.Fatalf("%s %s %s: %v", topic, typ, object, evs)
	}
}

// batch enriches recs as one batch at at and returns the events published.
func (h *pathsHarness) batch(at time.Time, recs ...broker.Record) []string {
	h.t.Helper()
	return batchEvents(h.t, h.w, at, recs...)
}
