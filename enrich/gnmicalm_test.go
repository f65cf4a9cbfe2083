package enrich

import (
	"slices"
	"testing"
	"time"

	gpb "github.com/openconfig/gnmi/proto/gnmi"

	"github.com/weirnet/weir/broker"
	"github.com/weirnet/weir/collectors/gnmi"
	"github.com/weirnet/weir/telemetry"
)

// TestGNMIStateAfterALongCalm: an on_change subscription without
// heartbeats sends Ethernet1's oper-status UP once; the worker goes on
// enriching other devices' records (and sweeping) for two hours, then DOWN
// comes. That is interface_down. The state had been forgotten an hour
// unseen, as a poll's is, and the DOWN was a first state: no event. A
// state unseen for over forgetQuietAfter (a target taken out of the
// config) still goes.
func TestGNMIStateAfterALongCalm(t *testing.T) {
	inv, _ := ParseInventory([]byte(testInventory))
	w := NewMetricsWorker(nil, inv, WithInputTopic(telemetry.TopicRawGNMI))
	t0 := time.Date(2026, 11, 29, 14, 0, 0, 0, time.UTC)
	send := func(at time.Time, iface, v string) []string {
		w.rates.setNow(at)
		w.sweepForgotten(at)
		p, err := gnmi.ParsePath("/interfaces/interface[name="+iface+"]/state", "")
		if err != nil {
			t.Fatal(err)
		}
		l, _ := gnmi.ParsePath("oper-status", "")
		n := &gpb.Notification{Prefix: p, Timestamp: at.UnixNano(),
			Update: []*gpb.Update{{Path: l, Val: &gpb.TypedValue{Value: &gpb.TypedValue_StringVal{StringVal: v}}}}}
		var got []string
		for _, m := range gnmi.Flatten("spine1", n, at) {
			b, _, err := m.AppendJSON(nil, nil)
			if err != nil {
				t.Fatal(err)
			}
			evs, _ := w.enrich(&broker.Record{Topic: telemetry.TopicRawGNMI, Value: b})
			for _, e := range evs {
				got = append(got, e.Type+" "+e.Object)
			}
		}
		return got
	}
	calm := func(from, to time.Duration) {
		for d := from; d < to; d += 5 * time.Minute { // other devices' records: sweeps
			w.rates.setNow(t0.Add(d))
			w.sweepForgotten(t0.Add(d))
		}
	}
	send(t0, "Ethernet1", "UP")
	send(t0, "Ethernet2", "UP")
	calm(time.Minute, 2*time.Hour)
	if got := send(t0.Add(2*time.Hour), "Ethernet1", "DOWN"); !slices.Equal(got, []string{"interface_down Ethernet1"}) {
		t.Errorf("DOWN after two calm hours: events %q, want interface_down Ethernet1", got)
	}
	calm(2*time.Hour+time.Minute, forgetQuietAfter+2*time.Hour)
	if got := send(t0.Add(forgetQuietAfter+2*time.Hour), "Ethernet2", "DOWN"); len(got) > 0 {
		t.Errorf("DOWN after over %v unseen: events %q, want none (a first state)", forgetQuietAfter, got)
	}
}
