package telemetry

import (
	"encoding/json"
	"math/rand/v2"
	"reflect"
	"testing"
	"time"
	_ "time/tzdata" // America/New_York, wherever the tests run
)

// TestSameSecondTimes: times in one second, in several zones and with
// fractions of every length, decode and encode through the same-second
// paths as time.Time's JSON methods do.
func TestSameSecondTimes(t *testing.T) {
	rng := rand.New(rand.NewPCG(13, 14))
	zones := []*time.Location{time.UTC, time.FixedZone("", 3600), time.FixedZone("", -5*3600-1800)}
	var d Decoder
	var c timeText
	taken := 0
	base := time.Date(2026, 11, 29, 14, 2, 0, 0, time.UTC)
	for n := range 20_000 {
		at := base.Add(time.Duration(n/50) * time.Second).In(zones[n/1000%len(zones)])
		// A fraction of 0 to 9 digits.
		ns := rng.IntN(1e9)
		for range rng.IntN(10) {
			ns -= ns % 10
			ns /= 10
			ns *= 10
		}
		at = at.Add(time.Duration(ns))
		lit, _ := json.Marshal(at)
		var want time.Time
		if err := want.UnmarshalJSON(lit); err != nil {
			t.Fatal(err)
		}
		cached := d.times[1].lit != nil && len(lit) == len(d.times[1].lit)
		got, ok := d.time(1, lit)
		if !ok || !got.Equal(want) || got.Location().String() != want.Location().String() || !reflect.DeepEqual(got.Location(), want.Location()) {
			t.Fatalf("decoding %s: %v (%v), want %v", lit, got, ok, want)
		}
		if _, off := got.Zone(); func() int { _, o := want.Zone(); return o }() != off {
			t.Fatalf("decoding %s: zone offset %d", lit, off)
		}
		if cached {
			taken++
		}
		text, err := c.appendTime(nil, at)
		if err != nil || string(text) != string(lit) {
			t.Fatalf("encoding %v: %s (%v), want %s", at, text, err, lit)
		}
	}
	if taken == 0 {
		t.Fatal("no time decoded after one of its second")
	}
}

// TestSameSecondOddLiterals: every pair of time literals, odd ones among
// them (what the Parse fallback takes, and what it refuses), decoded one
// after the other; and every pair of times, in zones with and without
// daylight saving, at the ends of the years JSON can hold, encoded one
// after the other. The second of each pair gives what time.Time's JSON
// methods give, whatever the first left in the cache.
func TestSameSecondOddLiterals(t *testing.T) {
	prefixes := []string{"2026-11-29T14:02:03", "0000-01-01T00:00:00", "9999-12-31T23:59:59", "2026-11-29t14:02:03",
		"2026-11-29T4:02:03", "2026-11-29 14:02:03", "1970-01-01T00:00:00", "2026-03-08T01:59:59", "2026-11-01T01:30:00"}
	fracs := []string{"", ".", ".1", ".5", ".12", ".123456789", ".987654321", ".1234567890", ".000000000", ",5", ".1a"}
	zones := []string{"Z", "z", "+00:00", "-00:00", "+01:00", "+23:59", "+24:00", "-04:00", "+0100", "", "Zx", "+1:00"}
	var lits [][]byte
	for _, p := range prefixes {
		for _, f := range fracs {
			for _, z := range zones {
				lits = append(lits, []byte(`"`+p+f+z+`"`))
			}
		}
	}
	lits = append(lits, []byte(`"2026-11-29T14:02:03.5Z`), []byte(`"`), []byte(`""`), []byte(`"2026-11-29T14:02:03.`))
	type parsed struct {
		t  time.Time
		ok bool
	}
	want := make([]parsed, len(lits))
	for i, l := range lits {
		want[i].ok = want[i].t.UnmarshalJSON(l) == nil
	}
	for i, first := range lits {
		if !want[i].ok {
			continue // never cached
		}
		for j, lit := range lits {
			var d Decoder
			d.time(0, first)
			got, ok := d.time(0, lit)
			if ok != want[j].ok || ok && !reflect.DeepEqual(got, want[j].t) {
				t.Fatalf("%s after %s: %#v (%v), want %#v (%v)", lit, first, got, ok, want[j].t, want[j].ok)
			}
		}
	}

	newYork, err := time.LoadLocation("America/New_York") // time/tzdata when the system has none
	if err != nil {
		t.Fatal(err)
	}
	locs := []*time.Location{time.UTC, time.FixedZone("", 3600), time.FixedZone("X", 3600), time.FixedZone("", 86399),
		time.FixedZone("", 86400), time.FixedZone("", 30), newYork}
	bases := []time.Time{time.Date(2026, 11, 29, 14, 2, 3, 0, time.UTC), time.Date(0, 1, 1, 0, 0, 0, 0, time.UTC),
		time.Date(-1, 12, 31, 23, 59, 59, 0, time.UTC), time.Date(9999, 12, 31, 23, 59, 59, 0, time.UTC),
		time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC), time.Date(1969, 12, 31, 23, 59, 59, 0, time.UTC),
		time.Date(2026, 11, 1, 5, 59, 59, 0, time.UTC), time.Date(2026, 11, 1, 6, 0, 0, 0, time.UTC)} // New York's clocks go back
	var times []time.Time
	for _, b := range bases {
		for _, l := range locs {
			for _, ns := range []int{0, 1, 10, 500000000, 999999999, 120000000} {
				times = append(times, b.Add(time.Duration(ns)).In(l))
			}
		}
	}
	now := time.Now() // with a monotonic reading
	times = append(times, now, now.Add(time.Nanosecond), now.Round(0))
	texts := make([][]byte, len(times))
	errs := make([]error, len(times))
	for i, at := range times {
		texts[i], errs[i] = json.Marshal(at)
	}
	for i := range times {
		for j, at := range times {
			var c timeText
			c.appendTime(nil, times[i])
			got, err := c.appendTime([]byte("x"), at)
			if (err == nil) != (errs[j] == nil) || err == nil && string(got) != "x"+string(texts[j]) {
				t.Fatalf("%v after %v: %s (%v), want %s (%v)", at, times[i], got, err, texts[j], errs[j])
			}
		}
	}
}
