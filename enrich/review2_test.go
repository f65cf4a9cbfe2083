package enrich

import (
	"slices"
	"testing"
	"time"

	"github.com/weirnet/weir/telemetry"
)

// TestRedoLeavesTheStateAsItWas: a down and an up 1 s apart whose
// transaction aborted are enriched again; a down 5 s later is a change
// (down, up, down), not a repeat of the redone down.
func TestRedoLeavesTheStateAsItWas(t *testing.T) {
	d := newDetector(DefaultDedupWindow, 5, 10*time.Minute)
	t0 := time.Date(2026, 11, 29, 14, 0, 0, 0, time.UTC)
	ev := func(typ string, off int64) telemetry.Event {
		return telemetry.Event{Type: typ, Device: "edge1", Object: "Gi0/1", Cause: telemetry.Cause{Topic: "raw.syslog", Offset: off}}
	}
	var got []string
	for _, s := range []struct {
		typ string
		off int64
		at  time.Duration
	}{
		{"interface_down", 1, 0}, {"interface_up", 2, time.Second}, // the aborted batch
		{"interface_down", 1, 0}, {"interface_up", 2, time.Second}, // enriched again
		{"interface_down", 3, 6 * time.Second}, // the link goes down again
	} {
		for _, out := range d.observe(ev(s.typ, s.off), t0.Add(s.at)) {
			got = append(got, out.Type)
		}
	}
	want := []string{"interface_down", "interface_up", "interface_down", "interface_up", "interface_down"}
	if !slices.Equal(got, want) {
		t.Errorf("published %v,\nwant      %v", got, want)
	}
}
