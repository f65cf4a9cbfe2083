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

// TestObjectIDLinuxEth: eth with a slash after it is NX-OS's (and
// Comware's) abbreviation of Ethernet; a Linux name (eth0, eth0.100, which
// cannot hold a slash) is its own, or SONiC's management eth0 would be its
// front-panel Ethernet0.
func TestObjectIDLinuxEth(t *testing.T) {
	for _, tc := range [][2]string{
		{"Eth1/1", "et1/1"}, {"Ethernet1/1", "et1/1"}, {"eth1/0/1", "et1/0/1"}, {"Ethernet0", "et0"}, {"Et1", "et1"},
		{"eth0", "eth0"}, {"eth0.100", "eth0.100"}, {"ETH2", "ETH2"},
	} {
		if got := ObjectID("interface_down", tc[0]); got != tc[1] {
			t.Errorf("ObjectID(interface_down, %q) = %q, want %q", tc[0], got, tc[1])
		}
		if got := string(AppendObjectID(nil, "interface_down", tc[0])); got != tc[1] {
			t.Errorf("AppendObjectID(interface_down, %q) = %q, want %q", tc[0], got, tc[1])
		}
	}
}
