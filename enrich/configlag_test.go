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
