package enrich

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/weirnet/weir/broker"
	"github.com/weirnet/weir/internal/trapnames"
	"github.com/weirnet/weir/telemetry"
)

// FuzzTrapEvent reads any bytes as a raw.traps record and derives its
// event, as the trap worker does: no panic, and an event it makes has a
// type and encodes to JSON that reads back as the same event.
func FuzzTrapEvent(f *testing.F) {
	now := time.Date(2026, 11, 29, 14, 0, 0, 0, time.UTC)
	for _, tr := range []telemetry.Trap{
		{V: 1, Device: "edge1", Version: "2c", TrapOID: "1.3.6.1.6.3.1.1.5.3", TrapName: "linkDown", SourceAddr: "192.0.2.1:50000", ReceivedAt: now,
			Varbinds: []telemetry.Varbind{{OID: "1.3.6.1.2.1.2.2.1.1.3", Name: "ifIndex", Type: "Integer", Value: 3}, {OID: "1.3.6.1.2.1.2.2.1.2.3", Name: "ifDescr", Type: "OctetString", Value: "Gi0/3"}}},
		{V: 1, Device: "edge1", Version: "2c", TrapOID: "1.3.6.1.6.3.1.1.5.4", TrapName: "linkUp", SourceAddr: "192.0.2.1:50000", ReceivedAt: now,
			Varbinds: []telemetry.Varbind{{OID: ".1.3.6.1.2.1.31.1.1.1.15.7", Name: "ifHighSpeed.7", Type: "gauge32", Value: 1000}}},
		{V: 1, Device: "edge1", Version: "2c", TrapName: "coldStart", SourceAddr: "192.0.2.1:50000", ReceivedAt: now},
		{V: 1, Device: "edge1", Version: "2c", TrapName: "bgpBackwardTransNotification", SourceAddr: "192.0.2.1:50000", ReceivedAt: now,
			Varbinds: []telemetry.Varbind{{OID: "1.3.6.1.2.1.15.3.1.2.10.0.0.9", Name: "bgpPeerState", Type: "Integer", Value: 1}}},
		{V: 1, Device: "edge1", Version: "2c", TrapName: "cbgpPeer2BackwardTransition", SourceAddr: "192.0.2.1:50000", ReceivedAt: now,
			Varbinds: []telemetry.Varbind{{OID: "1.3.6.1.4.1.9.9.187.1.2.5.1.3.2.16.32.1.13.184.0.0.0.0.0.0.0.0.0.0.0.1", Name: "cbgpPeer2State", Type: "Integer", Value: 1}}},
		{V: 1, Device: "edge1", Version: "3", TrapName: "ospfNbrStateChange", SourceAddr: "192.0.2.1:50000", ReceivedAt: now,
			Varbinds: []telemetry.Varbind{{OID: "1.3.6.1.2.1.14.10.1.6.10.0.0.2.0", Name: "ospfNbrState", Type: "Integer", Value: 1}}},
		{V: 1, Device: "edge1", Version: "2c", TrapName: "authenticationFailure", SourceAddr: "192.0.2.1:50000", ReceivedAt: now},
	} {
		v, _ := json.Marshal(&tr)
		f.Add(v)
	}
	f.Add([]byte(`{"v":1,"trap_name":"linkDown","varbinds":[{"oid":"1.3.6.1.2.1.2.2.1.8.99999999999","value":null}]}`))
	f.Add([]byte(`{"v":2}`))
	f.Add([]byte(`{"v":1,"device":"edge1","trap_name":"coldStart","source_addr":"192.0.2.1:162","uptime":-1}`))
	f.Add([]byte(`{"v":1,"device":"edge1","trap_name":"warmStart","source_addr":"192.0.2.1:162","uptime":"x"}`))
	f.Add([]byte(`{"v":1,"device":"edge1","trap_name":"coldStart","source_addr":"192.0.2.1:162","uptime":1.2e3}`))
	inv, _ := ParseInventory([]byte(testInventory))
	f.Fuzz(func(t *testing.T, value []byte) {
		w := NewTrapWorker(nil, inv)
		tr, _, err := decodeTrap(value, trapnames.New(nil))
		if err != nil {
			return
		}
		ev, ok := w.eventOf(&tr, &broker.Record{Topic: telemetry.TopicRawTraps, Offset: 7, Value: value})
		if !ok {
			return
		}
		if ev.Type == "" {
			t.Fatalf("event without a type from %q", value)
		}
		b, err := json.Marshal(&ev)
		if err != nil {
			t.Fatalf("event %+v does not encode: %v", ev, err)
		}
		var back telemetry.Event
		if err := json.Unmarshal(b, &back); err != nil {
			t.Fatalf("event %s does not decode: %v", b, err)
		}
		if back.Type != ev.Type || back.Object != ev.Object || back.Device != ev.Device || back.Cause != ev.Cause {
			t.Fatalf("event %+v read back as %+v", ev, back)
		}
	})
}
