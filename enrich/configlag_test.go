package enrich

import (
	"slices"
	"testing"
	"time"

	"github.com/weirnet/weir/telemetry"
)

// TestConfigChangeOfATrapBehindIsARepeat: Junos reports a commit both by
// UI_COMMIT and by jnxCmCfgChange, each naming the user: one
// config_changed. The trap worker running behind the syslog worker judges
// the trap, appended a second before the line, after the line: it is the
// same change arriving again within the window, not a second one (a
// warm-up reading the two back takes it so, as does a change naming no
// user).
func TestConfigChangeOfATrapBehindIsARepeat(t *testing.T) {
	t0 := time.Date(2026, 11, 29, 14, 0, 0, 0, time.UTC)
	line := telemetry.Event{Type: "config_changed", Device: "mx1", Object: "netops", Cause: telemetry.Cause{Topic: "raw.syslog", Offset: 1}}
	trap := telemetry.Event{Type: "config_changed", Device: "mx1", Object: "netops", Cause: telemetry.Cause{Topic: "raw.traps", Offset: 1}}
	d := newDetector(DefaultDedupWindow, DefaultFlapThreshold, DefaultFlapWindow)
	var got []string
	for _, e := range d.observe(line, t0.Add(time.Second)) {
		got = append(got, e.Cause.Topic)
	}
	for _, e := range d.observe(trap, t0) {
		got = append(got, e.Cause.Topic)
	}
	if want := []string{"raw.syslog"}; !slices.Equal(got, want) {
		t.Errorf("UI_COMMIT, then the jnxCmCfgChange appended a second before it: published %q, want %q", got, want)
	}
}

// TestConfigChangeWithoutUserAfterTheUsersRepeat: netops changes IOS's
// configuration twice 29 s apart: %SYS-5-CONFIG_I names the user each
// time, and the second line, within the window of the first, is that
// event again (once per window). The second change's ciscoConfigManEvent,
// naming no user, comes two seconds after its line: within the window of
// a change naming a user, it is that change again, not a config_changed
// of its own.
func TestConfigChangeWithoutUserAfterTheUsersRepeat(t *testing.T) {
	t0 := time.Date(2026, 11, 29, 14, 0, 0, 0, time.UTC)
	line := func(off int64) telemetry.Event {
		return telemetry.Event{Type: "config_changed", Device: "edge1", Object: "netops", Cause: telemetry.Cause{Topic: "raw.syslog", Offset: off}}
	}
	trap := telemetry.Event{Type: "config_changed", Device: "edge1", Cause: telemetry.Cause{Topic: "raw.traps", Offset: 1}}
	d := newDetector(DefaultDedupWindow, DefaultFlapThreshold, DefaultFlapWindow)
	var got []string
	for _, r := range []struct {
		ev telemetry.Event
		at time.Duration
	}{{line(1), 0}, {line(2), 29 * time.Second}, {trap, 31 * time.Second}} {
		for _, e := range d.observe(r.ev, t0.Add(r.at)) {
			got = append(got, e.Cause.Topic+" "+e.Object)
		}
	}
	if want := []string{"raw.syslog netops"}; !slices.Equal(got, want) {
		t.Errorf("netops's changes at 0 and 29 s, the second's trap naming no user at 31 s: published %q, want %q", got, want)
	}
	// After a restart, the warm-up reads the two lines back.
	d = newDetector(DefaultDedupWindow, DefaultFlapThreshold, DefaultFlapWindow)
	rememberAt(d, line(1), t0, t0.Add(-time.Hour))
	rememberAt(d, line(2), t0.Add(29*time.Second), t0.Add(-time.Hour))
	if out := d.observe(trap, t0.Add(31*time.Second)); len(out) != 0 {
		t.Errorf("the trap after the two lines were remembered: published %v", out)
	}
}
