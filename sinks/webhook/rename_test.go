package webhook

import (
	"net/http/httptest"
	"testing"
	"time"

	"github.com/weirnet/weir/configs"
	"github.com/weirnet/weir/sinks"
	"github.com/weirnet/weir/telemetry"
)

// renamedEv is amEv of device dev.
func renamedEv(typ, dev, obj string, tags map[string]string, at time.Duration) sinks.Item {
	it := amEv(typ, obj, telemetry.ObjectID(typ, obj), at)
	it.Event.Device, it.Event.Tags = dev, tags
	return it
}

// TestRenamedDevicesAlertsEndUnderItsNewName: an inventory reload renamed
// edge1 to edge1-ams (device_renamed, new name as device, old as
// object). The link down that fired under edge1 is ended by the link up
// under edge1-ams, with the labels it fired with, whether the rename came
// in an earlier batch, in the same batch as the up, or before a restart
// (the move is saved). An SNMP target's unreachable alert fired under the
// target's own name (no object) is ended by the reachable under the
// inventory's name (the target as object). Before, each stayed firing,
// re-sent every minute, as nothing of the new name ever ended it.
func TestRenamedDevicesAlertsEndUnderItsNewName(t *testing.T) {
	site := map[string]string{"site": "ams1"}
	renamed := func(from, to string, at time.Duration) sinks.Item {
		return renamedEv(telemetry.TypeDeviceRenamed, to, from, site, at)
	}
	fired := map[string]string{"alertname": "interface_down", "device": "edge1", "object": "Ethernet7", "site": "ams1"}
	for _, tc := range []struct {
		name    string
		batches [][]sinks.Item
		restart bool // between the batches
	}{
		{name: "rename in an earlier batch", batches: [][]sinks.Item{
			{renamedEv("interface_down", "edge1", "Ethernet7", site, 0)},
			{renamed("edge1", "edge1-ams", time.Second)},
			{renamedEv("interface_up", "edge1-ams", "Ethernet7", site, 2*time.Second)},
		}},
		{name: "rename and up in one batch", batches: [][]sinks.Item{
			{renamedEv("interface_down", "edge1", "Ethernet7", site, 0)},
			{renamed("edge1", "edge1-ams", time.Second), renamedEv("interface_up", "edge1-ams", "Ethernet7", site, 2*time.Second)},
		}},
		{name: "down, rename and up in one batch", batches: [][]sinks.Item{
			{renamedEv("interface_down", "edge1", "Ethernet7", site, 0), renamed("edge1", "edge1-ams", time.Second),
				renamedEv("interface_up", "edge1-ams", "Ethernet7", site, 2*time.Second)},
		}},
		{name: "renamed twice before the up", batches: [][]sinks.Item{
			{renamedEv("interface_down", "edge1", "Ethernet7", site, 0)},
			{renamed("edge1", "edge1-ams", time.Second), renamed("edge1-ams", "ams-edge1", time.Second),
				renamedEv("interface_up", "ams-edge1", "Ethernet7", site, 2*time.Second)},
		}},
		{name: "restart after the rename", restart: true, batches: [][]sinks.Item{
			{renamedEv("interface_down", "edge1", "Ethernet7", site, 0), renamed("edge1", "edge1-ams", time.Second)},
			{renamedEv("interface_up", "edge1-ams", "Ethernet7", site, 2*time.Second)},
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			am := &amModel{last: map[string]bool{}}
			srv := httptest.NewServer(am)
			defer srv.Close()
			dir := t.TempDir()
			s := amSink(t, srv.URL, dir)
			for i, batch := range tc.batches {
				if i > 0 && tc.restart {
					if err := s.Close(); err != nil {
						t.Fatal(err)
					}
					s = amSink(t, srv.URL, dir)
				}
				amWrite(t, s, batch...)
			}
			if firing, known := am.firing(fired); !known || firing {
				t.Errorf("the link down fired under the old name: known %v, firing %v; want ended", known, firing)
			}
			if len(s.active) != 0 {
				t.Errorf("alerts still re-sent: %v", s.active)
			}
			checkNoStaleSaved(t, s, am)
		})
	}

	t.Run("unreachable target named by the inventory since", func(t *testing.T) {
		am := &amModel{last: map[string]bool{}}
		srv := httptest.NewServer(am)
		defer srv.Close()
		s := amSink(t, srv.URL, t.TempDir())
		agent := map[string]string{"agent": "192.0.2.50"}
		named := map[string]string{"agent": "192.0.2.50", "site": "lab", "target": "lab1"}
		amWrite(t, s, renamedEv("device_unreachable", "lab1", "", agent, 0))
		amWrite(t, s, renamed("lab1", "labrouter", time.Second), renamedEv("device_reachable", "labrouter", "lab1", named, 2*time.Second))
		l := map[string]string{"alertname": "device_unreachable", "device": "lab1", "agent": "192.0.2.50"}
		if firing, known := am.firing(l); !known || firing {
			t.Errorf("unreachable under the target's name: known %v, firing %v; want ended", known, firing)
		}
		if len(s.active) != 0 {
			t.Errorf("alerts still re-sent: %v", s.active)
		}
	})

	t.Run("an alert of the new name's own stays", func(t *testing.T) {
		am := &amModel{last: map[string]bool{}}
		srv := httptest.NewServer(am)
		defer srv.Close()
		s := amSink(t, srv.URL, t.TempDir())
		amWrite(t, s, renamedEv("interface_down", "edge1", "Ethernet7", site, 0), renamedEv("interface_down", "edge1", "Ethernet8", site, 0))
		amWrite(t, s, renamed("edge1", "edge1-ams", time.Second))
		bodies := am.bodies
		if len(s.active) != 2 {
			t.Fatalf("%d alerts kept after the rename, want 2: %v", len(s.active), s.active)
		}
		amWrite(t, s, renamedEv("interface_up", "edge1-ams", "Ethernet7", site, 2*time.Second))
		if am.bodies != bodies+1 {
			t.Errorf("%d posts, want 1", am.bodies-bodies)
		}
		if firing, _ := am.firing(fired); firing {
			t.Error("Ethernet7's alert not ended")
		}
		still := map[string]string{"alertname": "interface_down", "device": "edge1", "object": "Ethernet8", "site": "ams1"}
		if firing, _ := am.firing(still); !firing || len(s.active) != 1 {
			t.Errorf("Ethernet8's alert: firing %v, kept %d; want still firing, kept", firing, len(s.active))
		}
	})
}

// TestRenameTakenByTheAlertmanagerFormOnly: the Alertmanager form's
// filter takes every device_renamed (it moves whatever alerts the filter
// fired); the JSON form's filter judges it as any event, so a chat
// webhook given bgp_* events does not get it.
func TestRenameTakenByTheAlertmanagerFormOnly(t *testing.T) {
	for _, format := range []string{"alertmanager", "json"} {
		s, err := NewSink(configs.Sink{Name: "w", URL: "http://127.0.0.1:1/", Format: format}, sinks.Env{StateDir: t.TempDir()}, time.Now, time.Hour)
		if err != nil {
			t.Fatal(err)
		}
		ended, ok := s.Ends(telemetry.TypeDeviceRenamed)
		if want := format == "alertmanager"; ok != want || ok && ended != sinks.EndsAny {
			t.Errorf("%s: Ends(device_renamed) = %q, %v; want taken %v", format, ended, ok, want)
		}
	}
}

// TestTwoNamesRenamedIntoOneEndTheirAlerts: a reload gave two old names
// one new one (an SNMP and a gNMI target of one address, named apart
// until an inventory entry for the address named both): enrichment says
// a device_renamed for each, with the new name's first event. The link
// down that fired under either old name is ended by the link up under
// the new name in the same batch, whichever of the two renames comes
// first. (Before, only the last rename into the new name was followed
// back, so an alert of the name renamed first was moved, still firing,
// and re-sent for good.)
func TestTwoNamesRenamedIntoOneEndTheirAlerts(t *testing.T) {
	site := map[string]string{"site": "ams1"}
	renamed := func(from, to string, at time.Duration) sinks.Item {
		return renamedEv(telemetry.TypeDeviceRenamed, to, from, site, at)
	}
	for _, old := range []string{"sw4-gnmi", "sw4-snmp"} {
		for _, sameBatch := range []bool{true, false} {
			name := old
			if !sameBatch {
				name += " rename in an earlier batch"
			}
			t.Run(name, func(t *testing.T) {
				am := &amModel{last: map[string]bool{}}
				srv := httptest.NewServer(am)
				defer srv.Close()
				s := amSink(t, srv.URL, t.TempDir())
				amWrite(t, s, renamedEv("interface_down", old, "Ethernet7", site, 0))
				renames := []sinks.Item{renamed("sw4-gnmi", "sw4", time.Second), renamed("sw4-snmp", "sw4", time.Second)}
				up := renamedEv("interface_up", "sw4", "Ethernet7", site, 2*time.Second)
				if sameBatch {
					amWrite(t, s, append(renames, up)...)
				} else {
					amWrite(t, s, renames...)
					amWrite(t, s, up)
				}
				fired := map[string]string{"alertname": "interface_down", "device": old, "object": "Ethernet7", "site": "ams1"}
				if firing, known := am.firing(fired); !known || firing {
					t.Errorf("the link down fired under %s: known %v, firing %v; want ended", old, known, firing)
				}
				if len(s.active) != 0 {
					t.Errorf("alerts still re-sent: %v", s.active)
				}
			})
		}
	}
}
