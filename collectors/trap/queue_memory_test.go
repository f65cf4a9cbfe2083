package trap

import (
	"fmt"
	"net"
	"runtime"
	"testing"
	"time"

	"github.com/gosnmp/gosnmp"

	"github.com/weirnet/weir/collectors/snmp/snmptest"
)

// TestQueueMemoryBounded: while the broker is failing (a full disk, a
// Kafka cluster out of reach) traps wait in the queue. A sender that knows
// the community (or any sender, with no communities configured) could fill
// it with max-size datagrams of ~3,800 varbinds each, ~450 KB apiece once
// decoded: 65,536 of them would be tens of GiB. The queue is bounded in
// bytes as itemBytes estimates them; the estimate must not fall far short
// of the heap a trap really holds, so that a full queue stays near
// QueueBytes (here: under 1 GiB with the default).
func TestQueueMemoryBounded(t *testing.T) {
	vars := []gosnmp.SnmpPDU{
		{Name: ".1.3.6.1.2.1.1.3.0", Type: gosnmp.TimeTicks, Value: uint32(42)},
		{Name: ".1.3.6.1.6.3.1.1.4.1.0", Type: gosnmp.ObjectIdentifier, Value: ".1.3.6.1.6.3.1.1.5.3"},
	}
	for i := range 3800 {
		vars = append(vars, gosnmp.SnmpPDU{Name: fmt.Sprintf(".1.3.6.1.2.1.2.2.1.8.%d", i), Type: gosnmp.Null})
	}
	p := &gosnmp.SnmpPacket{Version: gosnmp.Version2c, Community: "public", PDUType: gosnmp.SNMPv2Trap, Variables: vars}
	pkt, err := p.MarshalMsg()
	if err != nil || len(pkt) > 65507 {
		t.Fatalf("%d bytes: %v", len(pkt), err)
	}
	r, err := New(Config{Broker: snmptest.NewCapture()})
	if err != nil {
		t.Fatal(err)
	}
	from := &net.UDPAddr{IP: net.IPv4(192, 0, 2, 1), Port: 5000}
	const n = 100
	held := make([]item, 0, n)
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	for range n {
		it, _, outcome := r.decode(pkt, from, time.Now())
		if outcome != "" {
			t.Fatal(outcome)
		}
		held = append(held, it)
	}
	runtime.GC()
	runtime.ReadMemStats(&after)
	runtime.KeepAlive(held)
	per := float64(after.HeapAlloc-before.HeapAlloc) / n
	est := float64(itemBytes(&held[0]))
	if full := float64(r.cfg.QueueBytes) * per / est; full > 1<<30 {
		t.Errorf("a %d-byte trap holds %.0f bytes, estimated %.0f: a full queue of %d MiB holds %.1f GiB",
			len(pkt), per, est, r.cfg.QueueBytes>>20, full/(1<<30))
	}
	t.Logf("a %d-byte trap of %d varbinds: %.0f bytes held, %.0f estimated", len(pkt), len(vars), per, est)
}
