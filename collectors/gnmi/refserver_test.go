package gnmi

import (
	"strings"
	"testing"
	"time"

	"github.com/openconfig/gnmi/cache"
	gpb "github.com/openconfig/gnmi/proto/gnmi"
	"github.com/openconfig/gnmi/subscribe"

	"github.com/weirnet/weir/configs"
)

// refServer serves openconfig's reference gNMI server (subscribe.Server
// over a cache, what gNMI gateways and gnmi_collector serve), holding one
// counter of device dev1; it answers only requests whose prefix names the
// device (prefix.target).
func refServer(t *testing.T) string {
	t.Helper()
	_, s := refCache(t, "Ethernet1")
	return serveGNMI(t, s)
}

// refCache is the reference server's cache of device dev1, synced, with
// an in-octets counter (42) for each of ifaces, and the server over it.
func refCache(t *testing.T, ifaces ...string) (*cache.Cache, *subscribe.Server) {
	t.Helper()
	c := cache.New([]string{"dev1"})
	for _, name := range ifaces {
		if err := c.GnmiUpdate(&gpb.Notification{
			Timestamp: time.Now().UnixNano(),
			Prefix:    &gpb.Path{Target: "dev1", Elem: mustPath(t, "/interfaces/interface[name="+name+"]/state/counters").Elem},
			Update:    []*gpb.Update{{Path: mustPath(t, "in-octets"), Val: &gpb.TypedValue{Value: &gpb.TypedValue_UintVal{UintVal: 42}}}},
		}); err != nil {
			t.Fatal(err)
		}
	}
	c.Sync("dev1")
	s, err := subscribe.NewServer(c)
	if err != nil {
		t.Fatal(err)
	}
	c.SetClient(s.Update)
	return c, s
}

// TestPrefixTargetToReferenceServer: a server that fronts several devices
// is told which one by prefix_target; without it the server refuses, and
// the target's status says why.
func TestPrefixTargetToReferenceServer(t *testing.T) {
	addr := refServer(t)
	// The reference cache takes no omitted key for a wildcard.
	subs := []configs.GNMISubscription{sub("/interfaces/interface[name=*]/state/counters", "stream", "on_change", 0)}
	r := startCollector(t, configs.GNMI{Targets: []configs.GNMITarget{
		{Name: "with", Address: addr, Insecure: true, Encoding: "proto", PrefixTarget: "dev1", Subscriptions: subs},
		{Name: "without", Address: addr, Insecure: true, Encoding: "proto", Subscriptions: subs},
	}})
	waitFor(t, 10*time.Second, "a counter through prefix_target, and the refusal without it", func() bool {
		got := false
		for _, m := range r.b.metrics(t) {
			if m.Device == "with" && m.Fields["in-octets"] != nil {
				got = true
			}
			if m.Device == "without" && !isStatus(m) {
				t.Fatalf("records for the target without prefix_target: %+v", m)
			}
		}
		refused := false
		for _, st := range r.c.Status() {
			if st.Name == "without" && st.LastError != nil && strings.Contains(st.LastError.Error(), "InvalidArgument") && strings.Contains(st.LastError.Error(), "set prefix_target") {
				refused = true
			}
		}
		return got && refused
	})
}

// TestPrefixWithOrigin: "openconfig:/interfaces" as a prefix is the prefix
// /interfaces with origin openconfig, as in a path, not an element named
// "openconfig:".
func TestPrefixWithOrigin(t *testing.T) {
	const y = "gnmi:\n  targets:\n    - name: s1\n      address: 127.0.0.1:57400\n      insecure: true\n      subscriptions:\n" +
		"        - {prefix: \"openconfig:/interfaces\", path: \"/interface[name=Ethernet1]/state/counters\", sample_interval: 10s}\n"
	c, err := configs.Parse([]byte(y))
	if err != nil {
		t.Fatal(err)
	}
	req, err := subscribeRequest(c.GNMI.Targets[0])
	if err != nil {
		t.Fatal(err)
	}
	p := req.GetSubscribe().GetPrefix()
	if p.GetOrigin() != "openconfig" || len(p.GetElem()) != 1 || p.GetElem()[0].GetName() != "interfaces" {
		t.Errorf("prefix %v", p)
	}
}

// TestEncodingCase: the collector takes a target's encoding in any case
// (JSON_IETF, as gnmic writes it), as configs does, and refuses an
// unknown one.
func TestEncodingCase(t *testing.T) {
	tc := configs.GNMITarget{Name: "a", Subscriptions: []configs.GNMISubscription{{Path: "/a"}}}
	for in, want := range map[string]gpb.Encoding{"JSON_IETF": gpb.Encoding_JSON_IETF, "PROTO": gpb.Encoding_PROTO, "JSON": gpb.Encoding_JSON, "json": gpb.Encoding_JSON} {
		tc.Encoding = in
		req, err := subscribeRequest(tc)
		if err != nil || req.GetSubscribe().GetEncoding() != want {
			t.Errorf("encoding %s: %v, %v; want %v", in, req.GetSubscribe().GetEncoding(), err, want)
		}
	}
	tc.Encoding = "XML"
	if _, err := subscribeRequest(tc); err == nil {
		t.Error("encoding XML taken")
	}
}

// TestUnknownPrefixTargetIsNoRefusedPath: a gateway (the reference server)
// asked for a device it does not front answers NotFound, "no such target",
// before any path is looked at. That is no path refused: the hint that one
// subscription's path stopped them all, and to take it out, would send the
// reader to the wrong setting.
func TestUnknownPrefixTargetIsNoRefusedPath(t *testing.T) {
	addr := refServer(t)
	subs := []configs.GNMISubscription{
		sub("/interfaces/interface[name=*]/state/counters", "stream", "on_change", 0),
		sub("/interfaces/interface[name=*]/state/oper-status", "stream", "on_change", 0),
	}
	r := startCollector(t, configs.GNMI{Targets: []configs.GNMITarget{
		{Name: "typo", Address: addr, Insecure: true, Encoding: "proto", PrefixTarget: "dev2", Subscriptions: subs},
	}})
	var last string
	waitFor(t, 10*time.Second, "the refusal of prefix_target dev2", func() bool {
		if err := r.c.Status()[0].LastError; err != nil {
			last = err.Error()
		}
		return strings.Contains(last, "no such target")
	})
	if strings.Contains(last, "take the one it names out") || strings.Contains(last, "for one path") {
		t.Errorf("error %q says a path was refused; the server knows no device dev2", last)
	}
}
