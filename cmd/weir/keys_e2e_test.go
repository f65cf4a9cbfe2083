package main

import (
	"encoding/json"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/weirnet/weir/broker"
	"github.com/weirnet/weir/broker/embedded"
	"github.com/weirnet/weir/collectors/snmp/snmptest"
)

// consumedKeyed is a record as `weir consume` lists it.
type consumedKeyed struct {
	Partition int32
	Offset    int64
	Key       string
	Value     struct{ Type, Device, Object string }
}

// consumeAll lists topic from the beginning until want(records) holds.
func consumeAll(t *testing.T, p *weirProc, topic string, want func([]consumedKeyed) bool) []consumedKeyed {
	t.Helper()
	var recs []consumedKeyed
	for deadline := time.Now().Add(15 * time.Second); ; time.Sleep(100 * time.Millisecond) {
		out, _, _ := p.cli(t, "", "consume", topic, "--from-beginning")
		recs = recs[:0]
		for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
			var r consumedKeyed
			if json.Unmarshal([]byte(line), &r) == nil {
				recs = append(recs, r)
			}
		}
		if want(recs) {
			return recs
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: %s\n%s", topic, out, p.Logs())
		}
	}
}

// edge1Partition is the partition murmur2 of the key edge1 gives, of a
// topic with weir's default partition count.
var edge1Partition = broker.PartitionForKey([]byte("edge1"), embedded.DefaultPartitions)

// TestOneDeviceKeyedByItsInventoryName: two lines of one device, the
// first with its FQDN in capitals (which the inventory finds by its
// first label), the second with its inventory name, are keyed on
// raw.syslog by the inventory's name, as their events are: both events
// are in the partition murmur2("edge1") gives, the down before the up.
// Keyed by the hostname as sent, the lines went to raw.syslog partitions
// 2 and 1, and their events (keyed edge1 but written to the partition of
// the line that caused them) were listed up before down: an alert
// resolved before it fired, firing for ever.
func TestOneDeviceKeyedByItsInventoryName(t *testing.T) {
	inv := filepath.Join(t.TempDir(), "inventory.yaml")
	os.WriteFile(inv, []byte("devices:\n  - {name: edge1, address: 127.0.0.1}\n"), 0o644)
	cfg := filepath.Join(t.TempDir(), "weir.yaml")
	os.WriteFile(cfg, []byte("enrich:\n  workers: 2\n  inventory: "+inv+"\n"), 0o644)
	p := startWeir(t, t.TempDir(), "-c", cfg)
	udp, _ := p.SyslogAddrs(t)
	conn, err := net.Dial("udp", udp)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	for _, line := range []string{
		"<189>Dec  3 07:00:01 EDGE1.ams.example.net %LINEPROTO-5-UPDOWN: Line protocol on Interface GigabitEthernet9/7, changed state to down",
		"<189>Dec  3 07:00:02 edge1 %LINEPROTO-5-UPDOWN: Line protocol on Interface GigabitEthernet9/7, changed state to up",
	} {
		if _, err := conn.Write([]byte(line)); err != nil {
			t.Fatal(err)
		}
		time.Sleep(50 * time.Millisecond)
	}
	raw := consumeAll(t, p, "raw.syslog", func(r []consumedKeyed) bool { return len(r) >= 2 })
	for _, r := range raw {
		if r.Key != "edge1" || r.Partition != edge1Partition {
			t.Errorf("raw.syslog record keyed %q in partition %d, want edge1 in %d", r.Key, r.Partition, edge1Partition)
		}
	}
	events := consumeAll(t, p, "events", func(r []consumedKeyed) bool { return len(r) >= 2 })
	if len(events) != 2 {
		t.Fatalf("%d events, want 2: %+v", len(events), events)
	}
	for _, ev := range events {
		if ev.Key != "edge1" || ev.Value.Device != "edge1" || ev.Partition != edge1Partition {
			t.Errorf("%s keyed %q (device %q) in partition %d, want edge1 in %d", ev.Value.Type, ev.Key, ev.Value.Device, ev.Partition, edge1Partition)
		}
	}
	if events[0].Value.Type != "interface_down" || events[1].Value.Type != "interface_up" {
		t.Errorf("events listed %s, %s; want interface_down, interface_up", events[0].Value.Type, events[1].Value.Type)
	}
}

// TestTrapAndSyslogOfADeviceShareAPartition: a device's linkDown trap
// (sent from its address) and its syslog line (with its FQDN as
// hostname) are keyed by its inventory name, so their events are in one
// events partition, the one murmur2("edge1") gives. Keyed by what each
// path carried (127.0.0.1, EDGE1.ams.example.net), they were in
// partitions 4 and 2.
func TestTrapAndSyslogOfADeviceShareAPartition(t *testing.T) {
	snmptest.Require(t, "snmptrap")
	trapPort := snmptest.FreeUDPPort(t)
	inv := filepath.Join(t.TempDir(), "inventory.yaml")
	os.WriteFile(inv, []byte("devices:\n  - {name: edge1, address: 127.0.0.1}\n"), 0o644)
	cfg := filepath.Join(t.TempDir(), "weir.yaml")
	os.WriteFile(cfg, []byte(fmt.Sprintf("snmp:\n  traps:\n    listen: 127.0.0.1:%d\nenrich:\n  workers: 2\n  inventory: %s\n", trapPort, inv)), 0o644)
	p := startWeir(t, t.TempDir(), "-c", cfg)
	// startWeir waits for the syslog, Kafka and HTTP listeners only: a
	// trap sent before the receiver binds its port is lost (as it was
	// once in CI, with the machine loaded).
	p.waitLog(t, "trap receiver listening", "no trap receiver")
	udp, _ := p.SyslogAddrs(t)
	conn, err := net.Dial("udp", udp)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if _, err := conn.Write([]byte("<189>Dec  3 07:00:01 EDGE1.ams.example.net %LINEPROTO-5-UPDOWN: Line protocol on Interface GigabitEthernet9/7, changed state to down")); err != nil {
		t.Fatal(err)
	}
	snmptest.Run(t, t.TempDir(), "snmptrap", "-v2c", "-c", "public", fmt.Sprintf("127.0.0.1:%d", trapPort), "",
		"1.3.6.1.6.3.1.1.5.3", // linkDown
		"1.3.6.1.2.1.2.2.1.1.1", "i", "1", "1.3.6.1.2.1.2.2.1.2.1", "s", "GigabitEthernet9/1",
		"1.3.6.1.2.1.2.2.1.7.1", "i", "1", "1.3.6.1.2.1.2.2.1.8.1", "i", "2")
	raw := consumeAll(t, p, "raw.traps", func(r []consumedKeyed) bool { return len(r) >= 1 })
	if raw[0].Key != "edge1" {
		t.Errorf("raw.traps record keyed %q, want edge1", raw[0].Key)
	}
	events := consumeAll(t, p, "events", func(r []consumedKeyed) bool { return len(r) >= 2 })
	objects := map[string]bool{}
	for _, ev := range events {
		objects[ev.Value.Object] = true
		if ev.Value.Device != "edge1" || ev.Key != "edge1" || ev.Partition != edge1Partition {
			t.Errorf("%s of %s keyed %q (device %q) in partition %d, want edge1 in %d", ev.Value.Type, ev.Value.Object, ev.Key, ev.Value.Device, ev.Partition, edge1Partition)
		}
	}
	if !objects["GigabitEthernet9/7"] || !objects["GigabitEthernet9/1"] {
		t.Errorf("events %+v, want the line's and the trap's", events)
	}
}

// TestCollectRoleKeysByTheInventory: a process running only the collect
// role keys by the inventory the config names, as the enrichment
// elsewhere names the devices, and takes its reload (SIGHUP) for the
// next records' keys.
func TestCollectRoleKeysByTheInventory(t *testing.T) {
	inv := filepath.Join(t.TempDir(), "inventory.yaml")
	os.WriteFile(inv, []byte("devices:\n  - {name: edge1, address: 127.0.0.1}\n"), 0o644)
	cfg := filepath.Join(t.TempDir(), "weir.yaml")
	os.WriteFile(cfg, []byte("enrich:\n  inventory: "+inv+"\n"), 0o644)
	p := startWeir(t, t.TempDir(), "-c", cfg, "--roles", "collect")
	udp, _ := p.SyslogAddrs(t)
	conn, err := net.Dial("udp", udp)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	conn.Write([]byte("<189>Dec  3 07:00:01 EDGE1.ams.example.net %LINEPROTO-5-UPDOWN: Line protocol on Interface GigabitEthernet9/7, changed state to down"))
	raw := consumeAll(t, p, "raw.syslog", func(r []consumedKeyed) bool { return len(r) >= 1 })
	if raw[0].Key != "edge1" {
		t.Errorf("raw.syslog record keyed %q, want edge1", raw[0].Key)
	}
	os.WriteFile(inv, []byte("devices:\n  - {name: edge2, address: 127.0.0.1}\n"), 0o644)
	if err := p.Cmd.Process.Signal(syscall.SIGHUP); err != nil {
		t.Fatal(err)
	}
	p.waitLog(t, "SIGHUP: reloaded", "no reload after SIGHUP")
	conn.Write([]byte("<189>Dec  3 07:00:02 EDGE1.ams.example.net %LINEPROTO-5-UPDOWN: Line protocol on Interface GigabitEthernet9/7, changed state to up"))
	raw = consumeAll(t, p, "raw.syslog", func(r []consumedKeyed) bool { return len(r) >= 2 })
	keys := map[string]bool{}
	for _, r := range raw {
		keys[r.Key] = true
	}
	if !keys["edge2"] {
		t.Errorf("after the inventory renamed the device: keys %v, want edge2", keys)
	}
	if strings.Contains(p.Logs(), "component=enrich-0") {
		t.Errorf("enrichment ran in a collect-only process:\n%s", p.Logs())
	}
}
