package sinks

import (
	"encoding/json"
	"testing"

	"github.com/weirnet/weir/broker"
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

// endsDown is a Resolver: ups end downs, and renames carry over
// whatever the filter took (as the webhook sink's Alertmanager form).
type endsDown struct{}

func (endsDown) Ends(typ string) (string, bool) {
	switch typ {
	case "interface_up":
		return "interface_down", true
	case telemetry.TypeDeviceRenamed:
		return EndsAny, true
	}
	return "", false
}

// TestFilterTakesEveryRename: a Resolver destination whose Ends says so
// gets every device_renamed whatever its filter, which moves what the old
// name's events began (alerts the filter took) to the new name; any other
// destination only those its filter takes.
func TestFilterTakesEveryRename(t *testing.T) {
	f, err := newFilter(configs.SinkFilter{EventTypes: []string{"interface_down"}, Tags: map[string]string{"site": "ams*"}})
	if err != nil {
		t.Fatal(err)
	}
	rename := telemetry.Event{V: 1, Type: telemetry.TypeDeviceRenamed, Device: "edge1-ams", Object: "edge1", Tags: map[string]string{"site": "fra1"}}
	for _, tc := range []struct {
		ender Resolver
		want  bool
	}{{endsDown{}, true}, {nil, false}} {
		s := &Sink{filter: f, ender: tc.ender}
		v, err := json.Marshal(&rename)
		if err != nil {
			t.Fatal(err)
		}
		it := Item{Schema: telemetry.SchemaEvent, Record: broker.Record{Value: v}}
		took, err := s.decode(&decoder{}, &it, nil)
		if err != nil {
			t.Fatal(err)
		}
		if took != tc.want {
			t.Errorf("resolver %v: took %v, want %v", tc.ender != nil, took, tc.want)
		}
	}
}
