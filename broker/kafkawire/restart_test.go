package kafkawire

import (
	"context"
	"io"
	"net"
	"os"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/weirnet/weir/broker"
	"github.com/weirnet/weir/broker/embedded"
)

// dropProxy forwards client connections to the current weir listener.
// While drop is set it passes requests on but closes the connection at the
// first byte of an answer, as a restart of weir between append and
// response would.
type dropProxy struct {
	ln     net.Listener
	target atomic.Pointer[string]
	drop   atomic.Bool
}

func startDropProxy(t *testing.T) *dropProxy {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &dropProxy{ln: ln}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go p.serve(c)
		}
	}()
	return p
}

func (p *dropProxy) serve(c net.Conn) {
	defer c.Close()
	s, err := net.Dial("tcp", *p.target.Load())
	if err != nil {
		return
	}
	defer s.Close()
	go func() {
		io.Copy(s, c)
		s.Close()
	}()
	buf := make([]byte, 32<<10)
	for {
		n, err := s.Read(buf)
		if n > 0 {
			if p.drop.Load() {
				return
			}
			if _, err := c.Write(buf[:n]); err != nil {
				return
			}
		}
		if err != nil {
			return
		}
	}
}

// TestIdempotentRetryAcrossRestart has franz-go's idempotent producer retry
// a batch whose answer was lost while weir restarted: the retry reaches the
// restarted log, which must recognise it and not append it again.
func TestIdempotentRetryAcrossRestart(t *testing.T) {
	for _, crash := range []bool{false, true} {
		t.Run("crash="+strconv.FormatBool(crash), func(t *testing.T) {
			testIdempotentRetryAcrossRestart(t, crash)
		})
	}
}

func testIdempotentRetryAcrossRestart(t *testing.T, crash bool) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	proxy := startDropProxy(t)
	proxyPort := int32(proxy.ln.Addr().(*net.TCPAddr).Port)

	// serve runs a listener for b advertising the proxy; the returned
	// function stops it and waits for it.
	serve := func(b *embedded.Broker) func() {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		addr := ln.Addr().String()
		proxy.target.Store(&addr)
		s := New(b, WithLogger(testLogger(t)), WithAdvertisedAddr("127.0.0.1", proxyPort))
		sctx, stop := context.WithCancel(context.Background())
		done := make(chan error, 1)
		go func() { done <- s.Serve(sctx, ln) }()
		return func() {
			stop()
			if err := <-done; err != nil {
				t.Errorf("Serve: %v", err)
			}
		}
	}
	open := func(dir string) *embedded.Broker {
		b, err := embedded.Open(dir, embedded.WithLogger(testLogger(t)))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { b.Close() })
		return b
	}
	logEnd := func(b *embedded.Broker) int64 {
		infos, err := b.DescribeTopics(ctx, "t")
		if err != nil {
			t.Fatal(err)
		}
		return infos[0].Partitions[0].HighWatermark
	}

	dir := t.TempDir()
	b := open(dir)
	if err := b.CreateTopic(ctx, "t", broker.TopicConfig{Partitions: 1}); err != nil {
		t.Fatal(err)
	}
	stop := serve(b)
	cl := newClient(t, proxy.ln.Addr().String(),
		kgo.DefaultProduceTopic("t"),
		kgo.RetryBackoffFn(func(int) time.Duration { return 20 * time.Millisecond }))
	if err := cl.ProduceSync(ctx, &kgo.Record{Value: []byte("a")}).FirstErr(); err != nil {
		t.Fatal(err)
	}

	// The answer to "b" is lost; the client will retry it.
	proxy.drop.Store(true)
	res := make(chan kgo.ProduceResults, 1)
	go func() { res <- cl.ProduceSync(ctx, &kgo.Record{Value: []byte("b")}) }()
	for logEnd(b) != 2 {
		if ctx.Err() != nil {
			t.Fatal("b was never appended")
		}
		time.Sleep(5 * time.Millisecond)
	}
	stop()
	if crash {
		// The log as a kill -9 leaves it: no clean close.
		crashed := t.TempDir()
		if err := os.CopyFS(crashed, os.DirFS(dir)); err != nil {
			t.Fatal(err)
		}
		dir = crashed
	}
	if err := b.Close(); err != nil {
		t.Fatal(err)
	}

	b = open(dir)
	stop = serve(b)
	defer stop()
	proxy.drop.Store(false)
	r, err := (<-res).First()
	if err != nil {
		t.Fatalf("retry of b: %v", err)
	}
	if r.Offset != 1 || logEnd(b) != 2 {
		t.Fatalf("retry of b acknowledged at offset %d, log end %d; want 1 and 2 (no duplicate)", r.Offset, logEnd(b))
	}
	r, err = cl.ProduceSync(ctx, &kgo.Record{Value: []byte("c")}).First()
	if err != nil || r.Offset != 2 {
		t.Fatalf("c: offset %d, %v; want 2", r.Offset, err)
	}
}
