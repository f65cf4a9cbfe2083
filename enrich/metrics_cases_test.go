package enrich

import (
	"bytes"
	"encoding/json"
	"fmt"
	"log/slog"
	"maps"
	"math"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/weirnet/weir/broker"
	"github.com/weirnet/weir/telemetry"
)

var casesT0 = time.Date(2026, 12, 2, 10, 55, 11, 0, time.UTC)

func loneMetricsWorker() *MetricsWorker {
	inv, _ := ParseInventory([]byte(testInventory))
	w := NewMetricsWorker(nil, inv)
	w.out = newOutputs(nil, telemetry.TopicRawSNMP, w.logger, w.m, false)
	return w
}

// enrichAt enriches m as a metrics worker would at m's time, returning
// the enriched row's numeric fields and the events.
func enrichAt(t *testing.T, w *MetricsWorker, m telemetry.Metric, off int64) (map[string]float64, []telemetry.Event) {
	t.Helper()
	w.rates.setNow(m.Time.Add(time.Second))
	v, err := json.Marshal(&m)
	if err != nil {
		t.Fatal(err)
	}
	evs, ok := w.enrich(&broker.Record{Topic: telemetry.TopicRawSNMP, Offset: off, Value: v})
	if !ok {
		t.Fatal("not enriched")
	}
	out := map[string]float64{}
	for _, f := range w.row.Fields {
		if x, ok := f.Number(); ok {
			out[f.Key] = x
		}
	}
	return out, evs
}

// TestGNMIStateContainerHasInterfaceView: a gNMI target sending
// /interfaces/interface[name=X]/state as one JSON object (a subscription to
// the state container, whose oper-status raises interface events too) gets
// the normalised rates and an "interface" record, as one subscribed to
// state/counters does: it was missing from the one dashboard.
func TestGNMIStateContainerHasInterfaceView(t *testing.T) {
	w := loneMetricsWorker()
	for i := 0; i < 2; i++ {
		m := telemetry.Metric{V: 1, Measurement: "interfaces_interface_state", Device: "spine1",
			Tags:     map[string]string{"name": "Ethernet1", "path": "/interfaces/interface[name=Ethernet1]/state"},
			Fields:   map[string]any{"counters/in-octets": uint64(1000 + i*60000), "counters/out-octets": uint64(2000 + i*120000), "oper-status": "UP"},
			Counters: []string{"counters/in-octets", "counters/out-octets"}, Counters64: []string{"counters/in-octets", "counters/out-octets"},
			Time: casesT0.Add(time.Duration(i) * time.Minute), Source: "gnmi"}
		f, _ := enrichAt(t, w, m, int64(i))
		if i == 0 {
			continue
		}
		if f["counters/in-octets_rate"] != 1000 {
			t.Fatalf("raw rate %v", f)
		}
		if f["in_octets_rate"] != 1000 || f["out_octets_rate"] != 2000 {
			t.Errorf("normalised rates missing: %v", f)
		}
		if !w.interfaceView(&w.row, &w.view) {
			t.Errorf("no interface view for the gNMI state container row")
		}
	}
}

// TestDescriptionChangeKeepsRates: editing an interface's description
// (ifAlias, a label and so a tag) touches no counter: the poll after the
// edit has its rates (it had none, the row taken for a new series).
func TestDescriptionChangeKeepsRates(t *testing.T) {
	w := loneMetricsWorker()
	for i, alias := range []string{"to core1", "to core1", "to core2", "to core2"} {
		m := telemetry.Metric{V: 1, Measurement: "snmp_interface", Device: "edge1",
			Tags:   map[string]string{"ifName": "Gi0/1", "ifIndex": "1", "ifAlias": alias, "agent": "192.0.2.1"},
			Fields: map[string]any{"ifHCInOctets": uint64(1000 + i*6_000_000), "ifHighSpeed": int64(100)}, Counters: []string{"ifHCInOctets"}, Counters64: []string{"ifHCInOctets"},
			Time: casesT0.Add(time.Duration(i) * time.Minute), Uptime: uint32(100000 + i*6000), Source: "snmp"}
		f, _ := enrichAt(t, w, m, int64(i))
		if _, ok := f["in_octets_rate"]; i > 0 && (!ok || f["in_octets_rate"] != 100000) {
			t.Errorf("poll %d (ifAlias %q): in_octets_rate %v, want 100000", i, alias, f["in_octets_rate"])
		}
	}
}

// TestDuplicateIfDescrIsTwoInterfaces: two ports that share an ifDescr (no
// ifName), one up and one down, steady over three polls, raise no events:
// their ifIndex tells their states apart.
func TestDuplicateIfDescrIsTwoInterfaces(t *testing.T) {
	inv, _ := ParseInventory([]byte(testInventory))
	w := NewMetricsWorker(nil, inv)
	t0 := time.Date(2026, 11, 29, 14, 0, 0, 0, time.UTC)
	var evs []string
	for poll := range 3 {
		at := t0.Add(time.Duration(poll) * time.Minute)
		w.rates.setNow(at)
		for _, port := range []struct {
			idx  string
			oper int64
		}{{"1", 1}, {"2", 2}} {
			m := telemetry.Metric{V: 1, Measurement: "snmp_interface", Device: "sw1",
				Tags:   map[string]string{"ifIndex": port.idx, "ifDescr": "Ethernet Interface"},
				Fields: map[string]any{"ifOperStatus": port.oper}, Time: at, Uptime: uint32(100 + poll*6000), Source: "snmp"}
			v, _ := json.Marshal(&m)
			got, _ := w.enrich(&broker.Record{Topic: "raw.snmp", Value: v, Timestamp: at})
			for _, e := range got {
				evs = append(evs, e.Type+" "+e.Object)
			}
		}
	}
	if len(evs) != 0 {
		t.Errorf("two steady ports with one ifDescr raised %d events: %v", len(evs), evs)
	}
}

// TestIOSAbbreviatedIfNameOneView: Cisco IOS's ifName is abbreviated
// (Gi0/1), its ifDescr and gNMI's name are not (GigabitEthernet0/1): the
// interface view names the port as gNMI does, so one device polled by
// both shows one series per port. Names that are no abbreviation of the
// ifDescr (eth0 beside a hardware description) stay as they are.
func TestIOSAbbreviatedIfNameOneView(t *testing.T) {
	w := loneMetricsWorker()
	for i, tc := range []struct{ ifName, ifDescr, want string }{
		{"Gi0/1", "GigabitEthernet0/1", "GigabitEthernet0/1"},
		{"Po12", "Port-channel12", "Port-channel12"},
		{"Te1/0/1", "TenGigabitEthernet1/0/1", "TenGigabitEthernet1/0/1"},
		{"Ethernet1", "Ethernet1", "Ethernet1"},
		{"eth0", "Intel Corporation 82540EM Gigabit Ethernet Controller", "eth0"},
		{"Gi0/1", "GigabitEthernet0/10", "Gi0/1"},
		{"ge-0/0/1", "ge-0/0/1", "ge-0/0/1"},
	} {
		m := telemetry.Metric{V: 1, Measurement: "snmp_interface", Device: "edge1",
			Tags:   map[string]string{"ifName": tc.ifName, "ifDescr": tc.ifDescr, "ifIndex": "1"},
			Fields: map[string]any{"ifHCInOctets": uint64(1000), "ifOperStatus": int64(1)}, Counters: []string{"ifHCInOctets"},
			Time: casesT0.Add(time.Duration(i) * time.Minute), Source: "snmp"}
		enrichAt(t, w, m, int64(i))
		if !w.interfaceView(&w.row, &w.view) {
			t.Fatalf("%s: no interface view", tc.ifName)
		}
		if got, _ := w.view.Tag("interface"); got != tc.want {
			t.Errorf("ifName %q, ifDescr %q: interface %q, want %q", tc.ifName, tc.ifDescr, got, tc.want)
		}
	}
}

// TestUtilisationOfExactSpeed: ifHighSpeed is ifSpeed rounded to the
// nearest Mbit/s (RFC 2863), so below 4.3 Gbit/s, where ifSpeed is exact,
// a T1 (1.544 Mbit/s) is "2" and a 512 kbit/s line "1": utilisation of
// ifHighSpeed showed a T1 at line rate as 77% and an E1 (2.048) as 102%.
// ifSpeed is taken where it agrees with ifHighSpeed; where it does not (an
// agent that wraps ifSpeed of a 10G port modulo 2^32), ifHighSpeed is.
func TestUtilisationOfExactSpeed(t *testing.T) {
	for _, tc := range []struct {
		name       string
		high, bps  int64
		mbps, rate float64 // rate in octets/s, at line rate
	}{
		{"T1", 2, 1_544_000, 1.544, 193_000},
		{"E1", 2, 2_048_000, 2.048, 256_000},
		{"512k", 1, 512_000, 0.512, 64_000},
		{"E3", 34, 34_368_000, 34.368, 4_296_000},
		{"1G", 1000, 1_000_000_000, 1000, 125_000_000},
		{"10G, ifSpeed saturated", 10000, 4_294_967_295, 10000, 1_250_000_000},
		{"10G, ifSpeed wrapped by the agent", 10000, 1_410_065_408, 10000, 1_250_000_000},
	} {
		w := loneMetricsWorker()
		var f map[string]float64
		for i := range 2 {
			m := telemetry.Metric{V: 1, Measurement: "snmp_interface", Device: "edge1",
				Tags:     map[string]string{"ifName": "Se0/0", "ifIndex": "1"},
				Fields:   map[string]any{"ifHCInOctets": uint64(1000 + float64(i)*60*tc.rate), "ifHighSpeed": tc.high, "ifSpeed": tc.bps},
				Counters: []string{"ifHCInOctets"}, Counters64: []string{"ifHCInOctets"},
				Time: casesT0.Add(time.Duration(i) * time.Minute), Uptime: uint32(100000 + i*6000), Source: "snmp"}
			f, _ = enrichAt(t, w, m, int64(i))
		}
		if f["speed_mbps"] != tc.mbps || f["in_utilization_pct"] != 100 {
			t.Errorf("%s (ifHighSpeed %d, ifSpeed %d) at line rate: speed_mbps %v, in_utilization_pct %v; want %v, 100",
				tc.name, tc.high, tc.bps, f["speed_mbps"], f["in_utilization_pct"], tc.mbps)
		}
	}
}

// TestDuplicateIfDescrTwoViews: two ports of an agent without ifXTable (no
// ifName) that share an ifDescr have two interface views, told apart by
// their ifIndex: they were one series, named by the ifDescr alone, each
// poll's second port overwriting the first in Prometheus and InfluxDB. A
// port with an ifName keeps the view it had, without the ifIndex.
func TestDuplicateIfDescrTwoViews(t *testing.T) {
	w := loneMetricsWorker()
	views := map[string]float64{}
	for i := range 2 {
		for _, port := range []struct {
			index, name string
			rate        uint64
		}{{"1", "", 1000}, {"2", "", 2000}, {"3", "Gi0/3", 3000}} {
			tags := map[string]string{"ifDescr": "Ethernet Interface", "ifIndex": port.index}
			if port.name != "" {
				tags["ifName"] = port.name
			}
			m := telemetry.Metric{V: 1, Measurement: "snmp_interface", Device: "printer1", Tags: tags,
				Fields: map[string]any{"ifInOctets": 1000 + uint64(i*60)*port.rate}, Counters: []string{"ifInOctets"},
				Time: casesT0.Add(time.Duration(i) * time.Minute), Uptime: uint32(100000 + i*6000), Source: "snmp"}
			enrichAt(t, w, m, int64(i))
			if i == 0 || !w.interfaceView(&w.row, &w.view) {
				continue
			}
			var key []string
			for _, tag := range w.view.Tags {
				key = append(key, tag.Key+"="+tag.Value)
			}
			f, _ := w.view.Field("in_octets_rate")
			views[strings.Join(key, ",")], _ = f.Number()
		}
	}
	want := map[string]float64{
		"ifIndex=1,interface=Ethernet Interface,unknown=true": 1000,
		"ifIndex=2,interface=Ethernet Interface,unknown=true": 2000,
		"interface=Gi0/3,unknown=true":                        3000,
	}
	if !maps.Equal(views, want) {
		t.Errorf("interface views %v, want %v", views, want)
	}
}

// TestGNMIUnchangedCounterRateZero: a gNMI notification's timestamp is
// when its values last changed (the gNMI specification; Arista EOS's
// default), so a sampled counter that stands still comes again and again
// with the time it last moved. Those samples were ignored as replays: an
// interface gone idle kept its last traffic rate in Prometheus until it
// went stale, and a port without errors had no in_errors_rate at all. The
// same value at the same time, sampled again, is a rate of 0.
func TestGNMIUnchangedCounterRateZero(t *testing.T) {
	w := loneMetricsWorker()
	type sample struct {
		sec, ts     int // sent at, stamped with (seconds)
		in, errs    uint64
		inRate, err float64 // -1: none
	}
	for i, s := range []sample{
		{0, 0, 1000, 5, -1, -1},
		{10, 10, 11000, 5, 1000, -1}, // in-errors unchanged since 0: sent apart, below
		{20, 20, 21000, 5, 1000, 0},
		{30, 20, 21000, 5, 0, 0}, // idle since 20
		{40, 20, 21000, 5, 0, 0},
		{50, 50, 51000, 6, 1000, 1.0 / 30},
	} {
		m := telemetry.Metric{V: 1, Measurement: "interfaces_interface_state_counters", Device: "spine1",
			Tags:     map[string]string{"name": "Ethernet1", "path": "/interfaces/interface[name=Ethernet1]/state/counters"},
			Fields:   map[string]any{"in-octets": s.in, "in-errors": s.errs},
			Counters: []string{"in-errors", "in-octets"}, Counters64: []string{"in-errors", "in-octets"},
			Time: casesT0.Add(time.Duration(s.ts) * time.Second), ReceivedAt: casesT0.Add(time.Duration(s.sec) * time.Second), Source: "gnmi"}
		if s.sec == 10 {
			// The error counter did not change: it comes in a
			// notification of its own, stamped when it last did.
			delete(m.Fields, "in-errors")
			m.Counters, m.Counters64 = []string{"in-octets"}, []string{"in-octets"}
			enrichAt(t, w, m, int64(2*i))
			m.Fields, m.Counters, m.Counters64 = map[string]any{"in-errors": s.errs}, []string{"in-errors"}, []string{"in-errors"}
			m.Time = casesT0
			f, _ := enrichAt(t, w, m, int64(2*i+1))
			if got, ok := f["in_errors_rate"]; !ok || got != 0 {
				t.Errorf("sample %d: unchanged in-errors: in_errors_rate %v %v, want 0", i, got, ok)
			}
			continue
		}
		w.rates.setNow(m.ReceivedAt)
		f, _ := enrichAt(t, w, m, int64(2*i))
		for _, c := range []struct {
			name string
			want float64
		}{{"in_octets_rate", s.inRate}, {"in_errors_rate", s.err}} {
			got, ok := f[c.name]
			if c.want < 0 && ok || c.want >= 0 && (!ok || math.Abs(got-c.want) > 1e-9) {
				t.Errorf("sample %d (sent at %ds, stamped %ds): %s %v %v, want %v", i, s.sec, s.ts, c.name, got, ok, c.want)
			}
		}
	}
}

// TestClearCounters32NoPhantomPacketRates: IF-MIB's error and discard
// counters are 32 bits wide only. A port that discarded 2.5 billion
// packets, then `clear counters` (sysUpTime moving on): ifInDiscards goes
// 2,500,000,000 -> 1,000, which as a 32-bit wrap is 1.8 billion in a
// minute, in_discards_rate 29.9 million/s on a 1 Gbit/s port that can
// carry 1.5 million packets a second at most. As for octets, a wrap the
// port could not carry is a reset: no rate. A real wrap is kept.
func TestClearCounters32NoPhantomPacketRates(t *testing.T) {
	for _, tc := range []struct {
		name     string
		discards []uint64
		want     []bool
	}{
		{"clear counters", []uint64{2_499_000_000, 2_500_000_000, 1_000, 61_000}, []bool{false, true, false, true}},
		{"a wrap", []uint64{4_294_000_000, 4_294_900_000, 600_000}, []bool{false, true, true}},
	} {
		w := loneMetricsWorker()
		var got []bool
		for i, d := range tc.discards {
			m := telemetry.Metric{V: 1, Measurement: "snmp_interface", Device: "edge1",
				Tags:   map[string]string{"ifName": "Gi0/1", "ifIndex": "1"},
				Fields: map[string]any{"ifInDiscards": d, "ifInErrors": d, "ifHighSpeed": int64(1000)}, Counters: []string{"ifInDiscards", "ifInErrors"},
				Time: casesT0.Add(time.Duration(i) * time.Minute), Uptime: uint32(100000 + i*6000), Source: "snmp"}
			f, _ := enrichAt(t, w, m, int64(i))
			_, ok := f["in_discards_rate"]
			_, eok := f["in_errors_rate"]
			if ok != eok {
				t.Errorf("%s poll %d: in_discards_rate %v, in_errors_rate %v", tc.name, i, ok, eok)
			}
			got = append(got, ok)
		}
		if !slices.Equal(got, tc.want) {
			t.Errorf("%s: in_discards_rate at polls %v, want %v", tc.name, got, tc.want)
		}
	}
}

// TestInvalidCounterIsCountedAndUnlisted: a raw record (from a producer
// other than weir's collectors) that lists as a counter a field whose
// value is no counter value (a string, a negative number, a fraction, a
// boolean, null) gives no rate for it, and was passed on silently: still
// listed in counters, so the Prometheus sink wrote -5 as a counter
// (`..._total -5`), nothing counted or logged why its rate never came. It
// is now left out of the record's counters (the value stays, as what it
// is) and counted in weir_enrich_invalid_counters_total (not among the
// dropped outputs: the record is published); the record's valid counters
// keep their rates.
func TestInvalidCounterIsCountedAndUnlisted(t *testing.T) {
	w := loneMetricsWorker()
	dropped := func() float64 {
		if n := testutil.ToFloat64(w.m.dropped.WithLabelValues(telemetry.TopicRawSNMP, "invalid_counter")); n != 0 {
			t.Errorf("counted as %v dropped outputs, though published", n)
		}
		return testutil.ToFloat64(w.m.invalidCounters.WithLabelValues(telemetry.TopicRawSNMP))
	}
	for i, bad := range []any{"12345", int64(-5), 1.5, true, nil} {
		before := dropped()
		for poll := range 2 {
			m := telemetry.Metric{V: 1, Measurement: "snmp_interface", Device: "edge1",
				Tags:     map[string]string{"ifName": "Gi0/1", "ifIndex": "1", "agent": "192.0.2.1"},
				Fields:   map[string]any{"ifHCInOctets": uint64(1000 + poll*60_000), "ifHCOutOctets": bad},
				Counters: []string{"ifHCInOctets", "ifHCOutOctets"}, Counters64: []string{"ifHCInOctets", "ifHCOutOctets"},
				Time: casesT0.Add(time.Duration(i*2+poll) * time.Minute), Uptime: uint32(100000 + (i*2+poll)*6000), Source: "snmp"}
			f, _ := enrichAt(t, w, m, int64(i*2+poll))
			if poll == 1 && f["ifHCInOctets_rate"] != 1000 {
				t.Errorf("%#v: the valid counter's rate is %v, want 1000", bad, f["ifHCInOctets_rate"])
			}
			if slices.Contains(w.row.Counters, "ifHCOutOctets") || slices.Contains(w.row.Counters64, "ifHCOutOctets") {
				t.Errorf("%#v: still listed as a counter: counters %v, counters64 %v", bad, w.row.Counters, w.row.Counters64)
			}
			if !slices.Contains(w.row.Counters, "ifHCInOctets") || !slices.Contains(w.row.Counters64, "ifHCInOctets") {
				t.Errorf("%#v: the valid counter is no longer listed: counters %v, counters64 %v", bad, w.row.Counters, w.row.Counters64)
			}
		}
		if n := dropped() - before; n != 2 {
			t.Errorf("%#v: weir_enrich_invalid_counters_total went up by %v for two records, want 2", bad, n)
		}
	}
}

// TestInvalidCountersExportedFromTheStart: a metrics worker exports
// weir_enrich_invalid_counters_total for its input topic at 0 before any
// record, as the worker's other counters of known labels are, so an alert
// on its increase sees the first invalid counter; the series used to appear
// only with it.
func TestInvalidCountersExportedFromTheStart(t *testing.T) {
	reg := prometheus.NewPedanticRegistry()
	m := NewWorkerMetrics(reg)
	NewMetricsWorker(nil, nil, WithWorkerMetrics(m))
	NewMetricsWorker(nil, nil, WithWorkerMetrics(m), WithInputTopic(telemetry.TopicRawGNMI))
	families, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, f := range families {
		if f.GetName() != "weir_enrich_invalid_counters_total" {
			continue
		}
		for _, s := range f.GetMetric() {
			for _, l := range s.GetLabel() {
				got = append(got, fmt.Sprintf("%s=%s %v", l.GetName(), l.GetValue(), s.GetCounter().GetValue()))
			}
		}
	}
	if want := []string{"topic=raw.gnmi 0", "topic=raw.snmp 0"}; !slices.Equal(got, want) {
		t.Errorf("weir_enrich_invalid_counters_total before any record: %q, want %q", got, want)
	}
}

// TestUntrackedClearsExportedFromTheStart: weir_enrich_untracked_total
// has its kind "clears" at 0 from a syslog worker's start, as the metrics
// worker's kinds are; it appeared only at the first flapping object past
// the bound, after a restart.
func TestUntrackedClearsExportedFromTheStart(t *testing.T) {
	reg := prometheus.NewPedanticRegistry()
	NewWorker(nil, nil, nil, WithWorkerMetrics(NewWorkerMetrics(reg)))
	families, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, f := range families {
		if f.GetName() == "weir_enrich_untracked_total" {
			for _, s := range f.GetMetric() {
				for _, l := range s.GetLabel() {
					got = append(got, fmt.Sprintf("%s=%s %v", l.GetName(), l.GetValue(), s.GetCounter().GetValue()))
				}
			}
		}
	}
	if want := []string{"kind=clears 0"}; !slices.Equal(got, want) {
		t.Errorf("weir_enrich_untracked_total of a syslog worker before any record: %q, want %q", got, want)
	}
}

// TestBooleanSpeedIsNoSpeed: a raw row whose ifSpeed or ifHighSpeed is a
// boolean (a producer other than weir's collectors) has no speed: true
// was taken for 1 (bit/s, or Mbit/s), and the row got speed_mbps 1e-06 and
// a utilisation of millions of percent.
func TestBooleanSpeedIsNoSpeed(t *testing.T) {
	for _, field := range []string{"ifSpeed", "ifHighSpeed"} {
		w := loneMetricsWorker()
		for poll := range 2 {
			m := telemetry.Metric{V: 1, Measurement: "snmp_interface", Device: "edge1",
				Tags:     map[string]string{"ifName": "Gi0/1", "ifIndex": "1", "agent": "192.0.2.1"},
				Fields:   map[string]any{"ifHCInOctets": uint64(1000 + poll*60_000), field: true},
				Counters: []string{"ifHCInOctets"}, Counters64: []string{"ifHCInOctets"},
				Time: casesT0.Add(time.Duration(poll) * time.Minute), Uptime: uint32(100000 + poll*6000), Source: "snmp"}
			f, _ := enrichAt(t, w, m, int64(poll))
			if _, ok := f["speed_mbps"]; ok {
				t.Errorf("%s true: speed_mbps %v, want none", field, f["speed_mbps"])
			}
			if _, ok := f["in_utilization_pct"]; ok {
				t.Errorf("%s true: in_utilization_pct %v, want none", field, f["in_utilization_pct"])
			}
		}
	}
}

// TestRecordWithoutMeasurementOrDevice: a raw record with no measurement
// or no device (a producer other than weir's collectors) was enriched and
// published, and the Prometheus sink served it unprefixed
// (`if_hc_in_octets{device="x"}`), or with no device. It is counted as
// undecodable, and the warning for such records is throttled.
func TestRecordWithoutMeasurementOrDevice(t *testing.T) {
	w := loneMetricsWorker()
	var logs bytes.Buffer
	w.logger = slog.New(slog.NewTextHandler(&logs, nil))
	before := decodeErrorsOf(w.m, telemetry.TopicRawSNMP)
	for i, m := range []telemetry.Metric{
		{V: 1, Device: "edge1", Fields: map[string]any{"x": 1}, Time: casesT0},
		{V: 1, Measurement: "snmp_interface", Fields: map[string]any{"x": 1}, Time: casesT0},
		{V: 1, Measurement: "snmp_interface", Fields: map[string]any{"x": 1}, Time: casesT0},
	} {
		v, _ := json.Marshal(&m)
		if _, ok := w.enrich(&broker.Record{Topic: telemetry.TopicRawSNMP, Offset: int64(i), Value: v}); ok {
			t.Errorf("%s: enriched", v)
		}
	}
	if n := decodeErrorsOf(w.m, telemetry.TopicRawSNMP) - before; n != 3 {
		t.Errorf("decode errors went up by %v, want 3", n)
	}
	if n := strings.Count(logs.String(), "skipping undecodable metric"); n != 1 {
		t.Errorf("%d warnings for 3 records at once, want 1 (throttled):\n%s", n, logs.String())
	}
}

// TestGNMIOperStatusIsOperUp: gNMI interface rows carry oper_up, as SNMP
// rows do from ifOperStatus, whether the target sends the leaf on change,
// the state container or the interface container, so the one dashboard's
// interface_oper_up shows both sources; only UP is up.
func TestGNMIOperStatusIsOperUp(t *testing.T) {
	for _, tc := range []struct {
		measurement, field, value string
		up                        bool
	}{
		{"interfaces_interface_state", "oper-status", "UP", true},
		{"interfaces_interface_state", "oper-status", "DOWN", false},
		{"interfaces_interface_state", "oper-status", "LOWER_LAYER_DOWN", false},
		{"interfaces_interface_state", "oper-status", "TESTING", false},
		{"interfaces_interface_state", "oper-status", "openconfig-interfaces:UP", true},
		{"interfaces_interface", "state/oper-status", "UP", true},
		{"interfaces_interface", "state/oper-status", "DORMANT", false},
	} {
		w := loneMetricsWorker()
		m := telemetry.Metric{V: 1, Measurement: tc.measurement, Device: "spine1",
			Tags:   map[string]string{"name": "Ethernet1"},
			Fields: map[string]any{tc.field: tc.value}, Time: casesT0, Source: "gnmi"}
		enrichAt(t, w, m, 0)
		f, ok := w.row.Field("oper_up")
		if !ok || f.Kind != telemetry.FieldBool || f.Bool() != tc.up {
			t.Errorf("%s %s=%s: oper_up %+v (present %v), want %v", tc.measurement, tc.field, tc.value, f, ok, tc.up)
			continue
		}
		if !w.interfaceView(&w.row, &w.view) {
			t.Errorf("%s %s=%s: no interface view", tc.measurement, tc.field, tc.value)
			continue
		}
		if f, ok := w.view.Field("oper_up"); !ok || f.Bool() != tc.up {
			t.Errorf("%s %s=%s: the interface view's oper_up %+v (present %v)", tc.measurement, tc.field, tc.value, f, ok)
		}
	}
}

// TestHCCountersReadingZeroFallBack: some agents list ifXTable's 64-bit
// counters and leave them at 0 on some ports (subinterfaces, VLANs, older
// firmware) while the 32-bit ones count. The normalised rates came from
// the 64-bit counter alone: in_octets_rate 0 for ever on a busy port. A
// 64-bit counter at 0 while its 32-bit one (its low 32 bits, RFC 2863)
// is not cannot be the port's: the 32-bit one gives the rate. Both at 0
// (a clear, an idle port) keep the 64-bit one first.
func TestHCCountersReadingZeroFallBack(t *testing.T) {
	w := loneMetricsWorker()
	for i := range 3 {
		m := telemetry.Metric{V: 1, Measurement: "snmp_interface", Device: "edge1",
			Tags: map[string]string{"ifName": "Vl10", "ifIndex": "10"},
			Fields: map[string]any{"ifHCInOctets": uint64(0), "ifInOctets": uint64(1000 + i*60_000),
				"ifHCOutOctets": uint64(0), "ifOutOctets": uint64(0), "ifHighSpeed": int64(1)},
			Counters:   []string{"ifHCInOctets", "ifHCOutOctets", "ifInOctets", "ifOutOctets"},
			Counters64: []string{"ifHCInOctets", "ifHCOutOctets"},
			Time:       casesT0.Add(time.Duration(i) * time.Minute), Uptime: uint32(100000 + i*6000), Source: "snmp"}
		f, _ := enrichAt(t, w, m, int64(i))
		if i == 0 {
			continue
		}
		if f["in_octets_rate"] != 1000 || f["in_utilization_pct"] != 0.8 {
			t.Errorf("poll %d: in_octets_rate %v, in_utilization_pct %v; want 1000 from ifInOctets, 0.8", i, f["in_octets_rate"], f["in_utilization_pct"])
		}
		if r, ok := f["out_octets_rate"]; !ok || r != 0 {
			t.Errorf("poll %d: out_octets_rate %v (present %v), want 0", i, r, ok)
		}
	}
}

// TestStatusOutOfOrderNoEvents: a poll older than the last one seen (a
// duplicate produced again, or two pollers' records crossing at a
// handover) is ignored for rates, and was taken for statuses: up at t0,
// down at t1, t0's up again flipped the state back (interface_up, whose
// record's log time is the newest, so published) and the poll at t2 down
// once more (interface_down): two false events of a link that went down
// once. The same for snmp_up.
func TestStatusOutOfOrderNoEvents(t *testing.T) {
	w := loneMetricsWorker()
	var got []string
	for i, p := range []struct {
		dt         time.Duration
		oper, up   int64
		uptimeSecs int
	}{{0, 1, 1, 1000}, {time.Minute, 2, 0, 1060}, {0, 1, 1, 1000}, {2 * time.Minute, 2, 0, 1120}} {
		at := casesT0.Add(p.dt)
		for j, m := range []telemetry.Metric{
			{V: 1, Measurement: "snmp_interface", Device: "edge1", Tags: map[string]string{"ifName": "Gi0/1", "ifIndex": "1"},
				Fields: map[string]any{"ifOperStatus": p.oper}, Time: at, Uptime: uint32(p.uptimeSecs * 100), Source: "snmp"},
			{V: 1, Measurement: "snmp_status", Device: "edge1", Fields: map[string]any{"snmp_up": p.up}, Time: at, Source: "snmp"},
		} {
			_, evs := enrichAt(t, w, m, int64(2*i+j))
			for _, ev := range evs {
				got = append(got, ev.Type)
			}
		}
	}
	if want := []string{"interface_down", "device_unreachable"}; !slices.Equal(got, want) {
		t.Errorf("events %v, want %v", got, want)
	}
}

// TestHCCounterReadingZeroOnceNoSpike: an agent whose 64-bit octet
// counter reads 0 at one poll while its 32-bit one (its low 32 bits)
// counts on. That 0 is not the port's (see lowBitsCounting), yet it was
// kept as the counter's last sample: the next poll's rate was the whole
// counter over one interval (8e10 B/s, a utilisation of 66,666%), in
// in_octets_rate and ifHCInOctets_rate. The next real value's rate is
// over the time since the last real one.
func TestHCCounterReadingZeroOnceNoSpike(t *testing.T) {
	w := loneMetricsWorker()
	const base = uint64(5_000_000_000_000)
	for i := range 5 {
		hc := base + uint64(i*60_000)
		in32 := hc & 0xffffffff
		if i == 2 {
			hc = 0 // unset at this poll only
		}
		m := telemetry.Metric{V: 1, Measurement: "snmp_interface", Device: "edge1",
			Tags:       map[string]string{"ifName": "Gi0/1", "ifIndex": "1"},
			Fields:     map[string]any{"ifHCInOctets": hc, "ifInOctets": in32, "ifHighSpeed": int64(100)}, // a port whose 32-bit counter a minute's traffic cannot wrap twice
			Counters:   []string{"ifHCInOctets", "ifInOctets"},
			Counters64: []string{"ifHCInOctets"},
			Time:       casesT0.Add(time.Duration(i) * time.Minute), Uptime: uint32(100000 + i*6000), Source: "snmp"}
		f, _ := enrichAt(t, w, m, int64(i))
		if i == 0 {
			continue
		}
		if f["in_octets_rate"] != 1000 {
			t.Errorf("poll %d: in_octets_rate %v, want 1000", i, f["in_octets_rate"])
		}
		if r, ok := f["ifHCInOctets_rate"]; ok && r != 1000 {
			t.Errorf("poll %d: ifHCInOctets_rate %v, want 1000 or none", i, r)
		}
	}
}

// TestTargetDownFromFirstPollIsUnreachable: a target that never answered
// (down when weir started, a mistyped address) raised no
// device_unreachable: its first snmp_up was taken as the baseline, as an
// interface's first state is (an unused port is down for good). A device
// weir was told to poll and cannot reach is news; once, not every poll.
// When no more states are kept (max objects), nothing is raised, or every
// poll would raise it again.
func TestTargetDownFromFirstPollIsUnreachable(t *testing.T) {
	w := loneMetricsWorker()
	status := func(device string, i int, up int64) telemetry.Metric {
		return telemetry.Metric{V: 1, Measurement: "snmp_status", Device: device, Fields: map[string]any{"snmp_up": up},
			Time: casesT0.Add(time.Duration(i) * time.Minute), Source: "snmp"}
	}
	var got []string
	for i, up := range []int64{0, 0, 0, 1, 1} {
		_, evs := enrichAt(t, w, status("edge1", i, up), int64(i))
		for _, ev := range evs {
			got = append(got, ev.Type+" "+ev.Device)
		}
	}
	if want := []string{"device_unreachable edge1", "device_reachable edge1"}; !slices.Equal(got, want) {
		t.Errorf("events %v, want %v", got, want)
	}
	for i, up := range []int64{1, 1} {
		if _, evs := enrichAt(t, w, status("edge2", i, up), int64(10+i)); len(evs) != 0 {
			t.Errorf("edge2 up from its first poll: events %+v, want none", evs)
		}
	}

	w = loneMetricsWorker()
	w.maxObjects = 1
	enrichAt(t, w, status("edge1", 0, 1), 0)
	for i := range 3 {
		if _, evs := enrichAt(t, w, status("edge3", i, 0), int64(1+i)); len(evs) != 0 {
			t.Errorf("poll %d of a target whose state is not kept: events %+v, want none", i, evs)
		}
	}
}

// TestGNMIStandingCounterStampedWhenReceived: a counter standing still,
// sampled again with the time it last changed, gives a rate of 0 (above)
// stamped with when it came: stamped with the time it last changed, the
// same as the rate before it, InfluxDB kept the 0 in that rate's place
// (one point a series and time). A later change is stamped as the device
// says again.
func TestGNMIStandingCounterStampedWhenReceived(t *testing.T) {
	w := loneMetricsWorker()
	var times []time.Time
	for i, s := range []struct{ sec, ts int }{{0, 0}, {10, 10}, {20, 10}, {30, 10}, {40, 40}} {
		m := telemetry.Metric{V: 1, Measurement: "interfaces_interface_state_counters", Device: "spine1",
			Tags:     map[string]string{"name": "Ethernet1", "path": "/interfaces/interface[name=Ethernet1]/state/counters"},
			Fields:   map[string]any{"in-octets": uint64(1000 + 1000*min(s.ts, 10))},
			Counters: []string{"in-octets"}, Counters64: []string{"in-octets"},
			Time: casesT0.Add(time.Duration(s.ts) * time.Second), ReceivedAt: casesT0.Add(time.Duration(s.sec)*time.Second + 5*time.Millisecond), Source: "gnmi"}
		if s.ts == 40 {
			m.Fields["in-octets"] = uint64(41000)
		}
		enrichAt(t, w, m, int64(i))
		times = append(times, w.row.Time)
	}
	want := []time.Time{casesT0, casesT0.Add(10 * time.Second), casesT0.Add(20*time.Second + 5*time.Millisecond),
		casesT0.Add(30*time.Second + 5*time.Millisecond), casesT0.Add(40 * time.Second)}
	if !slices.EqualFunc(times, want, time.Time.Equal) {
		t.Errorf("published at %v, want %v", times, want)
	}
}
