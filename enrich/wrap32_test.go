package enrich

import (
	"fmt"
	"testing"
	"time"

	"github.com/weirnet/weir/telemetry"
)

// TestCounter32FasterThanItsPollsNoRate: a 32-bit octet counter of a port
// that can carry 2^32 octets between two polls (34 s at 1 Gbit/s, 3.4 s at
// 10 Gbit/s) may have wrapped any number of times, seen or not: its rate
// was the traffic modulo 4.3 GB a poll, a wrong number with nothing to
// tell (ifInOctets_rate of a 10G port at 5 Gbit/s, polled every minute,
// said 0.42 Gbit/s; in weir-sim's lab, 8.8 Gbit/s for a 100G port's 26).
// Such a counter gives no rate; the 64-bit one beside it gives the row's
// in_octets_rate as before, and a port its counter cannot outrun keeps
// its 32-bit rate.
func TestCounter32FasterThanItsPollsNoRate(t *testing.T) {
	const octetsPerSec = 625_000_000 // 5 Gbit/s
	row := func(i int, every time.Duration, speed map[string]any, hc bool) telemetry.Metric {
		at := casesT0.Add(time.Duration(i) * every)
		total := uint64(1<<40) + uint64(i)*uint64(every.Seconds())*octetsPerSec // low 32 bits 0 at first
		fields := map[string]any{"ifInOctets": total & 0xffffffff}
		counters, wide := []string{"ifInOctets"}, []string(nil)
		if hc {
			fields["ifHCInOctets"] = total
			counters, wide = []string{"ifHCInOctets", "ifInOctets"}, []string{"ifHCInOctets"}
		}
		for k, v := range speed {
			fields[k] = v
		}
		return telemetry.Metric{V: 1, Measurement: "snmp_interface", Device: "edge1",
			Tags: map[string]string{"ifName": "Et1", "ifIndex": "1"}, Fields: fields, Counters: counters, Counters64: wide,
			Time: at, Uptime: uint32(100_000 + i*int(every/(10*time.Millisecond))), Source: "snmp"}
	}
	tenG := map[string]any{"ifHighSpeed": int64(10_000), "ifSpeed": int64(4294967295)}
	w := loneMetricsWorker()
	for i := range 3 {
		f, _ := enrichAt(t, w, row(i, time.Minute, tenG, true), int64(i))
		if i == 0 {
			continue
		}
		if r, ok := f["ifInOctets_rate"]; ok {
			t.Errorf("10G port, poll %d: ifInOctets_rate %v from a counter that wraps every 6.9 s", i, r)
		}
		if f["ifHCInOctets_rate"] != octetsPerSec || f["in_octets_rate"] != octetsPerSec || f["in_utilization_pct"] != 50 {
			t.Errorf("10G port, poll %d: ifHCInOctets_rate %v, in_octets_rate %v, in_utilization_pct %v; want %v, %v, 50",
				i, f["ifHCInOctets_rate"], f["in_octets_rate"], f["in_utilization_pct"], octetsPerSec, octetsPerSec)
		}
	}

	// A port without ifXTable: a 1 Gbit/s one polled every minute can
	// wrap its counter twice between polls; every 30 s, not once.
	oneG := map[string]any{"ifSpeed": int64(1_000_000_000)}
	for _, tc := range []struct {
		every time.Duration
		rate  bool
	}{{time.Minute, false}, {30 * time.Second, true}} {
		w := loneMetricsWorker()
		for i := range 3 {
			value := uint64(1_000_000+i*int(tc.every.Seconds())*50_000_000) % (1 << 32) // 400 Mbit/s
			f, _ := enrichAt(t, w, octetsRow(i, tc.every, value, oneG), int64(i))
			if i > 0 {
				octetRates(t, f, fmt.Sprintf("1G port without HC counters polled every %v, poll %d", tc.every, i), tc.rate, 50_000_000)
			}
		}
	}
}

// TestCounter32OfASaturatedIfSpeedNoRate: a port without ifXTable (or
// with ifHighSpeed 0) whose ifSpeed reads 4294967295, "this speed or
// more" (RFC 2863), has no speed to show, but one of 4.29 Gbit/s at
// least: its 32-bit octet counter can wrap in 8 s. It kept its rate, the
// traffic modulo 4.3 GB a poll (a 10G port at 3 Gbit/s polled every
// minute said 0.14 Gbit/s). A poll shorter than 8 s keeps it.
func TestCounter32OfASaturatedIfSpeedNoRate(t *testing.T) {
	const octetsPerSec = 375_000_000 // 3 Gbit/s
	for _, tc := range []struct {
		name  string
		speed map[string]any
		every time.Duration
		rate  bool
	}{
		{"no ifHighSpeed, polled every minute", map[string]any{"ifSpeed": int64(4294967295)}, time.Minute, false},
		{"ifHighSpeed 0, polled every minute", map[string]any{"ifSpeed": int64(4294967295), "ifHighSpeed": int64(0)}, time.Minute, false},
		{"no ifHighSpeed, polled every 5 s", map[string]any{"ifSpeed": int64(4294967295)}, 5 * time.Second, true},
	} {
		w := loneMetricsWorker()
		for i := range 3 {
			value := uint64(i) * uint64(tc.every.Seconds()) * octetsPerSec % (1 << 32)
			f, _ := enrichAt(t, w, octetsRow(i, tc.every, value, tc.speed), int64(i))
			if i > 0 {
				octetRates(t, f, fmt.Sprintf("%s, poll %d", tc.name, i), tc.rate, octetsPerSec)
			}
		}
	}
}

// TestOctetCounterPast32BitsKeepsItsRate: a producer that sends 64-bit
// values in ifInOctets without listing it in counters64 lost its rate on
// a fast link, taken for IF-MIB's 32-bit counter; a value past 2^32 shows
// it is none.
func TestOctetCounterPast32BitsKeepsItsRate(t *testing.T) {
	w := loneMetricsWorker()
	for i := range 3 {
		m := telemetry.Metric{V: 1, Measurement: "snmp_interface", Device: "edge1",
			Tags:   map[string]string{"ifName": "Et1", "ifIndex": "1"},
			Fields: map[string]any{"ifInOctets": uint64(1<<40) + uint64(i)*60*625_000_000, "ifHighSpeed": int64(10_000)}, Counters: []string{"ifInOctets"},
			Time: casesT0.Add(time.Duration(i) * time.Minute), Uptime: uint32(100_000 + i*6000), Source: "snmp"}
		f, _ := enrichAt(t, w, m, int64(i))
		if i > 0 && (f["ifInOctets_rate"] != 625_000_000 || f["in_octets_rate"] != 625_000_000) {
			t.Errorf("poll %d: ifInOctets_rate %v, in_octets_rate %v; want 6.25e8", i, f["ifInOctets_rate"], f["in_octets_rate"])
		}
	}
}

// octetsRow is poll i (every apart) of an IF-MIB row of an interface
// without HC counters: its 32-bit ifInOctets at value, and speed's columns.
func octetsRow(i int, every time.Duration, value uint64, speed map[string]any) telemetry.Metric {
	fields := map[string]any{"ifInOctets": value}
	for k, v := range speed {
		fields[k] = v
	}
	return telemetry.Metric{V: 1, Measurement: "snmp_interface", Device: "edge1",
		Tags: map[string]string{"ifName": "Te1/1", "ifIndex": "1"}, Fields: fields, Counters: []string{"ifInOctets"},
		Time: casesT0.Add(time.Duration(i) * every), Uptime: uint32(100_000 + i*int(every/(10*time.Millisecond))), Source: "snmp"}
}

// octetRates checks that the enriched row f (what says which) has both
// ifInOctets_rate and in_octets_rate or neither, as want says, and
// in_octets_rate at rate when it has them.
func octetRates(t *testing.T, f map[string]float64, what string, want bool, rate float64) {
	t.Helper()
	r, ok := f["ifInOctets_rate"]
	n, norm := f["in_octets_rate"]
	if ok != want || norm != want {
		t.Errorf("%s: ifInOctets_rate %v (%v), in_octets_rate %v (%v); want rates %v", what, r, ok, n, norm, want)
	}
	if want && n != rate {
		t.Errorf("%s: in_octets_rate %v, want %v", what, n, rate)
	}
}

// TestCounter32WrapOfHalfItsRangeKeepsItsRate: a 1 Gbit/s port without
// ifXTable at 800 Mbit/s, polled every 30 s, moves 3 GB a poll: at each
// wrap its 32-bit ifInOctets goes back by less than half its range, which
// was taken for a reset, so the busiest links lost their rate at two
// polls in three. sysUpTime on, the link able to carry it and the
// counter's steady rate before make it a wrap; without sysUpTime, on a
// link that could not carry it, or at many times the rate before (a
// reset of a counter under 2^31: clear counters), it stays a reset.
func TestCounter32WrapOfHalfItsRangeKeepsItsRate(t *testing.T) {
	const octetsPerSec = 100_000_000 // 800 Mbit/s
	oneG := map[string]any{"ifSpeed": int64(1_000_000_000)}
	w := loneMetricsWorker()
	wraps := 0
	for i := range 8 {
		total := uint64(1_000_000 + i*30*octetsPerSec)
		if i > 0 && total%(1<<32) < uint64(1_000_000+(i-1)*30*octetsPerSec)%(1<<32) {
			wraps++
		}
		f, _ := enrichAt(t, w, octetsRow(i, 30*time.Second, total%(1<<32), oneG), int64(i))
		if i > 0 {
			octetRates(t, f, fmt.Sprintf("1G port at 800 Mbit/s, poll %d", i), true, octetsPerSec)
		}
	}
	if wraps < 3 {
		t.Fatalf("the samples wrapped %d times, want 3 or more", wraps)
	}

	// `clear counters` on the same port at 80 Mbit/s: ifInOctets from
	// 1.2 GB to 40,000 reads as a wrap of 3.1 GB, 103 MB/s, which the
	// port could carry (83% full) but is eight times what the counter
	// moved a poll before: a reset, no rate, and the rates after it as
	// before.
	w = loneMetricsWorker()
	for i, value := range []uint64{900_000_000, 1_200_000_000, 40_000, 300_040_000} {
		f, _ := enrichAt(t, w, octetsRow(i, 30*time.Second, value, oneG), int64(i))
		if i > 0 {
			octetRates(t, f, fmt.Sprintf("1G port at 80 Mbit/s, counters cleared, poll %d", i), i != 2, 10_000_000)
		}
	}

	// The same values without sysUpTime (nothing rules out a restart),
	// and on a 100 Mbit/s port (3 GB in 30 s is 8 times what it can
	// carry): a reset, no rate at the wrap.
	for _, tc := range []struct {
		what   string
		uptime bool
		speed  int64
	}{{"no sysUpTime", false, 1_000_000_000}, {"a 100 Mbit/s port", true, 100_000_000}} {
		w := loneMetricsWorker()
		for i, value := range []uint64{3_000_000_000, 3_500_000_000, 1_500_000_000} {
			m := octetsRow(i, 30*time.Second, value, map[string]any{"ifSpeed": tc.speed})
			if !tc.uptime {
				m.Uptime = 0
			}
			f, _ := enrichAt(t, w, m, int64(i))
			if i == 2 {
				octetRates(t, f, tc.what+", back by 1.5 GB", false, 0)
			}
		}
	}
}

// TestCounter32FarWrapAfterMissedPollKeepsItsRate: a 1 Gbit/s port without
// ifXTable at 800 Mbit/s, polled every 30 s, misses a poll: over the 60 s
// between the polls either side the link could carry 2^32 octets, so the
// rate is unknown (a wrap may be unseen) and none is given. Nor may the
// counter's steady rate come from it: the 1.7 GB it seemed to move is a
// third of the 6 GB it did, and the far wraps after it, carrying what
// the port moved all along, were taken for resets.
func TestCounter32FarWrapAfterMissedPollKeepsItsRate(t *testing.T) {
	const octetsPerSec = 100_000_000 // 800 Mbit/s
	oneG := map[string]any{"ifSpeed": int64(1_000_000_000)}
	w := loneMetricsWorker()
	for _, i := range []int{0, 1, 2, 4, 5, 6, 7} { // poll 3 missed
		value := uint64(1_000_000+i*30*octetsPerSec) % (1 << 32)
		f, _ := enrichAt(t, w, octetsRow(i, 30*time.Second, value, oneG), int64(i))
		if i > 0 {
			octetRates(t, f, fmt.Sprintf("1G port at 800 Mbit/s, poll 3 missed, poll %d", i), i != 4, octetsPerSec)
		}
	}
}
