package kafkawire

import (
	"log/slog"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/weirnet/weir/internal/syncbuf"
)

// TestWrongProtocolHint: a TLS or HTTP client at the Kafka port is told
// apart in the log, not only as an absurd frame length (a ClientHello reads
// as 369295616 bytes), so that an operator sees a client configured with
// security.protocol=SSL for what it is.
func TestWrongProtocolHint(t *testing.T) {
	for _, tc := range []struct {
		name string
		in   []byte
		want string
	}{
		{"tls", []byte{0x16, 0x03, 0x01, 0x00, 0xa5, 0x01, 0x00, 0x00, 0xa1, 0x03, 0x03}, "TLS"},
		{"http", []byte("GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n"), "HTTP"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var logs syncbuf.Buffer
			_, addr := startServer(t, newFakeLog(), WithLogger(slog.New(slog.NewTextHandler(&logs, nil))))
			c, err := net.Dial("tcp", addr)
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			c.Write(tc.in)
			expectClosed(t, c)
			deadline := time.Now().Add(5 * time.Second)
			for !strings.Contains(logs.String(), "closing connection") && time.Now().Before(deadline) {
				time.Sleep(10 * time.Millisecond)
			}
			if got := logs.String(); !strings.Contains(got, tc.want) {
				t.Errorf("log does not name %s:\n%s", tc.want, got)
			}
		})
	}
}
