package enrich

import (
	"strings"
	"testing"
	"time"

	gpb "github.com/openconfig/gnmi/proto/gnmi"

	"github.com/weirnet/weir/broker"
	"github.com/weirnet/weir/collectors/gnmi"
	"github.com/weirnet/weir/telemetry"
)

// TestNXOSGNMINameOneView: NX-OS's OpenConfig names a port eth1/1
// (/interfaces/interface[name=eth1/1], Cisco DevNet's NX-OS OpenConfig
// examples), its IF-MIB ifName and ifDescr Ethernet1/1: a device both
// polled and streamed showed two series per port on the one dashboard.
// The view names it as SNMP does; other platforms' names, the same in
// both (EOS, Junos, IOS-XR), and Linux's eth0 stay as they are.
func TestNXOSGNMINameOneView(t *testing.T) {
	w := loneMetricsWorker()
	for i, tc := range []struct{ ifName, ifDescr, gnmi, want string }{
		{"Ethernet1/1", "Ethernet1/1", "eth1/1", "Ethernet1/1"},                                                  // NX-OS
		{"Ethernet1/49/1", "Ethernet1/49/1", "eth1/49/1", "Ethernet1/49/1"},                                      // NX-OS breakout
		{"Ethernet101/1/1", "Ethernet101/1/1", "eth101/1/1", "Ethernet101/1/1"},                                  // NX-OS FEX port
		{"mgmt0", "mgmt0", "mgmt0", "mgmt0"},                                                                     // NX-OS (LibreNMS #5662: ifName and ifDescr mgmt0)
		{"Gi0/1", "GigabitEthernet0/1", "GigabitEthernet0/1", "GigabitEthernet0/1"},                              // IOS XE
		{"Ethernet1", "Ethernet1", "Ethernet1", "Ethernet1"},                                                     // EOS
		{"Ethernet3/1", "Ethernet3/1", "Ethernet3/1", "Ethernet3/1"},                                             // EOS modular
		{"ge-0/0/0", "ge-0/0/0", "ge-0/0/0", "ge-0/0/0"},                                                         // Junos
		{"GigabitEthernet0/0/0/0", "GigabitEthernet0/0/0/0", "GigabitEthernet0/0/0/0", "GigabitEthernet0/0/0/0"}, // IOS-XR
		{"eth0", "eth0", "eth0", "eth0"},                                                                         // SONiC's management port, a Linux name
	} {
		at := casesT0.Add(time.Duration(i) * time.Minute)
		snmp := telemetry.Metric{V: 1, Measurement: "snmp_interface", Device: "nx1",
			Tags:   map[string]string{"ifName": tc.ifName, "ifDescr": tc.ifDescr, "ifIndex": "436207616"},
			Fields: map[string]any{"ifHCInOctets": uint64(1000), "ifOperStatus": int64(1)}, Counters: []string{"ifHCInOctets"},
			Time: at, Source: "snmp"}
		enrichAt(t, w, snmp, int64(2*i))
		if !w.interfaceView(&w.row, &w.view) {
			t.Fatalf("%s: no interface view", tc.ifName)
		}
		polled, _ := w.view.Tag("interface")
		streamed := telemetry.Metric{V: 1, Measurement: "interfaces_interface_state", Device: "nx1",
			Tags:     map[string]string{"name": tc.gnmi, "path": "/interfaces/interface[name=" + tc.gnmi + "]/state"},
			Fields:   map[string]any{"counters/in-octets": uint64(1000), "oper-status": "UP"},
			Counters: []string{"counters/in-octets"}, Counters64: []string{"counters/in-octets"}, Time: at, Source: "gnmi"}
		enrichAt(t, w, streamed, int64(2*i+1))
		if !w.interfaceView(&w.row, &w.view) {
			t.Fatalf("%s: no interface view", tc.gnmi)
		}
		if got, _ := w.view.Tag("interface"); polled != tc.want || got != tc.want {
			t.Errorf("ifName %q, gNMI name %q: interface %q polled, %q streamed; want %q for both", tc.ifName, tc.gnmi, polled, got, tc.want)
		}
	}
}

// TestNXOSViewNameNoAllocs: the long name is made once per port, not at
// every row of a hot path that allocates nothing per row.
func TestNXOSViewNameNoAllocs(t *testing.T) {
	w := loneMetricsWorker()
	m := telemetry.Metric{V: 1, Measurement: "interfaces_interface_state", Device: "nx1",
		Tags:   map[string]string{"name": "eth1/1", "path": "/interfaces/interface[name=eth1/1]/state"},
		Fields: map[string]any{"oper-status": "UP"}, Time: casesT0, Source: "gnmi"}
	enrichAt(t, w, m, 0)
	if n := testing.AllocsPerRun(100, func() { w.interfaceView(&w.row, &w.view) }); n != 0 {
		t.Errorf("%v allocations a view", n)
	}
	if got, _ := w.view.Tag("interface"); got != "Ethernet1/1" {
		t.Errorf("interface %q, want Ethernet1/1", got)
	}
}

// TestNXOSGNMIDeleteNamesItsView: a gNMI delete of an NX-OS port, or of
// its oper-status, ends the series the view named Ethernet1/1, not an
// eth1/1 series no sink has.
func TestNXOSGNMIDeleteNamesItsView(t *testing.T) {
	inv, _ := ParseInventory([]byte(testInventory))
	w := NewMetricsWorker(nil, inv, WithInputTopic(telemetry.TopicRawGNMI))
	for _, path := range []string{"/interfaces/interface[name=eth1/1]", "/interfaces/interface[name=eth1/1]/state/oper-status"} {
		p, err := gnmi.ParsePath(path, "")
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range gnmi.Flatten("nx1", &gpb.Notification{Timestamp: casesT0.UnixNano(), Delete: []*gpb.Path{p}}, casesT0) {
			v, _, err := m.AppendJSON(nil, nil)
			if err != nil {
				t.Fatal(err)
			}
			if _, ok := w.enrich(&broker.Record{Topic: telemetry.TopicRawGNMI, Value: v}); !ok {
				t.Fatalf("%s: record not enriched: %s", path, v)
			}
			var names []string
			if w.interfaceView(&w.row, &w.view) {
				name, _ := w.view.Tag("interface")
				names = append(names, name)
			}
			for _, d := range w.counterDel.views {
				names = append(names, d.object)
			}
			if len(names) == 0 || strings.Join(names, " ") != strings.Repeat("Ethernet1/1 ", len(names)-1)+"Ethernet1/1" {
				t.Errorf("delete of %s: views deleted %q, want Ethernet1/1", path, names)
			}
		}
	}
}

// TestNXOSSyslogAndGNMIOneEvent: NX-OS logs a port down as Ethernet1/1
// (%ETHPORT-5-IF_DOWN_LINK_FAILURE), its OpenConfig oper-status names it
// eth1/1: both are object_id et1/1, so the second report is a repeat.
// (This held before the view's fix: events key on object_id.)
func TestNXOSSyslogAndGNMIOneEvent(t *testing.T) {
	rules := NewEventRules(30*time.Second, 5, 10*time.Minute)
	first := rules.d.observe(telemetry.Event{Type: "interface_down", Device: "nx1", Object: "Ethernet1/1", Time: casesT0,
		Cause: telemetry.Cause{Topic: telemetry.TopicRawSyslog}}, casesT0)
	again := rules.d.observe(telemetry.Event{Type: "interface_down", Device: "nx1", Object: "eth1/1", Time: casesT0.Add(time.Second),
		Cause: telemetry.Cause{Topic: telemetry.TopicRawGNMI}}, casesT0.Add(time.Second))
	if len(first) != 1 || len(again) != 0 || first[0].ObjectID != "et1/1" {
		t.Errorf("Ethernet1/1 then eth1/1 down: %+v, then %+v; want one event, object_id et1/1", first, again)
	}
}
