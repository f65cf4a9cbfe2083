package enrich

import (
	"context"
	"maps"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/weirnet/weir/telemetry"
)

// TestClearedAfterReloadHasTheNewTags: an interface flaps while the
// inventory puts its device in site ams1; the inventory is reloaded with
// the device moved to ams2 (and a tag added) before the flapping settles.
// The cleared event, published after the reload and caused by no record,
// is enriched from then on: it carries the device's tags as the inventory
// gives them now, as every event published after a reload does, not the
// ones of the last change before it. Tags of the change's own (an SNMP
// row's) stay.
func TestClearedAfterReloadHasTheNewTags(t *testing.T) {
	path := filepath.Join(t.TempDir(), "inventory.yaml")
	write := func(s string) {
		if err := os.WriteFile(path, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("devices:\n  - {name: edge1, address: 192.0.2.1, site: ams1, role: edge}\n")
	inv, err := LoadInventory(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	w := NewWorker(nil, inv, NewClassifier(), WithEventRules(time.Second, 3, time.Minute))
	t0 := time.Date(2026, 11, 29, 14, 0, 0, 0, time.UTC)
	for i := range 6 {
		typ := "interface_down"
		if i%2 == 1 {
			typ = "interface_up"
		}
		at := t0.Add(time.Duration(i) * time.Second)
		tags := maps.Clone(inv.Lookup("edge1", "").TagsOf())
		if i == 5 {
			tags["ifName"] = "Gi0/1" // the last change from a poll: a row's tag
		}
		w.det.observe(telemetry.Event{Type: typ, Device: "edge1", Object: "Gi0/1", Tags: tags, Time: at,
			Cause: telemetry.Cause{Topic: telemetry.TopicRawSyslog, Offset: int64(i)}}, at)
	}
	write("devices:\n  - {name: edge1, address: 192.0.2.1, site: ams2, role: edge, tags: {pod: \"7\"}}\n")
	if err := inv.Reload(); err != nil {
		t.Fatal(err)
	}
	cleared := w.settled(context.Background(), t0.Add(2*time.Minute))
	if len(cleared) != 1 || cleared[0].Type != "interface_flapping_cleared" {
		t.Fatalf("cleared: %+v", cleared)
	}
	want := map[string]string{"site": "ams2", "role": "edge", "pod": "7", "ifName": "Gi0/1"}
	if got := cleared[0].Tags; !maps.Equal(got, want) || cleared[0].TagsJSON != nil {
		t.Errorf("cleared event's tags %v (json %s), want %v", got, cleared[0].TagsJSON, want)
	}
}

// TestClearedAfterReloadHasTheNewRangeTags: a device the inventory finds
// by its address but does not name (inside a cidr range, or an entry of
// an address alone) is named by that address, as its hostless lines give
// it. Its cleared event after a reload kept the range's tags of before
// (site lab) while its records and events had the new ones (lab2): only a
// named entry's tags were taken. An entry that finds the device's address
// gives its tags too.
func TestClearedAfterReloadHasTheNewRangeTags(t *testing.T) {
	path := filepath.Join(t.TempDir(), "inventory.yaml")
	write := func(s string) {
		if err := os.WriteFile(path, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("devices:\n  - {name: lab, cidr: 10.0.0.0/8, site: lab, role: access}\n  - {address: 192.0.2.77, site: ams1}\n")
	inv, err := LoadInventory(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	w := NewWorker(nil, inv, NewClassifier(), WithEventRules(time.Second, 3, time.Minute))
	t0 := time.Date(2026, 11, 29, 14, 0, 0, 0, time.UTC)
	for n, dev := range []string{"10.9.9.9", "192.0.2.77", "sw-x"} {
		for i := range 6 {
			typ := "interface_down"
			if i%2 == 1 {
				typ = "interface_up"
			}
			at := t0.Add(time.Duration(i) * time.Second)
			tags := map[string]string{"unknown": "true"}
			if d := inv.Lookup(dev, ""); d != nil {
				tags = maps.Clone(d.TagsOf())
			}
			if dev == "sw-x" {
				tags = map[string]string{"site": "lab", "role": "access"} // a hostname sent from inside the range
			}
			w.det.observe(telemetry.Event{Type: typ, Device: dev, Object: "Gi0/1", Tags: tags, Time: at,
				Cause: telemetry.Cause{Topic: telemetry.TopicRawSyslog, Partition: int32(n), Offset: int64(i)}}, at)
		}
	}
	write("devices:\n  - {name: lab, cidr: 10.0.0.0/8, site: lab2, role: access}\n  - {address: 192.0.2.77, site: ams2}\n")
	if err := inv.Reload(); err != nil {
		t.Fatal(err)
	}
	cleared := w.settled(context.Background(), t0.Add(2*time.Minute))
	want := map[string]map[string]string{
		"10.9.9.9":   {"site": "lab2", "role": "access"},
		"192.0.2.77": {"site": "ams2"},
		"sw-x":       {"site": "lab", "role": "access"}, // its address is not known: as it was
	}
	if len(cleared) != len(want) {
		t.Fatalf("cleared: %+v", cleared)
	}
	for _, ev := range cleared {
		if got := ev.Tags; !maps.Equal(got, want[ev.Device]) || ev.TagsJSON != nil {
			t.Errorf("%s: cleared event's tags %v (json %s), want %v", ev.Device, got, ev.TagsJSON, want[ev.Device])
		}
	}
}
