package enrich

import (
	"encoding/json"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/weirnet/weir/broker"
	"github.com/weirnet/weir/sinks/prometheus"
	"github.com/weirnet/weir/telemetry"
)

// TestInventoryTagDoesNotOverrideRowTags: an inventory free tag whose key
// a collector uses for the row's identity (gNMI's interface key "name", a
// plausible inventory label: "name: Spine 1 Amsterdam") does not replace
// the row's own tag. If it did, every interface of the device would be one
// series in enriched.metrics, the interface view and the events would name
// the label instead of the interface, and the first sample of a second
// interface would be taken for a change of the first: a bogus
// interface_down.
func TestInventoryTagDoesNotOverrideRowTags(t *testing.T) {
	w := namedSpineWorker(t)
	t0 := time.Date(2026, 11, 29, 14, 0, 0, 0, time.UTC)
	var events []string
	for i, c := range []struct{ ifn, st string }{{"Ethernet1", "UP"}, {"Ethernet2", "DOWN"}, {"Ethernet1", "UP"}, {"Ethernet2", "DOWN"}} {
		at := t0.Add(time.Duration(i/2) * time.Minute)
		m := telemetry.Metric{V: 1, Measurement: "interfaces_interface_state", Device: "spine1",
			Tags:     map[string]string{"name": c.ifn},
			Fields:   map[string]any{"counters/in-octets": uint64(1000 + i*60000), "oper-status": c.st},
			Counters: []string{"counters/in-octets"}, Counters64: []string{"counters/in-octets"}, Time: at, Source: "gnmi"}
		w.rates.setNow(at)
		v, _ := json.Marshal(&m)
		evs, ok := w.enrich(&broker.Record{Topic: telemetry.TopicRawGNMI, Offset: int64(i), Value: v})
		if !ok {
			t.Fatal("not enriched")
		}
		for _, e := range evs {
			events = append(events, e.Type+" "+e.Object)
		}
		if got, _ := w.row.Tag("name"); got != c.ifn {
			t.Errorf("enriched row of %s has tag name=%q: the inventory's label replaced the interface key", c.ifn, got)
		}
		if w.interfaceView(&w.row, &w.view) {
			if got, _ := w.view.Tag("interface"); got != c.ifn {
				t.Errorf("interface view of %s has interface=%q", c.ifn, got)
			}
		}
	}
	if len(events) != 0 {
		t.Errorf("two steady interfaces raised events %q", events)
	}
}

// TestInventoryRefusesWeirsOwnTags: an inventory tag named device (a
// natural label for the kind of box), interface, target or unknown is
// refused: the sinks take a device tag for the device, so two switches
// tagged device: switch would be one series.
func TestInventoryRefusesWeirsOwnTags(t *testing.T) {
	for _, k := range []string{"device", "interface", "target", "unknown"} {
		_, err := ParseInventory([]byte("devices:\n  - {name: edge1, tags: {" + k + ": switch}}\n"))
		if err == nil || !strings.Contains(err.Error(), `tag "`+k+`" is weir's own`) {
			t.Errorf("inventory tag %s: %v", k, err)
		}
	}
}

// TestInventoryRefusesWeirsOwnTagsInAnotherSpelling: a tag key that the
// Prometheus sink makes the label of one of weir's own (it snake_cases
// keys: Device, DEVICE and device_ are all label device) is refused as
// device is. Accepted, tags: {Device: switch} took the device label's
// place, so every switch was one series; interface_ replaced the
// interface view's interface label, every interface of the device one
// series.
func TestInventoryRefusesWeirsOwnTagsInAnotherSpelling(t *testing.T) {
	for _, k := range []string{"Device", "DEVICE", "device_", "_device", "Interface", "interface_", "Target", "target-", "Unknown"} {
		if l := prometheus.LabelName(k); !reservedTags[l] {
			t.Fatalf("tag %q is label %q in the Prometheus sink, none of weir's own: the case is wrong", k, l)
		}
		_, err := ParseInventory([]byte("devices:\n  - {name: edge1, tags: {" + k + ": switch}}\n"))
		if err == nil || !strings.Contains(err.Error(), "is weir's own") {
			t.Errorf("inventory tag %q (the Prometheus sink's label %s): %v", k, prometheus.LabelName(k), err)
		}
	}
	// Other keys near them stay free.
	for _, k := range []string{"device_type", "Interfaces", "deviceRole", "target_site"} {
		if _, err := ParseInventory([]byte("devices:\n  - {name: edge1, tags: {" + k + ": x}}\n")); err != nil {
			t.Errorf("inventory tag %q refused: %v", k, err)
		}
	}
}

// TestInventoryRefusesEmptyOrControlTagKeys: an inventory tag key that is
// empty or has a control character ("", "rack\tpos", as a template with
// an empty variable writes it) is refused with its line. Accepted, every
// metric of the device carried it, and the InfluxDB sink, whose line
// protocol has no such tag key, refused each (its batches rejected and
// sent again one record at a time, the device's points dead-lettered).
func TestInventoryRefusesEmptyOrControlTagKeys(t *testing.T) {
	for _, k := range []string{`""`, `"rack\tpos"`, `"rack\n"`} {
		_, err := ParseInventory([]byte("devices:\n  - {name: edge1, site: ams1}\n  - {name: edge2, tags: {" + k + ": x}}\n"))
		if err == nil || !strings.Contains(err.Error(), "inventory:3:") || !strings.Contains(err.Error(), "device 2 (edge2)") {
			t.Errorf("inventory tag key %s: %v", k, err)
		}
	}
}

// TestInventoryRefusesANullTagKey: a tag key YAML reads as null (~, null,
// in any case) is refused with its line; yaml.v3 dropped
// the tag silently. Quoted, it is a name like any other.
func TestInventoryRefusesANullTagKey(t *testing.T) {
	for _, k := range []string{"~", "null", "Null"} {
		_, err := parseInventory([]byte("devices:\n  - {name: edge1, site: ams1}\n  - {name: edge2, tags: {"+k+": x, rack: r1}}\n"), "inv.yaml")
		if err == nil || !strings.Contains(err.Error(), "inv.yaml:3:") || !strings.Contains(err.Error(), "null") {
			t.Errorf("inventory tag key %q: %v", k, err)
		}
	}
	inv, err := ParseInventory([]byte("devices:\n  - {name: edge2, tags: {'~': x, 'null': y}}\n"))
	if err != nil {
		t.Fatal(err)
	}
	if tags := inv.Lookup("edge2", "").TagsOf(); tags["~"] != "x" || tags["null"] != "y" {
		t.Errorf("quoted keys: tags %v", tags)
	}
}

// TestInventoryEntriesThatMatchNothingAreRefused: an entry with both an
// address and a cidr (one of them would be ignored) or with none of name,
// address and cidr (it matches nothing) is an error, not silence.
func TestInventoryEntriesThatMatchNothingAreRefused(t *testing.T) {
	for _, tc := range []struct{ entry, want string }{
		{"{name: edge1, address: 192.0.2.1, cidr: 192.0.2.0/24, site: ams1}", "address and cidr exclude each other"},
		{"{site: ams1, role: edge}", "name, address or cidr must be set"},
	} {
		_, err := ParseInventory([]byte("devices:\n  - " + tc.entry + "\n"))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v", tc.entry, err)
		}
	}
	// Still fine: a name alone, an address alone, a cidr alone.
	if _, err := ParseInventory([]byte("devices:\n  - {name: a}\n  - {address: 192.0.2.9}\n  - {cidr: 10.0.0.0/8}\n")); err != nil {
		t.Error(err)
	}
}

// TestInventoryAddressMistakes: the addresses people write wrong are
// refused saying what to write (not Go's ParseAddr("..."): text), and a
// cidr with host bits set is taken as its network with a warning.
func TestInventoryAddressMistakes(t *testing.T) {
	for _, tc := range []struct{ entry, want string }{
		{"{name: r1, address: 10.0.0.300}", `device 1 (r1): address "10.0.0.300" is not an IP address (IPv4 field has value >255)`},
		{"{name: r1, address: 10.0.0.0/24}", `device 1 (r1): address "10.0.0.0/24" is a range: a range of devices goes under cidr (cidr: 10.0.0.0/24)`},
		{"{name: r1, address: 10.0.0.1/32}", `device 1 (r1): address "10.0.0.1/32": an address has no prefix length (address: 10.0.0.1)`},
		{`{name: r1, address: "[2001:db8::1]"}`, `device 1 (r1): address "[2001:db8::1]": an IPv6 address goes without brackets here (address: 2001:db8::1)`},
		{"{name: r1, cidr: 10.0.0.300/8}", `device 1 (r1): cidr "10.0.0.300/8" is not a network (IPv4 field has value >255)`},
		{"{name: r1, cidr: 10.0.0.1}", `device 1 (r1): cidr "10.0.0.1" is not a network: a network has a prefix length (cidr: 10.0.0.1/32, or address: 10.0.0.1 for one device)`},
	} {
		_, err := ParseInventory([]byte("devices:\n  - " + tc.entry + "\n"))
		if err == nil || !strings.Contains(err.Error(), tc.want) || strings.Contains(err.Error(), "Parse") {
			t.Errorf("%s: %v\nwant it to say %s", tc.entry, err, tc.want)
		}
	}
	inv, err := ParseInventory([]byte("devices:\n  - {name: r1, cidr: 10.1.2.3/16, site: x}\n"))
	if err != nil {
		t.Fatal(err)
	}
	if w := strings.Join(inv.Warnings(), "\n"); !strings.Contains(w, `device 1 (r1): cidr "10.1.2.3/16" has host bits set: taken as 10.1.0.0/16`) {
		t.Errorf("warnings %q", w)
	}
	// An IPv4-mapped range is used unmapped, and said so.
	inv, err = ParseInventory([]byte("devices:\n  - {name: r1, cidr: \"::ffff:10.1.2.3/104\", site: x}\n"))
	if err != nil {
		t.Fatal(err)
	}
	if w := strings.Join(inv.Warnings(), "\n"); !strings.Contains(w, `cidr "::ffff:10.1.2.3/104" has host bits set: taken as 10.0.0.0/8`) {
		t.Errorf("warnings %q", w)
	}
}

// TestInventoryValueErrorsNameTheLine: an error about a device's value
// names the file and the line of the key, as the inventory's YAML errors
// and the config's do (FILE:LINE:), not only the entry's index.
func TestInventoryValueErrorsNameTheLine(t *testing.T) {
	data := "devices:\n  - {name: a, address: 192.0.2.1}\n  - name: r1\n    site: x\n    address: 10.0.0.300\n"
	_, err := parseInventory([]byte(data), "inv.yaml")
	if err == nil || !strings.HasPrefix(err.Error(), `inv.yaml:5: device 2 (r1): address "10.0.0.300"`) {
		t.Errorf("got %v, want it to start inv.yaml:5: device 2 (r1): address ...", err)
	}
	_, err = parseInventory([]byte("devices:\n  - {site: ams1, role: edge}\n"), "inv.yaml")
	if err == nil || !strings.HasPrefix(err.Error(), "inv.yaml:2: device 1: name, address or cidr must be set") {
		t.Errorf("got %v, want the entry's line", err)
	}
}

// TestInventoryNameTagDoesNotNarrowADelete: a gNMI delete of every
// interface (/interfaces, no key) of a device whose inventory entry has a
// free tag "name" was read with that tag as its interface: it forgot the
// states and speed of an interface of that name, none, not those of
// every interface. The interface that came back down was taken for a
// change (interface_down) rather than a new start, and the old speeds
// stayed.
func TestInventoryNameTagDoesNotNarrowADelete(t *testing.T) {
	w := namedSpineWorker(t)
	off := int64(0)
	send := func(m telemetry.Metric) (map[string]float64, []telemetry.Event) {
		t.Helper()
		m.V, m.Device, m.Source = 1, "spine1", "gnmi"
		off++
		return enrichAt(t, w, m, off)
	}
	t0 := casesT0
	named := func(name string) map[string]string { return map[string]string{"name": name} }
	send(telemetry.Metric{Measurement: "interfaces_interface_ethernet_state", Tags: named("Ethernet1"),
		Fields: map[string]any{"port-speed": "SPEED_10GB"}, Time: t0})
	send(telemetry.Metric{Measurement: "interfaces_interface_state", Tags: named("Ethernet1"),
		Fields: map[string]any{"oper-status": "UP"}, Time: t0})
	send(telemetry.Metric{Measurement: "interfaces", Fields: map[string]any{"deleted": true}, Time: t0.Add(time.Minute)})
	// Made again, down.
	if _, evs := send(telemetry.Metric{Measurement: "interfaces_interface_state", Tags: named("Ethernet1"),
		Fields: map[string]any{"oper-status": "DOWN"}, Time: t0.Add(2 * time.Minute)}); len(evs) != 0 {
		t.Errorf("the interface made again after every interface was deleted: events %v, want none (a new start)", evs)
	}
	counters := func(at time.Time, in uint64) telemetry.Metric {
		return telemetry.Metric{Measurement: "interfaces_interface_state_counters", Tags: named("Ethernet1"),
			Fields: map[string]any{"in-octets": in}, Counters: []string{"in-octets"}, Counters64: []string{"in-octets"}, Time: at}
	}
	send(counters(t0.Add(3*time.Minute), 1000))
	if f, _ := send(counters(t0.Add(3*time.Minute+10*time.Second), 11_000)); f["speed_mbps"] != 0 {
		t.Errorf("speed_mbps %v after every interface was deleted, want none", f["speed_mbps"])
	}
}

// namedSpineWorker is a gNMI metrics worker whose inventory gives spine1 a
// free tag "name", the key gNMI rows name their interface by.
func namedSpineWorker(t *testing.T) *MetricsWorker {
	t.Helper()
	inv, err := ParseInventory([]byte(`
devices:
  - {name: spine1, site: ams1, tags: {name: "Spine 1 Amsterdam"}}
`))
	if err != nil {
		t.Fatal(err)
	}
	w := NewMetricsWorker(nil, inv)
	w.out = newOutputs(nil, telemetry.TopicRawGNMI, w.logger, w.m, false)
	return w
}

// TestInventoryWarnsOfANearMissVendor: a vendor naming Juniper or Huawei
// in a spelling neighborsByAddress does not take is warned of (the
// device's OSPF traps and lines would be two events); the spellings it
// takes, in any case, and other vendors are not.
func TestInventoryWarnsOfANearMissVendor(t *testing.T) {
	for vendor, warn := range map[string]bool{
		"juniper_junos": true, "Juniper-Networks": true, "JunOS-evo": true, "huawei-vrp": true, "vrp": true, "Huawei_VRP8": true,
		"junos": false, "Juniper": false, "huawei_vrp": false, "HUAWEI": false, "cisco": false, "arista_eos": false, "": false,
	} {
		inv, err := ParseInventory([]byte("devices:\n  - {name: r1, vendor: '" + vendor + "'}\n"))
		if err != nil {
			t.Fatal(err)
		}
		w := inv.Warnings()
		if got := len(w) == 1 && strings.Contains(w[0], "device 1 (r1): vendor "+strconv.Quote(vendor)) && strings.Contains(w[0], "OSPF traps"); got != warn || len(w) > 1 {
			t.Errorf("vendor %q: warnings %q, want a warning: %v", vendor, w, warn)
		}
	}
}
