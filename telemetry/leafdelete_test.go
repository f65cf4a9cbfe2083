package telemetry

import (
	"slices"
	"testing"
)

func TestLeafRows(t *testing.T) {
	for _, tc := range []struct {
		measurement, path string
		want              []LeafRow
	}{
		{"interfaces_interface_state_counters_in_octets", "/interfaces/interface[name=Ethernet1]/state/counters/in-octets", []LeafRow{
			{"interfaces_interface_state_counters", "/interfaces/interface[name=Ethernet1]/state/counters", "in-octets"},
			{"interfaces_interface_state", "/interfaces/interface[name=Ethernet1]/state", "counters/in-octets"},
			{"interfaces_interface", "/interfaces/interface[name=Ethernet1]", "state/counters/in-octets"},
		}},
		// Module prefixes go, as the collector drops them.
		{"interfaces_interface_state_oper_status", "/interfaces/interface[name=x]/oc-if:state/oc-if:oper-status", []LeafRow{
			{"interfaces_interface_state", "/interfaces/interface[name=x]/oc-if:state", "oper-status"},
			{"interfaces_interface", "/interfaces/interface[name=x]", "state/oper-status"},
		}},
		{"interfaces_interface", "/interfaces/interface[name=x]", nil},    // a list entry
		{"other_measurement", "/interfaces/interface[name=x]/state", nil}, // not the path's
		{"system_state_hostname", "/system/state/hostname", []LeafRow{
			{"system_state", "/system/state", "hostname"},
			{"system", "/system", "state/hostname"},
		}},
	} {
		got := slices.Collect(LeafRows(tc.measurement, tc.path))
		if !slices.Equal(got, tc.want) {
			t.Errorf("LeafRows(%s, %s) = %q, want %q", tc.measurement, tc.path, got, tc.want)
		}
	}
}

// TestFieldPathBelow: the path of a container below a row, as the
// collector names the fields that came inside the row's JSON object.
func TestFieldPathBelow(t *testing.T) {
	for _, c := range []struct {
		path, at, want string
		ok             bool
	}{
		{"/interfaces/interface[name=Ethernet1]/state/counters", "/interfaces/interface[name=Ethernet1]", "state/counters", true},
		{"/interfaces/interface[name=Ethernet1]/openconfig-interfaces:state/counters", "/interfaces/interface[name=Ethernet1]", "state/counters", true},
		// A key value may hold a "/" and a ":": they stay.
		{"/interfaces/interface[name=Ethernet1/1]/subinterfaces/subinterface[index=0]", "/interfaces", "interface[name=Ethernet1/1]/subinterfaces/subinterface[index=0]", true},
		{"/a:interfaces/interface[name=x:y]", "/", "interfaces/interface[name=x:y]", true},
		{"/interfaces/interface[name=Ethernet1]", "/interfaces/interface[name=Ethernet1]", "", false},
		{"/interfaces/interface[name=Ethernet10]/state", "/interfaces/interface[name=Ethernet1]", "", false},
		{"/interfaces", "/interfaces/interface[name=Ethernet1]", "", false},
		{"/interfaces", "", "", false},
	} {
		got, ok := FieldPathBelow(c.path, c.at)
		if got != c.want || ok != c.ok {
			t.Errorf("FieldPathBelow(%q, %q) = %q, %v; want %q, %v", c.path, c.at, got, ok, c.want, c.ok)
		}
	}
}
