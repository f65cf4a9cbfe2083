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

// TestTrapWorkerWarmsUpIdlePartitions: a trap worker started after
// another stopped rebuilds the flap state of the traps before, though no
// trap comes after the restart.
func TestTrapWorkerWarmsUpIdlePartitions(t *testing.T) {
	b, err := embedded.Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	var recs []broker.Record
	for i := range 4 {
		name, oid := "linkDown", "1.3.6.1.6.3.1.1.5.3"
		if i%2 == 1 {
			name, oid = "linkUp", "1.3.6.1.6.3.1.1.5.4"
		}
		tr := telemetry.Trap{V: 1, Device: "edge1", Version: "2c", TrapOID: oid, TrapName: name, SourceAddr: "192.0.2.1:50000", ReceivedAt: time.Now(),
			Varbinds: []telemetry.Varbind{{OID: "1.3.6.1.2.1.2.2.1.2.3", Name: "ifDescr", Type: "OctetString", Value: "Gi0/3"}}}
		v, _ := json.Marshal(&tr)
		recs = append(recs, broker.Record{Key: []byte(tr.Device), Value: v})
	}
	if err := b.Produce(context.Background(), telemetry.TopicRawTraps, recs); err != nil {
		t.Fatal(err)
	}
	inv, _ := ParseInventory([]byte(testInventory))
	run := func(rules *EventRules, until func() bool) {
		t.Helper()
		w := NewTrapWorker(b, inv, WithSharedEventRules(rules))
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan struct{})
		go func() { w.Run(ctx); close(done) }()
		defer func() { cancel(); <-done }()
		for deadline := time.Now().Add(5 * time.Second); !until(); time.Sleep(20 * time.Millisecond) {
			if time.Now().After(deadline) {
				t.Fatal("timed out")
			}
		}
	}
	flapping := func(r *EventRules) func() bool {
		return func() bool {
			r.d.mu.Lock()
			defer r.d.mu.Unlock()
			return len(r.d.flapping) == 1
		}
	}
	before := NewEventRules(0, 3, time.Minute)
	run(before, flapping(before))
	after := NewEventRules(0, 3, time.Minute)
	run(after, flapping(after))
	if n := len(readTopic(t, b, telemetry.TopicEvents)); n != 5 {
		t.Errorf("%d events, want the 4 changes and one interface_flapping, published once", n)
	}
}

// TestTrapObjectFromCollectorVarbinds: the trap collector names a table's
// varbinds with their instance ("ifDescr.3"); the event's object is the
// interface all the same, and a large ifIndex is written whole.
func TestTrapObjectFromCollectorVarbinds(t *testing.T) {
	inv, _ := ParseInventory([]byte(testInventory))
	w := NewTrapWorker(nil, inv)
	for _, c := range []struct {
		vbs  []telemetry.Varbind
		want string
	}{
		{[]telemetry.Varbind{{OID: "1.3.6.1.2.1.2.2.1.1.3", Name: "ifIndex.3", Type: "integer", Value: 3},
			{OID: "1.3.6.1.2.1.2.2.1.2.3", Name: "ifDescr.3", Type: "octet_string", Value: "Gi0/3"}}, "Gi0/3"},
		{[]telemetry.Varbind{{OID: "1.3.6.1.2.1.2.2.1.1.436207616", Name: "ifIndex.436207616", Type: "integer", Value: 436207616}}, "ifIndex 436207616"},
	} {
		tr := telemetry.Trap{V: 1, Device: "edge1", TrapOID: "1.3.6.1.6.3.1.1.5.3", TrapName: "linkDown",
			SourceAddr: "192.0.2.1:50000", ReceivedAt: time.Now(), Varbinds: c.vbs}
		v, _ := json.Marshal(&tr)
		var back telemetry.Trap // as the worker reads it
		if err := json.Unmarshal(v, &back); err != nil {
			t.Fatal(err)
		}
		ev, ok := w.eventOf(&back, &broker.Record{Topic: "raw.traps"})
		if !ok || ev.Object != c.want {
			t.Errorf("object %q, want %q", ev.Object, c.want)
		}
	}
}
