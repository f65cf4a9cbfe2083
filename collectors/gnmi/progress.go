package gnmi

import (
	"context"
	"net"
	"sync/atomic"
	"time"

	gpb "github.com/openconfig/gnmi/proto/gnmi"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/stats"
)

// progress is when stream data last came in on a session's connection:
// bytes of HTTP/2 DATA frames, as they arrive, not whole messages, so a
// large notification over a slow link is not taken for a stall while it
// comes, and pings, settings and window updates (which a target whose
// gNMI daemon hung still answers) are not taken for data.
type progress struct {
	base time.Time
	last atomic.Int64 // since base
	// recv is the message bytes of the DATA frames received, used those
	// of the messages gRPC has decoded (see msgStats): recv is ahead while
	// a message is arriving or being decoded.
	recv, used atomic.Int64
	// answer is whether the target answered (a response other than an
	// in-band Error) or was taken for refusing first: one decision, so
	// a session is never both (see refusal).
	answer atomic.Int32
}

// answer's states.
const (
	awaiting int32 = iota
	hasAnswered
	wasRefused
)

// answered records that the target answered, unless it was taken for
// refusing first, and reports whether it answered.
func (p *progress) answered() bool {
	return p.answer.CompareAndSwap(awaiting, hasAnswered) || p.answer.Load() == hasAnswered
}

// refuse records that the target refuses, unless it answered first,
// and reports whether it refuses.
func (p *progress) refuse() bool { return p.answer.CompareAndSwap(awaiting, wasRefused) }

// pending reports whether message bytes came that gRPC has not yet
// decoded (and msgStats counted): a message in progress.
func (p *progress) pending() bool {
	used := p.used.Load() // first: bytes coming meanwhile count as pending
	return p.recv.Load() > used
}

func newProgress() *progress { return &progress{base: time.Now()} }

func (p *progress) mark() { p.last.Store(int64(time.Since(p.base))) }

// quiet is how long since data last came (or mark was last called).
func (p *progress) quiet() time.Duration {
	return time.Since(p.base) - time.Duration(p.last.Load())
}

// progressCreds wraps a target's transport credentials so the connection
// they hand gRPC, after the TLS handshake, marks p as data arrives: the
// default dialer (and its proxy support) stays.
type progressCreds struct {
	credentials.TransportCredentials
	p *progress
}

func (c progressCreds) ClientHandshake(ctx context.Context, authority string, raw net.Conn) (net.Conn, credentials.AuthInfo, error) {
	conn, info, err := c.TransportCredentials.ClientHandshake(ctx, authority, raw)
	if err != nil {
		return conn, info, err
	}
	return &progressConn{Conn: conn, p: c.p}, info, nil
}

func (c progressCreds) Clone() credentials.TransportCredentials {
	return progressCreds{c.TransportCredentials.Clone(), c.p}
}

// progressConn marks its progress when a read brings DATA frame bytes.
type progressConn struct {
	net.Conn
	p      *progress
	frames frameScanner
}

func (c *progressConn) Read(b []byte) (int, error) {
	n, err := c.Conn.Read(b)
	if data, msg := c.frames.feed(b[:n]); data {
		c.p.recv.Add(int64(msg))
		c.p.mark()
	}
	return n, err
}

// msgStats counts the wire bytes of the messages gRPC decodes on a
// session's connection into its progress's used, as a stats.Handler; a
// SubscribeResponse other than an in-band Error says first that the
// target answered, so a refusal finding no bytes pending finds the
// answer of any message that came (see refusal.fire).
type msgStats struct{ p *progress }

func (s msgStats) HandleRPC(_ context.Context, st stats.RPCStats) {
	in, ok := st.(*stats.InPayload)
	if !ok {
		return
	}
	if r, ok := in.Payload.(*gpb.SubscribeResponse); ok {
		if _, isErr := r.GetResponse().(*gpb.SubscribeResponse_Error); !isErr {
			s.p.answered()
		}
	}
	s.p.used.Add(int64(in.WireLength))
}

func (msgStats) TagRPC(ctx context.Context, _ *stats.RPCTagInfo) context.Context   { return ctx }
func (msgStats) TagConn(ctx context.Context, _ *stats.ConnTagInfo) context.Context { return ctx }
func (msgStats) HandleConn(context.Context, stats.ConnStats)                       {}

// frameScanner follows the HTTP/2 frames a server sends (it sends no
// preface but its frames) across reads.
type frameScanner struct {
	hdr  [9]byte
	nhdr int  // header bytes read of the next frame
	left int  // payload bytes left of the current frame
	data bool // the current frame is DATA
	pad  int  // padding at the current frame's end; -1: its length is next
}

// feed reports whether b holds payload bytes of a DATA frame, and how
// many of them are message bytes: a PADDED frame's pad length and
// padding are not, and would never be counted used (see progress).
func (s *frameScanner) feed(b []byte) (data bool, msg int) {
	for len(b) > 0 {
		if s.left == 0 {
			n := copy(s.hdr[s.nhdr:], b)
			s.nhdr += n
			b = b[n:]
			if s.nhdr < len(s.hdr) {
				return data, msg
			}
			s.nhdr = 0
			s.left = int(s.hdr[0])<<16 | int(s.hdr[1])<<8 | int(s.hdr[2])
			s.data = s.hdr[3] == 0 // DATA
			s.pad = 0
			if s.data && s.hdr[4]&0x8 != 0 { // PADDED
				s.pad = -1
			}
			continue
		}
		data = data || s.data
		if s.pad < 0 {
			s.pad = int(b[0])
			s.left--
			b = b[1:]
			continue
		}
		n := min(s.left, len(b))
		if s.data {
			msg += min(n, max(s.left-s.pad, 0))
		}
		s.left -= n
		b = b[n:]
	}
	return data, msg
}
