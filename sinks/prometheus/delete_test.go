package prometheus_test

import (
	"bytes"
	"slices"
	"strings"
	"testing"
	"time"

	gpb "github.com/openconfig/gnmi/proto/gnmi"

	gnmic "github.com/weirnet/weir/collectors/gnmi"
	promsink "github.com/weirnet/weir/sinks/prometheus"
	"github.com/weirnet/weir/telemetry"
)

func deleteIface(more ...string) *gpb.Path {
	p := &gpb.Path{Elem: []*gpb.PathElem{{Name: "interfaces"}, {Name: "interface", Key: map[string]string{"name": "Ethernet9"}}}}
	for _, m := range more {
		p.Elem = append(p.Elem, &gpb.PathElem{Name: m})
	}
	return p
}

func expose(t *testing.T, c *promsink.Collector) string {
	t.Helper()
	var b bytes.Buffer
	if err := c.WriteText(&b); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

// TestDeleteThenUpdateInOneNotification: a target that replaces a
// list entry sends one notification with the entry's delete and its new
// values. The sink drops everything at and below a deleted path, so the
// delete must come first (Flatten lists a notification's deletes before
// its updates, as gNMI applies them): the new values are served.
func TestDeleteThenUpdateInOneNotification(t *testing.T) {
	now := time.Now()
	c := promsink.NewCollector("", 5*time.Minute, func() time.Time { return now })
	n := &gpb.Notification{Timestamp: now.UnixNano(),
		Delete: []*gpb.Path{deleteIface()},
		Update: []*gpb.Update{{Path: deleteIface("state", "counters", "in-octets"), Val: &gpb.TypedValue{Value: &gpb.TypedValue_UintVal{UintVal: 5}}}}}
	for _, m := range gnmic.Flatten("spine1", n, now) {
		c.Update(&m)
	}
	if out := expose(t, c); !strings.Contains(out, "in_octets") {
		t.Errorf("notification with a delete of the entry and a new value under it: the new value is not served:\n%s", out)
	}
}

// TestLeafDeleteDropsItsSeries: a delete of one leaf (a counter the
// target no longer has) names the leaf's path, and the series' path label
// is its container's: that field's series goes, its siblings stay.
func TestLeafDeleteDropsItsSeries(t *testing.T) {
	now := time.Now()
	c := promsink.NewCollector("", 5*time.Minute, func() time.Time { return now })
	upd := &gpb.Notification{Timestamp: now.UnixNano(), Update: []*gpb.Update{
		{Path: deleteIface("state", "counters", "in-octets"), Val: &gpb.TypedValue{Value: &gpb.TypedValue_UintVal{UintVal: 5}}},
		{Path: deleteIface("state", "counters", "out-octets"), Val: &gpb.TypedValue{Value: &gpb.TypedValue_UintVal{UintVal: 6}}}}}
	del := &gpb.Notification{Timestamp: now.UnixNano(), Delete: []*gpb.Path{deleteIface("state", "counters", "in-octets")}}
	for _, n := range []*gpb.Notification{upd, del} {
		for _, m := range gnmic.Flatten("spine1", n, now) {
			c.Update(&m)
		}
	}
	if out := expose(t, c); strings.Contains(out, "in_octets") || !strings.Contains(out, "out_octets") {
		t.Errorf("after the delete of leaf in-octets: want out_octets only:\n%s", out)
	}
}

// TestDeleteOfAnInterfaceRecord: enrich's delete of a source-independent
// "interface" record (a gNMI delete of the interface: no path, the
// interface tag, or none for every interface) drops that interface's
// interface_* series of the device at once, and nothing else: not its
// other interfaces' unless it names none, not another device's, not
// other measurements' series with the same labels.
func TestDeleteOfAnInterfaceRecord(t *testing.T) {
	now := time.Now()
	view := func(device, iface string, fields map[string]any) telemetry.Metric {
		tags := map[string]string{"role": "core"}
		if iface != "" {
			tags["interface"] = iface
		}
		return telemetry.Metric{V: 1, Measurement: "interface", Device: device, Tags: tags, Fields: fields, Time: now, ReceivedAt: now, Source: "enrich"}
	}
	up := map[string]any{"oper_up": true, "in_octets_rate": 1.5}
	deleted := map[string]any{"deleted": true}
	for _, tc := range []struct {
		name string
		del  telemetry.Metric
		want []string
	}{
		{"one", view("mx1", "Po5", deleted), []string{`interface_oper_up{device="mx1",interface="Po6"`, `interface_oper_up{device="mx2",interface="Po5"`, `other_oper_up{device="mx1",interface="Po5"`}},
		{"every", view("mx1", "", deleted), []string{`interface_oper_up{device="mx2",interface="Po5"`, `other_oper_up{device="mx1",interface="Po5"`}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := promsink.NewCollector("", 5*time.Minute, func() time.Time { return now })
			other := view("mx1", "Po5", up)
			other.Measurement = "other"
			for _, m := range []telemetry.Metric{view("mx1", "Po5", up), view("mx1", "Po6", up), view("mx2", "Po5", up), other, tc.del} {
				c.Update(&m)
			}
			var got []string
			for _, line := range strings.Split(expose(t, c), "\n") {
				if strings.Contains(line, "oper_up{") {
					got = append(got, line[:strings.Index(line, ",role")])
				}
			}
			slices.Sort(got) // the exposition's order of a family's series is its own
			if !slices.Equal(got, tc.want) {
				t.Errorf("after the delete: oper_up series %q, want %q", got, tc.want)
			}
			if out := expose(t, c); strings.Contains(out, "deleted") {
				t.Errorf("the delete is served as a value:\n%s", out)
			}
		})
	}
}

// TestDeleteOfAnInterfaceRecordField: enrich's delete (no path) whose
// measurement names a field of the measurement too, as a gNMI leaf's
// delete does (interface_in_octets_rate: field in_octets_rate of
// "interface"), drops that field's series of the matching records alone.
func TestDeleteOfAnInterfaceRecordField(t *testing.T) {
	now := time.Now()
	c := promsink.NewCollector("", 5*time.Minute, func() time.Time { return now })
	view := func(iface, measurement string, fields map[string]any) telemetry.Metric {
		return telemetry.Metric{V: 1, Measurement: measurement, Device: "mx1", Tags: map[string]string{"interface": iface, "role": "core"},
			Fields: fields, Time: now, ReceivedAt: now, Source: "enrich"}
	}
	rates := map[string]any{"in_octets_rate": 1.5, "out_octets_rate": 2.5}
	for _, m := range []telemetry.Metric{view("Po5", "interface", rates), view("Po6", "interface", rates),
		view("Po5", "interface_in_octets_rate", map[string]any{"deleted": true})} {
		c.Update(&m)
	}
	var got []string
	for _, line := range strings.Split(expose(t, c), "\n") {
		if strings.HasPrefix(line, "interface_") {
			got = append(got, line[:strings.Index(line, ",role")])
		}
	}
	slices.Sort(got)
	want := []string{`interface_in_octets_rate{device="mx1",interface="Po6"`, `interface_out_octets_rate{device="mx1",interface="Po5"`, `interface_out_octets_rate{device="mx1",interface="Po6"`}
	if !slices.Equal(got, want) {
		t.Errorf("after the delete of Po5's in_octets_rate: series %q, want %q", got, want)
	}
}

// TestLeafDeleteDropsItsFieldAboveParent: a leaf sent inside a JSON
// object above its parent (a field state/counters/in-octets of the record
// at the interface's path, as /interfaces answered with one JSON object
// gives) is a field of that ancestor's series set: its delete drops that
// field's series, its siblings stay.
func TestLeafDeleteDropsItsFieldAboveParent(t *testing.T) {
	now := time.Now()
	c := promsink.NewCollector("", 5*time.Minute, func() time.Time { return now })
	js := `{"openconfig-interfaces:interface":[{"name":"Ethernet9","state":{"counters":{"in-octets":"5","out-octets":"6"}}}]}`
	upd := &gpb.Notification{Timestamp: now.UnixNano(), Update: []*gpb.Update{{Path: &gpb.Path{Elem: []*gpb.PathElem{{Name: "interfaces"}}},
		Val: &gpb.TypedValue{Value: &gpb.TypedValue_JsonIetfVal{JsonIetfVal: []byte(js)}}}}}
	del := &gpb.Notification{Timestamp: now.UnixNano(), Delete: []*gpb.Path{deleteIface("state", "counters", "in-octets")}}
	for _, n := range []*gpb.Notification{upd, del} {
		for _, m := range gnmic.Flatten("spine1", n, now) {
			c.Update(&m)
		}
	}
	if out := expose(t, c); strings.Contains(out, "in_octets") || !strings.Contains(out, "interfaces_interface_state_counters_out_octets_total{") {
		t.Errorf("after the delete of leaf in-octets: want out_octets only:\n%s", out)
	}
}

// TestContainerDeleteDropsItsFieldsAboveIt: a container's delete (the
// interface's state/counters) whose leaves came inside a JSON object
// above it, fields state/counters/... of the series set at the
// interface's path, drops every field under it (rates of them too), and
// the set's other fields stay.
func TestContainerDeleteDropsItsFieldsAboveIt(t *testing.T) {
	now := time.Now()
	c := promsink.NewCollector("", 5*time.Minute, func() time.Time { return now })
	js := `{"openconfig-interfaces:interface":[{"name":"Ethernet9","mtu":1500,"state":{"counters":{"in-octets":"5","out-octets":"6"}}}]}`
	upd := &gpb.Notification{Timestamp: now.UnixNano(), Update: []*gpb.Update{{Path: &gpb.Path{Elem: []*gpb.PathElem{{Name: "interfaces"}}},
		Val: &gpb.TypedValue{Value: &gpb.TypedValue_JsonIetfVal{JsonIetfVal: []byte(js)}}}}}
	del := &gpb.Notification{Timestamp: now.UnixNano(), Delete: []*gpb.Path{deleteIface("state", "counters")}}
	for _, n := range []*gpb.Notification{upd, del} {
		for _, m := range gnmic.Flatten("spine1", n, now) {
			c.Update(&m)
		}
	}
	// An enriched rate of a counter under it, named as enrich names it.
	rate := telemetry.Metric{V: 1, Measurement: "interfaces_interface", Device: "spine1",
		Tags:   map[string]string{"name": "Ethernet9", "path": "/interfaces/interface[name=Ethernet9]"},
		Fields: map[string]any{"state/counters/in-octets_rate": 1.5}, Time: now, ReceivedAt: now}
	c.Update(&rate)
	c.Update(&telemetry.Metric{V: 1, Measurement: "interfaces_interface_state_counters", Device: "spine1",
		Tags:   map[string]string{"name": "Ethernet9", "path": "/interfaces/interface[name=Ethernet9]/state/counters"},
		Fields: map[string]any{"deleted": true}, Time: now, ReceivedAt: now, Source: "enrich"})
	if out := expose(t, c); strings.Contains(out, "octets") || !strings.Contains(out, "interfaces_interface_mtu{") {
		t.Errorf("after the delete of state/counters: want mtu only:\n%s", out)
	}
}
