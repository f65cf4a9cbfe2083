package enrich

import (
	"encoding/json"
	"slices"
	"testing"
	"time"

	gpb "github.com/openconfig/gnmi/proto/gnmi"

	"github.com/weirnet/weir/broker"
	"github.com/weirnet/weir/collectors/gnmi"
	"github.com/weirnet/weir/telemetry"
)

// gnmiRig feeds a metrics worker over raw.gnmi the records the gNMI
// collector publishes for target spine1: oper-status updates and
// gnmi_status records.
type gnmiRig struct {
	t  *testing.T
	w  *MetricsWorker
	t0 time.Time
}

func newGNMIRig(t *testing.T) *gnmiRig {
	inv, _ := ParseInventory([]byte(testInventory))
	return &gnmiRig{t: t, w: NewMetricsWorker(nil, inv, WithInputTopic(telemetry.TopicRawGNMI)),
		t0: time.Date(2026, 11, 29, 14, 0, 0, 0, time.UTC)}
}

// at is the rig's time min minutes in; the worker's clock is set to it
// and its sweep run, as its loop does at each batch.
func (g *gnmiRig) at(min int) time.Time {
	at := g.t0.Add(time.Duration(min) * time.Minute)
	g.w.rates.setNow(at)
	g.w.sweepForgotten(at)
	return at
}

func (g *gnmiRig) enrich(m telemetry.Metric) []string {
	v, _, err := m.AppendJSON(nil, nil)
	if err != nil {
		g.t.Fatal(err)
	}
	evs, _ := g.w.enrich(&broker.Record{Topic: telemetry.TopicRawGNMI, Value: v})
	var got []string
	for _, e := range evs {
		got = append(got, e.Type+" "+e.Object+": "+eventMessage(e.Message))
	}
	return got
}

// status is the collector's gnmi_status at min: gnmi_up up.
func (g *gnmiRig) status(min int, up int64) []string {
	at := g.at(min)
	f := map[string]any{"gnmi_up": up, "error": ""}
	if up == 0 {
		f["error"] = "gnmi spine1: capabilities: rpc error: code = Unavailable desc = connection refused"
	}
	return g.enrich(telemetry.Metric{V: 1, Measurement: gnmi.StatusMeasurement, Device: "spine1", Fields: f, Time: at, ReceivedAt: at, Source: gnmi.Source})
}

// oper is Ethernet1's oper-status v, stamped by the device's clock ahead
// by skew, received at min.
func (g *gnmiRig) oper(min int, v string, skew time.Duration) []string {
	at := g.at(min)
	p, _ := gnmi.ParsePath("/interfaces/interface[name=Ethernet1]/state", "")
	l, _ := gnmi.ParsePath("oper-status", "")
	n := &gpb.Notification{Prefix: p, Timestamp: at.Add(skew).UnixNano(),
		Update: []*gpb.Update{{Path: l, Val: &gpb.TypedValue{Value: &gpb.TypedValue_StringVal{StringVal: v}}}}}
	var got []string
	for _, m := range gnmi.Flatten("spine1", n, at) {
		got = append(got, g.enrich(m)...)
	}
	return got
}

func (g *gnmiRig) want(step string, got []string, want ...string) {
	g.t.Helper()
	if !slices.Equal(got, want) {
		g.t.Errorf("%s: events %q, want %q", step, got, want)
	}
}

// TestGNMIReachability: the gNMI collector's gnmi_status records make a
// gNMI target's reachability events, as snmp_status's do an SNMP
// target's: a failed attempt is device_unreachable with its error, once;
// the first session after is device_reachable. A target that came back
// while weir was stopped gets no gnmi_up 1 (the new process's first
// attempt did not fail): its data, received after the down, says it
// answers. Through an outage of over an hour its interfaces' states are
// kept, so a link that went down meanwhile is interface_down in the
// snapshot after.
func TestGNMIReachability(t *testing.T) {
	g := newGNMIRig(t)
	const failed = "device_unreachable gnmi:spine1: gNMI subscription failed: gnmi spine1: capabilities: rpc error: code = Unavailable desc = connection refused"
	g.want("the first sync", g.oper(0, "UP", 0))
	g.want("a failed attempt", g.status(1, 0), failed)
	for min := 2; min <= 90; min++ {
		g.want("another failed attempt", g.status(min, 0))
	}
	g.want("the first session after", g.status(91, 1), "device_reachable gnmi:spine1: gNMI subscription answered again")
	g.want("its snapshot: the link went down meanwhile", g.oper(91, "DOWN", 0), "interface_down Ethernet1: oper-status DOWN")

	// Down again; then its data, with no gnmi_up 1 (weir restarted
	// meanwhile), from a device clock 10 minutes behind.
	g.want("down again", g.status(100, 0), failed)
	g.want("data received after the down", g.oper(101, "UP", -10*time.Minute),
		"device_reachable gnmi:spine1: gNMI subscription answered again", "interface_up Ethernet1: oper-status UP")
	g.want("data again", g.oper(102, "DOWN", -10*time.Minute), "interface_down Ethernet1: oper-status DOWN")
	if len(g.w.gnmiDown) != 0 {
		t.Errorf("targets held down: %v", g.w.gnmiDown)
	}

	// A target down from its first attempt is news, as an SNMP target's;
	// taken out of the config while down, its outage is cleared.
	g2 := newGNMIRig(t)
	g2.want("down from the start", g2.status(0, 0), failed)
	at := g2.at(5)
	g2.want("removed while down", g2.enrich(telemetry.Metric{V: 1, Measurement: gnmi.StatusMeasurement, Device: "spine1",
		Fields: map[string]any{"removed": true}, Time: at, ReceivedAt: at, Source: gnmi.Source}),
		"device_unreachable_cleared gnmi:spine1: gNMI target taken out of the config (removed): its reachability is no longer known")
	if len(g2.w.gnmiDown) != 0 {
		t.Errorf("targets held down after the removal: %v", g2.w.gnmiDown)
	}

	// Down, then no status for over an hour (the collector moved to
	// another process): the down is forgotten with its state.
	g3 := newGNMIRig(t)
	g3.want("down", g3.status(0, 0), failed)
	g3.w.forgetStates(g3.at(61).Add(-forgetAfter))
	if len(g3.w.gnmiDown) != 0 {
		t.Errorf("targets held down after their state was forgotten: %v", g3.w.gnmiDown)
	}
}

// TestGNMIStatusDecodes: the collector's gnmi_status record, as it
// encodes it, gives the worker a gnmi_up (not a field it skips).
func TestGNMIStatusDecodes(t *testing.T) {
	m := telemetry.Metric{V: 1, Measurement: gnmi.StatusMeasurement, Device: "spine1", Fields: map[string]any{"gnmi_up": int64(0), "error": "x"}, Source: gnmi.Source}
	v, err := json.Marshal(&m)
	if err != nil {
		t.Fatal(err)
	}
	var p telemetry.Point
	var dec telemetry.Decoder
	if err := dec.DecodePoint(v, &p); err != nil {
		t.Fatal(err)
	}
	if up, ok := reachability(&p); !ok || up != 0 {
		t.Errorf("gnmi_up %v %v from %s", up, ok, v)
	}
}

// TestGNMIImplicitReachableAtReceipt: the device_reachable that a gNMI
// target's data received after its down raises (no gnmi_up 1 came) is
// stamped when weir received the data, as the down and the collector's
// own gnmi_up 1 are, not by the device's clock: 10 minutes behind, the
// event said the target came back 9 minutes before it went down.
func TestGNMIImplicitReachableAtReceipt(t *testing.T) {
	g := newGNMIRig(t)
	g.status(0, 0)
	at := g.at(1)
	p, _ := gnmi.ParsePath("/interfaces/interface[name=Ethernet1]/state", "")
	l, _ := gnmi.ParsePath("oper-status", "")
	n := &gpb.Notification{Prefix: p, Timestamp: at.Add(-10 * time.Minute).UnixNano(),
		Update: []*gpb.Update{{Path: l, Val: &gpb.TypedValue{Value: &gpb.TypedValue_StringVal{StringVal: "UP"}}}}}
	var found bool
	for _, m := range gnmi.Flatten("spine1", n, at) {
		v, _, err := m.AppendJSON(nil, nil)
		if err != nil {
			t.Fatal(err)
		}
		evs, _ := g.w.enrich(&broker.Record{Topic: telemetry.TopicRawGNMI, Value: v, Timestamp: at})
		for _, e := range evs {
			if e.Type == "device_reachable" {
				found = true
				if !e.Time.Equal(at) {
					t.Errorf("device_reachable at %v, want %v (received), after the down at %v", e.Time, at, g.t0)
				}
			}
		}
	}
	if !found {
		t.Error("no device_reachable from the data received after the down")
	}
}

// TestGNMIAndSNMPTargetsOfOneNameEachTheirOwnOutage: spine1 is both an SNMP
// target and a gNMI target, with no inventory name. The gNMI subscription
// fails (wrong credentials, say) while SNMP answers; then one SNMP poll
// times out and the next answers. That ends the SNMP outage alone: the
// gNMI one, still failing, stays raised, and ends when gNMI answers. With
// one object for both ("" of device spine1), the SNMP poll's recovery
// ended the gNMI outage, and nothing raised it again.
func TestGNMIAndSNMPTargetsOfOneNameEachTheirOwnOutage(t *testing.T) {
	inv, _ := ParseInventory([]byte(testInventory))
	rules := NewEventRules(DefaultDedupWindow, DefaultFlapThreshold, DefaultFlapWindow)
	worker := func(topic string) *MetricsWorker {
		w := NewMetricsWorker(nil, inv, WithInputTopic(topic), WithSharedEventRules(rules))
		w.out = newOutputs(nil, topic, w.logger, w.m, false)
		return w
	}
	snmpW, gnmiW := worker(telemetry.TopicRawSNMP), worker(telemetry.TopicRawGNMI)
	t0 := time.Now().Add(-time.Hour).Truncate(time.Second)
	offset := map[string]int64{}
	var got []string
	status := func(min int, measurement, field string, up int64) {
		at := t0.Add(time.Duration(min) * time.Minute)
		w, topic, source := snmpW, telemetry.TopicRawSNMP, "snmp"
		if measurement == gnmi.StatusMeasurement {
			w, topic, source = gnmiW, telemetry.TopicRawGNMI, gnmi.Source
		}
		w.rates.setNow(at)
		m := telemetry.Metric{V: 1, Measurement: measurement, Device: "spine1", Fields: map[string]any{field: up, "error": ""},
			Time: at, ReceivedAt: at, Source: source}
		v, _, err := m.AppendJSON(nil, nil)
		if err != nil {
			t.Fatal(err)
		}
		_, events := w.enrichBatch([]broker.Record{{Topic: topic, Offset: offset[topic], Timestamp: at, Key: []byte("spine1"), Value: v}}, nil, nil)
		offset[topic]++
		for _, o := range events {
			var ev telemetry.Event
			if err := json.Unmarshal(o.rec.Value, &ev); err != nil {
				t.Fatal(err)
			}
			got = append(got, ev.Type+" "+ev.Object)
		}
	}
	status(0, "snmp_status", "snmp_up", 1)
	status(1, gnmi.StatusMeasurement, "gnmi_up", 0)
	status(2, "snmp_status", "snmp_up", 0)
	status(3, "snmp_status", "snmp_up", 1)
	status(4, gnmi.StatusMeasurement, "gnmi_up", 0)
	status(5, gnmi.StatusMeasurement, "gnmi_up", 1)
	want := []string{"device_unreachable gnmi:spine1", "device_unreachable ", "device_reachable ", "device_reachable gnmi:spine1"}
	if !slices.Equal(got, want) {
		t.Errorf("events %q, want %q", got, want)
	}
}
