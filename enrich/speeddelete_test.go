package enrich

import (
	"testing"

	gpb "github.com/openconfig/gnmi/proto/gnmi"
)

// TestGNMIDeleteOfSpeedPortStaysADelete: a gNMI delete of an interface's
// counters container or of its state, on an interface whose speed is
// known (port-speed, which neither delete removes), is published as the
// delete it is, the single field deleted=true, and so is the "interface"
// record of a delete of its state: a speed_mbps beside it would make it a
// record like any other, which the Prometheus sink serves (as
// ..._deleted 1) rather than dropping the interface's series.
func TestGNMIDeleteOfSpeedPortStaysADelete(t *testing.T) {
	for _, del := range []string{"/state/counters", "/state"} {
		t.Run(del, func(t *testing.T) {
			c := newGNMIChain(t)
			step, path := c.step, c.path
			eth1WithSpeed(c)
			for _, m := range step(20, &gpb.Notification{Delete: []*gpb.Path{path(gnmiEth1 + del)}}) {
				if _, ok := m.Fields["deleted"]; !ok && m.Measurement != "interface" {
					continue
				}
				if len(m.Fields) != 1 || m.Fields["deleted"] != true {
					t.Errorf("%s: published as %v, want the single field deleted=true", m.Measurement, m.Fields)
				}
			}
			for _, name := range c.served("Ethernet1") {
				switch name {
				case "interfaces_interface_state_counters_deleted", "interfaces_interface_state_deleted",
					"interfaces_interface_state_speed_mbps":
					t.Errorf("after the delete of %s: %s served", del, name)
				}
			}
		})
	}
}
