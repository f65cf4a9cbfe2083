package enrich

import (
	"fmt"
	"strings"
	"testing"

	gpb "github.com/openconfig/gnmi/proto/gnmi"
)

// TestGNMIContainerDeleteDropsItsRates: a gNMI delete of a counters
// container, or of the whole interface list entry, takes every rate enrich
// derived from the counters under it with it, through to the Prometheus
// sink, as a leaf's delete does (TestGNMILeafDeleteDropsItsRates): the
// rates of its rows, their normalised rates and those of the interface's
// "interface" record, at once rather than when stale; another interface's
// stay. The counters' last samples are forgotten: made again, they give
// no rate over the gap. The same when the counters came in one JSON object
// of /interfaces, fields of the interface's record.
func TestGNMIContainerDeleteDropsItsRates(t *testing.T) {
	for _, asJSON := range []bool{false, true} {
		for _, del := range []string{"/interfaces/interface[name=Ethernet1]/state/counters", "/interfaces/interface[name=Ethernet1]"} {
			t.Run(fmt.Sprintf("json=%v %s", asJSON, del), func(t *testing.T) { testGNMIContainerDelete(t, asJSON, del) })
		}
	}
}

func testGNMIContainerDelete(t *testing.T, asJSON bool, del string) {
	c := newGNMIChain(t)
	step, served, path := c.step, c.served, c.path
	row, field := "interfaces_interface_state_counters", ""
	if asJSON {
		row, field = "interfaces_interface", "state/counters/"
	}
	counters := func(in, out uint64) *gpb.Notification {
		if asJSON {
			var es []string
			for _, name := range []string{"Ethernet1", "Ethernet2"} {
				es = append(es, fmt.Sprintf(`{"name":%q,"state":{"counters":{"in-octets":"%d","out-octets":"%d"}}}`, name, in, out))
			}
			js := `{"openconfig-interfaces:interface":[` + strings.Join(es, ",") + `]}`
			return &gpb.Notification{Update: []*gpb.Update{{Path: path("/interfaces"), Val: &gpb.TypedValue{Value: &gpb.TypedValue_JsonIetfVal{JsonIetfVal: []byte(js)}}}}}
		}
		n := &gpb.Notification{}
		for _, name := range []string{"Ethernet1", "Ethernet2"} {
			at := "/interfaces/interface[name=" + name + "]/state/counters/"
			n.Update = append(n.Update,
				&gpb.Update{Path: path(at + "in-octets"), Val: &gpb.TypedValue{Value: &gpb.TypedValue_UintVal{UintVal: in}}},
				&gpb.Update{Path: path(at + "out-octets"), Val: &gpb.TypedValue{Value: &gpb.TypedValue_UintVal{UintVal: out}}})
		}
		return n
	}
	step(0, counters(1000, 2000))
	step(10, counters(2000, 3000))
	rates := []string{row + "_in_octets_rate", row + "_out_octets_rate", "interface_in_octets_rate", "interface_out_octets_rate"}
	for _, iface := range []string{"Ethernet1", "Ethernet2"} {
		before := served(iface)
		for _, name := range rates {
			if !strings.Contains(strings.Join(before, " "), name) {
				t.Fatalf("before the delete: %s of %s not served; served %q", name, iface, before)
			}
		}
	}
	step(20, &gpb.Notification{Delete: []*gpb.Path{path(del)}})
	for _, name := range served("Ethernet1") {
		if strings.Contains(name, "octets") {
			t.Errorf("after the delete of %s: %s still served", del, name)
		}
	}
	after2 := strings.Join(served("Ethernet2"), " ")
	for _, name := range rates {
		if !strings.Contains(after2, name) {
			t.Errorf("after the delete of %s: Ethernet2's %s gone", del, name)
		}
	}
	// Made again, counting from further on than before the delete.
	for _, m := range step(30, counters(900_000, 4000)) {
		if m.Measurement != row || m.Tags["name"] != "Ethernet1" {
			continue
		}
		if v, ok := m.Fields[field+"in-octets_rate"]; ok {
			t.Errorf("the counters made again: the first value gives rate %v, want none", v)
		}
	}
}
