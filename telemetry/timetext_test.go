package telemetry

import (
	"encoding/json"
	"math/rand/v2"
	"reflect"
	"testing"
	"time"
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
