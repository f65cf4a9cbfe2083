package prometheus_test

import (
	"bytes"
	"strings"
	"testing"
	"time"

	gpb "github.com/openconfig/gnmi/proto/gnmi"

	gnmic "github.com/weirnet/weir/collectors/gnmi"
	promsink "github.com/weirnet/weir/sinks/prometheus"
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
