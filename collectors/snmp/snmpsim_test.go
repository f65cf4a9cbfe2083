package snmp

import (
	"bytes"
	"context"
	"encoding/hex"
	"fmt"
	"strings"
	"testing"

	"github.com/weirnet/weir/collectors/snmp/snmptest"
	"github.com/weirnet/weir/configs"
	"github.com/weirnet/weir/telemetry"
)

// TestSnmpsimDevices records snmpd with snmpsim's snmprec, serves three
// devices made from the recording with snmpsimd (an agent none of us
// wrote), polls them all and checks weir publishes what each serves.
func TestSnmpsimDevices(t *testing.T) {
	snmptest.Require(t, "snmprec", "snmpsimd")
	agent := snmptest.StartSNMPD(t)
	// system and interfaces, then ifMIB: what the two profiles read.
	rec := append(agent.Record(t, "1.3.6.1.2.1.1", "1.3.6.1.2.1.3"), agent.Record(t, "1.3.6.1.2.1.31", "1.3.6.1.2.1.32")...)
	devices := map[string][]byte{}
	for i := 1; i <= 3; i++ {
		name := fmt.Sprintf("dev%d", i)
		var b bytes.Buffer
		for _, r := range snmptest.ParseSnmprec(rec) {
			if r.OID == "1.3.6.1.2.1.1.5.0" { // each device its own sysName
				r.Tag, r.Value = "4", name
			}
			fmt.Fprintf(&b, "%s|%s|%s\n", r.OID, r.Tag, r.Value)
		}
		devices[name] = b.Bytes()
	}
	addr := snmptest.StartSnmpsim(t, devices)

	var targets []configs.SNMPTarget
	for name := range devices {
		// snmpsimd picks the device by community.
		targets = append(targets, testTarget(name, addr, func(tc *configs.SNMPTarget) { tc.Community = name }))
	}
	capture := snmptest.NewCapture()
	p, err := New(Config{Targets: targets, Profiles: loadProfiles(t), Broker: capture})
	if err != nil {
		t.Fatal(err)
	}
	for name := range devices {
		if err := p.PollOnce(context.Background(), name); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
	}
	ms := decode(t, capture.Records())
	ifCols := map[string]string{ // profile column -> OID, as the if-mib profile names them
		"1.3.6.1.2.1.2.2.1.2": "ifDescr", "1.3.6.1.2.1.31.1.1.1.1": "ifName", "1.3.6.1.2.1.2.2.1.8": "ifOperStatus",
		"1.3.6.1.2.1.2.2.1.4": "ifMtu", "1.3.6.1.2.1.31.1.1.1.6": "ifHCInOctets", "1.3.6.1.2.1.31.1.1.1.10": "ifHCOutOctets",
		"1.3.6.1.2.1.2.2.1.10": "ifInOctets", "1.3.6.1.2.1.31.1.1.1.15": "ifHighSpeed",
	}
	for name, data := range devices {
		var system *telemetry.Metric
		ifaces := map[string]telemetry.Metric{}
		for i, m := range ms {
			if m.Device != name {
				continue
			}
			switch m.Measurement {
			case "snmp_system":
				system = &ms[i]
			case "snmp_interface":
				ifaces[m.Tags["ifIndex"]] = m
			case "snmp_status":
				if m.Fields["snmp_up"] != float64(1) {
					t.Errorf("%s: %v", name, m.Fields)
				}
			}
		}
		if system == nil {
			t.Fatalf("%s: no system record", name)
		}
		checked := 0
		for _, r := range snmptest.ParseSnmprec(data) {
			val := r.Value
			if strings.HasSuffix(r.Tag, "x") {
				b, _ := hex.DecodeString(val)
				val = string(b)
			}
			switch r.OID {
			case "1.3.6.1.2.1.1.5.0", "1.3.6.1.2.1.1.1.0", "1.3.6.1.2.1.1.4.0":
				field := map[string]string{"1.3.6.1.2.1.1.5.0": "sysName", "1.3.6.1.2.1.1.1.0": "sysDescr", "1.3.6.1.2.1.1.4.0": "sysContact"}[r.OID]
				if system.Fields[field] != val {
					t.Errorf("%s %s: weir %q, snmpsim %q", name, field, system.Fields[field], val)
				}
				checked++
				continue
			}
			i := strings.LastIndexByte(r.OID, '.')
			col, idx := r.OID[:i], r.OID[i+1:]
			field, ok := ifCols[col]
			if !ok {
				continue
			}
			m, ok := ifaces[idx]
			if !ok {
				t.Errorf("%s: interface %s not published", name, idx)
				continue
			}
			got := m.Tags[field]
			if got == "" {
				got = fmt.Sprint(m.Fields[field])
				if f, ok := m.Fields[field].(float64); ok {
					got = fmt.Sprintf("%.0f", f) // JSON numbers come back as float64
				}
			}
			if got != val {
				t.Errorf("%s if %s %s: weir %q, snmpsim %q", name, idx, field, got, val)
			}
			checked++
		}
		if checked < 3+len(ifaces)*len(ifCols)-len(ifaces) || len(ifaces) == 0 {
			t.Errorf("%s: only %d values compared for %d interfaces", name, checked, len(ifaces))
		}
	}
}
