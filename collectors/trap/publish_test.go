package trap

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os/exec"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gosnmp/gosnmp"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/weirnet/weir/broker"
	"github.com/weirnet/weir/collectors/snmp/snmptest"
	"github.com/weirnet/weir/telemetry"
)

// failingBroker fails every produce until ok is set (a full disk).
type failingBroker struct {
	*snmptest.Capture
	ok atomic.Bool
}

func (f *failingBroker) Produce(ctx context.Context, topic string, recs []broker.Record) error {
	if !f.ok.Load() {
		return errors.New("injected: no space left on device")
	}
	return f.Capture.Produce(ctx, topic, recs)
}

// sizeLimitBroker refuses a produce holding any record over limit bytes,
// as a broker refuses a batch with a record over its size limit.
type sizeLimitBroker struct {
	*snmptest.Capture
	limit int
}

func (b *sizeLimitBroker) Produce(ctx context.Context, topic string, recs []broker.Record) error {
	for _, r := range recs {
		if len(r.Value) > b.limit {
			return fmt.Errorf("produce %s: %w", topic, broker.ErrRecordTooLarge)
		}
	}
	return b.Capture.Produce(ctx, topic, recs)
}

// sendV2c sends one v2c linkDown from gosnmp.
func sendV2c(t *testing.T, addr string) {
	t.Helper()
	ua, err := net.ResolveUDPAddr("udp", addr)
	if err != nil {
		t.Fatal(err)
	}
	g := &gosnmp.GoSNMP{Target: ua.IP.String(), Port: uint16(ua.Port), Version: gosnmp.Version2c, Community: "public", Timeout: time.Second}
	if err := g.Connect(); err != nil {
		t.Fatal(err)
	}
	defer g.Conn.Close()
	if _, err := g.SendTrap(gosnmp.SnmpTrap{Variables: []gosnmp.SnmpPDU{
		{Name: ".1.3.6.1.2.1.1.3.0", Type: gosnmp.TimeTicks, Value: uint32(42)},
		{Name: ".1.3.6.1.6.3.1.1.4.1.0", Type: gosnmp.ObjectIdentifier, Value: ".1.3.6.1.6.3.1.1.5.3"},
	}}); err != nil {
		t.Fatal(err)
	}
}

// TestTrapKeptThroughBrokerOutage: a trap received while the broker fails
// (a disk full for 3 s) is published once the broker is back, not
// dropped after a few attempts.
func TestTrapKeptThroughBrokerOutage(t *testing.T) {
	fb := &failingBroker{Capture: snmptest.NewCapture()}
	h := start(t, Config{Broker: fb})
	sendV2c(t, h.addr)
	time.Sleep(3 * time.Second)
	fb.ok.Store(true)
	if !fb.WaitFor(6*time.Second, func(r []broker.Record) bool { return len(r) == 1 }) {
		t.Fatalf("trap lost after a 3 s broker outage; publish_error=%v",
			testutil.ToFloat64(h.metrics.Received.WithLabelValues("2c", OutcomePublishError)))
	}
	// Counted once Produce has returned, a moment after the record is in.
	published := func() float64 { return testutil.ToFloat64(h.metrics.Received.WithLabelValues("2c", OutcomePublished)) }
	for deadline := time.Now().Add(5 * time.Second); published() == 0 && time.Now().Before(deadline); {
		time.Sleep(10 * time.Millisecond)
	}
	if n := published(); n != 1 {
		t.Errorf("published %v, want 1", n)
	}
}

// TestOversizedTrapDroppedAlone: when the broker refuses a batch for a
// record over its size limit, the other traps of the batch are published
// and their informs acknowledged; only the refused one is counted as a
// publish error, and its inform is not acknowledged.
func TestOversizedTrapDroppedAlone(t *testing.T) {
	b := &sizeLimitBroker{Capture: snmptest.NewCapture(), limit: 1000}
	m, err := NewMetrics(prometheus.NewRegistry())
	if err != nil {
		t.Fatal(err)
	}
	r, err := New(Config{Broker: b, Metrics: m})
	if err != nil {
		t.Fatal(err)
	}
	conn, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	sender, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer sender.Close()
	trap := func(inform bool, value string) item {
		it := item{trap: telemetry.Trap{V: telemetry.Version, Version: "2c", Device: "192.0.2.7", TrapOID: "1.3.6.1.6.3.1.1.5.3", Inform: inform,
			Varbinds: []telemetry.Varbind{{OID: "1.3.6.1.2.1.31.1.1.1.18.3", Type: "octet_string", Value: value}}}}
		if inform {
			it.ack, it.to = []byte(value[:1]), sender.LocalAddr()
		}
		return it
	}
	batch := []item{trap(true, "a"), trap(true, "b"+strings.Repeat("x", 2000)), trap(false, "c")}
	done := make(chan struct{})
	go func() {
		defer close(done)
		r.publish(context.Background(), conn, batch)
	}()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("publish retried a refused batch")
	}
	if n := len(b.Records()); n != 2 {
		t.Errorf("%d records published, want 2", n)
	}
	if got := testutil.ToFloat64(m.Received.WithLabelValues("2c", OutcomePublished)); got != 2 {
		t.Errorf("published %v, want 2", got)
	}
	if got := testutil.ToFloat64(m.Received.WithLabelValues("2c", OutcomePublishError)); got != 1 {
		t.Errorf("publish_error %v, want 1", got)
	}
	if got := testutil.ToFloat64(m.Acked); got != 1 {
		t.Errorf("acked %v, want 1", got)
	}
	buf := make([]byte, 16)
	_ = sender.SetReadDeadline(time.Now().Add(time.Second))
	if n, _, err := sender.ReadFrom(buf); err != nil || string(buf[:n]) != "a" {
		t.Errorf("ack %q %v, want the first inform's", buf[:n], err)
	}
}

// hangingBroker never answers: a Kafka cluster away, where a produce
// waits until its context ends.
type hangingBroker struct{ *snmptest.Capture }

func (hangingBroker) Produce(ctx context.Context, _ string, _ []broker.Record) error {
	<-ctx.Done()
	return ctx.Err()
}

// TestShutdownDrainBounded: with several batches queued and the broker
// unreachable, Run returns about 5 s after its context ends, not 5 s per
// batch, and the traps left are counted as shutdown.
func TestShutdownDrainBounded(t *testing.T) {
	testDrainBounded(t, hangingBroker{snmptest.NewCapture()}, 2*time.Second)
}

// slowFailingBroker takes a while to fail each produce, whatever its
// context says: the Kafka backend with the cluster down (connection
// refused), where franz-go notices a produce's context only when its
// next metadata load fails, about 7 s later, even for a context done
// before the call.
type slowFailingBroker struct {
	*snmptest.Capture
	took time.Duration
}

func (b slowFailingBroker) Produce(context.Context, string, []broker.Record) error {
	time.Sleep(b.took)
	return errors.New("kafka: produce raw.traps: unable to dial: connect: connection refused")
}

// TestShutdownDrainBoundedSlowBroker: with a broker whose produce outlasts
// its context, the batches still queued once the drain's 5 s are over
// are dropped as shutdown at once, not each sent to the broker: weir with
// a Kafka cluster down took 5 s plus 7 s for every queued batch to stop
// (20 s for two traps), past systemd's 30 s with a few more.
func TestShutdownDrainBoundedSlowBroker(t *testing.T) {
	took := 1500 * time.Millisecond
	testDrainBounded(t, slowFailingBroker{snmptest.NewCapture(), took}, took+2*time.Second)
}

// testDrainBounded queues four batches of traps while b fails them, stops
// the receiver, and checks it returns within the drain timeout and slack,
// every trap counted as shutdown.
func testDrainBounded(t *testing.T, b broker.Broker, slack time.Duration) {
	m, err := NewMetrics(prometheus.NewRegistry())
	if err != nil {
		t.Fatal(err)
	}
	r, err := New(Config{Listen: "127.0.0.1:0", Broker: b, Metrics: m})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan struct{})
	go func() {
		defer close(done)
		if err := r.Run(ctx); err != nil {
			t.Error(err)
		}
	}()
	addr, err := r.Addr(ctx)
	if err != nil {
		t.Fatal(err)
	}
	pkt := &gosnmp.SnmpPacket{Version: gosnmp.Version2c, Community: "public", PDUType: gosnmp.SNMPv2Trap, Variables: []gosnmp.SnmpPDU{
		{Name: ".1.3.6.1.2.1.1.3.0", Type: gosnmp.TimeTicks, Value: uint32(42)},
		{Name: ".1.3.6.1.6.3.1.1.4.1.0", Type: gosnmp.ObjectIdentifier, Value: ".1.3.6.1.6.3.1.1.5.3"},
	}}
	msg, err := pkt.MarshalMsg()
	if err != nil {
		t.Fatal(err)
	}
	c, err := net.Dial("udp", addr.String())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	// Four batches of up to 1024, paced so the kernel keeps them all.
	for i := 0; i < 3100; i++ {
		if _, err := c.Write(msg); err != nil {
			t.Fatal(err)
		}
		if i%100 == 0 {
			time.Sleep(time.Millisecond)
		}
	}
	time.Sleep(500 * time.Millisecond)
	stopped := time.Now()
	cancel()
	select {
	case <-done:
	case <-time.After(60 * time.Second):
		t.Fatal("Run did not return within 60 s")
	}
	if d := time.Since(stopped); d > shutdownDrainTimeout+slack {
		t.Errorf("shutdown took %v with the broker unreachable", d)
	}
	shutdown := testutil.ToFloat64(m.Received.WithLabelValues("2c", OutcomeShutdown))
	if published := testutil.ToFloat64(m.Received.WithLabelValues("2c", OutcomePublished)); shutdown <= 1024 || published != 0 {
		t.Errorf("shutdown %v, published %v: want every queued trap (more than a batch) counted as shutdown", shutdown, published)
	}
}

// gateBroker blocks every produce until open is closed, then keeps what
// it is given; entered says a produce is waiting.
type gateBroker struct {
	*snmptest.Capture
	open    chan struct{}
	entered chan struct{}
}

func (g *gateBroker) Produce(ctx context.Context, topic string, recs []broker.Record) error {
	select {
	case g.entered <- struct{}{}:
	default:
	}
	<-g.open // as the embedded log, which does not wait on ctx
	return g.Capture.Produce(ctx, topic, recs)
}

// TestInformAckedDuringDrain: an inform still being published when weir
// stops is acknowledged once the drain publishes it, so Net-SNMP's
// snmpinform (which exits 0 only when acknowledged) does not send it again
// to the next weir.
func TestInformAckedDuringDrain(t *testing.T) {
	snmptest.Require(t, "snmpinform")
	m, err := NewMetrics(prometheus.NewRegistry())
	if err != nil {
		t.Fatal(err)
	}
	gate := &gateBroker{Capture: snmptest.NewCapture(), open: make(chan struct{}), entered: make(chan struct{}, 1)}
	r, err := New(Config{Listen: "127.0.0.1:0", Broker: gate, Metrics: m, Communities: []string{"public"}})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- r.Run(ctx) }()
	addr, err := r.Addr(ctx)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	informed := make(chan error, 1)
	go func() {
		cmd := exec.Command("snmpinform", "-v2c", "-c", "public", "-t", "10", "-r", "0", addr.String(), "", "1.3.6.1.6.3.1.1.5.3")
		cmd.Env = snmptest.Env(dir)
		out, err := cmd.CombinedOutput()
		if err != nil {
			err = fmt.Errorf("%w: %s", err, out)
		}
		informed <- err
	}()
	select {
	case <-gate.entered:
	case <-time.After(10 * time.Second):
		t.Fatal("the inform never reached the broker")
	}
	cancel() // weir stops while the inform is being published
	time.Sleep(100 * time.Millisecond)
	close(gate.open)
	if err := <-informed; err != nil {
		t.Fatalf("snmpinform: %v (the inform was not acknowledged)", err)
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if n := testutil.ToFloat64(m.Acked); n != 1 {
		t.Errorf("acknowledged %v informs, want 1", n)
	}
}

// TestQueueFullByBytes: while the broker fails, traps beyond QueueBytes
// are dropped and counted as queue_full, and the ones queued are published
// once it is back.
func TestQueueFullByBytes(t *testing.T) {
	fb := &failingBroker{Capture: snmptest.NewCapture()}
	h := start(t, Config{Broker: fb, QueueBytes: 1000}) // room for three small traps (about 300 bytes each)
	for range 10 {
		sendV2c(t, h.addr)
	}
	full := func() float64 { return testutil.ToFloat64(h.metrics.Received.WithLabelValues("2c", OutcomeQueueFull)) }
	for deadline := time.Now().Add(5 * time.Second); full() < 6; time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("%v traps dropped as queue_full, want at least 6 of 10", full())
		}
	}
	fb.ok.Store(true)
	if !fb.WaitFor(10*time.Second, func(r []broker.Record) bool { return len(r)+int(full()) == 10 }) {
		t.Fatalf("%d published and %v dropped of 10", len(fb.Records()), full())
	}
}
