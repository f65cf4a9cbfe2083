package kafkawire

import (
	"bufio"
	"cmp"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"runtime/debug"
	"strconv"
	"syscall"
	"time"

	"github.com/twmb/franz-go/pkg/kbin"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// ioBufferSize is the request buffer every connection may keep without
// counting it against the server's request memory (reserve), and how much
// answered output waits for more before it is written (run).
const ioBufferSize = 64 << 10

// readBufferSize is the size of each connection's own buffered reader,
// which an idle connection holds for as long as it is open: small, so that
// thousands of them take little memory. It holds the small requests whole;
// larger request bodies are read past it, straight into the request buffer.
// Pipelined requests are read through an ioBufferSize reader on top of it
// (see sizeReader).
const readBufferSize = 4 << 10

// conn is one client connection. A single goroutine reads a request, handles
// it and writes its response before reading the next, which gives Kafka's
// ordering guarantees (responses in request order, requests of one
// connection never concurrent) without any locking. The buffers are reused
// from request to request.
type conn struct {
	s      *Server
	nc     net.Conn
	raw    net.Conn // the socket under nc (TLS), which Update closes
	logger *slog.Logger
	br     *bufio.Reader // small, or a pooled large reader on it while requests are pipelined
	small  *bufio.Reader

	req      []byte // body of the request being handled
	reserved int    // what cap(req) takes beyond ioBufferSize, counted in Server.buffered
	out      []byte // encoded responses not yet written
	fetch    []byte // record batches gathered by Fetch
	// used is the most of out or fetch the request being handled took;
	// grownUsed, when a request last took a good share of them grown
	// (see trimBuffers).
	used      int
	grownUsed time.Time

	// wake and timer serve Fetch long-polls; see fetch.go.
	wake  chan struct{}
	timer *time.Timer

	// advHost and advPort are what Metadata advertises to this client.
	advHost string
	advPort int32

	// SASL (sasl.go): the authenticated user (nil before, and without
	// SASL), the mechanism SaslHandshake chose, whether its tokens come
	// as bare frames (SaslHandshake v0), a SCRAM exchange under way.
	user *User
	// deniedLogged: a request was refused for a topic or group the
	// user may not use, and logged (once per connection).
	deniedLogged bool
	saslMech     string
	saslState    *saslState // the users and mechanisms of SaslHandshake's time
	userState    *saslState // the users user was taken from (refreshUser)
	sess         *session   // the authenticated connection, for SASL.Update
	saslRaw      bool
	scramConv    *scramConv
	// authBy is when a connection that has not authenticated is closed
	// (zero without SASL): see deadline.
	authBy time.Time
	// closing, when set, closes the connection once the response to the
	// request being handled is sent (a refused authentication).
	closing error
}

func (s *Server) newConn(nc net.Conn, logger *slog.Logger) *conn {
	c := &conn{
		s:      s,
		nc:     nc,
		raw:    nc,
		logger: logger,
		small:  bufio.NewReaderSize(nc, readBufferSize),
		wake:   make(chan struct{}, 1),
	}
	c.br = c.small
	c.advHost, c.advPort = s.advertisedAddr(nc)
	if s.cfg.sasl != nil {
		c.authBy = time.Now().Add(cmp.Or(s.cfg.frameTimeout, DefaultFrameTimeout))
	}
	return c
}

// advertisedAddr is the host and port Metadata gives a client on nc: the
// configured one, else the local address the client reached (which works
// for a listener on a wildcard address too), else the listener's.
func (s *Server) advertisedAddr(nc net.Conn) (string, int32) {
	if s.cfg.advertise {
		return s.cfg.advHost, s.cfg.advPort
	}
	for _, a := range []net.Addr{nc.LocalAddr(), s.Addr()} {
		if a == nil {
			continue
		}
		host, port, err := net.SplitHostPort(a.String())
		if err != nil {
			continue
		}
		p, err := strconv.ParseInt(port, 10, 32)
		if err != nil {
			continue
		}
		return host, int32(p)
	}
	return "localhost", 9092
}

// serveConn runs one connection until the client leaves, a request cannot be
// handled or ctx is done.
func (s *Server) serveConn(ctx context.Context, nc net.Conn) {
	// Closing the socket is what unblocks a read or write in progress
	// when the server stops.
	stop := context.AfterFunc(ctx, func() { nc.Close() })
	defer stop()

	m := s.cfg.metrics
	if m != nil && m.ConnOpened != nil {
		m.ConnOpened(nc.RemoteAddr())
	}
	logger := s.cfg.logger.With("remote", nc.RemoteAddr().String())
	logger.Debug("kafka client connected")

	var err error
	var c *conn
	cc := nc // what requests are read from: nc, or TLS on it
	if s.cfg.tls != nil {
		cc, err = s.tlsHandshake(ctx, nc)
	}
	if err == nil {
		c = s.newConn(cc, logger)
		c.raw = nc
		err = c.run(ctx)
	}
	nc.Close()
	if c != nil {
		c.release()
		logger = c.logger // with the user, once authenticated
	}

	var ae *authError
	var pe *protocolError
	var ne net.Error
	switch {
	case ctx.Err() != nil || errors.Is(err, io.EOF) || errors.Is(err, net.ErrClosed) ||
		// A client that closes with an answer unread resets the
		// connection: it hung up all the same.
		errors.Is(err, syscall.ECONNRESET) || errors.Is(err, syscall.EPIPE):
		err = nil
		logger.Debug("kafka client disconnected")
	case errors.As(err, &ae):
		if m != nil && m.AuthFailed != nil {
			m.AuthFailed(nc.RemoteAddr(), ae.reason)
		}
		s.logAuthFailure(logger, ae)
	case errors.As(err, &pe):
		// At most every 10 s for all connections, with how many
		// there were: each is counted in the metrics. A full request
		// memory has its own, so a junk flood does not hide it.
		limit := &s.protoLog
		if pe.limit {
			limit = &s.memoryLog
		}
		if n, due := limit.Due(time.Now()); due {
			logger.Warn("kafka client: closing connection", "reason", err, "times", n)
		}
	case errors.As(err, &ne) && ne.Timeout():
		logger.Debug("kafka client: closing idle connection")
	case errors.Is(err, errAcksZeroFailed):
		// The producer reconnects and retries; one line per failure
		// at Info would flood the log while, say, a topic is missing.
		logger.Debug("kafka client: closing connection", "reason", err)
	default:
		logger.Info("kafka client: connection closed", "reason", err)
	}
	if m != nil && m.ConnClosed != nil {
		m.ConnClosed(nc.RemoteAddr(), err)
	}
}

// release gives back what the closed connection held: its share of the
// request memory, a pooled reader, its long-poll timer.
func (c *conn) release() {
	if c.sess != nil {
		c.s.cfg.sasl.unregister(c.user.Name, c.sess)
	}
	c.unreserve()
	if c.br != c.small {
		c.br.Reset(nil)
		c.s.readers.Put(c.br)
	}
	if c.timer != nil {
		c.timer.Stop()
	}
}

// run is the connection's request loop. A panic in a handler (a bug, never
// expected) ends only this connection.
func (c *conn) run(ctx context.Context) (err error) {
	defer func() {
		if r := recover(); r != nil {
			c.logger.Error("kafka client: panic while handling request", "panic", r, "stack", string(debug.Stack()))
			err = fmt.Errorf("panic: %v", r)
		}
	}()
	m := c.s.cfg.metrics
	for {
		body, err := c.readFrame()
		if err != nil {
			if c.sess.isGone() {
				return errUserRemoved // Update closed the socket
			}
			return err
		}
		if c.saslRaw {
			if err := c.rawSASL(ctx, body); err != nil {
				return err
			}
			if !c.sess.end() {
				return errUserRemoved
			}
			continue
		}
		if !c.sess.begin() {
			c.flush() // answers to pipelined requests, if any wait
			return errUserRemoved
		}
		start := time.Now()
		h, resp, err := c.handle(ctx, body)
		if err != nil {
			return err
		}
		if c.closing != nil {
			c.delayRefusal(ctx, c.closing)
		}
		if resp != nil {
			if err := c.writeResponse(h.corr, resp); err != nil {
				return err
			}
		}
		if c.closing != nil {
			c.flush() // the refusal, which says why
			return c.closing
		}
		// Responses to pipelined requests go out in one write: flush
		// only when the next request is not already waiting.
		if !c.frameBuffered() || len(c.out) >= ioBufferSize {
			if err := c.flush(); err != nil {
				return err
			}
		}
		if m != nil && m.Request != nil {
			m.Request(h.key, h.version, time.Since(start))
		}
		// Idle for Update (its socket may be closed) only with every
		// answer written.
		if len(c.out) == 0 && !c.sess.end() {
			return errUserRemoved // removed while the request was handled
		}
		c.trimBuffers(start)
		c.sizeReader()
	}
}

// sizeReader reads pipelined requests through a large buffer, taken from
// the server's pool while they last (see also readFrame): with only the
// small one, requests of a few KiB take a read each and, the next one never
// wholly buffered, a write each for their answers, which halves a
// pipelining producer's throughput. It is called between requests, when
// nothing else reads c.br.
func (c *conn) sizeReader() {
	switch {
	case c.br == c.small && c.small.Buffered() > 0:
		// The next request came with this one.
		c.readLarge()
	case c.br != c.small && c.br.Buffered() == 0 && c.small.Buffered() == 0:
		// Caught up: an idle connection keeps only the small one.
		c.br.Reset(nil)
		c.s.readers.Put(c.br)
		c.br = c.small
	}
}

// readLarge reads on through a large reader on the small one: what the
// small one holds first, then (being empty, and asked for more than it
// holds) straight from the connection.
func (c *conn) readLarge() {
	big := c.s.readers.Get().(*bufio.Reader)
	big.Reset(c.small)
	c.br = big
}

// watchHangup returns ctx cancelled, with the read error as its cause, when
// the client hangs up while a request waits (a Fetch long-poll): otherwise
// the connection and its slot would be held until MaxWaitMillis, which may
// be days. It only peeks, so a request pipelined meanwhile stays buffered
// for readFrame. stop must be called before the connection is read again.
func (c *conn) watchHangup(ctx context.Context) (_ context.Context, stop func()) {
	ctx, cancel := context.WithCancelCause(ctx)
	done := make(chan struct{})
	// The frame timeout's deadline would end the watch long before a
	// poll of minutes does.
	c.nc.SetReadDeadline(time.Time{})
	go func() {
		defer close(done)
		if _, err := c.br.Peek(1); err != nil && !errors.Is(err, os.ErrDeadlineExceeded) {
			cancel(err)
		}
	}()
	return ctx, func() {
		c.nc.SetReadDeadline(time.Now()) // ends the Peek
		<-done
		c.nc.SetReadDeadline(time.Time{}) // readFrame sets the idle deadline
		cancel(nil)
	}
}

// readFrame reads the next request frame and returns its body (the bytes
// after the length), valid until the next call.
func (c *conn) readFrame() ([]byte, error) {
	c.nc.SetReadDeadline(c.deadline(c.s.cfg.idleTimeout))
	b, err := c.br.Peek(4)
	if err != nil {
		if len(b) > 0 && errors.Is(err, io.EOF) {
			return nil, &protocolError{reason: "connection closed inside a frame length"}
		}
		return nil, c.authTimeout(err)
	}
	size := int64(int32(binary.BigEndian.Uint32(b)))
	switch {
	case size < 0:
		return nil, &protocolError{reason: fmt.Sprintf("negative frame length %d%s", size, otherProtocol(b))}
	case size > int64(c.s.cfg.maxRequestBytes):
		return nil, &protocolError{reason: fmt.Sprintf("frame length %d exceeds the maximum request size %d%s", size, c.s.cfg.maxRequestBytes, otherProtocol(b))}
	case c.saslRaw:
		// A bare SASL token (after SaslHandshake v0): any length,
		// and a few hundred bytes at most from honest clients.
		if size > maxPreAuthBytes {
			return nil, &authError{"malformed", fmt.Sprintf("a %d byte SASL token (at most %d)", size, maxPreAuthBytes)}
		}
	case !c.authenticated() && size > maxPreAuthBytes:
		// Only ApiVersions and the SASL requests may come before
		// authentication, none of them large: a client that is not
		// authenticated cannot make the server read 100 MiB.
		return nil, &authError{"unauthenticated", fmt.Sprintf("a %d byte request before SASL authentication (at most %d)", size, maxPreAuthBytes)}
	case size < 8: // api key, version and correlation id at least
		return nil, &protocolError{reason: fmt.Sprintf("frame length %d is too short for a request header", size)}
	}
	if d := c.s.cfg.frameTimeout; d > 0 && (d < c.s.cfg.idleTimeout || c.s.cfg.idleTimeout <= 0) {
		// The whole request, now it has begun: its API key below too,
		// or a client sending a large length alone holds the
		// connection for the idle timeout.
		c.nc.SetReadDeadline(c.deadline(d))
	}
	// Only Produce carries bulk data; see maxControlRequestBytes.
	if size > maxControlRequestBytes {
		if b, err := c.br.Peek(6); err == nil {
			if key := int16(binary.BigEndian.Uint16(b[4:])); key != kmsg.Produce.Int16() {
				return nil, &protocolError{reason: fmt.Sprintf("frame length %d exceeds %d for API key %d", size, maxControlRequestBytes, key)}
			}
		}
	}
	if c.br == c.small && size > int64(c.small.Buffered()-4) {
		// A request larger than the small buffer holds: what comes
		// behind it (pipelined) is read with its end.
		c.readLarge()
	}
	c.br.Discard(4)
	err = c.readBody(int(size))
	if c.s.cfg.idleTimeout <= 0 && c.s.cfg.frameTimeout > 0 {
		c.nc.SetReadDeadline(time.Time{}) // no idle timeout: wait for the next request for ever
	}
	if err != nil {
		if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
			return nil, &protocolError{reason: fmt.Sprintf("connection closed inside a %d byte frame", size)}
		}
		var ne net.Error
		if errors.As(err, &ne) && ne.Timeout() {
			if c.authExpired() {
				return nil, c.authTimeout(err)
			}
			return nil, stalledError{&protocolError{reason: fmt.Sprintf("a %d byte request did not arrive in time", size)}}
		}
		return nil, err
	}
	return c.req, nil
}

// deadline is when a read or write that may take d (0: for ever) must
// end: before SASL authentication, by authBy at the latest. Only
// ApiVersions and the SASL requests come before it, which an honest
// client sends at once; without it a client with no credentials could
// hold a connection, and with a few thousand of them every slot
// (max_connections), for as long as it sent an ApiVersions within each
// idle timeout.
func (c *conn) deadline(d time.Duration) time.Time {
	var t time.Time
	if d > 0 {
		t = time.Now().Add(d)
	}
	if !c.authBy.IsZero() && !c.authenticated() && (t.IsZero() || c.authBy.Before(t)) {
		t = c.authBy
	}
	return t
}

// authExpired reports whether the connection did not authenticate by
// authBy.
func (c *conn) authExpired() bool {
	return !c.authBy.IsZero() && !c.authenticated() && !time.Now().Before(c.authBy)
}

// authTimeout is err, a read or write error, or an authError when it is
// the timeout of a connection that did not authenticate by authBy.
func (c *conn) authTimeout(err error) error {
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() && c.authExpired() {
		return &authError{"unauthenticated", fmt.Sprintf("no SASL authentication within %v of connecting", cmp.Or(c.s.cfg.frameTimeout, DefaultFrameTimeout))}
	}
	return err
}

// otherProtocol names the protocol a client that is not speaking Kafka
// seems to speak, from the four bytes read as a frame length, for the log:
// a client configured for TLS (security.protocol=SSL) sends a ClientHello,
// whose length reads as some 369 MB.
func otherProtocol(b []byte) string {
	switch {
	case len(b) < 4:
		return ""
	case b[0] == 0x16 && b[1] == 0x03: // TLS handshake record, version 3.x
		return " (a TLS handshake: the Kafka listener is plaintext)"
	}
	switch string(b[:4]) {
	case "GET ", "POST", "PUT ", "HEAD", "DELE", "OPTI", "PATC", "PRI ":
		return " (an HTTP request: this is the Kafka listener)"
	}
	return ""
}

// readBody reads size bytes into c.req. The buffer grows with the bytes that
// actually arrive rather than with the length the client announced, so a
// client cannot make the server allocate 100 MiB with a four-byte header.
func (c *conn) readBody(size int) error {
	buf := c.req[:0]
	for len(buf) < size {
		if len(buf) == cap(buf) {
			n := min(size, max(2*cap(buf), ioBufferSize))
			if err := c.reserve(n); err != nil {
				c.req = buf[:0]
				return err
			}
			grown := make([]byte, len(buf), n)
			copy(grown, buf)
			buf = grown
		}
		n, err := io.ReadFull(c.br, buf[len(buf):min(size, cap(buf))])
		buf = buf[:len(buf)+n]
		if err != nil {
			c.req = buf[:0]
			return err
		}
	}
	c.req = buf
	return nil
}

// reserve makes the connection's share of the server's request memory
// (Server.buffered) what a request buffer of capacity n takes beyond
// ioBufferSize, which every connection may keep (max_connections bounds
// those); past the server's bound it refuses, and the connection closes.
// A larger buffer is given back after its request (trimBuffers), so the
// bound is on requests in flight, as Kafka's queued.max.request.bytes.
func (c *conn) reserve(n int) error {
	counted := max(n-ioBufferSize, 0)
	delta := int64(counted - c.reserved)
	if delta <= 0 {
		return nil
	}
	if total := c.s.buffered.Add(delta); c.s.cfg.maxBuffered > 0 && total > c.s.cfg.maxBuffered {
		c.s.buffered.Add(-delta)
		return &protocolError{reason: fmt.Sprintf("a request buffer of %d bytes: the server's request memory (%d bytes, broker.max_buffered_bytes) is held by other requests",
			n, c.s.cfg.maxBuffered), limit: true}
	}
	c.reserved = counted
	return nil
}

// unreserve gives the connection's request memory back, its buffer gone.
func (c *conn) unreserve() {
	c.s.buffered.Add(-int64(c.reserved))
	c.reserved = 0
}

// frameBuffered reports whether a whole request frame is already buffered,
// so that reading it will not block.
func (c *conn) frameBuffered() bool {
	n := c.br.Buffered()
	if n < 4 {
		return false
	}
	b, _ := c.br.Peek(4)
	size := int(int32(binary.BigEndian.Uint32(b)))
	return size >= 0 && n-4 >= size
}

// header is the part of a request header the server uses.
type header struct {
	key, version int16
	corr         int32
	// clientID points into the request buffer: valid while the request
	// is handled. Only group membership keeps it (copied).
	clientID *string
}

// handle decodes the request in body and runs it. It returns the response
// to send, nil when none is due (Produce with acks=0), or an error when the
// connection must be closed.
func (c *conn) handle(ctx context.Context, body []byte) (header, kmsg.Response, error) {
	r := kbin.Reader{Src: body}
	h := header{key: r.Int16(), version: r.Int16(), corr: r.Int32()}
	h.clientID = r.UnsafeNullableString()
	if !r.Ok() {
		return h, nil, &protocolError{reason: "request header too short"}
	}
	kreq := kmsg.RequestForKey(h.key)
	if kreq == nil {
		return h, nil, &protocolError{reason: fmt.Sprintf("unknown API key %d", h.key)}
	}
	if !c.authenticated() && !preAuth(h.key) {
		// Kafka closes the connection too: the client is not
		// configured for SASL, or ignored a refusal.
		return h, nil, &authError{"unauthenticated", fmt.Sprintf("a %s request before SASL authentication (the listener requires SASL: security.protocol=SASL_PLAINTEXT or SASL_SSL)", kmsg.NameForKey(h.key))}
	}
	if !c.s.supports(h.key, h.version) {
		// Kafka answers an ApiVersions it cannot parse with a v0
		// response listing the versions it can, so the client retries
		// with one of them (KIP-511). Nothing after the correlation id
		// matters for that.
		if h.key == kmsg.ApiVersions.Int16() {
			return h, c.s.apiVersionsUnsupported(), nil
		}
		c.logger.Debug("kafka client: unsupported request", "api", kmsg.NameForKey(h.key), "version", h.version)
		return h, unsupportedAnswer(kreq, h.version, r.Src), nil
	}
	kreq.SetVersion(h.version)
	if kreq.IsFlexible() {
		kmsg.SkipTags(&r) // request header v2: tagged fields
		if !r.Ok() {
			return h, nil, &protocolError{reason: "request header tags truncated"}
		}
	}
	if err := kreq.ReadFrom(r.Src); err != nil {
		// kbin's error speaks of a response; say what happened here.
		return h, nil, &protocolError{reason: fmt.Sprintf("malformed or truncated %s v%d request", kmsg.NameForKey(h.key), h.version)}
	}
	resp, err := c.dispatch(ctx, h, kreq)
	return h, resp, err
}

// dispatch runs a decoded request of a supported version, within what
// the user may do (read_only, topics and groups).
func (c *conn) dispatch(ctx context.Context, h header, kreq kmsg.Request) (kmsg.Response, error) {
	if err := c.refreshUser(); err != nil {
		return nil, err
	}
	if resp := c.refuseReadOnly(kreq); resp != nil {
		return resp, nil
	}
	fix, skip, closeAfter := c.restrict(ctx, kreq)
	var resp kmsg.Response
	var err error
	if skip {
		resp = kreq.ResponseKind()
	} else if resp, err = c.serve(ctx, h, kreq); err != nil {
		return resp, err
	}
	if closeAfter != nil {
		return nil, closeAfter
	}
	if fix != nil && resp != nil {
		fix(resp)
	}
	return resp, nil
}

// serve runs a request with its handler.
func (c *conn) serve(ctx context.Context, h header, kreq kmsg.Request) (kmsg.Response, error) {
	switch req := kreq.(type) {
	case *kmsg.ProduceRequest:
		return c.handleProduce(ctx, req)
	case *kmsg.FetchRequest:
		return c.handleFetch(ctx, req)
	case *kmsg.ListOffsetsRequest:
		return c.handleListOffsets(req), nil
	case *kmsg.MetadataRequest:
		return c.handleMetadata(ctx, req), nil
	case *kmsg.ApiVersionsRequest:
		return c.handleApiVersions(req), nil
	case *kmsg.CreateTopicsRequest:
		return c.handleCreateTopics(ctx, req), nil
	case *kmsg.DeleteTopicsRequest:
		return c.handleDeleteTopics(ctx, req), nil
	case *kmsg.InitProducerIDRequest:
		return c.handleInitProducerID(ctx, req), nil
	case *kmsg.DescribeConfigsRequest:
		return c.handleDescribeConfigs(ctx, req), nil
	case *kmsg.AlterConfigsRequest:
		return c.handleAlterConfigs(ctx, req), nil
	case *kmsg.IncrementalAlterConfigsRequest:
		return c.handleIncrementalAlterConfigs(ctx, req), nil
	case *kmsg.DescribeClusterRequest:
		return c.handleDescribeCluster(req), nil
	case *kmsg.DescribeLogDirsRequest:
		return c.handleDescribeLogDirs(ctx, req), nil
	case *kmsg.FindCoordinatorRequest:
		return c.handleFindCoordinator(req), nil
	case *kmsg.SASLHandshakeRequest:
		return c.handleSASLHandshake(req), nil
	case *kmsg.SASLAuthenticateRequest:
		return c.handleSASLAuthenticate(req), nil
	}
	if c.s.groups != nil {
		if resp, ok, err := c.dispatchGroup(ctx, h, kreq); ok {
			return resp, err
		}
	}
	// supports and dispatch disagree: a bug, but the client still gets an
	// answer rather than a dropped connection.
	c.logger.Error("kafka listener: advertised API has no handler", "api", kmsg.NameForKey(kreq.Key()))
	return unsupportedResponse(kreq, kreq.GetVersion()), nil
}

// writeResponse encodes resp behind its response header after the responses
// waiting in c.out; flush writes them.
func (c *conn) writeResponse(corr int32, resp kmsg.Response) error {
	start := len(c.out)
	b := append(c.out, 0, 0, 0, 0) // size, filled below
	b = binary.BigEndian.AppendUint32(b, uint32(corr))
	// Flexible responses use response header v1 (an empty tag section),
	// except ApiVersions: a client must be able to read its answer before
	// it knows which versions the broker speaks, so it always uses v0.
	if resp.IsFlexible() && resp.Key() != kmsg.ApiVersions.Int16() {
		b = append(b, 0)
	}
	b = resp.AppendTo(b)
	binary.BigEndian.PutUint32(b[start:], uint32(len(b)-start-4))
	c.out = b
	c.used = max(c.used, len(b))
	return nil
}

// flush sends buffered responses. Fetch calls it before long-polling so that
// earlier pipelined responses do not wait for the poll.
func (c *conn) flush() error {
	if len(c.out) == 0 {
		return nil
	}
	c.nc.SetWriteDeadline(c.deadline(c.s.cfg.idleTimeout))
	_, err := c.nc.Write(c.out)
	c.out = c.out[:0]
	return c.authTimeout(err)
}

// trimBuffers drops buffers an unusually large request grew, so that a
// connection does not hold on to them while idle: a request buffer past
// ioBufferSize at once, since it counts against the server's request
// memory, which idle connections must not hold. Response buffers grown
// past ioBufferSize go once no request took a quarter of them for
// grownBufferIdle: a consumer that read a backlog and caught up fetches a
// few records at a time, and kept megabytes for as long as it stayed
// connected. now is about the time.
func (c *conn) trimBuffers(now time.Time) {
	if cap(c.req) > ioBufferSize {
		c.req = nil
		c.unreserve()
	}
	if grown := max(cap(c.out), cap(c.fetch)); grown > ioBufferSize {
		if c.used > grown/4 {
			c.grownUsed = now
		} else if now.Sub(c.grownUsed) >= c.s.cfg.grownIdle {
			c.fetch = nil
			if len(c.out) == 0 { // written
				c.out = nil
			}
		}
	}
	c.used = 0
	if len(c.out) == 0 && cap(c.out) > maxRetainedBuffer { // written
		c.out = nil
	}
	if cap(c.fetch) > maxRetainedBuffer {
		c.fetch = nil
	}
}
