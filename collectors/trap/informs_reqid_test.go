package trap

import (
	"net"
	"testing"
	"time"

	"github.com/gosnmp/gosnmp"
	"github.com/prometheus/client_golang/prometheus/testutil"
)

// TestDifferentInformSameRequestID: two different informs from one sender
// socket with the same request ID (a device that numbers its requests from
// 1 again after a reboot, sending from a fixed port) within 3 minutes: the
// second is published too, not taken for a copy of the first.
func TestDifferentInformSameRequestID(t *testing.T) {
	h := start(t, Config{})
	conn, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	to, _ := net.ResolveUDPAddr("udp", h.addr)
	send := func(trapOID string) {
		p := &gosnmp.SnmpPacket{Version: gosnmp.Version2c, Community: "public", PDUType: gosnmp.InformRequest, RequestID: 1,
			Variables: []gosnmp.SnmpPDU{
				{Name: ".1.3.6.1.2.1.1.3.0", Type: gosnmp.TimeTicks, Value: uint32(42)},
				{Name: ".1.3.6.1.6.3.1.1.4.1.0", Type: gosnmp.ObjectIdentifier, Value: trapOID},
			}}
		b, err := p.MarshalMsg()
		if err != nil {
			t.Fatal(err)
		}
		if _, err := conn.WriteTo(b, to); err != nil {
			t.Fatal(err)
		}
		buf := make([]byte, 2048)
		conn.SetReadDeadline(time.Now().Add(3 * time.Second))
		if _, _, err := conn.ReadFrom(buf); err != nil {
			t.Fatalf("no acknowledgement: %v", err)
		}
	}
	send(".1.3.6.1.6.3.1.1.5.3") // linkDown
	send(".1.3.6.1.6.3.1.1.5.1") // coldStart, after the device rebooted
	time.Sleep(500 * time.Millisecond)
	recs := h.capture.Records()
	if len(recs) != 2 {
		t.Errorf("2 informs acknowledged, %d published; retransmission counted %v", len(recs),
			testutil.ToFloat64(h.metrics.Received.WithLabelValues("2c", OutcomeRetransmission)))
	}
}
