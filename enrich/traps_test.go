package enrich

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/weirnet/weir/broker"
	"github.com/weirnet/weir/broker/embedded"
	"github.com/weirnet/weir/telemetry"
)

func TestTrapWorker(t *testing.T) {
	b, err := embedded.Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	now := time.Now()
	traps := []telemetry.Trap{
		{V: 1, Device: "edge1", Version: "2c", TrapOID: "1.3.6.1.6.3.1.1.5.3", TrapName: "linkDown", SourceAddr: "192.0.2.1:50000", ReceivedAt: now,
			Varbinds: []telemetry.Varbind{{OID: "1.3.6.1.2.1.2.2.1.1.3", Name: "ifIndex", Type: "Integer", Value: 3}, {OID: "1.3.6.1.2.1.2.2.1.2.3", Name: "ifDescr", Type: "OctetString", Value: "Gi0/3"}}},
		{V: 1, Device: "edge1", Version: "2c", TrapName: "coldStart", SourceAddr: "192.0.2.1:50000", ReceivedAt: now},
		{V: 1, Device: "edge1", Version: "2c", TrapName: "bgpBackwardTransNotification", SourceAddr: "192.0.2.1:50000", ReceivedAt: now,
			Varbinds: []telemetry.Varbind{{OID: "1.3.6.1.2.1.15.3.1.2.10.0.0.9", Name: "bgpPeerState", Type: "Integer", Value: 1}}},
		{V: 1, Device: "edge1", Version: "2c", TrapName: "authenticationFailure", SourceAddr: "192.0.2.1:50000", ReceivedAt: now},
	}
	var recs []broker.Record
	for _, tr := range traps {
		v, _ := json.Marshal(&tr)
		recs = append(recs, broker.Record{Key: []byte(tr.Device), Value: v})
	}
	b.Produce(context.Background(), telemetry.TopicRawTraps, recs)
	inv, _ := ParseInventory([]byte(testInventory))
	w := NewTrapWorker(b, inv)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { w.Run(ctx); close(done) }()
	deadline := time.Now().Add(10 * time.Second)
	for len(readTopic(t, b, telemetry.TopicEvents)) < 3 && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	cancel()
	<-done
	got := map[string]string{}
	for _, r := range readTopic(t, b, telemetry.TopicEvents) {
		var ev telemetry.Event
		json.Unmarshal(r.Value, &ev)
		got[ev.Type] = ev.Object
		if ev.Tags["site"] != "ams1" || ev.Cause.Topic != telemetry.TopicRawTraps {
			t.Errorf("event %+v", ev)
		}
	}
	want := map[string]string{"interface_down": "Gi0/3", "device_rebooted": "", "bgp_peer_down": "10.0.0.9"}
	if len(got) != len(want) {
		t.Fatalf("events %v, want %v", got, want)
	}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s: object %q, want %q", k, got[k], v)
		}
	}
}
