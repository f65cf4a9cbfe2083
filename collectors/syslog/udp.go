package syslog

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/netip"
	"sync"
	"syscall"
	"time"

	"golang.org/x/net/ipv4"
	"golang.org/x/net/ipv6"

	"github.com/weirnet/weir/configs"
	"github.com/weirnet/weir/internal/udpdrops"
	"github.com/weirnet/weir/internal/udpsock"
)

// udpBatch is how many datagrams one recvmmsg(2) call may return.
const udpBatch = 64

// maxDatagram is the largest UDP payload (65,507 bytes over IPv4, 65,527
// over IPv6, below the 16-bit length).
const maxDatagram = 65535

// udpLinger is how long a UDP batch may wait for more messages before it
// is published.
const udpLinger = 2 * time.Millisecond

// udpListener reads datagrams with recvmmsg in batches, from sockets with
// a large receive buffer. Each reader goroutine has its own socket on the
// same port (SO_REUSEPORT): the kernel spreads senders over them, one
// sender always to the same socket (so a device's messages keep their
// order), and each reader can set its own read deadline to end a batch.
// UDP cannot push back: what overflows a socket buffer the kernel drops,
// and weir counts it from /proc/net/udp.
type udpListener struct {
	c     *Collector
	cfg   configs.SyslogListener
	conns []*net.UDPConn
	name  string
	stats *listenerStats
}

func (c *Collector) newUDP(l configs.SyslogListener) (*udpListener, error) {
	lc := net.ListenConfig{Control: func(_, _ string, rc syscall.RawConn) error {
		var serr error
		if err := rc.Control(func(fd uintptr) { serr = reusePort(fd) }); err != nil {
			return err
		}
		return serr
	}}
	// A plain bind first: with SO_REUSEPORT on every socket, a second weir
	// (or anything else of this user doing the same) would bind the port
	// without an error and take a share of the traffic.
	probe, err := net.ListenPacket("udp", string(l.Address))
	if err != nil {
		return nil, fmt.Errorf("syslog udp %s: %w", l.Address, err)
	}
	addr := probe.LocalAddr().String() // the port, when the config says 0
	probe.Close()
	u := &udpListener{c: c, cfg: l}
	for i := range udpReaders(l.Readers) {
		pc, err := lc.ListenPacket(context.Background(), "udp", addr)
		if err != nil {
			u.close()
			return nil, fmt.Errorf("syslog udp %s: %w", l.Address, err)
		}
		conn := pc.(*net.UDPConn)
		if i == 0 {
			u.name = "udp://" + addr
			u.stats = c.metrics.forListener(u.name)
			u.stats.expose(udpDropReasons, nil)
		}
		u.setReadBuffer(conn, int(l.ReadBuffer))
		u.conns = append(u.conns, conn)
	}
	return u, nil
}

// setReadBuffer sizes conn's receive buffer, and logs one smaller than n.
func (u *udpListener) setReadBuffer(conn *net.UDPConn, n int) {
	if got, ok := udpsock.SetReadBuffer(conn, n); ok && got < n {
		u.c.logger.Warn("syslog: UDP receive buffer smaller than configured; raise net.core.rmem_max",
			slog.String("listener", u.name), slog.Int("wanted", n), slog.Int("got", got))
	}
}

func (u *udpListener) close() {
	for _, c := range u.conns {
		c.Close()
	}
}

func (u *udpListener) run(ctx context.Context) {
	// Once weir stops, the readers empty the sockets' buffers (read
	// deadlines, see drainQuiet; a reader between reads sets its own from
	// ctx); the sockets are closed after it in any case.
	stop := context.AfterFunc(ctx, func() {
		by := drainDeadline(time.Now().Add(shutdownDrain))
		for _, c := range u.conns {
			c.SetReadDeadline(by)
		}
		time.AfterFunc(shutdownDrain+drainGrace, u.close)
	})
	defer stop()
	defer u.close()
	var wg sync.WaitGroup
	for _, conn := range u.conns {
		wg.Go(func() { u.read(ctx, conn) })
	}
	wg.Go(func() { u.watchKernelDrops(ctx) })
	wg.Wait()
}

// batchReader is what ipv4.PacketConn and ipv6.PacketConn share.
type batchReader interface {
	ReadBatch(ms []ipv4.Message, flags int) (int, error)
}

func (u *udpListener) read(ctx context.Context, conn *net.UDPConn) {
	var br batchReader
	if a, ok := conn.LocalAddr().(*net.UDPAddr); ok && a.IP.To4() != nil {
		br = ipv4.NewPacketConn(conn)
	} else {
		br = ipv6.NewPacketConn(conn)
	}
	size := int(u.cfg.MaxMessageSize)
	msgs := make([]ipv4.Message, udpBatch)
	for i := range msgs {
		// No datagram is longer than maxDatagram, whatever
		// max_message_size allows; +2 keeps a message of max size and
		// its "\r\n" whole, and tells a longer one apart.
		msgs[i].Buffers = [][]byte{make([]byte, min(size, maxDatagram)+2)}
	}
	pub := u.c.newPublisher(u.name, u.stats)
	var batchStart, drainBy time.Time
	for {
		if ctx.Err() != nil {
			if drainBy.IsZero() {
				drainBy = time.Now().Add(shutdownDrain)
			}
			conn.SetReadDeadline(drainDeadline(drainBy))
		} else if len(pub.spans) > 0 {
			// Batch across reads: publish when the batch is full (add
			// does that) or udpLinger after its first message, found by
			// a read deadline, so a busy socket gives large batches and
			// a quiet one's messages wait at most udpLinger.
			if time.Since(batchStart) >= udpLinger {
				pub.flush(ctx)
			} else {
				conn.SetReadDeadline(batchStart.Add(udpLinger))
			}
		}
		if len(pub.spans) == 0 && ctx.Err() == nil {
			conn.SetReadDeadline(time.Time{})
			if ctx.Err() != nil {
				continue // the stop came in between and set its deadline, replaced just now
			}
		}
		n, err := br.ReadBatch(msgs, 0)
		if err != nil {
			if ne, ok := err.(net.Error); ok && ne.Timeout() {
				if ctx.Err() != nil && !drainBy.IsZero() {
					pub.finalFlush(ctx) // drained: nothing for drainQuiet, or drainBy passed
					return
				}
				pub.flush(ctx)
				continue
			}
			if ctx.Err() != nil || errors.Is(err, net.ErrClosed) {
				pub.finalFlush(ctx)
				return
			}
			u.c.logger.Warn("syslog: UDP read failed", slog.String("listener", u.name), slog.Any("error", err))
			time.Sleep(10 * time.Millisecond)
			continue
		}
		now := u.c.now()
		if len(pub.spans) == 0 {
			batchStart = now
		}
		for i := range n {
			m := &msgs[i]
			data := m.Buffers[0][:m.N]
			if m.Flags&msgTrunc == 0 {
				data = unframeDatagram(data)
			}
			data = trimNewline(data)
			truncated := len(data) > size || m.Flags&msgTrunc != 0
			if truncated {
				data = data[:min(len(data), size)]
				u.stats.truncated.Inc()
			}
			var from netip.AddrPort
			if a, ok := m.Addr.(*net.UDPAddr); ok {
				from = a.AddrPort()
			}
			pub.add(ctx, data, from, now, truncated)
		}
	}
}

// unframeDatagram strips the RFC 6587 octet count from a datagram that
// carries one, "LEN SP <PRI>..." with LEN the length of the rest: UDP
// needs no framing (RFC 5426), but util-linux logger --octet-count puts the
// count in datagrams too, and behind it the message would not parse (no
// hostname, so keyed by the sender's address). The count is not part of
// the message, as it is not on TCP. Any other datagram is returned as is.
func unframeDatagram(b []byte) []byte {
	n, i := 0, 0
	for ; i < len(b) && i < 6 && b[i] >= '0' && b[i] <= '9'; i++ {
		n = n*10 + int(b[i]-'0')
	}
	if i == 0 || b[0] == '0' || i+1 >= len(b) || b[i] != ' ' {
		return b
	}
	if rest := b[i+1:]; n == len(rest) && rest[0] == '<' {
		return rest
	}
	return b
}

// watchKernelDrops adds the sockets' kernel drop count (receive buffer
// overflow) to the drop counter with reason "kernel".
func (u *udpListener) watchKernelDrops(ctx context.Context) {
	udpdrops.New(u.conns...).Run(ctx, 2*time.Second, func(n uint64) {
		u.stats.dropped("kernel").Add(float64(n))
		u.c.logger.Warn("syslog: kernel dropped UDP datagrams (receive buffer full)",
			slog.String("listener", u.name), slog.Uint64("dropped", n))
	})
}
