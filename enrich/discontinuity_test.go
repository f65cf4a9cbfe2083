package enrich

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/weirnet/weir/broker"
	"github.com/weirnet/weir/telemetry"
)

// discontinuityPoll is one poll of a port's row in the discontinuity
// tests: its octet counters and its ifCounterDiscontinuityTime (-1: the
// row has no such column).
type discontinuityPoll struct {
	in32, in64 uint64
	disc       int64
}

// discontinuityRates enriches polls of one port every 30 s (sysUpTime
// moving on with them) and reports, for each, whether ifInOctets and
// ifHCInOctets gave a rate.
func discontinuityRates(t *testing.T, w *MetricsWorker, port string, first int64, polls []discontinuityPoll) (rates32, rates64 []bool) {
	t.Helper()
	for i, p := range polls {
		fields := map[string]any{"ifInOctets": p.in32, "ifHCInOctets": p.in64, "ifSpeed": int64(1_000_000_000), "ifHighSpeed": int64(1_000)}
		if p.disc >= 0 {
			fields["ifCounterDiscontinuityTime"] = p.disc
		}
		m := telemetry.Metric{V: 1, Measurement: "snmp_interface", Device: "edge1",
			Tags:   map[string]string{"ifName": port, "ifIndex": port[len(port)-1:]},
			Fields: fields, Counters: []string{"ifHCInOctets", "ifInOctets"}, Counters64: []string{"ifHCInOctets"},
			Time: casesT0.Add(time.Duration(i) * 30 * time.Second), Uptime: uint32(100_000 + i*3000), Source: "snmp"}
		f, _ := enrichAt(t, w, m, first+int64(i))
		_, ok32 := f["ifInOctets_rate"]
		_, ok64 := f["ifHCInOctets_rate"]
		rates32, rates64 = append(rates32, ok32), append(rates64, ok64)
		if n, ok := f["ifCounterDiscontinuityTime"]; p.disc >= 0 && (!ok || int64(n) != p.disc) {
			t.Errorf("%s poll %d: ifCounterDiscontinuityTime %v (%v) in the enriched row, want %d", port, i, n, ok, p.disc)
		}
	}
	return rates32, rates64
}

// TestCounterDiscontinuityTimeMarksClearCounters: `clear counters` on a 1
// Gbit/s port polled every 30 s, its 32-bit ifInOctets at 3,000,000,000
// (over 2^31), going to 5,000. As a 32-bit wrap that is 1.29 GB in 30 s,
// 344 Mbit/s, which the port could carry: without more to go on it passes
// for a wrap, a phantom burst on the dashboard. The 64-bit ifHCInOctets,
// cleared too and then counting past its old value within the interval
// (1,000,000 to 1,200,000), looks like a link that moved 200 KB. IF-MIB's
// ifCounterDiscontinuityTime is the agent saying so: it moves to the
// sysUpTime of the clear, and neither counter gives a rate for that
// interval; the next one does. A row without the column keeps the old
// reading, and a column that stays put changes nothing.
func TestCounterDiscontinuityTimeMarksClearCounters(t *testing.T) {
	w := loneMetricsWorker()
	cleared := []discontinuityPoll{
		{2_999_000_000, 999_000, 0},
		{3_000_000_000, 1_000_000, 0},
		{5_000, 1_200_000, 104_000},
		{6_000, 1_201_000, 104_000},
	}
	r32, r64 := discontinuityRates(t, w, "Gi0/1", 0, cleared)
	if want := []bool{false, true, false, true}; !slices.Equal(r32, want) || !slices.Equal(r64, want) {
		t.Errorf("clear counters with ifCounterDiscontinuityTime: ifInOctets rates at polls %v, ifHCInOctets %v, want %v both", r32, r64, want)
	}

	steady := []discontinuityPoll{
		{2_999_000_000, 999_000, 52_000},
		{3_000_000_000, 1_000_000, 52_000},
		{3_001_000_000, 1_001_000, 52_000},
	}
	if r32, r64 := discontinuityRates(t, w, "Gi0/2", 10, steady); !slices.Equal(r32, []bool{false, true, true}) || !slices.Equal(r64, []bool{false, true, true}) {
		t.Errorf("ifCounterDiscontinuityTime standing still: rates at polls %v and %v, want [false true true]", r32, r64)
	}

	// The same clear from an agent without the column: the 32-bit
	// counter's "wrap" is within what the port carries, and the 64-bit
	// one went on; both give a rate (wrong, but nothing tells).
	unmarked := slices.Clone(cleared)
	for i := range unmarked {
		unmarked[i].disc = -1
	}
	if r32, r64 := discontinuityRates(t, w, "Gi0/3", 20, unmarked); !slices.Equal(r32, []bool{false, true, true, true}) || !slices.Equal(r64, []bool{false, true, true, true}) {
		t.Errorf("no ifCounterDiscontinuityTime: rates at polls %v and %v, want [false true true true]", r32, r64)
	}
}

// TestCounterDiscontinuityTimeReplayIsNoDiscontinuity: an older row read
// again (a replay, out of order) carries the older
// ifCounterDiscontinuityTime; it is not the agent's counters starting
// again, before it or after it.
func TestCounterDiscontinuityTimeReplayIsNoDiscontinuity(t *testing.T) {
	w := loneMetricsWorker()
	polls := []discontinuityPoll{
		{1_000_000, 1_000_000, 0},
		{2_000_000, 2_000_000, 104_000},
		{3_000_000, 3_000_000, 104_000},
	}
	discontinuityRates(t, w, "Gi0/1", 0, polls)
	// Poll 1 again: the same times and values, an offset later.
	m := telemetry.Metric{V: 1, Measurement: "snmp_interface", Device: "edge1",
		Tags:   map[string]string{"ifName": "Gi0/1", "ifIndex": "1"},
		Fields: map[string]any{"ifInOctets": uint64(1_000_000), "ifHCInOctets": uint64(1_000_000), "ifCounterDiscontinuityTime": int64(0)}, Counters: []string{"ifHCInOctets", "ifInOctets"}, Counters64: []string{"ifHCInOctets"},
		Time: casesT0, Uptime: 100_000, Source: "snmp"}
	enrichAt(t, w, m, 3)
	next := []discontinuityPoll{{4_000_000, 4_000_000, 104_000}}
	// Poll 3 onwards: the fourth poll's rate is against the third.
	m = telemetry.Metric{V: 1, Measurement: "snmp_interface", Device: "edge1",
		Tags:   map[string]string{"ifName": "Gi0/1", "ifIndex": "1"},
		Fields: map[string]any{"ifInOctets": next[0].in32, "ifHCInOctets": next[0].in64, "ifCounterDiscontinuityTime": next[0].disc}, Counters: []string{"ifHCInOctets", "ifInOctets"}, Counters64: []string{"ifHCInOctets"},
		Time: casesT0.Add(90 * time.Second), Uptime: 109_000, Source: "snmp"}
	f, _ := enrichAt(t, w, m, 4)
	if r, ok := f["ifHCInOctets_rate"]; !ok || r < 33_333 || r > 33_334 {
		t.Errorf("after a replay of an older poll: ifHCInOctets_rate %v (%v), want 33,333.3", r, ok)
	}
}

// TestLastClearMarksClearedGNMICounters: OpenConfig's counters/last-clear
// is gNMI's ifCounterDiscontinuityTime, nanoseconds since the epoch
// (past 2^53, so a float that loses its last digits). Counters cleared
// and streaming past their old values again within a sample interval
// (in-octets 5,000,000 to 5,100,000) look like a link that moved 100 KB;
// last-clear moving says they started again: no rate for that interval.
func TestLastClearMarksClearedGNMICounters(t *testing.T) {
	for measurement, prefix := range map[string]string{
		"interfaces_interface_state_counters": "", // a subscription to .../state/counters
		"interfaces_interface_state":          "counters/",
		"interfaces_interface":                "state/counters/",
		// A subinterface's counters have their own.
		"interfaces_interface_subinterfaces_subinterface_state_counters": "",
		"interfaces_interface_subinterfaces_subinterface":                "state/counters/",
	} {
		w := loneMetricsWorker()
		key, octets := prefix+"last-clear", prefix+"in-octets"
		var got []bool
		for i, p := range []struct{ octets, cleared uint64 }{
			{4_000_000, 1764670000000000000},
			{5_000_000, 1764670000000000000},
			{5_100_000, 1764670012345678901},
			{5_200_000, 1764670012345678901},
		} {
			m := telemetry.Metric{V: 1, Measurement: measurement, Device: "spine1",
				Tags:   map[string]string{"name": "Ethernet1"},
				Fields: map[string]any{octets: p.octets, key: p.cleared}, Counters: []string{octets}, Counters64: []string{octets},
				Time: casesT0.Add(time.Duration(i) * 10 * time.Second), Source: "gnmi"}
			if strings.Contains(measurement, "subinterface") {
				m.Tags["index"] = "0"
			}
			f, _ := enrichAt(t, w, m, int64(i))
			_, ok := f[octets+"_rate"]
			got = append(got, ok)
		}
		if want := []bool{false, true, false, true}; !slices.Equal(got, want) {
			t.Errorf("%s %s: %s_rate at samples %v, want %v", measurement, key, octets, got, want)
		}
	}
}

// gnmiCountersRow is one notification's record of Ethernet1's
// state/counters from spine1, stamped at.
func gnmiCountersRow(at time.Time, fields map[string]any) telemetry.Metric {
	var counters []string
	for k := range fields {
		if k != "last-clear" {
			counters = append(counters, k)
		}
	}
	slices.Sort(counters)
	return telemetry.Metric{V: 1, Measurement: "interfaces_interface_state_counters", Device: "spine1",
		Tags:   map[string]string{"name": "Ethernet1", "path": "/interfaces/interface[name=Ethernet1]/state/counters"},
		Fields: fields, Counters: counters, Counters64: counters, Time: at, Source: "gnmi"}
}

// TestLastClearInANotificationOfItsOwn: a gNMI target sends only the
// leaves that changed (on_change, or sample with suppress_redundant), so
// `clear counters` may come as last-clear in one notification and the
// counters in others. A counter whose last sample is from before the
// clear gives no rate over the interval that spans it, whichever
// notification told of the clear: in-octets cleared from 5,000,000 and
// past it again (5,100,000) is no 10 KB/s; out-octets, absent from the
// notification that had last-clear and in-octets, neither.
func TestLastClearInANotificationOfItsOwn(t *testing.T) {
	const before, after = 1764670000000000000, 1764670012345678901
	type sample struct {
		sec    int
		fields map[string]any
		rates  []string // the rate fields wanted
	}
	for name, samples := range map[string][]sample{
		"last-clear alone": {
			{0, map[string]any{"in-octets": uint64(4_000_000), "last-clear": uint64(before)}, nil},
			{10, map[string]any{"in-octets": uint64(5_000_000)}, []string{"in_octets_rate"}},
			{20, map[string]any{"last-clear": uint64(after)}, nil},
			{21, map[string]any{"in-octets": uint64(5_100_000)}, nil},
			{31, map[string]any{"in-octets": uint64(5_200_000)}, []string{"in_octets_rate"}},
		},
		"last-clear with some counters": {
			{0, map[string]any{"in-octets": uint64(4_000_000), "out-octets": uint64(4_000_000), "last-clear": uint64(before)}, nil},
			{10, map[string]any{"in-octets": uint64(5_000_000), "out-octets": uint64(5_000_000)}, []string{"in_octets_rate", "out_octets_rate"}},
			{20, map[string]any{"in-octets": uint64(5_100_000), "last-clear": uint64(after)}, nil},
			{21, map[string]any{"out-octets": uint64(5_100_000)}, nil},
			{31, map[string]any{"in-octets": uint64(5_200_000), "out-octets": uint64(5_200_000)}, []string{"in_octets_rate", "out_octets_rate"}},
		},
	} {
		w := loneMetricsWorker()
		for i, s := range samples {
			f, _ := enrichAt(t, w, gnmiCountersRow(casesT0.Add(time.Duration(s.sec)*time.Second), s.fields), int64(i))
			for _, key := range []string{"in_octets_rate", "out_octets_rate"} {
				if r, ok := f[key]; ok != slices.Contains(s.rates, key) {
					t.Errorf("%s: sample %d: %s %v (%v), want one: %v", name, i, key, r, ok, !ok)
				}
			}
		}
	}
}

// enrichSeen enriches m as a metrics worker would with weir's clock at
// now (enrichAt's is m's time).
func enrichSeen(t *testing.T, w *MetricsWorker, m telemetry.Metric, now time.Time, off int64) map[string]float64 {
	t.Helper()
	w.rates.setNow(now)
	v, err := json.Marshal(&m)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := w.enrich(&broker.Record{Topic: telemetry.TopicRawSNMP, Offset: off, Value: v}); !ok {
		t.Fatal("not enriched")
	}
	out := map[string]float64{}
	for _, f := range w.row.Fields {
		if x, ok := f.Number(); ok {
			out[f.Key] = x
		}
	}
	return out
}

// TestLastClearAfterAClockSetBack: a gNMI target whose clock jumped a day
// ahead and was set back. Its counters take the first sample back on
// time as their base (stampedAhead); so must last-clear, or a clear is
// not seen until real time passes the day-ahead stamp: in-octets cleared
// from 3,000 and past it again (3,500) would read as 50 octets a second.
// Nor does a clear seen while the clock was ahead keep the counters from
// giving rates once they are back on time.
func TestLastClearAfterAClockSetBack(t *testing.T) {
	const before, after = 1764670000000000000, 1764670012345678901
	type sample struct {
		sec, now int
		octets   uint64
		clear    uint64
		rate     bool
	}
	for name, samples := range map[string][]sample{
		"cleared once back": {
			{86_400, 0, 1_000, before, false}, // a day ahead of weir's clock
			{10, 10, 2_000, before, false},    // set back: the new base
			{20, 20, 3_000, before, true},
			{30, 30, 3_500, after, false}, // cleared
			{40, 40, 4_000, after, true},
		},
		"cleared while ahead": {
			{86_400, 0, 5_000, before, false},
			{86_410, 10, 100, after, false}, // cleared
			{20, 20, 1_000, after, false},   // set back: the new base
			{30, 30, 2_000, after, true},
		},
	} {
		w := loneMetricsWorker()
		for i, s := range samples {
			m := gnmiCountersRow(casesT0.Add(time.Duration(s.sec)*time.Second), map[string]any{"in-octets": s.octets, "last-clear": s.clear})
			f := enrichSeen(t, w, m, casesT0.Add(time.Duration(s.now)*time.Second), int64(i))
			if r, ok := f["in_octets_rate"]; ok != s.rate {
				t.Errorf("%s: sample %d: in_octets_rate %v (%v), want a rate: %v", name, i, r, ok, s.rate)
			}
		}
	}
}

// TestLastClearFirstSeenAfterCounters: a gNMI target sending the leaves
// that changed sends last-clear when the subscription starts and when the
// counters are cleared. A weir restarted since the first reads back
// minutes (its warm-up), counters without last-clear: the first
// last-clear it sees is the clear's, with nothing before it to have
// moved from. Its time says when the counters started again (here 5 s
// after in-octets' last sample, 5,000,000): in-octets past that again
// (5,100,000) gives no rate. A last-clear from before the counters'
// samples changes nothing.
func TestLastClearFirstSeenAfterCounters(t *testing.T) {
	for name, c := range map[string]struct {
		clearedAt int // seconds from the first sample
		rate      bool
	}{
		"cleared since":       {15, false},
		"cleared long before": {-86_400, true},
	} {
		w := loneMetricsWorker()
		var f map[string]float64
		for i, s := range []map[string]any{
			{"in-octets": uint64(4_000_000)},
			{"in-octets": uint64(5_000_000)},
			{"in-octets": uint64(5_100_000), "last-clear": uint64(casesT0.Add(time.Duration(c.clearedAt) * time.Second).UnixNano())},
		} {
			f, _ = enrichAt(t, w, gnmiCountersRow(casesT0.Add(time.Duration(i)*10*time.Second), s), int64(i))
		}
		if r, ok := f["in_octets_rate"]; ok != c.rate {
			t.Errorf("%s: in_octets_rate %v (%v) on the first last-clear, want a rate: %v", name, r, ok, c.rate)
		}
	}
}

// TestCounterDiscontinuityTimeMovingEveryPollIsIgnored: an agent whose
// ifCounterDiscontinuityTime moves at every poll (one that reports
// sysUpTime there, say) would lose the row's every rate for good, with
// nothing to tell why. Counters are not cleared poll after poll: after
// maxDiscontinuityRun moves in a row the column is not believed until it
// stands still again, and a clear after that is one again.
func TestCounterDiscontinuityTimeMovingEveryPollIsIgnored(t *testing.T) {
	w := loneMetricsWorker()
	var polls []discontinuityPoll
	for i := range 8 {
		polls = append(polls, discontinuityPoll{uint64(1_000_000 * (i + 1)), uint64(1_000_000 * (i + 1)), int64(100_000 + i*3000)})
	}
	polls = append(polls,
		discontinuityPoll{9_000_000, 9_000_000, 200_000}, // stands still from here
		discontinuityPoll{10_000_000, 10_000_000, 200_000},
		discontinuityPoll{5_000, 5_000, 203_500}, // a clear
		discontinuityPoll{6_000, 6_000, 203_500},
	)
	_, r64 := discontinuityRates(t, w, "Gi0/1", 0, polls)
	want := []bool{false}
	for i := 1; i < 8; i++ {
		want = append(want, i > maxDiscontinuityRun)
	}
	want = append(want, true, true, false, true)
	if !slices.Equal(r64, want) {
		t.Errorf("rates at polls %v, want %v", r64, want)
	}
}

// TestLastClearSentOnlyWhenItMovesIsAlwaysBelieved: a gNMI target sending
// last-clear only when it moves (on_change) sends nothing but moves:
// clears days apart are each one, however many.
func TestLastClearSentOnlyWhenItMovesIsAlwaysBelieved(t *testing.T) {
	w := loneMetricsWorker()
	at := casesT0
	octets := uint64(1_000_000)
	var got []bool
	for clear := range maxDiscontinuityRun + 3 {
		for i := range 3 {
			fields := map[string]any{"in-octets": octets}
			if i == 1 {
				octets += 200_000 // the clear, and the counter back past it
				fields = map[string]any{"in-octets": octets, "last-clear": uint64(at.Add(-5*time.Second).UnixNano()) + uint64(clear)}
			}
			f, _ := enrichAt(t, w, gnmiCountersRow(at, fields), int64(clear*3+i))
			_, ok := f["in-octets_rate"]
			got = append(got, ok)
			at, octets = at.Add(10*time.Second), octets+1_000
		}
	}
	want := []bool{false, false, true}
	for range maxDiscontinuityRun + 2 {
		want = append(want, true, false, true)
	}
	if !slices.Equal(got, want) {
		t.Errorf("rates %v, want %v", got, want)
	}
}
