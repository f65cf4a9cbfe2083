package enrich

import (
	"fmt"
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

// TestRememberRebuildsFlappingWithinDedup: a warm-up after a restart
// rebuilds the flapping of a link that changed every 10 s, as observing it
// did, with the default 30 s de-duplication window: a down 20 s after the
// last down, an up between, is a change, not the same down again. Else
// the restarted process never clears the flapping the old one raised.
func TestRememberRebuildsFlappingWithinDedup(t *testing.T) {
	t0 := time.Date(2026, 11, 29, 14, 0, 0, 0, time.UTC)
	observed, remembered := newDetector(DefaultDedupWindow, 5, 10*time.Minute), newDetector(DefaultDedupWindow, 5, 10*time.Minute)
	for i := range 8 {
		ev := change(t0, "raw.syslog", i)
		observed.observe(ev, ev.Time)
		rememberAt(remembered, ev, ev.Time, t0)
	}
	key := objectKey{"edge1", "gi0/1", "interface"}
	if o, r := len(observed.changes[key].times), len(remembered.changes[key].times); o != r {
		t.Errorf("warm-up counted %d changes, observing them %d", r, o)
	}
	at := t0.Add(70*time.Second + 10*time.Minute + time.Second)
	want, got := observed.settle(at), remembered.settle(at)
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("settled after the warm-up: %v\nwant %v", got, want)
	}
}

// TestOneInstantByTwoPathsKeepsEachLogOrder: in one millisecond a trap
// reports a link down, and the syslog partition down, up, down (a burst
// through one partition): three changes, ending down, whichever path came
// first. And a bounce seen whole by syslog and by traps, the two workers
// interleaved any way, is as many changes as one path saw.
func TestOneInstantByTwoPathsKeepsEachLogOrder(t *testing.T) {
	t0 := time.Date(2026, 11, 29, 14, 0, 0, 0, time.UTC)
	run := func(reports []string) []string {
		d := newDetector(DefaultDedupWindow, 5, 10*time.Minute)
		var got []string
		for i, r := range reports { // "s" or "t" (syslog, traps), then "d" or "u"
			topic := map[byte]string{'s': "raw.syslog", 't': "raw.traps"}[r[0]]
			typ := map[byte]string{'d': "interface_down", 'u': "interface_up"}[r[1]]
			ev := telemetry.Event{Type: typ, Device: "edge1", Object: "Gi0/1", Cause: telemetry.Cause{Topic: topic, Offset: int64(i)}}
			for _, out := range d.observe(ev, t0) {
				got = append(got, out.Type[len("interface_"):])
			}
		}
		return got
	}
	for _, tc := range []struct{ reports, want []string }{
		{[]string{"td", "sd", "su", "sd"}, []string{"down", "up", "down"}},
		{[]string{"sd", "td", "tu", "su", "sd"}, []string{"down", "up", "down"}},
		{[]string{"sd", "td", "su", "tu", "td", "sd", "tu", "su"}, []string{"down", "up", "down", "up"}},
		{[]string{"td", "sd", "su", "tu", "sd", "td", "su", "tu"}, []string{"down", "up", "down", "up"}},
	} {
		if got := run(tc.reports); !slices.Equal(got, tc.want) {
			t.Errorf("%v: published %v, want %v", tc.reports, got, tc.want)
		}
	}
}
