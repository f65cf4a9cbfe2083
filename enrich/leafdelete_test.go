package enrich

import (
	"fmt"
	"strings"
	"testing"

	gpb "github.com/openconfig/gnmi/proto/gnmi"
)

// TestGNMILeafDeleteDropsItsRates: a gNMI delete of one counter (a
// target that no longer has in-octets on a port) takes what enrich derived
// from it with it, through to the Prometheus sink: the counter's own rate
// (in-octets_rate), the normalised in_octets_rate of its row and of the
// interface's "interface" record, at once rather than when stale. Its
// sibling's series stay. The counter's last sample is forgotten: made
// again, its first value gives no rate, not one over the gap from the
// old counter. The same when the counters came in one JSON object of
// /interfaces, fields of the interface's record (state/counters/in-octets).
func TestGNMILeafDeleteDropsItsRates(t *testing.T) {
	t.Run("leaves", func(t *testing.T) { testGNMILeafDeleteDropsItsRates(t, false) })
	t.Run("json", func(t *testing.T) { testGNMILeafDeleteDropsItsRates(t, true) })
}

func testGNMILeafDeleteDropsItsRates(t *testing.T, asJSON bool) {
	c := newGNMIChain(t)
	step, path := c.step, c.path
	served := func() []string { return c.served("Ethernet1") }
	const eth1 = "/interfaces/interface[name=Ethernet1]/state/counters"
	row, field := "interfaces_interface_state_counters", ""
	if asJSON {
		row, field = "interfaces_interface", "state/counters/"
	}
	counters := func(in, out uint64) *gpb.Notification {
		if asJSON {
			js := fmt.Sprintf(`{"openconfig-interfaces:interface":[{"name":"Ethernet1","state":{"counters":{"in-octets":"%d","out-octets":"%d"}}}]}`, in, out)
			return &gpb.Notification{Update: []*gpb.Update{{Path: path("/interfaces"), Val: &gpb.TypedValue{Value: &gpb.TypedValue_JsonIetfVal{JsonIetfVal: []byte(js)}}}}}
		}
		return &gpb.Notification{Prefix: path(eth1), Update: []*gpb.Update{
			{Path: path("in-octets"), Val: &gpb.TypedValue{Value: &gpb.TypedValue_UintVal{UintVal: in}}},
			{Path: path("out-octets"), Val: &gpb.TypedValue{Value: &gpb.TypedValue_UintVal{UintVal: out}}}}}
	}
	has := func(names []string, name string) bool {
		for _, n := range names {
			if n == name {
				return true
			}
		}
		return false
	}
	step(0, counters(1000, 2000))
	step(10, counters(2000, 3000))
	before := served()
	for _, name := range []string{"interfaces_interface_state_counters_in_octets_rate", "interface_in_octets_rate",
		"interfaces_interface_state_counters_out_octets_rate", "interface_out_octets_rate", row + "_in_octets_rate"} {
		if !has(before, name) {
			t.Fatalf("before the delete: %s not served; served %q", name, before)
		}
	}
	step(20, &gpb.Notification{Prefix: path(eth1), Delete: []*gpb.Path{path("in-octets")}})
	after := served()
	for _, name := range after {
		if strings.Contains(name, "in_octets") {
			t.Errorf("after the delete of in-octets: %s still served", name)
		}
	}
	for _, name := range []string{"interfaces_interface_state_counters_out_octets_rate", "interface_out_octets_rate"} {
		if !has(after, name) {
			t.Errorf("after the delete of in-octets: sibling %s gone; served %q", name, after)
		}
	}
	// Made again, counting from further on than before the delete.
	for _, m := range step(30, counters(900_000, 4000)) {
		if m.Measurement != row {
			continue
		}
		if v, ok := m.Fields[field+"in-octets_rate"]; ok {
			t.Errorf("the counter made again: its first value gives rate %v, want none", v)
		}
		if v, ok := m.Fields[field+"out-octets_rate"]; !ok || v != 50.0 {
			t.Errorf("its sibling's rate %v, want 50", v)
		}
	}
}
