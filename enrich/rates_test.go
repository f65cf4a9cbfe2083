package enrich

import (
	"fmt"
	"math"
	"testing"
	"time"

	"github.com/weirnet/weir/telemetry"
)

func TestRates(t *testing.T) {
	t0 := time.Date(2026, 11, 29, 14, 0, 0, 0, time.UTC)
	at := func(s int) time.Time { return t0.Add(time.Duration(s) * time.Second) }
	type sample struct {
		v      uint64
		sec    int
		uptime uint32
		rate   float64
		ok     bool
	}
	for _, tc := range []struct {
		name    string
		wide    bool // listed in counters64
		samples []sample
	}{
		{"steady", false, []sample{{1000, 0, 100, 0, false}, {7000, 60, 6100, 100, true}, {13000, 120, 12100, 100, true}}},
		{"32-bit wrap", false, []sample{{math.MaxUint32 - 999, 0, 100, 0, false}, {5000, 60, 6100, 100, true}}},
		{"64-bit wrap", false, []sample{{math.MaxUint64 - 59, 0, 100, 0, false}, {60, 60, 6100, 2, true}}},
		{"reset after reboot (sysUpTime back)", false, []sample{{5_000_000, 0, 900000, 0, false}, {1200, 60, 3000, 0, false}, {7200, 120, 9000, 100, true}}},
		// A 32-bit counter high before the reboot and low after it looks
		// like a wrap (4.9 M/s here): sysUpTime going back says reset.
		{"reboot that looks like a 32-bit wrap (sysUpTime back)", false, []sample{{4_000_000_000, 0, 900000, 0, false}, {1200, 60, 3000, 0, false}, {7200, 120, 9000, 100, true}}},
		// Up 300 days: sysUpTime goes back by more than 2^31 at the
		// reboot, which a wrap does not (it moves on by the minute).
		{"reboot after 300 days up", false, []sample{{4_000_000_000, 0, 2_592_000_000, 0, false}, {1200, 60, 500, 0, false}, {7200, 120, 6500, 100, true}}},
		// No poll for half an hour, sysUpTime 9 minutes on, and the
		// counter lower: a restart in the gap, not a 32-bit wrap.
		{"reboot in a gap longer than the uptime before", false, []sample{{4_000_000_000, 0, 6100, 0, false}, {1200, 1800, 60100, 0, false}, {7200, 1860, 66100, 100, true}}},
		// An agent whose sysUpTime stands still (a recording, a caching
		// proxy): no restart, rates as usual.
		{"sysUpTime standing still", false, []sample{{1000, 0, 6100, 0, false}, {31000, 300, 6100, 100, true}, {61000, 600, 6100, 100, true}}},
		// sysUpTime (TimeTicks) wraps after 497 days: no restart.
		{"sysUpTime wrapping is no restart", false, []sample{{1000, 0, 4_294_965_000, 0, false}, {7000, 60, 3704, 100, true}}},
		{"reset without sysUpTime (64-bit drop)", false, []sample{{1 << 40, 0, 0, 0, false}, {100, 60, 0, 0, false}, {160, 120, 0, 1, true}}},
		// Net-SNMP restarted on a host that was not (no hrSystemUptime
		// polled): sysUpTime back, the host's counter on; its delta is
		// its traffic, no spike can come of it. (Up 40 s: it restarted
		// since the last sample. Back to a boot before it would be
		// another agent answering, whose counters give no rate.)
		{"agent restarted alone (sysUpTime back, counter on)", true, []sample{{536_710_552, 0, 390_500, 0, false}, {536_716_552, 60, 4_000, 100, true}}},
		{"another agent (sysUpTime back, to a boot before the last sample)", true, []sample{{536_710_552, 0, 390_500, 0, false}, {636_716_552, 60, 56_700, 0, false}, {636_722_552, 120, 62_700, 100, true}}},
		{"missed polls", false, []sample{{0, 0, 100, 0, false}, {36000, 360, 36100, 100, true}}},
		{"out of order and replay ignored", false, []sample{{6000, 60, 6100, 0, false}, {1000, 0, 100, 0, false}, {6000, 60, 6100, 0, false}, {12000, 120, 12100, 100, true}}},
		// A Counter64 below 2^32 that goes back was cleared (an interface
		// re-initialised, a device that resets SNMP counters on "clear
		// counters"): no rate, not a 32-bit wrap of 21 MB/s.
		{"64-bit counter cleared below 2^32", true, []sample{{3_000_000_000, 0, 100_000, 0, false}, {100, 60, 106_000, 0, false}, {6100, 120, 112_000, 100, true}}},
		{"64-bit counter wraps at 2^64", true, []sample{{math.MaxUint64 - 59, 0, 100, 0, false}, {60, 60, 6100, 2, true}}},
	} {
		r := newRates()
		for i, s := range tc.samples {
			id := appendRowID(nil, "edge1", "snmp_interface", []telemetry.Tag{{Key: "ifName", Value: "Gi0/1"}})
			rate, _, ok, _ := r.row(id, maxMetricsObjects).observe(i%2, "ifHCInOctets", s.v, at(s.sec), s.uptime, tc.wide, 0)
			if ok != s.ok || (ok && math.Abs(rate-s.rate) > 1e-9) {
				t.Errorf("%s: sample %d: rate %v %v, want %v %v", tc.name, i, rate, ok, s.rate, s.ok)
			}
		}
	}
}

// TestForgetByArrival: series are forgotten by when their samples arrived,
// not by the samples' own (device) time, which may be hours or years off.
func TestForgetByArrival(t *testing.T) {
	r := newRates()
	now := time.Date(2026, 11, 29, 20, 0, 0, 0, time.UTC)
	device := time.Date(2020, 1, 1, 0, 0, 0, 0, time.UTC) // a device clock years behind
	r.setNow(now.Add(-2 * time.Hour))
	gone, live := appendRowID(nil, "gone", "m", nil), appendRowID(nil, "live", "m", nil)
	r.row(gone, maxMetricsObjects).observe(0, "in", 1, device, 0, false, 0)
	r.setNow(now)
	r.row(live, maxMetricsObjects).observe(0, "in", 1, device, 0, false, 0)
	r.forget(now.Add(-time.Hour), nil)
	if _, ok := r.rows[string(live)]; !ok {
		t.Error("a row still arriving was forgotten for its device time")
	}
	if _, ok := r.rows[string(gone)]; ok {
		t.Error("a row silent for two hours was kept")
	}
}

// TestRatesResumeAfterASampleStampedAhead: one sample stamped ahead of
// weir's clock (a gNMI target's clock that jumped a year forward and was
// set back) no longer stops its series' rates until real time passes the
// stamp: the next sample is the base, and the one after has a rate. A
// sample out of order while the last is not ahead is still ignored.
func TestRatesResumeAfterASampleStampedAhead(t *testing.T) {
	t0 := time.Date(2026, 11, 29, 14, 0, 0, 0, time.UTC)
	at := func(s int) time.Time { return t0.Add(time.Duration(s) * time.Second) }
	year := 365 * 24 * 3600
	r := newRates()
	id := appendRowID(nil, "leaf1", "interfaces_interface_state_counters", []telemetry.Tag{{Key: "name", Value: "Ethernet1"}})
	for i, s := range []struct {
		v       uint64
		sec     int
		now     int // weir's clock, seconds after t0
		rate    float64
		hasRate bool
	}{
		{1000, 0, 1, 0, false},
		{2000, 10, 11, 100, true},
		{1500, 5, 12, 0, false}, // out of order, the last not ahead: ignored
		{3000, 20, 21, 100, true},
		{4000, year, 31, 0, true}, // the clock jumped a year ahead
		{5000, 40, 41, 0, false},  // and was set back: the new base
		{6000, 50, 51, 100, true},
		{7000, 60, 61, 100, true},
	} {
		r.setNow(at(s.now))
		rate, _, ok, _ := r.row(id, maxMetricsObjects).observe(0, "in-octets", s.v, at(s.sec), 0, true, 0)
		if ok != s.hasRate || (s.rate != 0 && math.Abs(rate-s.rate) > 1e-9) {
			t.Errorf("sample %d (%d at %ds): rate %v %v, want %v %v", i, s.v, s.sec, rate, ok, s.rate, s.hasRate)
		}
	}
}

// TestRateAcrossAClearFromAClockAhead: a gNMI target whose clock stays
// five minutes ahead, its counter cleared (no sysUpTime to tell), then a
// sample older than the last read late: it is ignored, as with clocks
// that agree, so the next rate is the counter's after the clear (590/s),
// not one spanning the clear (80/s).
func TestRateAcrossAClearFromAClockAhead(t *testing.T) {
	t0 := time.Date(2026, 11, 29, 14, 0, 0, 0, time.UTC)
	id := appendRowID(nil, "leaf1", "interfaces_interface_state_counters", []telemetry.Tag{{Key: "name", Value: "Ethernet1"}})
	for _, ahead := range []int{300, 0} {
		r := newRates()
		r.setNow(t0.Add(time.Duration(-ahead) * time.Second).Add(200 * time.Second))
		var got float64
		for _, s := range []struct {
			v   uint64
			sec int
		}{{5000, 100}, {100, 110}, {4000, 95}, {6000, 120}} {
			if rate, _, ok, _ := r.row(id, maxMetricsObjects).observe(0, "in-octets", s.v, t0.Add(time.Duration(s.sec)*time.Second), 0, true, 0); ok {
				got = rate
			}
		}
		if math.Abs(got-590) > 1e-9 {
			t.Errorf("samples %ds ahead: last rate %v, want 590 (5900 in 10s after the clear)", ahead, got)
		}
	}
}

// A row's counters are found by a map once it has many: a Kafka client's
// record of 50,000 counters, each new to the row and then listed in
// reverse, took each a scan of the row (20 s of the worker's time, its
// partitions stalled). The index must find every counter, those added
// after it was built too.
func TestRowOfManyCountersFindsThemWithoutScanning(t *testing.T) {
	const n = 5 * indexCounters
	names := make([]string, n)
	for k := range names {
		names[k] = fmt.Sprintf("c%06d", k)
	}
	t0 := time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)
	rc := &rowCounters{}
	for k, f := range names {
		if _, _, ok, _ := rc.observe(k, f, 100, t0, 0, true, 0); ok {
			t.Fatalf("%s: a rate from its first sample", f)
		}
	}
	for k := range names {
		f := names[n-1-k] // the other order: the place tried first is wrong
		rate, _, ok, _ := rc.observe(k, f, 160, t0.Add(time.Minute), 0, true, 0)
		if !ok || rate != 1 {
			t.Fatalf("%s: rate %v ok %v, want 1 per second", f, rate, ok)
		}
	}
	if len(rc.counters) != n {
		t.Fatalf("%d counters kept, want %d", len(rc.counters), n)
	}
	if len(rc.byField) != n {
		t.Fatalf("%d of %d counters indexed: the row is scanned for the others", len(rc.byField), n)
	}
}
