package syslog

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/weirnet/weir/broker"
	"github.com/weirnet/weir/broker/embedded"
	"github.com/weirnet/weir/configs"
	"github.com/weirnet/weir/internal/syncbuf"
)

// flakyBroker refuses produces while fail is set, like a full disk.
type flakyBroker struct {
	broker.Broker
	fail atomic.Bool
}

func (f *flakyBroker) Produce(ctx context.Context, topic string, recs []broker.Record) error {
	if f.fail.Load() {
		return errors.New("injected: no space left on device")
	}
	return f.Broker.Produce(ctx, topic, recs)
}

// refusingRun is a collector serving one listener over an embedded log
// behind a flakyBroker that refuses writes until fb.fail is cleared.
type refusingRun struct {
	fb     *flakyBroker
	b      *embedded.Broker
	addr   string // the listener's host:port
	cancel context.CancelFunc
	done   chan struct{} // closed once Run has returned
}

// runRefusing starts a refusingRun; the test's cleanup stops it.
func runRefusing(t *testing.T, l configs.SyslogListener, opts ...Option) *refusingRun {
	t.Helper()
	b, err := embedded.Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { b.Close() })
	r := &refusingRun{fb: &flakyBroker{Broker: b}, b: b, done: make(chan struct{})}
	r.fb.fail.Store(true)
	c, err := New(configs.Syslog{Listeners: []configs.SyslogListener{l}}, r.fb, opts...)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	r.cancel = cancel
	go func() { c.Run(ctx); close(r.done) }()
	t.Cleanup(func() { cancel(); <-r.done })
	addrs, err := c.Addrs(ctx)
	if err != nil {
		t.Fatal(err)
	}
	_, r.addr, _ = strings.Cut(addrs[0], "://")
	return r
}

// TestShutdownDrainsWhatTheKernelHolds: messages the sender wrote while
// the reader was held up (the broker refusing writes) sit in the socket's
// kernel buffer, acknowledged to a TCP sender, which counts them sent.
// When weir stops, the reader goes on reading for shutdownDrain, so they
// are published, not lost with the socket.
func TestShutdownDrainsWhatTheKernelHolds(t *testing.T) {
	for _, proto := range []string{"tcp", "udp"} {
		t.Run(proto, func(t *testing.T) {
			r := runRefusing(t, listener(proto))
			conn, err := net.Dial(proto, r.addr)
			if err != nil {
				t.Fatal(err)
			}
			defer conn.Close()
			fmt.Fprintf(conn, "<13>Nov 29 14:08:10 h app: first\n")
			time.Sleep(200 * time.Millisecond) // read, and held up in the flush
			const n = 200
			for i := range n {
				fmt.Fprintf(conn, "<13>Nov 29 14:08:10 h app: buffered %d\n", i)
			}
			time.Sleep(100 * time.Millisecond)
			r.cancel()
			r.fb.fail.Store(false) // the broker takes the held-up batch
			<-r.done
			h := &harness{t: t, b: r.b}
			if got := len(h.readLogs()); got != n+1 {
				t.Errorf("%d of %d messages published after the stop", got, n+1)
			}
		})
	}
}

// TestShutdownLogsBytesLeftUnread: what a TCP sender wrote is acknowledged
// by the kernel before weir reads it. When weir stops with such bytes still
// in a socket (the broker refusing writes, or a sender that never pauses
// through the drain), they are lost with it: weir logs how many, rather
// than lose them without a word.
func TestShutdownLogsBytesLeftUnread(t *testing.T) {
	var logBuf syncbuf.Buffer
	r := runRefusing(t, listener("tcp"), WithLogger(slog.New(slog.NewTextHandler(&logBuf, nil))))
	conn, err := net.Dial("tcp", r.addr)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	fmt.Fprintf(conn, "<13>Nov 29 14:08:10 h app: first\n")
	time.Sleep(200 * time.Millisecond) // read, and held up in the flush
	line := []byte("<13>Nov 29 14:08:10 h app: left in the socket\n")
	conn.SetWriteDeadline(time.Now().Add(time.Second))
	for i := 0; i < 2000; i++ {
		if _, err := conn.Write(line); err != nil {
			break // the buffers are full
		}
	}
	r.cancel()
	<-r.done
	out := logBuf.String()
	if !strings.Contains(out, "left unread") {
		t.Fatalf("no word of the bytes left in the socket at the stop; log:\n%s", out)
	}
	t.Logf("%s", out)
}
