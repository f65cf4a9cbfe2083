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
