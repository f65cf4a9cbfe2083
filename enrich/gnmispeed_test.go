package enrich

import (
	"math"
	"testing"
	"time"

	"github.com/weirnet/weir/telemetry"
)

// TestGNMIUtilisationFromPortSpeed: gNMI rows had no speed, so no
// utilisation: a dashboard of in_utilization_pct showed the SNMP-polled
// devices alone. The speed an interface's ethernet/state (port-speed, or
// negotiated-port-speed when known) or a LAG's aggregation/state
// (lag-speed) gives is kept for its counter rows, which then carry
// speed_mbps and utilisation, in the interface view too; a speed sent
// once (on_change) stays while the counters come.
func TestGNMIUtilisationFromPortSpeed(t *testing.T) {
	w := loneMetricsWorker()
	send := gnmiSender(t, w)
	speedRow := func(at time.Time, name, measurement string, fields map[string]any) telemetry.Metric {
		return telemetry.Metric{Measurement: measurement, Tags: map[string]string{"name": name}, Fields: fields, Time: at}
	}
	counters := func(at time.Time, name string, in, out uint64) telemetry.Metric {
		return telemetry.Metric{Measurement: "interfaces_interface_state_counters", Tags: map[string]string{"name": name},
			Fields:   map[string]any{"in-octets": in, "out-octets": out},
			Counters: []string{"in-octets", "out-octets"}, Counters64: []string{"in-octets", "out-octets"}, Time: at}
	}
	t0 := casesT0
	send(speedRow(t0, "Ethernet1", "interfaces_interface_ethernet_state", map[string]any{"port-speed": "openconfig-if-ethernet:SPEED_10GB"}))
	send(speedRow(t0, "Ethernet2", "interfaces_interface_ethernet_state",
		map[string]any{"port-speed": "SPEED_UNKNOWN", "negotiated-port-speed": "openconfig-if-ethernet:SPEED_2500MB"}))
	send(speedRow(t0, "Port-Channel1", "interfaces_interface_aggregation_state", map[string]any{"lag-speed": uint64(20000)}))
	for _, tc := range []struct {
		name  string
		speed float64
	}{{"Ethernet1", 10000}, {"Ethernet2", 2500}, {"Port-Channel1", 20000}} {
		send(counters(t0, tc.name, 1_000, 2_000))
		// 10 s at 1,250 Mbit/s in and 2,500 out.
		f := send(counters(t0.Add(10*time.Second), tc.name, 1_000+10*156_250_000, 2_000+10*312_500_000))
		if f["speed_mbps"] != tc.speed {
			t.Errorf("%s: speed_mbps %v, want %v", tc.name, f["speed_mbps"], tc.speed)
		}
		wantIn, wantOut := 1250/tc.speed*100, 2500/tc.speed*100
		if f["in_utilization_pct"] != telemetry.RoundSignificant(wantIn, rateDigits) || f["out_utilization_pct"] != telemetry.RoundSignificant(wantOut, rateDigits) {
			t.Errorf("%s: utilisation in %v out %v, want %v and %v", tc.name, f["in_utilization_pct"], f["out_utilization_pct"], wantIn, wantOut)
		}
		if !w.interfaceView(&w.row, &w.view) {
			t.Fatalf("%s: no interface view", tc.name)
		}
		if v, ok := w.view.Field("in_utilization_pct"); !ok {
			t.Errorf("%s: the interface view has no in_utilization_pct", tc.name)
		} else if x, _ := v.Number(); x != f["in_utilization_pct"] {
			t.Errorf("%s: the interface view's in_utilization_pct %v, the row's %v", tc.name, x, f["in_utilization_pct"])
		}
	}

	// An interface with no speed row: rates, no utilisation.
	send(counters(t0, "Ethernet3", 1_000, 2_000))
	if f := send(counters(t0.Add(10*time.Second), "Ethernet3", 11_000, 22_000)); f["in_octets_rate"] != 1000 {
		t.Errorf("Ethernet3: in_octets_rate %v, want 1000", f["in_octets_rate"])
	} else if _, ok := f["in_utilization_pct"]; ok {
		t.Errorf("Ethernet3: utilisation without a speed: %v", f)
	}

	// A subscription to the interface container: speed and counters in
	// one row.
	whole := func(at time.Time, in uint64) telemetry.Metric {
		return telemetry.Metric{Measurement: "interfaces_interface", Tags: map[string]string{"name": "Ethernet4"},
			Fields:   map[string]any{"ethernet/state/port-speed": "SPEED_100GB", "state/counters/in-octets": in, "state/oper-status": "UP"},
			Counters: []string{"state/counters/in-octets"}, Counters64: []string{"state/counters/in-octets"}, Time: at}
	}
	send(whole(t0, 0))
	if f := send(whole(t0.Add(10*time.Second), 10*1_250_000_000)); f["speed_mbps"] != 100000 || f["in_utilization_pct"] != 10 {
		t.Errorf("Ethernet4: speed_mbps %v, in_utilization_pct %v; want 100000 and 10", f["speed_mbps"], f["in_utilization_pct"])
	}

	// Two hours of counters later, with no speed row since, the speed
	// is still known: the counters kept it seen.
	last := t0.Add(10 * time.Second)
	for at := last.Add(10 * time.Minute); !at.After(t0.Add(2 * time.Hour)); at = at.Add(10 * time.Minute) {
		send(counters(at, "Ethernet1", uint64(at.Sub(t0).Seconds())*156_250_000, uint64(at.Sub(t0).Seconds())*312_500_000))
		w.forgetStates(at.Add(-time.Hour))
		last = at
	}
	if f := send(counters(last.Add(10*time.Second), "Ethernet1", uint64(last.Add(10*time.Second).Sub(t0).Seconds())*156_250_000, 0)); f["speed_mbps"] != 10000 {
		t.Errorf("two hours on: speed_mbps %v, want 10000 (forgotten while its counters came)", f["speed_mbps"])
	}
}

func TestPortSpeedMbps(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want float64
		ok   bool
	}{
		{"SPEED_10MB", 10, true}, {"SPEED_100MB", 100, true}, {"SPEED_1GB", 1000, true}, {"SPEED_2500MB", 2500, true},
		{"SPEED_25GB", 25000, true}, {"SPEED_400GB", 400000, true}, {"SPEED_800GB", 800000, true},
		{"SPEED_UNKNOWN", 0, false}, {"SPEED_GB", 0, false}, {"SPEED_0GB", 0, false}, {"10GB", 0, false}, {"", 0, false},
		{"SPEED_-1GB", 0, false}, {"SPEED_99999999999GB", 0, false},
	} {
		got, ok := portSpeedMbps(tc.in)
		if got != tc.want || ok != tc.ok {
			t.Errorf("portSpeedMbps(%q) = %v, %v; want %v, %v", tc.in, got, ok, tc.want, tc.ok)
		}
	}
}

// TestGNMIDeleteForgetsSpeed: a port removed from the config (a gNMI
// delete of the interface, or of its ethernet state) and made again kept
// the old port's speed for its utilisation until a speed row came; on
// an on_change subscription that may be never. A delete of every
// interface forgets every speed of that target, not of another.
func TestGNMIDeleteForgetsSpeed(t *testing.T) {
	w := loneMetricsWorker()
	off := int64(0)
	send := func(device string, m telemetry.Metric) map[string]float64 {
		t.Helper()
		m.V, m.Device, m.Source = 1, device, "gnmi"
		off++
		f, _ := enrichAt(t, w, m, off)
		return f
	}
	speed := func(at time.Time, name string) telemetry.Metric {
		return telemetry.Metric{Measurement: "interfaces_interface_ethernet_state", Tags: map[string]string{"name": name},
			Fields: map[string]any{"port-speed": "SPEED_10GB"}, Time: at}
	}
	deleted := func(at time.Time, measurement, name string) telemetry.Metric {
		m := telemetry.Metric{Measurement: measurement, Fields: map[string]any{"deleted": true}, Time: at}
		if name != "" {
			m.Tags = map[string]string{"name": name}
		}
		return m
	}
	counters := func(at time.Time, name string, in uint64) telemetry.Metric {
		return telemetry.Metric{Measurement: "interfaces_interface_state_counters", Tags: map[string]string{"name": name},
			Fields: map[string]any{"in-octets": in}, Counters: []string{"in-octets"}, Counters64: []string{"in-octets"}, Time: at}
	}
	// speedAfter sends two counter rows of name, 10 s apart from at, and
	// gives the second's speed_mbps (0: none).
	speedAfter := func(device string, at time.Time, name string) float64 {
		t.Helper()
		send(device, counters(at, name, 1_000))
		return send(device, counters(at.Add(10*time.Second), name, 1_000+10*125_000_000))["speed_mbps"]
	}
	t0 := casesT0
	for _, name := range []string{"Ethernet1", "Ethernet2", "Ethernet3"} {
		send("spine1", speed(t0, name))
	}
	send("spine2", speed(t0, "Ethernet1"))
	if s := speedAfter("spine1", t0, "Ethernet1"); s != 10_000 {
		t.Fatalf("before any delete: speed_mbps %v, want 10000", s)
	}
	t1 := t0.Add(time.Minute)
	send("spine1", deleted(t1, "interfaces_interface", "Ethernet1"))
	send("spine1", deleted(t1, "interfaces_interface_ethernet_state", "Ethernet2"))
	for _, name := range []string{"Ethernet1", "Ethernet2"} {
		if s := speedAfter("spine1", t1.Add(time.Second), name); s != 0 {
			t.Errorf("%s deleted: speed_mbps %v, want none", name, s)
		}
	}
	if s := speedAfter("spine1", t1.Add(time.Second), "Ethernet3"); s != 10_000 {
		t.Errorf("Ethernet3, not deleted: speed_mbps %v, want 10000", s)
	}
	t2 := t1.Add(time.Minute)
	send("spine1", deleted(t2, "interfaces", ""))
	if s := speedAfter("spine1", t2.Add(time.Second), "Ethernet3"); s != 0 {
		t.Errorf("every interface deleted: Ethernet3's speed_mbps %v, want none", s)
	}
	if s := speedAfter("spine2", t2.Add(time.Second), "Ethernet1"); s != 10_000 {
		t.Errorf("spine2, whose interfaces were not deleted: speed_mbps %v, want 10000", s)
	}
	// A delete older than the speed (a target that stamps its deletes
	// by another clock) leaves it.
	send("spine2", deleted(t0.Add(-time.Second), "interfaces_interface", "Ethernet1"))
	if s := speedAfter("spine2", t2.Add(time.Minute), "Ethernet1"); s != 10_000 {
		t.Errorf("spine2 after an older delete: speed_mbps %v, want 10000", s)
	}
}

// TestGNMILagSpeedMustBeAUint32: a lag-speed is a uint32 of Mbit/s; one
// that is not (a fraction, 1e300, past 2^32-1, from a target or a Kafka
// client) is no speed, as a fractional ifSpeed is: its counters keep
// their rates, with no utilisation (1e300 converted to an integer was
// whatever the CPU made of it, 0.5 became 0).
func TestGNMILagSpeedMustBeAUint32(t *testing.T) {
	for _, bad := range []any{0.5, 1e300, 4294967296.0, 20000.5} {
		send := gnmiSender(t, loneMetricsWorker())
		t0 := casesT0
		send(telemetry.Metric{Measurement: "interfaces_interface_aggregation_state", Tags: map[string]string{"name": "Port-Channel1"},
			Fields: map[string]any{"lag-speed": bad}, Time: t0})
		counters := func(at time.Time, in uint64) telemetry.Metric {
			return telemetry.Metric{Measurement: "interfaces_interface_state_counters", Tags: map[string]string{"name": "Port-Channel1"},
				Fields: map[string]any{"in-octets": in}, Counters: []string{"in-octets"}, Counters64: []string{"in-octets"}, Time: at}
		}
		send(counters(t0, 1000))
		f := send(counters(t0.Add(10*time.Second), 1000+10*125_000_000))
		if _, ok := f["in_octets_rate"]; !ok {
			t.Errorf("lag-speed %v: no rate: %v", bad, f)
		}
		if s, ok := f["speed_mbps"]; ok {
			t.Errorf("lag-speed %v: speed_mbps %v, want none", bad, s)
		}
		if u, ok := f["in_utilization_pct"]; ok {
			t.Errorf("lag-speed %v: in_utilization_pct %v, want none", bad, u)
		}
	}
}

// gnmiSender enriches rows of spine1's gNMI target with w, each at the
// next offset, and returns the enriched row's numeric fields.
func gnmiSender(t *testing.T, w *MetricsWorker) func(telemetry.Metric) map[string]float64 {
	off := int64(0)
	return func(m telemetry.Metric) map[string]float64 {
		t.Helper()
		m.V, m.Device, m.Source = 1, "spine1", "gnmi"
		off++
		f, _ := enrichAt(t, w, m, off)
		return f
	}
}

// TestGNMIUtilisationFromLaneSpeeds: openconfig-if-ethernet names some
// speeds by their lanes too (SPEED_100GB_2LANE, SPEED_200GB_4LANE,
// SPEED_50GB_1LANE, ...: a 100G port on 50G SerDes, as Arista EOS reports
// a 400G port broken out to 4x100G), and those ports had no speed, so no
// utilisation, while an SNMP poll of the same port has its ifHighSpeed.
func TestGNMIUtilisationFromLaneSpeeds(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want float64
	}{
		{"openconfig-if-ethernet:SPEED_100GB_2LANE", 100_000}, {"SPEED_200GB_4LANE", 200_000},
		{"SPEED_200GB_8LANE", 200_000}, {"SPEED_50GB_1LANE", 50_000}, {"SPEED_400GB", 400_000},
	} {
		send := gnmiSender(t, loneMetricsWorker())
		t0 := casesT0
		send(telemetry.Metric{Measurement: "interfaces_interface_ethernet_state", Tags: map[string]string{"name": "Ethernet1/1"},
			Fields: map[string]any{"port-speed": tc.in}, Time: t0})
		counters := func(at time.Time, in uint64) telemetry.Metric {
			return telemetry.Metric{Measurement: "interfaces_interface_state_counters", Tags: map[string]string{"name": "Ethernet1/1"},
				Fields: map[string]any{"in-octets": in}, Counters: []string{"in-octets"}, Counters64: []string{"in-octets"}, Time: at}
		}
		send(counters(t0, 0))
		// 10 s at 10 Gbit/s.
		f := send(counters(t0.Add(10*time.Second), 10*1_250_000_000))
		if f["speed_mbps"] != tc.want {
			t.Errorf("port-speed %s: speed_mbps %v, want %v", tc.in, f["speed_mbps"], tc.want)
		}
		if want := telemetry.RoundSignificant(10_000/tc.want*100, rateDigits); f["in_utilization_pct"] != want {
			t.Errorf("port-speed %s: in_utilization_pct %v, want %v", tc.in, f["in_utilization_pct"], want)
		}
	}
	// Not a speed: a lane count alone, or anything after the unit but
	// lanes.
	for _, bad := range []string{"SPEED_2LANE", "SPEED_100GB_", "SPEED_100GB_XLANE", "SPEED_100GB_2", "SPEED_100GBX"} {
		if mbps, ok := portSpeedMbps(bad); ok {
			t.Errorf("portSpeedMbps(%q) = %v, want none", bad, mbps)
		}
	}
}

// TestGNMIWrapAt2To64FitsThePortSpeed: a 64-bit counter that goes back by
// more than half the range reads as a wrap at 2^64, which is one only when
// what it carried fits the link, as TestWrapAt2To64FitsTheLink has it for
// an IF-MIB row. A gNMI row's link speed is its interface's port-speed,
// which gave it utilisation but was not looked at for the wrap: from a
// first sample just under 2^64 (a target's counter underflowed, or its
// "no value") to the counter's real 5 TB was a wrap of 5 TB in a minute,
// 83 GB/s and 6,666% of a 10 Gbit/s port. A real wrap that fits keeps its
// rate.
func TestGNMIWrapAt2To64FitsThePortSpeed(t *testing.T) {
	for _, tc := range []struct {
		values []uint64
		rates  []float64 // -1: none
	}{
		{[]uint64{math.MaxUint64 - 1, 5_000_000_000_000, 5_000_000_060_000}, []float64{-1, -1, 1000}},
		{[]uint64{math.MaxUint64 - 59_999, 1000, 61000}, []float64{-1, 1016.66667, 1000}},
	} {
		send := gnmiSender(t, loneMetricsWorker())
		send(telemetry.Metric{Measurement: "interfaces_interface_ethernet_state", Tags: map[string]string{"name": "Ethernet1"},
			Fields: map[string]any{"port-speed": "SPEED_10GB"}, Time: casesT0.Add(-time.Second)})
		for i, v := range tc.values {
			f := send(telemetry.Metric{Measurement: "interfaces_interface_state_counters", Tags: map[string]string{"name": "Ethernet1"},
				Fields: map[string]any{"in-octets": v, "in-errors": v}, Counters: []string{"in-errors", "in-octets"},
				Counters64: []string{"in-errors", "in-octets"}, Time: casesT0.Add(time.Duration(i) * time.Minute)})
			for _, field := range []string{"in_octets_rate", "in_errors_rate"} {
				rate, has := f[field]
				if want := tc.rates[i]; has != (want >= 0) || has && rate != want {
					t.Errorf("%v: sample %d: %s %v %v (utilisation %v), want %v", tc.values, i, field, rate, has, f["in_utilization_pct"], want)
				}
			}
		}
	}
}
