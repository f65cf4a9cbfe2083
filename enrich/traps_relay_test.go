package enrich

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/weirnet/weir/broker"
	"github.com/weirnet/weir/telemetry"
)

// TestTrapRelayedAgentAddress: a trap forwarded by a relay (a trap
// forwarder or proxy re-sending the PDU, a source NAT) arrives from the
// relay's address, but names the agent that raised it: a v1 trap in its
// agent-addr (which the trap collector converts to snmpTrapAddress.0,
// RFC 3584 3.1), a v2 trap a proxy translated or forwarded in
// snmpTrapAddress.0. edge1
// (192.0.2.1 in the inventory) relayed through 198.51.100.9 is edge1's
// interface going down, as a syslog line relayed with the device's
// address as hostname already is (enrich/README.md), not an unknown
// 198.51.100.9's. Today both events name the relay.
func TestTrapRelayedAgentAddress(t *testing.T) {
	inv, _ := ParseInventory([]byte(testInventory))
	w := NewTrapWorker(nil, inv)
	for _, version := range []string{"1", "2c"} {
		tr := telemetry.Trap{Device: "198.51.100.9", SourceAddr: "198.51.100.9:40000", TrapOID: "1.3.6.1.6.3.1.1.5.3", TrapName: "linkDown",
			Varbinds: []telemetry.Varbind{
				{OID: "1.3.6.1.2.1.2.2.1.1.3", Name: "ifIndex.3", Type: "integer", Value: 3},
				{OID: "1.3.6.1.2.1.2.2.1.2.3", Name: "ifDescr.3", Type: "octet_string", Value: "GigabitEthernet0/3"},
				{OID: "1.3.6.1.6.3.18.1.3.0", Name: "snmpTrapAddress.0", Type: "ipaddress", Value: "192.0.2.1"},
				{OID: "1.3.6.1.6.3.18.1.4.0", Name: "snmpTrapCommunity.0", Type: "octet_string", Value: "public"},
			}}
		tr.V, tr.Version, tr.ReceivedAt = 1, version, time.Now()
		ev, ok := w.eventOf(&tr, &broker.Record{Topic: telemetry.TopicRawTraps})
		if !ok || ev.Device != "edge1" || ev.Tags["unknown"] == "true" {
			t.Errorf("v%s trap relayed for 192.0.2.1: event of %q (tags %v), want edge1's", version, ev.Device, ev.Tags)
		}
	}
}

// TestTrapAgentAddressNotInInventory: an agent the inventory does not know
// names the event by its own address, not the relay's; 0.0.0.0 (agents
// that leave the address to the receiver) names none.
func TestTrapAgentAddressNotInInventory(t *testing.T) {
	inv, _ := ParseInventory([]byte(testInventory))
	w := NewTrapWorker(nil, inv)
	for agent, want := range map[string]string{"203.0.113.7": "203.0.113.7", "0.0.0.0": "198.51.100.9", "::ffff:203.0.113.8": "203.0.113.8"} {
		tr := telemetry.Trap{V: 1, Version: "1", Device: "198.51.100.9", SourceAddr: "198.51.100.9:40000", TrapOID: "1.3.6.1.6.3.1.1.5.3",
			TrapName: "linkDown", ReceivedAt: time.Now(), Varbinds: []telemetry.Varbind{
				{OID: "1.3.6.1.2.1.2.2.1.1.3", Name: "ifIndex.3", Type: "integer", Value: 3},
				{OID: "1.3.6.1.6.3.18.1.3.0", Name: "snmpTrapAddress.0", Type: "ipaddress", Value: agent},
			}}
		ev, ok := w.eventOf(&tr, &broker.Record{Topic: telemetry.TopicRawTraps})
		if !ok || ev.Device != want || ev.Tags["unknown"] != "true" {
			t.Errorf("agent %s: event of %q (tags %v), want %s's", agent, ev.Device, ev.Tags, want)
		}
	}
}

// TestWarmupHoldsRelayedTrap: a warm-up holds a relayed bare-ifIndex trap
// for its interface's name as it holds one the agent sent itself. The trap
// is named by its agent (snmpTrapAddress.0: a v1 trap's agent-addr, a
// forwarder's), so whether its names may still change is the agent's
// question, not the relay's: edge1 (192.0.2.1, polled) relayed through
// 198.51.100.9 (not polled) waits for the poll naming ifIndex 3, or a link
// that flapped before the restart is remembered as "ifIndex 3" and never
// cleared as Gi0/3.
func TestWarmupHoldsRelayedTrap(t *testing.T) {
	inv, _ := ParseInventory([]byte(testInventory))
	targets := WithSNMPTargets(NewSNMPTargets([]SNMPTarget{{Name: "edge1", Host: "192.0.2.1"}}))
	for _, c := range []struct {
		from, agent string
		held        bool
	}{
		{"198.51.100.9", "192.0.2.1", true}, // relayed for the polled agent
		{"192.0.2.1", "", true},             // sent by the polled agent
		{"192.0.2.1", "203.0.113.7", false}, // from the polled address, for another agent
	} {
		tr := rfc2863LinkDown(c.from, 3)
		if c.agent != "" {
			tr.Varbinds = append(tr.Varbinds, telemetry.Varbind{OID: "1.3.6.1.6.3.18.1.3.0", Name: "snmpTrapAddress.0", Type: "ipaddress", Value: c.agent})
		}
		v, _ := json.Marshal(&tr)
		r := broker.Record{Topic: telemetry.TopicRawTraps, Partition: 1, Offset: 5, Value: v, Timestamp: time.Now()}
		w := NewTrapWorker(nil, inv, WithSharedEventRules(NewEventRules(0, 3, 10*time.Minute)), targets)
		w.warm(&r, time.Now())
		if held := len(w.held) == 1; held != c.held {
			t.Errorf("trap from %s for agent %q: held %v, want %v", c.from, c.agent, held, c.held)
		}
	}
}
