package trap

import (
	"context"
	"io"
	"log/slog"
	"net"
	"os"
	"testing"
	"time"

	"github.com/gosnmp/gosnmp"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/weirnet/weir/broker/embedded"
)

// TestTrapFigures measures trap throughput into the embedded broker. It
// runs only with WEIR_BENCH=1:
//
//	WEIR_BENCH=1 go test -run TestTrapFigures -v ./collectors/trap
func TestTrapFigures(t *testing.T) {
	if os.Getenv("WEIR_BENCH") == "" {
		t.Skip("set WEIR_BENCH=1 to measure")
	}
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	b, err := embedded.Open(t.TempDir(), embedded.WithLogger(quiet))
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	m, _ := NewMetrics(nil)
	r, err := New(Config{Listen: "127.0.0.1:0", Broker: b, Metrics: m, Logger: quiet})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { r.Run(ctx); close(done) }()
	addr, err := r.Addr(ctx)
	if err != nil {
		t.Fatal(err)
	}
	// One linkDown trap, encoded once; the sender only writes datagrams.
	pkt := &gosnmp.SnmpPacket{Version: gosnmp.Version2c, Community: "public", PDUType: gosnmp.SNMPv2Trap, RequestID: 1,
		Variables: []gosnmp.SnmpPDU{
			{Name: ".1.3.6.1.2.1.1.3.0", Type: gosnmp.TimeTicks, Value: uint32(4242)},
			{Name: ".1.3.6.1.6.3.1.1.4.1.0", Type: gosnmp.ObjectIdentifier, Value: ".1.3.6.1.6.3.1.1.5.3"},
			{Name: ".1.3.6.1.2.1.2.2.1.1.7", Type: gosnmp.Integer, Value: 7},
			{Name: ".1.3.6.1.2.1.2.2.1.7.7", Type: gosnmp.Integer, Value: 1},
			{Name: ".1.3.6.1.2.1.2.2.1.8.7", Type: gosnmp.Integer, Value: 2},
			{Name: ".1.3.6.1.2.1.31.1.1.1.1.7", Type: gosnmp.OctetString, Value: []byte("xe-0/0/7")},
		}}
	raw, err := pkt.MarshalMsg()
	if err != nil {
		t.Fatal(err)
	}
	for _, rate := range []int{20000, 30000, 50000} {
		const secs = 5
		before := testutil.ToFloat64(m.Received.WithLabelValues("2c", OutcomePublished))
		conn, err := net.Dial("udp", addr.String())
		if err != nil {
			t.Fatal(err)
		}
		total := rate * secs
		start := time.Now()
		// Paced in 1ms slices, as a network of devices would send.
		perMs := rate / 1000
		for sent := 0; sent < total; {
			for i := 0; i < perMs && sent < total; i++ {
				conn.Write(raw)
				sent++
			}
			if d := time.Until(start.Add(time.Duration(sent/perMs) * time.Millisecond)); d > 0 {
				time.Sleep(d)
			}
		}
		sendTime := time.Since(start)
		conn.Close()
		deadline := time.Now().Add(10 * time.Second)
		for time.Now().Before(deadline) && testutil.ToFloat64(m.Received.WithLabelValues("2c", OutcomePublished))-before < float64(total) {
			time.Sleep(10 * time.Millisecond)
		}
		got := testutil.ToFloat64(m.Received.WithLabelValues("2c", OutcomePublished)) - before
		el := time.Since(start)
		t.Logf("FIGURE traps offered at %d/s for %v: %d of %d published (%.0f/s end to end), %v dropped for a full queue",
			rate, sendTime.Round(time.Millisecond), int(got), total, got/el.Seconds(), testutil.ToFloat64(m.Received.WithLabelValues("2c", OutcomeQueueFull)))
	}
	cancel()
	<-done
}
