// Package kafkasec makes the franz-go options of a client that talks TLS
// and SASL to a Kafka cluster: one place for the Kafka backend, the Kafka
// sink and the client commands, so a mechanism or a TLS setting means the
// same in all three.
package kafkasec

import (
	"context"
	"crypto/tls"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/sasl"
	"github.com/twmb/franz-go/pkg/sasl/plain"
	"github.com/twmb/franz-go/pkg/sasl/scram"

	"github.com/weirnet/weir/configs"
	"github.com/weirnet/weir/internal/tlsconf"
)

// Options are the options of a client with TLS (tc not nil; its files are
// read now) and SASL (sc not nil). Errors name the setting ("tls ca_file
// ...", "sasl: ...").
func Options(tc *tlsconf.Client, sc *configs.SASL) ([]kgo.Opt, error) {
	var opts []kgo.Opt
	var tlsc *tls.Config
	if tc != nil {
		c, err := tc.Config()
		if err != nil {
			return nil, err
		}
		tlsc = c
	}
	if tlsc != nil || sc != nil {
		opts = append(opts, kgo.Dialer(dialer(tlsc, sc)))
	}
	if sc != nil {
		var m sasl.Mechanism
		auth := scram.Auth{User: sc.Username, Pass: sc.Password}
		switch sc.Mechanism {
		case "PLAIN":
			m = plain.Auth{User: sc.Username, Pass: sc.Password}.AsMechanism()
		case "SCRAM-SHA-256":
			m = auth.AsSha256Mechanism()
		case "SCRAM-SHA-512":
			m = auth.AsSha512Mechanism()
		default:
			return nil, fmt.Errorf("sasl: mechanism must be PLAIN, SCRAM-SHA-256 or SCRAM-SHA-512, not %q", sc.Mechanism)
		}
		opts = append(opts, kgo.SASL(m))
	}
	return opts, nil
}

// dialTimeout bounds a dial and its TLS handshake, as franz-go's default
// (kgo.DialTimeout) does when it dials.
const dialTimeout = 10 * time.Second

// dialer dials as kgo.DialTLSConfig(tc) does (tc may be nil: plaintext),
// and names what failed where franz-go would not: a TLS handshake that a
// plaintext listener never answers ("context deadline exceeded") or cuts
// short, and, with SASL (sc not nil), a broker closing the connection
// during authentication, which franz-go reports as a bare "EOF".
func dialer(tc *tls.Config, sc *configs.SASL) func(ctx context.Context, network, host string) (net.Conn, error) {
	nd := &net.Dialer{Timeout: dialTimeout}
	return func(ctx context.Context, network, host string) (net.Conn, error) {
		conn, err := nd.DialContext(ctx, network, host)
		if err != nil {
			return nil, err
		}
		if tc != nil {
			c := tc.Clone()
			if c.ServerName == "" {
				server, _, err := net.SplitHostPort(host)
				if err != nil {
					conn.Close()
					return nil, fmt.Errorf("unable to split host:port for dialing: %w", err)
				}
				c.ServerName = server
			}
			hctx, cancel := context.WithTimeout(ctx, dialTimeout)
			tconn := tls.Client(conn, c)
			err := tconn.HandshakeContext(hctx)
			cancel()
			if err != nil {
				conn.Close()
				return nil, handshakeError(host, err)
			}
			conn = tconn
		}
		if sc != nil {
			conn = &saslConn{Conn: conn, sc: sc}
		}
		return conn, nil
	}
}

// handshakeError names the TLS handshake in err, and, where the listener
// did not answer it, closed it or answered it with something not TLS,
// that the listener is likely plaintext.
func handshakeError(host string, err error) error {
	var rec tls.RecordHeaderError
	if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, syscall.ECONNRESET) ||
		errors.Is(err, context.DeadlineExceeded) || errors.Is(err, os.ErrDeadlineExceeded) || errors.As(err, &rec) {
		return fmt.Errorf("TLS handshake with %s: %w (tls is on, but the listener did not complete the handshake: it is likely plaintext; turn tls off, or use the cluster's TLS listener)", host, err)
	}
	return fmt.Errorf("TLS handshake with %s: %w", host, err)
}

// Kafka's API keys of the SASL requests.
const (
	keySASLHandshake    = 17
	keySASLAuthenticate = 36
)

// saslConn remembers whether the last request written was a SASL one, so
// that the broker closing the connection before it answers (how a broker
// may refuse credentials, a mechanism it has no user for, or SASL on a
// listener without it) reads as that rather than as a bare EOF. The error
// still wraps the EOF: franz-go retries it as it did.
type saslConn struct {
	net.Conn
	sc      *configs.SASL
	authing atomic.Bool
}

func (c *saslConn) Write(b []byte) (int, error) {
	// franz-go writes each request at once: its 4-byte size, then its
	// header, which starts with the API key.
	if len(b) >= 6 {
		key := int16(binary.BigEndian.Uint16(b[4:6]))
		c.authing.Store(key == keySASLHandshake || key == keySASLAuthenticate)
	}
	return c.Conn.Write(b)
}

func (c *saslConn) Read(b []byte) (int, error) {
	n, err := c.Conn.Read(b)
	if err != nil && c.authing.Load() &&
		(errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, syscall.ECONNRESET)) {
		err = &saslClosedError{mechanism: c.sc.Mechanism, user: c.sc.Username, err: err}
	}
	return n, err
}

type saslClosedError struct {
	mechanism, user string
	err             error
}

func (e *saslClosedError) Error() string {
	return fmt.Sprintf("the broker closed the connection during SASL %s authentication as user %q (%v): likely a wrong username or password, "+
		"a mechanism the listener does not enable, or a listener without SASL (the broker's log says which)", e.mechanism, e.user, e.err)
}

func (e *saslClosedError) Unwrap() error { return e.err }
