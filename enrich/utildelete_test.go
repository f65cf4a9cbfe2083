package enrich

import (
	"strings"
	"testing"

	gpb "github.com/openconfig/gnmi/proto/gnmi"
)

// TestGNMICounterDeleteDropsItsUtilisation: an interface whose speed is
// known (port-speed) has in_utilization_pct and out_utilization_pct,
// derived from its octet counters, in its row and in its "interface"
// record. A delete of a counter takes what enrich derived from it, so the
// delete of in-octets (as a resubscription's snapshot without the port
// deletes it leaf by leaf) takes in_utilization_pct with in_octets_rate,
// at once rather than when stale; out_utilization_pct stays with
// out-octets. A delete of the counters container takes both.
func TestGNMICounterDeleteDropsItsUtilisation(t *testing.T) {
	for _, del := range []string{"leaf", "container"} {
		t.Run(del, func(t *testing.T) {
			c := newGNMIChain(t)
			step, path := c.step, c.path
			eth1WithSpeed(c)
			utils := []string{"interfaces_interface_state_counters_in_utilization_pct", "interface_in_utilization_pct",
				"interfaces_interface_state_counters_out_utilization_pct", "interface_out_utilization_pct"}
			before := strings.Join(c.served("Ethernet1"), " ")
			for _, name := range utils {
				if !strings.Contains(before, name) {
					t.Fatalf("before the delete: %s not served; served %s", name, before)
				}
			}
			gone, stay := utils, []string(nil)
			if del == "leaf" {
				step(20, &gpb.Notification{Prefix: path(gnmiEth1 + "/state/counters"), Delete: []*gpb.Path{path("in-octets")}})
				gone, stay = utils[:2], utils[2:]
			} else {
				step(20, &gpb.Notification{Delete: []*gpb.Path{path(gnmiEth1 + "/state/counters")}})
			}
			after := c.served("Ethernet1")
			for _, name := range after {
				for _, g := range gone {
					if name == g {
						t.Errorf("after the delete: %s still served", name)
					}
				}
			}
			for _, s := range stay {
				if !strings.Contains(strings.Join(after, " "), s) {
					t.Errorf("after the delete of in-octets: %s, of out-octets, gone; served %q", s, after)
				}
			}
		})
	}
}

// TestGNMIPortRemovedTakesItsSpeed: a port removed while the stream was
// down is deleted leaf by leaf at the resubscription (its counters, its
// port-speed); the speed_mbps enrich gave its counters row and its
// "interface" record goes with its octet counters, as its utilisation
// does, rather than being served until stale.
func TestGNMIPortRemovedTakesItsSpeed(t *testing.T) {
	c := newGNMIChain(t)
	step, path := c.step, c.path
	eth1WithSpeed(c)
	if before := strings.Join(c.served("Ethernet1"), " "); !strings.Contains(before, "interface_speed_mbps") || !strings.Contains(before, "interfaces_interface_state_counters_speed_mbps") {
		t.Fatalf("before the removal: no speed served; served %s", before)
	}
	step(20, &gpb.Notification{Prefix: path(gnmiEth1 + "/state/counters"), Delete: []*gpb.Path{path("in-octets"), path("out-octets")}})
	step(20, &gpb.Notification{Prefix: path(gnmiEth1 + "/ethernet/state"), Delete: []*gpb.Path{path("port-speed")}})
	for _, name := range c.served("Ethernet1") {
		if strings.HasSuffix(name, "speed_mbps") {
			t.Errorf("after the port's removal: %s still served", name)
		}
	}
}

// gnmiEth1 is the gNMI path of the interface the gNMI delete tests remove.
const gnmiEth1 = "/interfaces/interface[name=Ethernet1]"

// eth1WithSpeed gives Ethernet1 a port speed of 10 Gbit/s and two samples
// of its octet counters 10 s apart, so that its counters row and its
// "interface" record have rates, utilisation and speed_mbps.
func eth1WithSpeed(c *gnmiChain) {
	step, path := c.step, c.path
	counters := func(in, out uint64) *gpb.Notification {
		return &gpb.Notification{Prefix: path(gnmiEth1 + "/state/counters"), Update: []*gpb.Update{
			{Path: path("in-octets"), Val: &gpb.TypedValue{Value: &gpb.TypedValue_UintVal{UintVal: in}}},
			{Path: path("out-octets"), Val: &gpb.TypedValue{Value: &gpb.TypedValue_UintVal{UintVal: out}}}}}
	}
	step(0, &gpb.Notification{Prefix: path(gnmiEth1 + "/ethernet/state"), Update: []*gpb.Update{
		{Path: path("port-speed"), Val: &gpb.TypedValue{Value: &gpb.TypedValue_StringVal{StringVal: "openconfig-if-ethernet:SPEED_10GB"}}}}})
	step(0, counters(1_000, 2_000))
	step(10, counters(1_000+10*125_000_000, 2_000+10*250_000_000))
}
