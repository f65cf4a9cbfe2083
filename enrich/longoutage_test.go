package enrich

import (
	"encoding/json"
	"slices"
	"testing"
	"time"

	"github.com/weirnet/weir/broker"
	"github.com/weirnet/weir/telemetry"
)

// TestRebootAfterAnOutageOfOverAnHour: a site loses power for 90 minutes;
// its device's polls fail all along (snmp_status without an uptime, every
// minute), and the first that answers after has it up 5 minutes. That is a
// restart: device_unreachable, then device_reachable with
// device_rebooted. The target was polled all along, so its last sysUpTime
// is not one of a row gone from the network; forgotten an hour after it
// was read, the poll that answered had nothing to compare with and the
// reboot went unsaid (a coldStart trap sent before the uplink is up is
// lost).
func TestRebootAfterAnOutageOfOverAnHour(t *testing.T) {
	inv, _ := ParseInventory([]byte(testInventory))
	w := NewMetricsWorker(nil, inv)
	t0 := time.Date(2026, 11, 29, 14, 0, 0, 0, time.UTC)
	var got []string
	poll := func(min int, up int64, uptime uint32) {
		at := t0.Add(time.Duration(min) * time.Minute)
		w.rates.setNow(at.Add(time.Second))
		w.sweepForgotten(at.Add(time.Second)) // as the worker's loop does
		f := map[string]any{"snmp_up": up}
		if up == 0 {
			f["error"] = "snmp core9: request timeout"
		}
		m := telemetry.Metric{V: 1, Measurement: "snmp_status", Device: "core9", Tags: map[string]string{"agent": "192.0.2.9"},
			Fields: f, Time: at, Uptime: uptime, Source: "snmp"}
		v, _ := json.Marshal(&m)
		evs, _ := w.enrich(&broker.Record{Topic: telemetry.TopicRawSNMP, Offset: int64(min), Value: v})
		for _, e := range evs {
			got = append(got, e.Type)
		}
	}
	poll(0, 1, 100*24*3600*100) // up 100 days
	for min := 1; min <= 90; min++ {
		poll(min, 0, 0)
	}
	poll(91, 1, 5*60*100)
	slices.Sort(got)
	if want := []string{"device_reachable", "device_rebooted", "device_unreachable"}; !slices.Equal(got, want) {
		t.Errorf("events %q, want %q", got, want)
	}
}

// TestRemovalAfterAnOutageOfOverAnHourEndsIt: a device the inventory
// lists by its hostname alone (mx1), which its target (mx1-mgmt) finds by
// the sysName its polls read, goes down for good; 90 minutes later it is
// taken out of the config. Its device_unreachable_cleared ends the
// outage under the name and object the outage was raised with (mx1,
// mx1-mgmt). The target's sysName was forgotten an hour into the outage,
// though its failed polls came every minute, and the cleared event went
// out as mx1-mgmt's, ending nothing: the alert stayed.
func TestRemovalAfterAnOutageOfOverAnHourEndsIt(t *testing.T) {
	inv, _ := ParseInventory([]byte(testInventory))
	w := NewMetricsWorker(nil, inv)
	t0 := time.Date(2026, 11, 29, 14, 0, 0, 0, time.UTC)
	var got []string
	record := func(min int, measurement string, fields map[string]any, uptime uint32) {
		at := t0.Add(time.Duration(min) * time.Minute)
		w.rates.setNow(at.Add(time.Second))
		w.sweepForgotten(at.Add(time.Second))
		m := telemetry.Metric{V: 1, Measurement: measurement, Device: "mx1-mgmt", Tags: map[string]string{"agent": "198.51.100.7"},
			Fields: fields, Time: at, Uptime: uptime, Source: "snmp"}
		v, _ := json.Marshal(&m)
		evs, _ := w.enrich(&broker.Record{Topic: telemetry.TopicRawSNMP, Offset: int64(min), Value: v})
		for _, e := range evs {
			got = append(got, e.Type+" "+e.Device+" "+e.Object)
		}
	}
	record(0, "snmp_system", map[string]any{"sysName": "mx1"}, 100_000)
	record(0, "snmp_status", map[string]any{"snmp_up": int64(1)}, 100_000)
	for min := 1; min <= 90; min++ {
		record(min, "snmp_status", map[string]any{"snmp_up": int64(0), "error": "snmp mx1-mgmt: request timeout"}, 0)
	}
	record(91, "snmp_status", map[string]any{"removed": true}, 0)
	if want := []string{"device_unreachable mx1 mx1-mgmt", "device_unreachable_cleared mx1 mx1-mgmt"}; !slices.Equal(got, want) {
		t.Errorf("events %q, want %q", got, want)
	}
}

// TestLinkDownDuringAnOutageOfOverAnHour: a device's polls fail for 90
// minutes (its uplink is cut, say); meanwhile one of its links went down.
// When its polls answer again, the link's ifOperStatus down is a change:
// interface_down. Its state had been forgotten an hour into the outage, so
// the down was a first state, which raises nothing. A port gone while the
// polls answer is still forgotten after the hour.
func TestLinkDownDuringAnOutageOfOverAnHour(t *testing.T) {
	inv, _ := ParseInventory([]byte(testInventory))
	w := NewMetricsWorker(nil, inv)
	t0 := time.Date(2026, 11, 29, 14, 0, 0, 0, time.UTC)
	var got []string
	record := func(min int, measurement string, tags map[string]string, fields map[string]any) {
		at := t0.Add(time.Duration(min) * time.Minute)
		w.rates.setNow(at.Add(time.Second))
		w.sweepForgotten(at.Add(time.Second))
		tags["agent"] = "192.0.2.9"
		m := telemetry.Metric{V: 1, Measurement: measurement, Device: "core9", Tags: tags,
			Fields: fields, Time: at, Uptime: uint32(100*24*3600*100 + min*6000), Source: "snmp"}
		if measurement == "snmp_status" && fields["snmp_up"] == int64(0) {
			m.Uptime = 0
		}
		v, _ := json.Marshal(&m)
		evs, _ := w.enrich(&broker.Record{Topic: telemetry.TopicRawSNMP, Offset: int64(min), Value: v})
		for _, e := range evs {
			got = append(got, e.Type+" "+e.Object)
		}
	}
	link := func(min int, name string, oper int64) {
		record(min, "snmp_interface", map[string]string{"ifIndex": "3", "ifName": name}, map[string]any{"ifOperStatus": oper, "ifHCInOctets": uint64(1000 * min)})
	}
	record(0, "snmp_status", map[string]string{}, map[string]any{"snmp_up": int64(1)})
	link(0, "Gi0/3", 1)
	for min := 1; min <= 90; min++ {
		record(min, "snmp_status", map[string]string{}, map[string]any{"snmp_up": int64(0), "error": "snmp core9: request timeout"})
	}
	record(91, "snmp_status", map[string]string{}, map[string]any{"snmp_up": int64(1)})
	link(91, "Gi0/3", 2)
	if want := []string{"device_unreachable ", "device_reachable ", "interface_down Gi0/3"}; !slices.Equal(got, want) {
		t.Errorf("events %q, want %q", got, want)
	}
	// Answering again, the device no longer has the port: its state goes
	// an hour and ten minutes later at most, as any row's.
	for min := 92; min <= 92+70; min++ {
		record(min, "snmp_status", map[string]string{}, map[string]any{"snmp_up": int64(1)})
	}
	for k := range w.state {
		if k.what == "oper" {
			t.Errorf("state %v kept over an hour after the device answered without it", k)
		}
	}
}

// TestStatesOfATargetGoneDuringAnOutageAreForgotten: the states kept
// through an outage are not kept for good once the target's polls stop
// coming: taken out of the config during the outage (a removed
// snmp_status), or its partition gone to another worker (no record at
// all), its interface states go within 70 minutes, as any row's.
func TestStatesOfATargetGoneDuringAnOutageAreForgotten(t *testing.T) {
	for _, removed := range []bool{true, false} {
		inv, _ := ParseInventory([]byte(testInventory))
		w := NewMetricsWorker(nil, inv)
		t0 := time.Date(2026, 11, 29, 14, 0, 0, 0, time.UTC)
		record := func(min int, measurement string, tags map[string]string, fields map[string]any) {
			at := t0.Add(time.Duration(min) * time.Minute)
			w.rates.setNow(at.Add(time.Second))
			w.sweepForgotten(at.Add(time.Second))
			tags["agent"] = "192.0.2.9"
			m := telemetry.Metric{V: 1, Measurement: measurement, Device: "core9", Tags: tags,
				Fields: fields, Time: at, Uptime: uint32(100*24*3600*100 + min*6000), Source: "snmp"}
			if measurement == "snmp_status" {
				m.Uptime = 0
			}
			v, _ := json.Marshal(&m)
			w.enrich(&broker.Record{Topic: telemetry.TopicRawSNMP, Offset: int64(min), Value: v})
		}
		record(0, "snmp_status", map[string]string{}, map[string]any{"snmp_up": int64(1)})
		record(0, "snmp_interface", map[string]string{"ifIndex": "3", "ifName": "Gi0/3"}, map[string]any{"ifOperStatus": int64(1)})
		for min := 1; min <= 90; min++ {
			record(min, "snmp_status", map[string]string{}, map[string]any{"snmp_up": int64(0), "error": "snmp core9: request timeout"})
		}
		if removed {
			record(91, "snmp_status", map[string]string{}, map[string]any{"removed": true})
		}
		for min := 92; min <= 92+70; min++ {
			at := t0.Add(time.Duration(min) * time.Minute)
			w.rates.setNow(at) // other targets' records move the clock on
			w.sweepForgotten(at)
		}
		for k := range w.state {
			t.Errorf("removed %v: state %v kept 70 minutes after the target's last record", removed, k)
		}
	}
}
