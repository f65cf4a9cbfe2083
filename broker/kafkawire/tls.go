package kafkawire

import (
	"cmp"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"syscall"
	"time"
)

// WithTLS serves TLS (Kafka's SSL and SASL_SSL listeners) with tc, which
// must hold a certificate or a way to get one (GetCertificate,
// GetConfigForClient: tlsconf.ServerReloading's reloads renewed files).
// Clients that must present a certificate are told by tc.ClientAuth
// (mutual TLS). A handshake must complete within the frame timeout
// (WithFrameTimeout); one that fails closes its connection, is reported
// to Metrics.AuthFailed with reason "tls" and logged at most every 10 s.
// nil: plaintext (the default).
func WithTLS(tc *tls.Config) Option {
	return func(c *config) { c.tls = tc }
}

// authError is a connection closed because the client did not
// authenticate: a failed TLS handshake, SASL credentials refused, a
// request before authentication.
type authError struct {
	reason string // Metrics.AuthFailed's reason
	msg    string
}

func (e *authError) Error() string { return e.msg }

// tlsHandshake runs the TLS handshake on nc, within the frame timeout. A
// client that hangs up during it (a port probe, a load balancer's health
// check) returns its read error, not an authError: that is no failed
// authentication.
func (s *Server) tlsHandshake(ctx context.Context, nc net.Conn) (net.Conn, error) {
	tc := tls.Server(nc, s.cfg.tls)
	d := cmp.Or(s.cfg.frameTimeout, DefaultFrameTimeout)
	hctx, cancel := context.WithTimeout(ctx, d)
	defer cancel()
	err := tc.HandshakeContext(hctx)
	if err == nil {
		return tc, nil
	}
	var rec tls.RecordHeaderError
	switch {
	case ctx.Err() != nil:
		return nil, ctx.Err()
	case errors.Is(err, io.EOF) || errors.Is(err, syscall.ECONNRESET):
		return nil, io.EOF
	case errors.As(err, &rec):
		return nil, &authError{"tls", fmt.Sprintf("TLS handshake: %v (a plaintext Kafka client? this listener is TLS: security.protocol=SSL or SASL_SSL)", err)}
	case errors.Is(err, context.DeadlineExceeded):
		return nil, &authError{"tls", fmt.Sprintf("TLS handshake did not complete within %v", d)}
	}
	return nil, &authError{"tls", "TLS handshake: " + err.Error()}
}

// logAuthFailure logs a refused authentication, at most every 10 s for
// all connections (a client retrying with a wrong password reconnects
// every second or so), with how many there were since.
func (s *Server) logAuthFailure(logger *slog.Logger, err *authError) {
	n, due := s.authLog.Due(time.Now())
	if !due {
		return
	}
	logger.Warn("kafka client: authentication failed, closing connection", "reason", err.msg, "failures", n)
}
