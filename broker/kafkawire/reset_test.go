package kafkawire

import (
	"net"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// TestClientResetIsAHangup: a client that ends its connection with a reset
// (librdkafka and franz-go do when they close with an answer unread) has
// hung up; it is not a connection weir closed for an error, which
// weir_kafka_connections_closed_total{reason="error"} and an Info log line
// would say.
func TestClientResetIsAHangup(t *testing.T) {
	fl := newFakeLog()
	newTopic(t, fl, "t", 1)
	closed := make(chan error, 1)
	_, addr := startServer(t, fl, WithMetrics(&Metrics{ConnClosed: func(_ net.Addr, err error) { closed <- err }}))
	rc := dialRaw(t, addr)
	rc.do(kmsg.NewPtrApiVersionsRequest())
	rc.send(kmsg.NewPtrApiVersionsRequest()) // its answer is left unread
	time.Sleep(100 * time.Millisecond)
	rc.c.(*net.TCPConn).SetLinger(0) // close with RST
	rc.c.Close()
	select {
	case err := <-closed:
		if err != nil {
			t.Errorf("ConnClosed(%v), want nil: the client hung up", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("connection not closed")
	}
}
