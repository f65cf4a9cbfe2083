package syslog

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/netip"
	"os"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"golang.org/x/net/ipv4"
	"golang.org/x/net/ipv6"

	"github.com/weirnet/weir/configs"
)

// udpBatch is how many datagrams one recvmmsg(2) call may return.
const udpBatch = 64

// udpLinger is how long a UDP batch may wait for more messages before it
// is published.
const udpLinger = 2 * time.Millisecond

// udpListener reads datagrams with recvmmsg in batches, from a socket with
// a large receive buffer, with several goroutines. UDP cannot push back:
// what overflows the socket buffer the kernel drops, and weir counts it
// from /proc/net/udp.
type udpListener struct {
	c     *Collector
	cfg   configs.SyslogListener
	conn  *net.UDPConn
	name  string
	stats *listenerStats
	inode string
}

func (c *Collector) newUDP(l configs.SyslogListener) (*udpListener, error) {
	addr, err := net.ResolveUDPAddr("udp", string(l.Address))
	if err != nil {
		return nil, fmt.Errorf("syslog udp %s: %w", l.Address, err)
	}
	conn, err := net.ListenUDP("udp", addr)
	if err != nil {
		return nil, fmt.Errorf("syslog udp %s: %w", l.Address, err)
	}
	u := &udpListener{c: c, cfg: l, conn: conn, name: "udp://" + conn.LocalAddr().String()}
	u.stats = c.metrics.forListener(u.name)
	u.setReadBuffer(int(l.ReadBuffer))
	u.inode = socketInode(conn)
	return u, nil
}

// setReadBuffer sets SO_RCVBUF; as root SO_RCVBUFFORCE goes past
// net.core.rmem_max, which on most systems is far below what a burst of
// syslog needs.
func (u *udpListener) setReadBuffer(n int) {
	raw, err := u.conn.SyscallConn()
	if err == nil {
		raw.Control(func(fd uintptr) {
			if syscall.SetsockoptInt(int(fd), syscall.SOL_SOCKET, syscall.SO_RCVBUFFORCE, n) != nil {
				syscall.SetsockoptInt(int(fd), syscall.SOL_SOCKET, syscall.SO_RCVBUF, n)
			}
		})
	}
	raw.Control(func(fd uintptr) {
		got, _ := syscall.GetsockoptInt(int(fd), syscall.SOL_SOCKET, syscall.SO_RCVBUF)
		if got < n { // Linux reports twice what was set
			u.c.logger.Warn("syslog: UDP receive buffer smaller than configured; raise net.core.rmem_max",
				slog.String("listener", u.name), slog.Int("wanted", n), slog.Int("got", got/2))
		}
	})
}

func (u *udpListener) close() { u.conn.Close() }

func (u *udpListener) run(ctx context.Context) {
	stop := context.AfterFunc(ctx, func() { u.conn.Close() })
	defer stop()
	var wg sync.WaitGroup
	for range u.cfg.Readers {
		wg.Go(func() { u.read(ctx) })
	}
	wg.Go(func() { u.watchKernelDrops(ctx) })
	wg.Wait()
}

// batchReader is what ipv4.PacketConn and ipv6.PacketConn share.
type batchReader interface {
	ReadBatch(ms []ipv4.Message, flags int) (int, error)
}

func (u *udpListener) read(ctx context.Context) {
	var br batchReader
	if a, ok := u.conn.LocalAddr().(*net.UDPAddr); ok && a.IP.To4() != nil {
		br = ipv4.NewPacketConn(u.conn)
	} else {
		br = ipv6.NewPacketConn(u.conn)
	}
	size := int(u.cfg.MaxMessageSize)
	msgs := make([]ipv4.Message, udpBatch)
	for i := range msgs {
		msgs[i].Buffers = [][]byte{make([]byte, size+1)} // +1 tells a cut datagram apart
	}
	pub := u.c.newPublisher(u.name, u.stats)
	var batchStart time.Time
	for {
		// Batch across reads: publish when the batch is full (add does
		// that) or udpLinger after its first message, found by a read
		// deadline, so a busy socket gives large batches and a quiet
		// one's messages wait at most udpLinger.
		if len(pub.spans) > 0 {
			if time.Since(batchStart) >= udpLinger {
				pub.flush(ctx)
			} else {
				u.conn.SetReadDeadline(batchStart.Add(udpLinger))
			}
		}
		if len(pub.spans) == 0 {
			u.conn.SetReadDeadline(time.Time{})
		}
		n, err := br.ReadBatch(msgs, 0)
		if err != nil {
			if ne, ok := err.(net.Error); ok && ne.Timeout() {
				pub.flush(ctx)
				continue
			}
			if ctx.Err() != nil || errors.Is(err, net.ErrClosed) {
				pub.flush(context.WithoutCancel(ctx))
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
			truncated := m.N > size || m.Flags&syscall.MSG_TRUNC != 0
			if truncated {
				data = data[:min(len(data), size)]
				u.stats.dropped("truncated").Inc()
			}
			var from netip.AddrPort
			if a, ok := m.Addr.(*net.UDPAddr); ok {
				from = a.AddrPort()
			}
			pub.add(ctx, trimNewline(data), from, now, truncated)
		}
	}
}

// watchKernelDrops adds the socket's drop count from /proc/net/udp to the
// drop counter with reason "kernel" (receive buffer overflow).
func (u *udpListener) watchKernelDrops(ctx context.Context) {
	if u.inode == "" {
		return
	}
	tick := time.NewTicker(2 * time.Second)
	defer tick.Stop()
	var last uint64
	for {
		if drops, ok := kernelDrops(u.inode); ok && drops > last {
			u.stats.dropped("kernel").Add(float64(drops - last))
			if last == 0 || drops-last > 0 {
				u.c.logger.Warn("syslog: kernel dropped UDP datagrams (receive buffer full)",
					slog.String("listener", u.name), slog.Uint64("dropped", drops-last))
			}
			last = drops
		}
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
	}
}

func socketInode(c *net.UDPConn) string {
	raw, err := c.SyscallConn()
	if err != nil {
		return ""
	}
	var inode string
	raw.Control(func(fd uintptr) {
		link, err := os.Readlink("/proc/self/fd/" + strconv.Itoa(int(fd)))
		if err == nil && strings.HasPrefix(link, "socket:[") {
			inode = strings.TrimSuffix(strings.TrimPrefix(link, "socket:["), "]")
		}
	})
	return inode
}

// kernelDrops reads the drops column of the socket's line in /proc/net/udp
// or /proc/net/udp6.
func kernelDrops(inode string) (uint64, bool) {
	for _, file := range []string{"/proc/net/udp", "/proc/net/udp6"} {
		f, err := os.Open(file)
		if err != nil {
			continue
		}
		sc := bufio.NewScanner(f)
		for sc.Scan() {
			fields := strings.Fields(sc.Text())
			// sl local rem st tx:rx tr:when retrnsmt uid timeout inode ref pointer drops
			if len(fields) >= 13 && fields[9] == inode {
				f.Close()
				n, err := strconv.ParseUint(fields[12], 10, 64)
				return n, err == nil
			}
		}
		f.Close()
	}
	return 0, false
}
