package enrich

import (
	"bytes"
	"fmt"
	"log/slog"
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

// TestCounterJumpingByHalfTheRangeIsNoRate: a counter that jumps forward
// by 2^63 or more between two samples did not count that many (9.2 EB in
// one interval; 10^17 B/s over a minute): a producer writing -1 as
// unsigned, an agent's "no value" of 2^64-1. It is a reset, as a move back
// by as much is: no rate, not a spike of 3e17 B/s and utilisation of 2e11
// percent. Nor is its fall back to the counter's real value a wrap at 2^64
// (a rate of the whole counter over one interval).
func TestCounterJumpingByHalfTheRangeIsNoRate(t *testing.T) {
	for _, tc := range []struct {
		name  string
		m     string
		field string
		tags  map[string]string
	}{
		{"snmp", "snmp_interface", "ifHCInOctets", map[string]string{"ifName": "Gi0/1", "ifIndex": "1"}},
		{"gnmi", "interfaces_interface_state_counters", "in-octets", map[string]string{"name": "Ethernet1"}},
	} {
		w := loneMetricsWorker()
		for i, v := range []uint64{1000, 61000, math.MaxUint64, 5_000_000_061_000, 5_000_000_121_000} {
			m := telemetry.Metric{V: 1, Measurement: tc.m, Device: "edge9", Tags: tc.tags,
				Fields:   map[string]any{tc.field: v, "ifHighSpeed": int64(1000)},
				Counters: []string{tc.field}, Counters64: []string{tc.field},
				Time: casesT0.Add(time.Duration(i) * time.Minute)}
			if tc.m == "snmp_interface" {
				m.Uptime = uint32(100_000 + i*6000)
			}
			f, _ := enrichAt(t, w, m, int64(i))
			rate, has := f[tc.field+"_rate"]
			switch i {
			case 1, 4:
				if !has || rate != 1000 {
					t.Errorf("%s: sample %d: rate %v %v, want one", tc.name, i, rate, has)
				}
			case 2, 3:
				if has || f["in_octets_rate"] != 0 || f["in_utilization_pct"] != 0 {
					t.Errorf("%s: sample %d (%d): rate %v, in_octets_rate %v, utilisation %v: want none",
						tc.name, i, v, rate, f["in_octets_rate"], f["in_utilization_pct"])
				}
			}
		}
	}
}

// TestSpeedThatIsNoGauge32GivesNoUtilisation: ifSpeed and ifHighSpeed are
// Gauge32s, whole numbers. A producer's fraction there (1e-300, the least
// float) is no speed: its utilisation was +Inf, which JSON cannot hold, and
// the whole row, rates and all, was dropped as unencodable; a lesser one
// (0.001) gave 800,000 percent. The row keeps its rates, without speed.
func TestSpeedThatIsNoGauge32GivesNoUtilisation(t *testing.T) {
	for _, speed := range []map[string]any{
		{"ifSpeed": 1e-300},
		{"ifHighSpeed": math.SmallestNonzeroFloat64},
		{"ifHighSpeed": 0.001},
		{"ifSpeed": 0.5, "ifHighSpeed": 0.0},
		{"ifHighSpeed": 1e300},
	} {
		w := loneMetricsWorker()
		for i := 0; i < 2; i++ {
			fields := map[string]any{"ifHCInOctets": uint64(1000 + i*60_000_000), "ifOperStatus": int64(1)}
			for k, v := range speed {
				fields[k] = v
			}
			m := telemetry.Metric{V: 1, Measurement: "snmp_interface", Device: "edge9",
				Tags:   map[string]string{"ifName": "Gi0/1", "ifIndex": "1"},
				Fields: fields, Counters: []string{"ifHCInOctets"}, Counters64: []string{"ifHCInOctets"},
				Time: casesT0.Add(time.Duration(i) * time.Minute), Uptime: uint32(100_000 + i*6000)}
			f, _ := enrichAt(t, w, m, int64(i))
			if _, err := w.row.AppendJSON(nil); err != nil {
				t.Errorf("%v: sample %d: enriched row not encodable: %v", speed, i, err)
			}
			if i == 0 {
				continue
			}
			if f["in_octets_rate"] != 1e6 {
				t.Errorf("%v: in_octets_rate %v, want 1e6", speed, f["in_octets_rate"])
			}
			if u, ok := f["in_utilization_pct"]; ok {
				t.Errorf("%v: in_utilization_pct %v, speed_mbps %v: want none", speed, u, f["speed_mbps"])
			}
		}
	}
}

// TestWrapAt2To64FitsTheLink: a 64-bit counter that goes back by more than
// half the range reads as a wrap at 2^64; as a 32-bit wrap, it is one only
// when what it carried fits the link. A first sample of 2^64-1 (an agent's
// "no value") and then the counter's real 5 TB is no wrap of 5 TB in a
// minute (83 GB/s, 66,666% of 1 Gbit/s). A real wrap that fits keeps its
// rate.
func TestWrapAt2To64FitsTheLink(t *testing.T) {
	for _, tc := range []struct {
		values []uint64
		rates  []float64 // -1: none
	}{
		{[]uint64{math.MaxUint64, 5_000_000_000_000, 5_000_000_060_000}, []float64{-1, -1, 1000}},
		{[]uint64{math.MaxUint64 - 59_999, 1000, 61000}, []float64{-1, 1016.66667, 1000}},
	} {
		w := loneMetricsWorker()
		for i, v := range tc.values {
			m := telemetry.Metric{V: 1, Measurement: "snmp_interface", Device: "edge9",
				Tags:   map[string]string{"ifName": "Gi0/1", "ifIndex": "1"},
				Fields: map[string]any{"ifHCInOctets": v, "ifHighSpeed": int64(1000)}, Counters: []string{"ifHCInOctets"}, Counters64: []string{"ifHCInOctets"},
				Time: casesT0.Add(time.Duration(i) * time.Minute), Uptime: uint32(100_000 + i*6000)}
			f, _ := enrichAt(t, w, m, int64(i))
			rate, has := f["in_octets_rate"]
			if want := tc.rates[i]; has != (want >= 0) || has && rate != want {
				t.Errorf("%v: sample %d: in_octets_rate %v %v (utilisation %v), want %v", tc.values, i, rate, has, f["in_utilization_pct"], want)
			}
		}
	}
}

// enrichRaw enriches the raw value v (as a producer other than weir's
// collectors writes it: texts json.Marshal would not) at time at, as
// enrichAt does, returning the enriched row's numeric fields, the events,
// and whether it was enriched.
func enrichRaw(w *MetricsWorker, v string, at time.Time, off int64) (map[string]float64, []telemetry.Event, bool) {
	w.rates.setNow(at.Add(time.Second))
	evs, ok := w.enrich(&broker.Record{Topic: telemetry.TopicRawSNMP, Offset: off, Value: []byte(v)})
	out := map[string]float64{}
	for _, f := range w.row.Fields {
		if x, ok := f.Number(); ok {
			out[f.Key] = x
		}
	}
	return out, evs, ok
}

// enrichedValues enriches v as enrichBatch does and returns the values
// of the records it publishes (the row, and its interface view).
func enrichedValues(w *MetricsWorker, v string, at time.Time, off int64) []string {
	w.rates.setNow(at.Add(time.Second))
	metrics, _ := w.enrichBatch([]broker.Record{{Topic: telemetry.TopicRawSNMP, Offset: off, Value: []byte(v)}}, nil, nil)
	var out []string
	for _, m := range metrics {
		out = append(out, string(m.rec.Value))
	}
	return out
}

// TestCounterWrittenAsWholeFloatIsACounter: a counter a Python or
// JavaScript producer writes as a float whose value is a whole number
// (json.dumps writes 1000.0; 1e3, 1.5e3) was an invalid counter: no rate,
// unlisted from counters, counted in weir_enrich_invalid_counters_total.
// It is the integer it says: enriched exactly as weir's own integer is
// (its rate, the normalised rates, utilisation, the interface record, and
// the counter written as an integer, still listed), byte for byte; and
// exactly, past 2^53 (9007199254740993.0 is not 2^53).
func TestCounterWrittenAsWholeFloatIsACounter(t *testing.T) {
	snmp := `{"v":1,"measurement":"snmp_interface","device":"edge9","tags":{"ifIndex":"1","ifName":"Gi0/1"},` +
		`"fields":{"ifHCInOctets":%s,"ifHighSpeed":1000,"ifInErrors":%s,"ifInOctets":%s,"ifOperStatus":1},` +
		`"counters":["ifHCInOctets","ifInErrors","ifInOctets"],"counters64":["ifHCInOctets"],"time":"%s","received_at":"%[4]s","uptime":%d,"source":"py"}`
	gnmi := `{"v":1,"measurement":"interfaces_interface_state_counters","device":"spine1","tags":{"name":"Ethernet1","path":"/interfaces/interface[name=Ethernet1]/state/counters"},` +
		`"fields":{"in-errors":%s,"in-octets":%s,"out-octets":%s},"counters":["in-errors","in-octets","out-octets"],"counters64":["in-errors","in-octets","out-octets"],"time":"%s","received_at":"%[4]s","source":"py"}`
	for _, tc := range []struct {
		name         string
		format       string
		ints, floats [][3]string
	}{
		{"snmp", snmp,
			[][3]string{{"1000", "0", "500"}, {"61000", "6", "60500"}, {"121000", "12", "120500"}},
			[][3]string{{"1000.0", "0.0", "5e2"}, {"6.1e4", "6.0", "60500.000"}, {"1.21e5", "1.2E1", "1205e2"}}},
		{"snmp past 2^53", snmp,
			[][3]string{{"9007199254740993", "1", "1"}, {"9007199254741053", "61", "61"}},
			[][3]string{{"9007199254740993.0", "1.0", "1e0"}, {"9.007199254741053e15", "61.0", "6.1e1"}}},
		{"gnmi", gnmi,
			[][3]string{{"0", "1000", "7"}, {"60", "61000", "60007"}},
			[][3]string{{"-0.0", "1000.0", "7.0"}, {"6e1", "6.1e4", "60007.0"}}},
	} {
		ints, floats := loneMetricsWorker(), loneMetricsWorker()
		before := testutil.ToFloat64(floats.m.invalidCounters.WithLabelValues(telemetry.TopicRawSNMP))
		for i := range tc.ints {
			at := casesT0.Add(time.Duration(i) * time.Minute)
			record := func(v [3]string) string {
				if tc.format == gnmi {
					return fmt.Sprintf(tc.format, v[0], v[1], v[2], at.Format(time.RFC3339Nano))
				}
				return fmt.Sprintf(tc.format, v[0], v[1], v[2], at.Format(time.RFC3339Nano), 100_000+i*6000)
			}
			want := enrichedValues(ints, record(tc.ints[i]), at, int64(i))
			got := enrichedValues(floats, record(tc.floats[i]), at, int64(i))
			if !slices.Equal(got, want) {
				t.Errorf("%s: poll %d of %v:\n got %q\nwant %q", tc.name, i, tc.floats[i], got, want)
			}
			if i > 0 && !strings.Contains(strings.Join(want, ""), "_rate") {
				t.Errorf("%s: poll %d: no rates at all: %q", tc.name, i, want)
			}
		}
		if n := testutil.ToFloat64(floats.m.invalidCounters.WithLabelValues(telemetry.TopicRawSNMP)) - before; n != 0 {
			t.Errorf("%s: weir_enrich_invalid_counters_total went up by %v, want 0", tc.name, n)
		}
	}
}

// TestUptimeThatIsNoTimeTicks: a raw record whose uptime is no sysUpTime
// (-1, 1.5, "x", true, 2^32: a producer other than weir's collectors) was
// undecodable, skipped: its counters gave no rates and its fields were
// lost from enriched.metrics. It is enriched with no uptime (unknown) and
// counted in weir_enrich_invalid_uptimes_total; between two good uptimes it
// raises no device_rebooted and is no reset (the rates go on), and a real
// restart after it is still one.
func TestUptimeThatIsNoTimeTicks(t *testing.T) {
	for _, bad := range []string{"-1", "1.5", `"x"`, `"123456"`, "true", "4294967296", "1e12", `{"ticks":1}`} {
		reg := prometheus.NewPedanticRegistry()
		inv, _ := ParseInventory([]byte(testInventory))
		w := NewMetricsWorker(nil, inv, WithWorkerMetrics(NewWorkerMetrics(reg)))
		w.out = newOutputs(nil, telemetry.TopicRawSNMP, w.logger, w.m, false)
		var logs bytes.Buffer
		w.logger = slog.New(slog.NewTextHandler(&logs, nil))
		if got := gathered(t, reg, "weir_enrich_invalid_uptimes_total"); got != "topic=raw.snmp 0" {
			t.Errorf("weir_enrich_invalid_uptimes_total before any record: %q, want it at 0", got)
		}
		for i, poll := range []struct {
			uptime   string
			octets   int
			rate     float64 // -1: none
			rebooted bool
		}{
			{"100000", 1000, -1, false},
			{bad, 61000, 1000, false},
			{"112000", 121000, 1000, false},
			{bad, 181000, 1000, false},
			{"500", 50, -1, true}, // restarted 5 s ago: counters back
			{"6500", 60050, 1000, false},
		} {
			at := casesT0.Add(time.Duration(i) * time.Minute)
			v := fmt.Sprintf(`{"v":1,"measurement":"snmp_interface","device":"edge9","tags":{"ifIndex":"1","ifName":"Gi0/1"},"fields":{"ifHCInOctets":%d,"ifHighSpeed":1000},`+
				`"counters":["ifHCInOctets"],"counters64":["ifHCInOctets"],"time":"%s","uptime":%s,"source":"py"}`, poll.octets, at.Format(time.RFC3339), poll.uptime)
			f, evs, ok := enrichRaw(w, v, at, int64(i))
			if !ok {
				t.Errorf("uptime %s: poll %d not enriched", bad, i)
				continue
			}
			rate, has := f["ifHCInOctets_rate"]
			if want := poll.rate; has != (want >= 0) || has && rate != want {
				t.Errorf("uptime %s: poll %d: rate %v %v, want %v", bad, i, rate, has, want)
			}
			if has && f["in_octets_rate"] != rate {
				t.Errorf("uptime %s: poll %d: in_octets_rate %v, want %v", bad, i, f["in_octets_rate"], rate)
			}
			rebooted := slices.ContainsFunc(evs, func(e telemetry.Event) bool { return e.Type == "device_rebooted" })
			if rebooted != poll.rebooted {
				t.Errorf("uptime %s: poll %d: device_rebooted %v, want %v (%+v)", bad, i, rebooted, poll.rebooted, evs)
			}
			if poll.uptime == bad {
				if b, _ := w.row.AppendJSON(nil); w.row.Uptime != 0 || strings.Contains(string(b), `"uptime"`) {
					t.Errorf("uptime %s: enriched as %s", bad, b)
				}
			}
		}
		if got := gathered(t, reg, "weir_enrich_invalid_uptimes_total"); got != "topic=raw.snmp 2" {
			t.Errorf("uptime %s: weir_enrich_invalid_uptimes_total %q, want topic=raw.snmp 2", bad, got)
		}
		if got := gathered(t, reg, "weir_enrich_decode_errors_total"); got != "reason=incomplete,topic=raw.snmp 0;reason=malformed,topic=raw.snmp 0;reason=version,topic=raw.snmp 0" {
			t.Errorf("uptime %s: weir_enrich_decode_errors_total %q, want 0", bad, got)
		}
		if n := strings.Count(logs.String(), "uptime is no sysUpTime"); n != 1 || !strings.Contains(logs.String(), "offset=1 ") {
			t.Errorf("uptime %s: want one warning (throttled), of offset 1:\n%s", bad, logs.String())
		}
	}
}

// gathered is the samples of metric name in reg, as "label=value ... n",
// joined by ";".
func gathered(t *testing.T, reg *prometheus.Registry, name string) string {
	t.Helper()
	families, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, f := range families {
		if f.GetName() != name {
			continue
		}
		for _, s := range f.GetMetric() {
			var labels []string
			for _, l := range s.GetLabel() {
				labels = append(labels, l.GetName()+"="+l.GetValue())
			}
			out = append(out, fmt.Sprintf("%s %v", strings.Join(labels, ","), s.GetCounter().GetValue()))
		}
	}
	return strings.Join(out, ";")
}

// TestFirstSampleOfNoValueWithoutSpeed: a 64-bit counter whose first
// sample is 2^64-1 (an agent's "no value", -1 written unsigned) and then
// its real value gave a rate of the whole counter where no speed was known
// to check the "wrap" against (a gNMI row with no speed row, a counter of
// no interface): the move back from 2^64-1 is a reset, whatever came
// before it, and the next sample gives the rate.
func TestFirstSampleOfNoValueWithoutSpeed(t *testing.T) {
	for _, tc := range []struct {
		name, m, field string
		tags           map[string]string
	}{
		{"gnmi", "interfaces_interface_state_counters", "in-octets", map[string]string{"name": "Ethernet1"}},
		{"not an interface", "bgp_peer", "bgpPeerInUpdates", map[string]string{"peer": "192.0.2.1"}},
	} {
		w := loneMetricsWorker()
		for i, v := range []uint64{math.MaxUint64, 5_000_000_000_000, 5_000_000_060_000} {
			m := telemetry.Metric{V: 1, Measurement: tc.m, Device: "edge9", Tags: tc.tags,
				Fields: map[string]any{tc.field: v}, Counters: []string{tc.field}, Counters64: []string{tc.field},
				Time: casesT0.Add(time.Duration(i) * time.Minute)}
			f, _ := enrichAt(t, w, m, int64(i))
			rate, has := f[tc.field+"_rate"]
			if want := i == 2; has != want || has && rate != 1000 {
				t.Errorf("%s: sample %d (%d): rate %v %v, want a rate of 1000: %v", tc.name, i, v, rate, has, want)
			}
		}
	}
}
