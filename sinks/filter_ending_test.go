package sinks

import (
	"testing"

	"github.com/weirnet/weir/configs"
	"github.com/weirnet/weir/telemetry"
)

// TestFilterTakesWhatEndsWhatItTakes: for a Resolver destination, an event
// that ends another (an up, a cleared, device_reachable) matches as the
// event it ends would, its severity aside; its device and tags still have
// to match.
func TestFilterTakesWhatEndsWhatItTakes(t *testing.T) {
	f, err := newFilter(configs.SinkFilter{EventTypes: []string{"interface_down", "*_flapping"}, Severities: []string{"err"},
		Tags: map[string]string{"site": "ams*"}})
	if err != nil {
		t.Fatal(err)
	}
	ev := func(typ, sev, site string) *telemetry.Event {
		return &telemetry.Event{Type: typ, Severity: sev, Device: "edge1", Tags: map[string]string{"site": site}}
	}
	for _, c := range []struct {
		ev    *telemetry.Event
		ended string
		want  bool
	}{
		{ev("interface_up", "notice", "ams1"), "interface_down", true},
		{ev("interface_flapping_cleared", "notice", "ams1"), "interface_flapping", true},
		{ev("interface_up", "notice", "fra1"), "interface_down", false}, // another site: its down was not taken
		{ev("bgp_peer_up", "notice", "ams1"), "bgp_peer_down", false},   // bgp downs are not taken
	} {
		if f.match(&Item{Event: c.ev}) {
			t.Fatalf("%s matched the filter itself", c.ev.Type)
		}
		if got := f.matchEnding(c.ev, c.ended); got != c.want {
			t.Errorf("%s of %s, ending %s: %v, want %v", c.ev.Type, c.ev.Tags["site"], c.ended, got, c.want)
		}
	}
}
