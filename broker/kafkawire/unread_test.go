package kafkawire

import (
	"context"
	"errors"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// TestClientNotReadingIsClosed: a client that pipelines fetches and never
// reads the answers is closed when a write has waited the idle timeout,
// and does not hold up other clients meanwhile.
func TestClientNotReadingIsClosed(t *testing.T) {
	fl := newFakeLog()
	newTopic(t, fl, "t", 1)
	v := strings.Repeat("x", 512<<10)
	for range 8 {
		if _, err := fl.AppendBatches(context.Background(), "t", 0, batch(v)); err != nil {
			t.Fatal(err)
		}
	}
	closed := make(chan error, 4)
	_, addr := startServer(t, fl, WithIdleTimeout(time.Second),
		WithMetrics(&Metrics{ConnClosed: func(_ net.Addr, err error) { closed <- err }}))
	stuck := dialRaw(t, addr)
	stuck.c.(*net.TCPConn).SetReadBuffer(4 << 10)
	req := fetchReq(11, 0, 0, "t", 0, 0)
	req.Topics[0].Partitions[0].PartitionMaxBytes = 8 << 20
	for range 20 { // some 80 MiB of answers
		stuck.send(req)
	}
	start := time.Now()
	// Another client is served meanwhile.
	other := dialRaw(t, addr)
	md := kmsg.NewPtrMetadataRequest()
	md.Version = 9
	other.do(md)
	select {
	case err := <-closed:
		var ne net.Error
		if !errors.As(err, &ne) || !ne.Timeout() {
			t.Errorf("closed with %v, want a timeout", err)
		}
		if d := time.Since(start); d > 5*time.Second {
			t.Errorf("closed after %v", d)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("a client that reads nothing is not closed")
	}
}
