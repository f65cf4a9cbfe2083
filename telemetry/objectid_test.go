package telemetry

import "testing"

// TestAppendObjectIDIsObjectID: the appending form gives what ObjectID
// gives, for every kind of object.
func TestAppendObjectIDIsObjectID(t *testing.T) {
	for _, tc := range [][2]string{
		{"interface_down", "GigabitEthernet0/1"}, {"interface_up", "Gi0/1"}, {"interface_flapping", "Ethernet1/1"},
		{"interface_down", "ge-0/0/0"}, {"interface_down", "Ethernet 1/1/1"}, {"interface_down", ""}, {"interface_down", "Vlan"},
		{"bgp_peer_down", "2001:DB8::1"}, {"bgp_peer_up", "2001:db8::1"}, {"bgp_peer_down", "2001:DB8::1 vrf CUST-A"},
		{"bgp_peer_down", "10.0.0.1 vrf CUST-A"}, {"ospf_neighbor_down", "2001:db8:0:0:1:0:0:1"}, {"bgp_peer_down", "peer:x"},
		{"config_changed", "admin"}, {"device_unreachable", ""},
	} {
		want := ObjectID(tc[0], tc[1])
		if got := string(AppendObjectID([]byte("x"), tc[0], tc[1])); got != "x"+want {
			t.Errorf("AppendObjectID(%q, %q) = %q, want x%q", tc[0], tc[1], got, want)
		}
	}
	if ObjectID("interface_down", "GigabitEthernet0/1") != "gi0/1" || ObjectID("bgp_peer_down", "2001:DB8::1 vrf A") != "2001:db8::1 vrf A" {
		t.Error("ObjectID")
	}
}
