package enrich

import (
	"fmt"
	"testing"
	"time"

	"github.com/weirnet/weir/telemetry"
)

// TestRebuiltFlappingsOfOneRecordSettleApart: one poll record started two
// interfaces' flappings (both reached the threshold at it), published
// before a stop and not committed, so a warm-up rebuilt both. One settles
// before the record is judged again; the other's flapping event must still
// go out with the record's change, as it did before rebuiltCauses: the
// settled flapping must not forget the record for the one still flapping.
func TestRebuiltFlappingsOfOneRecordSettleApart(t *testing.T) {
	t0 := time.Date(2026, 11, 29, 14, 0, 0, 0, time.UTC)
	d := newDetector(30*time.Second, 3, time.Minute)
	since := t0.Add(-time.Minute)
	ev := func(iface string, i int, off int64, sec int) telemetry.Event {
		return telemetry.Event{Type: [...]string{"interface_down", "interface_up"}[i%2], Device: "edge1", Object: iface,
			Time: t0.Add(time.Duration(sec) * time.Second), Cause: telemetry.Cause{Topic: telemetry.TopicRawSNMP, Offset: off}}
	}
	// Gi0/1 changed at 0, 1 and 2 s, Gi0/2 at 47, 48 and 49 s; the poll
	// at 50 s (offset 6) changed both a fourth time: both flap.
	for i, sec := range []int{0, 1, 2} {
		e := ev("Gi0/1", i, int64(i), sec)
		d.rememberLate(e, e.Time, since)
	}
	for i, sec := range []int{47, 48, 49} {
		e := ev("Gi0/2", i, int64(3+i), sec)
		d.rememberLate(e, e.Time, since)
	}
	x1, x2 := ev("Gi0/1", 3, 6, 50), ev("Gi0/2", 3, 6, 50)
	d.rememberLate(x1, x1.Time, since)
	d.rememberLate(x2, x2.Time, since)
	if len(d.flapping) != 2 {
		t.Fatalf("%d objects flapping after the warm-up, want 2", len(d.flapping))
	}
	// At 63 s Gi0/1 changed once within the minute: settled. Gi0/2 still flaps.
	d.settle(t0.Add(63 * time.Second))
	if len(d.flapping) != 1 {
		t.Fatalf("%d objects flapping after the settle, want 1", len(d.flapping))
	}
	got := d.observe(x2, x2.Time)
	if fmt.Sprint(types(got)) != "[interface_up interface_flapping]" {
		t.Errorf("the poll judged again: %v, want Gi0/2's change and its flapping event", types(got))
	}
}

func types(evs []telemetry.Event) []string {
	var out []string
	for _, e := range evs {
		out = append(out, e.Type)
	}
	return out
}
