package syslog

import (
	"bufio"
	"bytes"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/netip"
	"os"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/weirnet/weir/configs"
	"github.com/weirnet/weir/internal/connlimit"
	"github.com/weirnet/weir/internal/throttle"
)

// tcpListener serves syslog over TCP or TLS. Each connection has its own
// goroutine that reads a message, publishes in batches and reads on: when
// the broker is slow the reads stop and TCP pushes back on the sender.
type tcpListener struct {
	c     *Collector
	cfg   configs.SyslogListener
	ln    net.Listener
	tls   *tls.Config
	name  string
	stats *listenerStats
	slots chan struct{} // one per allowed connection
	perIP *connlimit.PerIP
	// What one connection does wrong is logged once per 10 s per kind,
	// with how many times: a port scan, a TCP health check on the TLS
	// port or a host sending junk in a loop must not flood weir's log.
	// Each is counted in the metrics. So is a connection that ends
	// idle or with an error (a health check closing with a RST).
	handshakeLog, oversizeLog, idleLog, endLog throttle.Shared
	frameLog                                   throttle.SharedSet // by reason
	// Bytes the kernel had acknowledged to senders and weir had not read
	// when it stopped, lost with the sockets, and in how many of them:
	// logged once all connections are closed (see unreadAtClose).
	unreadBytes, unreadConns atomic.Int64
}

// handshakeTimeout bounds a TLS handshake, so a client that connects and
// stalls does not hold a connection slot.
const handshakeTimeout = 10 * time.Second

func (c *Collector) newTCP(l configs.SyslogListener, tlsCfg *tls.Config) (*tcpListener, error) {
	ln, err := net.Listen("tcp", string(l.Address))
	if err != nil {
		return nil, fmt.Errorf("syslog %s %s: %w", l.Protocol, l.Address, err)
	}
	name := l.Protocol + "://" + ln.Addr().String()
	stats := c.metrics.forListener(name)
	stats.streamListener()
	if tlsCfg != nil {
		stats.expose(tcpDropReasons, tlsCloseReasons)
	} else {
		stats.expose(tcpDropReasons, tcpCloseReasons)
	}
	return &tcpListener{
		c: c, cfg: l, ln: ln, tls: tlsCfg, name: name, stats: stats,
		slots: make(chan struct{}, l.MaxConnections),
		perIP: connlimit.New(l.MaxConnectionsPerIP, configs.PerIPOverrides(l.MaxConnectionsPerIPOverrides)),
	}, nil
}

func (t *tcpListener) close() { t.ln.Close() }

func (t *tcpListener) run(ctx context.Context) {
	stop := context.AfterFunc(ctx, func() { t.ln.Close() })
	defer stop()
	var wg sync.WaitGroup
	defer t.logUnread()
	defer wg.Wait()
	backoff := 5 * time.Millisecond
	// A flood of refusals or failures is logged once per 10 s, with how
	// many there were since; each is counted.
	var acceptLog, refuseLog, refuseIPLog throttle.Throttle
	for {
		conn, err := t.ln.Accept()
		if err != nil {
			if ctx.Err() != nil || errors.Is(err, net.ErrClosed) {
				return
			}
			// Out of file descriptors and the like: wait, keep serving.
			t.stats.closed("accept_failed")
			if n, ok := acceptLog.Due(time.Now()); ok {
				t.c.logger.Warn("syslog: accept failed", slog.String("listener", t.name), slog.Any("error", err), slog.Int("times", n))
			}
			select {
			case <-ctx.Done():
				return
			case <-time.After(backoff):
			}
			backoff = min(backoff*2, time.Second)
			continue
		}
		backoff = 5 * time.Millisecond
		select {
		case t.slots <- struct{}{}:
		default:
			t.stats.closed("too_many_connections")
			if n, ok := refuseLog.Due(time.Now()); ok {
				t.c.logger.Warn("syslog: connection refused, at max_connections",
					slog.String("listener", t.name), slog.String("remote", conn.RemoteAddr().String()),
					slog.Int("max_connections", t.cfg.MaxConnections), slog.Int("times", n))
			}
			conn.Close()
			continue
		}
		ip, ok := t.perIP.Add(conn.RemoteAddr())
		if !ok {
			<-t.slots
			t.stats.closed("too_many_connections_per_ip")
			if n, ok := refuseIPLog.Due(time.Now()); ok {
				t.c.logger.Warn("syslog: connection refused, at max_connections_per_ip",
					slog.String("listener", t.name), slog.String("remote", conn.RemoteAddr().String()),
					slog.Int("max_connections_per_ip", t.perIP.Limit(ip)), slog.Int("times", n))
			}
			conn.Close()
			continue
		}
		wg.Go(func() {
			defer func() { <-t.slots }()
			defer t.perIP.Done(ip)
			t.serve(ctx, conn)
		})
	}
}

func (t *tcpListener) serve(ctx context.Context, nc net.Conn) {
	// Once weir stops, what the connection's kernel buffer holds (what
	// was acknowledged to the sender, which counts it sent) is read (see
	// drainQuiet), then it is closed.
	var drainBy atomic.Int64 // Unix ns; 0 while weir runs
	// Closed by the reader or, if it is held up, by the stop's timer;
	// once weir is stopping, what the socket still holds is noted first.
	closeConn := sync.OnceFunc(func() {
		if ctx.Err() != nil {
			t.unreadAtClose(nc)
		}
		nc.Close()
	})
	stop := context.AfterFunc(ctx, func() {
		by := time.Now().Add(shutdownDrain)
		drainBy.Store(by.UnixNano())
		nc.SetReadDeadline(drainDeadline(by))
		time.AfterFunc(shutdownDrain+drainGrace, closeConn)
	})
	defer stop()
	defer closeConn()
	remote := nc.RemoteAddr().String()
	from, _ := netip.ParseAddrPort(remote)
	conn := nc
	if t.tls != nil {
		tc := tls.Server(nc, t.tls)
		nc.SetDeadline(time.Now().Add(handshakeTimeout))
		if err := tc.HandshakeContext(ctx); err != nil {
			if ctx.Err() != nil {
				return // weir stopping, not the client failing
			}
			t.stats.closed("tls_handshake")
			if n, ok := t.handshakeLog.Due(time.Now()); ok {
				t.c.logger.Warn("syslog: TLS handshake failed", slog.String("listener", t.name),
					slog.String("remote", remote), slog.Any("error", err), slog.Int("times", n))
			}
			return
		}
		nc.SetDeadline(time.Time{})
		conn = tc
	}
	t.stats.connections.Inc()
	defer t.stats.connections.Dec()

	pub := t.c.newPublisher(t.name, t.stats)
	defer pub.finalFlush(ctx)
	// Publish before each read from the socket, which may block: what is
	// complete must not wait behind the partial next message (a frame
	// followed by part of the next one) until more bytes or the idle
	// timeout come. The flush blocks while the broker is slow, so the
	// socket is not read then and TCP pushes back on the sender.
	// A connection that sent large messages and then idles does not
	// keep what they grew: max_connections of them would hold gigabytes.
	ic := &idleConn{Conn: conn, idle: t.cfg.IdleTimeout.Std(), progress: time.Now(), drainBy: &drainBy,
		bloated: pub.bloated, trim: pub.trim}
	ic.beforeRead = func() error {
		if len(pub.spans) == 0 {
			return nil
		}
		if !pub.flush(ctx) {
			return fmt.Errorf("publishing before a read: %w", context.Cause(ctx))
		}
		// A flush the broker held up is not the sender's idleness.
		ic.progress = time.Now()
		return nil
	}
	r := &frameReader{
		conn:    conn,
		br:      bufio.NewReaderSize(ic, readBufferSize),
		max:     int(t.cfg.MaxMessageSize),
		stats:   t.stats,
		log:     t.c.logger.With(slog.String("listener", t.name), slog.String("remote", remote)),
		logSkip: &t.oversizeLog,
	}
	for {
		// A connection that ends mid-line (idle, reset) comes with
		// the line so far, published before the connection ends.
		msg, truncated, err := r.next()
		if msg != nil {
			now := t.c.now()
			ic.progress = now
			if pub.add(ctx, msg, from, now, truncated) {
				// A full batch's flush the broker held up is not the
				// sender's idleness either.
				ic.progress = time.Now()
			}
		}
		if err != nil {
			t.endConn(ctx, err, remote)
			return
		}
	}
}

// unreadAtClose adds what nc's socket holds unread (SIOCINQ: acknowledged
// to the sender, which counts it sent) to what logUnread reports.
func (t *tcpListener) unreadAtClose(nc net.Conn) {
	sc, ok := nc.(syscall.Conn)
	if !ok {
		return
	}
	raw, err := sc.SyscallConn()
	if err != nil {
		return
	}
	n := 0
	raw.Control(func(fd uintptr) { n = unreadBytes(fd) })
	if n > 0 {
		t.unreadBytes.Add(int64(n))
		t.unreadConns.Add(1)
	}
}

// logUnread logs what the connections' sockets held unread when weir
// stopped: lost with them, which the senders cannot know.
func (t *tcpListener) logUnread() {
	if n := t.unreadBytes.Load(); n > 0 {
		t.c.logger.Warn("syslog: stopped with bytes left unread in connections; lost, though acknowledged to the senders",
			slog.String("listener", t.name), slog.Int64("bytes", n), slog.Int64("connections", t.unreadConns.Load()))
	}
}

// endConn records why a connection ended.
func (t *tcpListener) endConn(ctx context.Context, err error, remote string) {
	var fe *frameError
	var ne net.Error
	switch {
	case ctx.Err() != nil, errors.Is(err, io.EOF), errors.Is(err, net.ErrClosed):
	case errors.As(err, &fe):
		t.stats.closed(fe.reason)
		t.stats.dropped(fe.reason).Inc()
		if n, ok := t.frameLog.Due(fe.reason, time.Now()); ok {
			t.c.logger.Warn("syslog: closing connection", slog.String("listener", t.name),
				slog.String("remote", remote), slog.String("reason", fe.Error()), slog.Int("times", n))
		}
	case errors.As(err, &ne) && ne.Timeout() || errors.Is(err, os.ErrDeadlineExceeded):
		t.stats.closed("idle")
		if n, ok := t.idleLog.Due(time.Now()); ok {
			t.c.logger.Info("syslog: closing idle connection", slog.String("listener", t.name), slog.String("remote", remote), slog.Int("times", n))
		}
	default:
		t.stats.closed("error")
		if n, ok := t.endLog.Due(time.Now()); ok {
			t.c.logger.Info("syslog: connection ended", slog.String("listener", t.name),
				slog.String("remote", remote), slog.Any("error", err), slog.Int("times", n))
		}
	}
}

// frameError closes a connection whose framing cannot be trusted.
type frameError struct {
	reason string
	detail string
}

func (e *frameError) Error() string { return e.reason + ": " + e.detail }

// frameReader splits a TCP stream into messages. The framing is detected
// from the first byte of the connection, as RFC 6587 allows a sender only
// one: a digit starts octet counting ("LEN SP MSG", RFC 5425/6587), anything
// else is newline-delimited (non-transparent framing).
type frameReader struct {
	conn     net.Conn
	br       *bufio.Reader
	max      int
	stats    *listenerStats
	log      *slog.Logger     // for frames skipped; nil logs nothing
	logSkip  *throttle.Shared // how often log is used; nil: each time
	detected bool
	octets   bool
	buf      []byte
	err      error // a read's error, held by readSlice until the lines before it are returned
	noLF     int   // buffered bytes known to hold no LF, from the first (readSlice)
}

// readBufferSize is a connection's read buffer. A message longer than it
// is assembled in frameReader.buf, which is let go at the next message
// when it grew past maxKeptBuffer: a connection that sent one large
// message and then idles keeps only this.
const (
	readBufferSize = 16 << 10
	maxKeptBuffer  = 64 << 10
)

// idleConn closes a connection that sends nothing for the idle timeout. It
// sets the read deadline before each read from the socket, so a connection
// that was busy before the broker pushed back is not taken for idle; the
// deadline moves at most every idle/8 to spare timer updates.
type idleConn struct {
	net.Conn
	idle time.Duration
	// progress is when the sender last completed a message (or
	// connected): the connection ends idle after it, not after its last
	// byte, so a sender trickling a byte now and then (a slowloris) does
	// not hold a connection slot for ever.
	progress   time.Time
	deadline   time.Time    // the read deadline set last
	beforeRead func() error // if set, runs before each read; an error ends the read
	// drainBy, once set (Unix ns), bounds the read deadline, which is
	// drainQuiet from each read: weir is stopping. nil: never.
	drainBy *atomic.Int64
	// bloated reports whether the connection's buffers grew past what a
	// connection keeps between messages; trim lets them go. nil: never.
	bloated func() bool
	trim    func()
}

// trimAfter is how long a connection whose buffers grew (a batch of large
// messages) is silent before they are let go.
const trimAfter = time.Second

func (c *idleConn) Read(b []byte) (int, error) {
	if c.beforeRead != nil {
		if err := c.beforeRead(); err != nil {
			return 0, err
		}
	}
	if c.bloated != nil && c.bloated() && !c.draining() {
		// The buffers a batch of large messages grew go once the sender
		// pauses for trimAfter, not at every batch of a busy connection.
		if quiet := time.Now().Add(trimAfter); c.idle <= 0 || quiet.Before(c.progress.Add(c.idle)) {
			c.Conn.SetReadDeadline(quiet)
			c.deadline = quiet
			if c.draining() {
				// The stop came in between and set its deadline, which
				// this one just replaced.
				c.arm()
			}
			n, err := c.Conn.Read(b)
			if n > 0 || !errors.Is(err, os.ErrDeadlineExceeded) {
				return n, err
			}
			c.trim()
		}
	}
	c.arm()
	return c.Conn.Read(b)
}

// draining reports whether weir is stopping.
func (c *idleConn) draining() bool { return c.drainBy != nil && c.drainBy.Load() != 0 }

// arm sets the read deadline for the next read: drainQuiet ahead once weir
// is stopping, else the idle timeout after the last progress.
func (c *idleConn) arm() {
	if c.draining() {
		c.deadline = drainDeadline(time.Unix(0, c.drainBy.Load()))
		c.Conn.SetReadDeadline(c.deadline)
		return
	}
	if c.idle <= 0 {
		if !c.deadline.IsZero() {
			c.Conn.SetReadDeadline(time.Time{})
			c.deadline = time.Time{}
		}
		return
	}
	// Moved when it gained an eighth of the timeout: not at every read of
	// a busy connection; or when it is earlier (a trim's wait).
	if d := c.progress.Add(c.idle); d.Sub(c.deadline) > c.idle/8 || d.Before(c.deadline) {
		c.Conn.SetReadDeadline(d)
		c.deadline = d
		if c.draining() {
			// The stop came in between and set its deadline, which
			// this one just replaced.
			c.arm()
		}
	}
}

// next returns the next message (nil for an empty line or a skipped
// frame), whether it was cut at the size limit, and an error that ends the
// connection. A connection that ends (idle timeout, reset) inside a line
// returns the line so far with the error, as one that ends at EOF does;
// inside an octet-counted frame, the frame is counted dropped
// (truncated_frame), as at EOF.
func (r *frameReader) next() ([]byte, bool, error) {
	if cap(r.buf) > maxKeptBuffer {
		r.buf = nil // the last message, published by now
	}
	if !r.detected {
		b, err := r.br.Peek(1)
		if err != nil {
			return nil, false, err
		}
		if b[0] == tlsHandshake {
			// A sender set up for TLS on a plain port: its ClientHello
			// is no syslog, and it would wait for a reply until idle.
			if b, _ := r.br.Peek(3); len(b) == 3 && b[1] == 3 && b[2] <= 4 {
				return nil, false, &frameError{"bad_frame", "a TLS handshake on a plain TCP listener: point the sender at a tls listener, or turn its TLS off"}
			}
		}
		r.octets = b[0] >= '1' && b[0] <= '9' && r.countFollows()
		r.detected = true
	}
	if r.octets {
		return r.nextCounted()
	}
	return r.nextLine()
}

// tlsHandshake is the first byte of a TLS record carrying a handshake
// (a ClientHello), followed by the version's major 3 and minor 0 to 4.
const tlsHandshake = 0x16

// countFollows reports whether the connection starts "DIGITS SP" with at
// most 9 digits, an octet count (or more digits, a space and a PRI: a
// broken one). A newline-framed sender whose lines
// start with a digit (no <PRI>: a file-style template that starts with
// the time or a Unix time, a script) is read as newline-framed rather
// than closed at its first line. It waits for the digits and the byte
// after them, and after a space, one more (at most 24 bytes), never for a
// byte past the line's end.
func (r *frameReader) countFollows() bool {
	for n := 2; n <= 22; n++ {
		b, _ := r.br.Peek(n)
		if len(b) < n {
			// The connection ended (or failed) within a few bytes: frame
			// it as a count, which reports what is wrong; after ten
			// digits, a line.
			return n <= 10
		}
		switch c := b[n-1]; {
		case c == ' ' && n <= 10:
			return true
		case c == ' ':
			// Ten digits and more: too many for a count (1 MiB has 7),
			// so a line that starts with a Unix time, unless a PRI
			// follows the space: a broken count, which nextCounted
			// refuses. Only now a byte past the space: a line that ends
			// after the digits is not held for the next line's first.
			b, _ = r.br.Peek(n + 1)
			return len(b) > n && b[n] == '<'
		case c < '0' || c > '9':
			return false
		}
	}
	return false
}

func (r *frameReader) nextCounted() ([]byte, bool, error) {
	// Senders that count the trailing newline and those that add one
	// after the frame both leave separators here.
	var n int
	digits := 0
length:
	for {
		c, err := r.br.ReadByte()
		if err != nil {
			switch {
			case digits > 0 && err == io.EOF:
				err = &frameError{"truncated_frame", "connection ended inside a frame header"}
			case digits > 0:
				// Idle, reset: as in the frame's body below.
				r.stats.dropped("truncated_frame").Inc()
			}
			return nil, false, err
		}
		switch {
		case digits == 0 && (c == '\n' || c == '\r'):
			continue
		case c >= '0' && c <= '9':
			if digits == 9 {
				return nil, false, &frameError{"frame_too_large", "octet count has more than 9 digits"}
			}
			n = n*10 + int(c-'0')
			digits++
			continue
		case c == ' ' && digits > 0:
			break length
		default:
			return nil, false, &frameError{"bad_frame", fmt.Sprintf("expected an octet count, got byte 0x%02x", c)}
		}
	}
	if n > r.max {
		// The header is sound, so the stream is still in step: skip this
		// frame and keep the ones pipelined behind it. A sender that
		// stalls mid-frame is closed by the idle deadline.
		r.stats.dropped("frame_too_large").Inc()
		times, due := 1, true
		if r.logSkip != nil {
			times, due = r.logSkip.Due(time.Now())
		}
		if r.log != nil && due {
			r.log.Warn("syslog: frame over max_message_size dropped", slog.Int("bytes", n),
				slog.Int("max_message_size", r.max), slog.Int("times", times))
		}
		if _, err := r.br.Discard(n); err != nil {
			return nil, false, err
		}
		return nil, false, nil
	}
	// The buffer grows with the bytes that arrive, not with the count the
	// sender claims: connections that send only "65536 " cost no memory.
	msg := r.buf[:0]
	for len(msg) < n {
		if _, err := r.br.Peek(1); err != nil {
			if err == io.EOF {
				err = &frameError{"truncated_frame", fmt.Sprintf("connection ended %d bytes into a %d-byte frame", len(msg), n)}
			} else {
				// Idle, reset: the close is counted under its own
				// reason, the frame lost here.
				r.stats.dropped("truncated_frame").Inc()
			}
			return nil, false, err
		}
		b, _ := r.br.Peek(min(r.br.Buffered(), n-len(msg)))
		if len(msg)+len(b) > cap(msg) {
			grown := make([]byte, len(msg), min(n, max(2*cap(msg), len(msg)+len(b))))
			copy(grown, msg)
			msg = grown
		}
		msg = append(msg, b...)
		r.br.Discard(len(b))
	}
	r.buf = msg
	// An empty frame is an empty message (published malformed, as an
	// empty datagram is), on a connection's first frame as on later
	// ones, whose buffer is not nil: nil would skip it.
	if msg == nil {
		msg = []byte{}
	}
	return trimNewline(msg), false, nil
}

func (r *frameReader) nextLine() ([]byte, bool, error) {
	line, err := r.readSlice()
	if err == nil || (err != bufio.ErrBufferFull && len(line) > 0) {
		// A last line without a newline is still a message: at EOF,
		// and when the connection ends otherwise (idle, reset, weir
		// stopping), which is returned with it, marked truncated: the
		// sender was cut off inside it.
		if err == io.EOF {
			err = nil
		}
		line = trimNewline(line)
		if len(line) > r.max {
			r.stats.truncated.Inc()
			return line[:r.max], true, err
		}
		if err != nil && len(line) > 0 {
			r.stats.truncated.Inc()
			return line, true, err
		}
		return emptyToNil(line), false, err
	}
	if err != bufio.ErrBufferFull {
		return nil, false, err
	}
	// A line longer than the read buffer: keep up to max bytes and room
	// for its terminator ("\r\n"), so a line of exactly max bytes is whole;
	// a longer one is cut at max and marked truncated. Skip the rest.
	keep := r.max + 2
	r.buf = append(r.buf[:0], line[:min(keep, len(line))]...)
	for err == bufio.ErrBufferFull {
		line, err = r.readSlice()
		if room := keep - len(r.buf); room > 0 {
			r.buf = append(r.buf, line[:min(room, len(line))]...)
		}
	}
	if err == io.EOF {
		err = nil
	}
	msg := trimNewline(r.buf)
	truncated := len(msg) > r.max || (err != nil && len(msg) > 0) // cut at max, or by the connection's end
	if truncated {
		r.stats.truncated.Inc()
		msg = msg[:min(len(msg), r.max)]
	}
	return msg, truncated, err
}

// readSlice is bufio.Reader.ReadSlice for a line that ends at LF or NUL:
// RFC 6587 (3.4.2) names NUL as a trailer some senders use instead of LF
// (Juniper NetScreen), whose streams have no LF at all. NUL is searched for
// only up to the next LF, so a stream without NULs costs one more scan of
// each line, not of the whole buffer; and the bytes an LF search found
// none in are not searched again (r.noLF), so a stream without LFs does not
// cost a scan of the whole buffer a line.
func (r *frameReader) readSlice() ([]byte, error) {
	scanned := 0 // bytes searched already, in a line that needs more
	for {
		buf, _ := r.br.Peek(r.br.Buffered())
		lf := len(buf)
		if i := bytes.IndexByte(buf[min(r.noLF, len(buf)):], '\n'); i >= 0 {
			lf = min(r.noLF, len(buf)) + i
		}
		r.noLF = lf
		end := lf
		if nul := bytes.IndexByte(buf[scanned:lf], 0); nul >= 0 {
			end = scanned + nul
		}
		if end < len(buf) {
			line := buf[:end+1]
			r.br.Discard(len(line))
			r.noLF = max(r.noLF-len(line), 0)
			return line, nil
		}
		if err := r.err; err != nil {
			// The lines read with the error are returned first.
			r.err = nil
			r.br.Discard(len(buf))
			r.noLF = 0
			return buf, err
		}
		if len(buf) == r.br.Size() {
			r.br.Discard(len(buf))
			r.noLF = 0
			return buf, bufio.ErrBufferFull
		}
		scanned = len(buf)
		// Wait for more: at least a byte, or the error that ends it.
		if _, err := r.br.Peek(len(buf) + 1); err != nil {
			r.err = err
		}
	}
}

// trimNewline cuts the trailer a message may end with: LF, CR LF, NUL (a
// NUL-framed TCP sender; a datagram ending in one, which rsyslog also
// drops: "a frequent problem with a number of senders").
func trimNewline(b []byte) []byte {
	if n := len(b); n > 0 && b[n-1] == 0 {
		b = b[:n-1]
	}
	if n := len(b); n > 0 && b[n-1] == '\n' {
		b = b[:n-1]
	}
	if n := len(b); n > 0 && b[n-1] == '\r' {
		b = b[:n-1]
	}
	return b
}

func emptyToNil(b []byte) []byte {
	if len(b) == 0 {
		return nil
	}
	return b
}
