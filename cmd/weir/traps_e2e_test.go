package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/weirnet/weir/collectors/snmp/snmptest"
)

// TestTrapAndPollAreOneDevice: weir polls Net-SNMP's snmpd and receives a
// linkDown that Net-SNMP's snmptrap sends from the same address with only
// ifIndex, ifAdminStatus and ifOperStatus, as RFC 2863 defines it. With no
// inventory, the event names the device and the interface as the polls
// do: the target's name, not the trap's source address, and the ifName
// snmpd gives that ifIndex, not "ifIndex 1".
func TestTrapAndPollAreOneDevice(t *testing.T) {
	snmptest.Require(t, "snmptrap")
	agent := snmptest.StartSNMPD(t)
	trapPort := snmptest.FreeUDPPort(t)
	cfg := filepath.Join(t.TempDir(), "weir.yaml")
	os.WriteFile(cfg, []byte(fmt.Sprintf(`snmp:
  defaults: {version: 2c, community: public, interval: 2s, timeout: 1s, retries: 0, profiles: [system, if-mib]}
  targets:
    - {name: lab-agent, address: "%s"}
  traps:
    listen: 127.0.0.1:%d
`, agent.Addr, trapPort)), 0o644)
	p := startWeir(t, t.TempDir(), "-c", cfg)

	// The name the polls give ifIndex 1, once a poll has been enriched.
	var ifName string
	for deadline := time.Now().Add(20 * time.Second); ifName == ""; time.Sleep(200 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("no enriched row of ifIndex 1 from lab-agent:\n%s", p.Logs())
		}
		out, _, _ := p.cli(t, "", "consume", "enriched.metrics", "--from-beginning")
		for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
			var r struct {
				Value struct {
					Measurement, Device string
					Tags                map[string]string
				}
			}
			if json.Unmarshal([]byte(line), &r) == nil && r.Value.Measurement == "snmp_interface" &&
				r.Value.Device == "lab-agent" && r.Value.Tags["ifIndex"] == "1" {
				ifName = r.Value.Tags["ifName"]
			}
		}
	}
	snmptest.Run(t, agent.Dir, "snmptrap", "-v2c", "-c", "public", fmt.Sprintf("127.0.0.1:%d", trapPort), "",
		"1.3.6.1.6.3.1.1.5.3", // linkDown
		"1.3.6.1.2.1.2.2.1.1.1", "i", "1", "1.3.6.1.2.1.2.2.1.7.1", "i", "1", "1.3.6.1.2.1.2.2.1.8.1", "i", "2")
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(100 * time.Millisecond) {
		out, _, _ := p.cli(t, "", "consume", "events", "--from-beginning")
		if strings.Contains(out, `"type":"interface_down"`) {
			var ev struct {
				Value struct{ Type, Device, Object string }
			}
			if err := json.Unmarshal([]byte(strings.SplitN(out, "\n", 2)[0]), &ev); err != nil {
				t.Fatalf("events: %q: %v", out, err)
			}
			if ev.Value.Device != "lab-agent" || ev.Value.Object != ifName {
				t.Fatalf("event %+v, want interface_down of lab-agent's %s", ev.Value, ifName)
			}
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("no interface_down event: %s\n%s", out, p.Logs())
		}
	}
}

// TestTrapListenFlag: --trap-listen starts the trap receiver on its
// address with no snmp section in the config, as --syslog-listen does for
// syslog, so a second instance runs beside the first; "off" stops it.
func TestTrapListenFlag(t *testing.T) {
	snmptest.Require(t, "snmptrap")
	port := snmptest.FreeUDPPort(t)
	p := startWeir(t, t.TempDir(), "--trap-listen", fmt.Sprintf("127.0.0.1:%d", port))
	p.waitLog(t, "trap receiver listening", "no trap receiver")
	snmptest.Run(t, t.TempDir(), "snmptrap", "-v2c", "-c", "public", fmt.Sprintf("127.0.0.1:%d", port), "", "1.3.6.1.6.3.1.1.5.1")
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(100 * time.Millisecond) {
		out, _, _ := p.cli(t, "", "consume", "raw.traps", "--from-beginning")
		if strings.Contains(out, `"trap_name":"coldStart"`) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("no coldStart on raw.traps: %q\n%s", out, p.Logs())
		}
	}
	cfg := filepath.Join(t.TempDir(), "weir.yaml")
	os.WriteFile(cfg, []byte("snmp:\n  traps: {listen: \"127.0.0.1:1\"}\n"), 0o644)
	q := startWeir(t, t.TempDir(), "-c", cfg, "--trap-listen", "off")
	time.Sleep(300 * time.Millisecond)
	if strings.Contains(q.Logs(), "trap receiver listening") {
		t.Fatalf("--trap-listen off started the receiver:\n%s", q.Logs())
	}
}

// TestVendorTrapsRaiseEvents: the vendor notifications for changes the
// events name, sent by Net-SNMP's snmptrap to a running weir, raise those
// events: a Junos commit (jnxCmCfgChange, with its user), an NX-OS
// cieLinkDown, an OSPFv3 neighbor lost (ospfv3NbrStateChange as a v1 trap,
// enterprise ospfv3Notifications' parent); a Cisco "show running-config"
// (ciscoConfigManEvent, running to commandSource) and a Junos power supply
// alarm raise none.
func TestVendorTrapsRaiseEvents(t *testing.T) {
	snmptest.Require(t, "snmptrap")
	port := snmptest.FreeUDPPort(t)
	p := startWeir(t, t.TempDir(), "--trap-listen", fmt.Sprintf("127.0.0.1:%d", port))
	p.waitLog(t, "trap receiver listening", "no trap receiver")
	addr := fmt.Sprintf("127.0.0.1:%d", port)
	const ccm, jnxCm = "1.3.6.1.4.1.9.9.43.1.1.6.1.", "1.3.6.1.4.1.2636.3.18.1.7.1."
	for _, args := range [][]string{
		{"-v2c", "-c", "public", addr, "", "1.3.6.1.4.1.9.9.43.2.0.1", ccm + "3.9", "i", "1", ccm + "4.9", "i", "3", ccm + "5.9", "i", "2"},
		{"-v1", "-c", "public", addr, "1.3.6.1.4.1.2636", "127.0.0.1", "6", "1", "", "1.3.6.1.4.1.2636.3.1.8.1.6.2.1.0.0", "s", "PEM 1"},
		{"-v2c", "-c", "public", addr, "", "1.3.6.1.4.1.2636.4.5.0.1", jnxCm + "4.7", "i", "1", jnxCm + "5.7", "s", "netops"},
		{"-v2c", "-c", "public", addr, "", "1.3.6.1.4.1.9.9.276.0.1", "1.3.6.1.2.1.2.2.1.1.436207616", "i", "436207616",
			"1.3.6.1.2.1.2.2.1.8.436207616", "i", "2", "1.3.6.1.2.1.31.1.1.1.1.436207616", "s", "Ethernet1/1"},
		{"-v1", "-c", "public", addr, "1.3.6.1.2.1.191", "127.0.0.1", "6", "2", "", "1.3.6.1.2.1.191.1.9.1.8.5.0.167772169", "i", "1"},
	} {
		snmptest.Run(t, t.TempDir(), "snmptrap", args...)
	}
	want := []string{"config_changed netops", "interface_down Ethernet1/1", "ospf_neighbor_down 10.0.0.9"}
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(100 * time.Millisecond) {
		out, _, _ := p.cli(t, "", "consume", "events", "--from-beginning")
		var got []string
		for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
			var ev struct {
				Value struct{ Type, Object string }
			}
			if json.Unmarshal([]byte(line), &ev) == nil && ev.Value.Type != "" {
				got = append(got, ev.Value.Type+" "+ev.Value.Object)
			}
		}
		slices.Sort(got)
		if slices.Equal(got, want) {
			return
		}
		if len(got) > len(want) || time.Now().After(deadline) {
			t.Fatalf("events %q, want %q\n%s", got, want, p.Logs())
		}
	}
}

// TestRestartLoggedAndTrappedIsOneEvent: a device that restarted logs
// %SYS-5-RESTART (sent with util-linux's logger) and sends a coldStart
// trap (Net-SNMP's snmptrap) saying it has been up 90 s: one
// device_rebooted, though the line, which tells no boot time, comes 90 s
// after the boot the trap tells (past the 30 s de-duplication window).
func TestRestartLoggedAndTrappedIsOneEvent(t *testing.T) {
	snmptest.Require(t, "snmptrap", "logger")
	dir := t.TempDir()
	inv := filepath.Join(dir, "inventory.yaml")
	os.WriteFile(inv, []byte("devices:\n  - {name: edge1, address: 127.0.0.1, site: lab}\n"), 0o644)
	trapPort := snmptest.FreeUDPPort(t)
	cfg := filepath.Join(dir, "weir.yaml")
	os.WriteFile(cfg, []byte(fmt.Sprintf("enrich:\n  inventory: %s\nsnmp:\n  traps:\n    listen: 127.0.0.1:%d\n", inv, trapPort)), 0o644)
	p := startWeir(t, t.TempDir(), "-c", cfg)

	p.arista(t, "%SYS-5-RESTART: System restarted --")
	snmptest.Run(t, t.TempDir(), "snmptrap", "-v2c", "-c", "public", fmt.Sprintf("127.0.0.1:%d", trapPort), "9000",
		"1.3.6.1.6.3.1.1.5.1") // coldStart, sysUpTime 90 s
	reboots := func() (evs []string) {
		out, _, _ := p.cli(t, "", "consume", "events", "--from-beginning")
		for line := range strings.Lines(out) {
			if strings.Contains(line, `"type":"device_rebooted"`) {
				evs = append(evs, line)
			}
		}
		return evs
	}
	for deadline := time.Now().Add(10 * time.Second); len(reboots()) == 0; time.Sleep(100 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("no device_rebooted:\n%s", p.Logs())
		}
	}
	// Both were received: the trap's record is in raw.traps, the line's in
	// raw.syslog; then the events are as the two made them.
	for _, topic := range []string{"raw.traps", "raw.syslog"} {
		for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(100 * time.Millisecond) {
			if out, _, _ := p.cli(t, "", "consume", topic, "--from-beginning"); strings.TrimSpace(out) != "" {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("nothing in %s:\n%s", topic, p.Logs())
			}
		}
	}
	time.Sleep(2 * time.Second) // enriched by now: a second event would be there
	evs := reboots()
	if len(evs) != 1 || !strings.Contains(evs[0], `"device":"edge1"`) {
		t.Fatalf("device_rebooted events %q, want one of edge1", evs)
	}
}
