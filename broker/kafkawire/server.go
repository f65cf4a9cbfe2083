// Package kafkawire serves a Log over the Kafka wire protocol, so that kcat,
// franz-go, librdkafka and other Kafka clients can produce to, consume from
// and administer weir's embedded broker.
//
// Every request and response is encoded and decoded with franz-go's kmsg; the
// package never hand-writes protocol structs. Record batches travel as
// opaque bytes: Produce hands the client's batches to Log.AppendBatches and
// Fetch sends what Log.ReadBatches returns, so the broker never decodes or
// re-encodes records.
//
// The server is a single Kafka node that leads every partition. It speaks
// the subset of the protocol listed in the README (ApiVersions, Metadata,
// Produce, Fetch, ListOffsets, CreateTopics, DeleteTopics, InitProducerID,
// DescribeConfigs, DescribeCluster, DescribeLogDirs, and the consumer group
// APIs when the Log is also a Groups coordinator) and answers anything else
// with UNSUPPORTED_VERSION, as a Kafka broker that lacks an API does.
//
// By default it is plaintext and asks no credentials; WithTLS and WithSASL
// (SaslHandshake, SaslAuthenticate: PLAIN, SCRAM-SHA-256, SCRAM-SHA-512,
// and read-only users) secure it.
package kafkawire

import (
	"bufio"
	"context"
	"io"
	"log/slog"
	"net"
	"sync"
	"sync/atomic"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/weirnet/weir/internal/connlimit"
	"github.com/weirnet/weir/internal/throttle"
)

// Server is a Kafka protocol listener in front of a Log. Create it with New;
// it is safe for concurrent use and holds no global state, so several
// servers may run in one process.
type Server struct {
	log Log
	cfg config
	// groups coordinates consumer groups; nil when the Log has none, and
	// then no group API is advertised.
	groups Groups
	// apiKeys is the ApiVersions answer, built once by New.
	apiKeys []kmsg.ApiVersionsResponseApiKey

	mu   sync.Mutex
	addr net.Addr
	// buffered is the request buffer capacity all connections hold now
	// (see conn.reserve), bounded by cfg.maxBuffered.
	buffered atomic.Int64
	// readers holds the ioBufferSize readers connections read pipelined
	// requests through (conn.sizeReader).
	readers sync.Pool

	// failing throttles the log lines of produces the log could not
	// write (a full disk repeats at every client retry).
	failMu  sync.Mutex
	failing throttle.Set
	// authLog throttles the log lines of failed authentications.
	authLog throttle.Shared
	// protoLog throttles the log lines of connections closed for a
	// request that cannot be read (random bytes, a TLS client at a
	// plaintext port), which a client can repeat in a loop.
	protoLog throttle.Shared
	// memoryLog throttles those of requests refused for want of request
	// memory (WithMaxBufferedRequestBytes).
	memoryLog throttle.Shared
	// producerIDLog throttles those of producer ids the log could not
	// allocate (a full disk), which idempotent producers retry on every
	// connection.
	producerIDLog throttle.Shared
	// autoCreateLog throttles those of auto-creations the log refused
	// (the partition bound), which a client repeats at every Metadata.
	autoCreateLog throttle.Shared
}

// New returns a server for log. It does not listen until Serve or
// ListenAndServe is called.
func New(log Log, opts ...Option) *Server {
	cfg := config{
		logger:          slog.New(slog.NewTextHandler(io.Discard, nil)),
		maxRequestBytes: DefaultMaxRequestBytes,
		idleTimeout:     DefaultIdleTimeout,
		clusterID:       DefaultClusterID,
		maxConns:        DefaultMaxConnections,
		maxConnsPerIP:   DefaultMaxConnectionsPerIP,
		maxBuffered:     DefaultMaxBufferedRequestBytes,
		frameTimeout:    DefaultFrameTimeout,
		grownIdle:       grownBufferIdle,
		failedAuthDelay: DefaultFailedAuthDelay,
	}
	for _, o := range opts {
		o(&cfg)
	}
	groups := cfg.groups
	if !cfg.groupsSet {
		groups, _ = log.(Groups)
	}
	s := &Server{log: log, cfg: cfg, groups: groups, apiKeys: advertisedKeys(groups != nil, isAlterer(log), cfg.sasl != nil),
		failing: throttle.Set{Max: 1024}}
	s.readers.New = func() any { return bufio.NewReaderSize(nil, ioBufferSize) }
	return s
}

// Serve accepts Kafka clients on ln until ctx is done or ln fails. It closes
// ln and every connection before returning and waits for their goroutines, so
// when Serve returns nothing of the server is running. It returns nil when
// stopped through ctx and the listener's error otherwise.
//
// Requests on one connection are handled one at a time, in order, as Kafka
// does; connections are independent of each other.
func (s *Server) Serve(ctx context.Context, ln net.Listener) error {
	s.mu.Lock()
	s.addr = ln.Addr()
	s.mu.Unlock()

	ctx, cancel := context.WithCancel(ctx)
	var wg sync.WaitGroup
	defer func() {
		cancel() // closes every connection through its AfterFunc
		ln.Close()
		wg.Wait()
	}()
	stop := context.AfterFunc(ctx, func() { ln.Close() })
	defer stop()

	var backoff time.Duration
	var open atomic.Int64 // connections being served
	var refusedLogged time.Time
	perIP := connlimit.New(s.cfg.maxConnsPerIP, s.cfg.perIPOverrides)
	var ipRefusedLogged time.Time
	var ipRefused int // refused per address since the last log line
	for {
		nc, err := ln.Accept()
		if err != nil {
			if ctx.Err() != nil {
				return nil
			}
			// Running out of file descriptors is temporary: back off
			// and retry as net/http does, rather than stop serving.
			if te, ok := err.(interface{ Temporary() bool }); ok && te.Temporary() {
				backoff = min(max(2*backoff, 5*time.Millisecond), time.Second)
				s.cfg.logger.Warn("kafka listener: accept failed, retrying", "err", err, "retry_in", backoff)
				select {
				case <-time.After(backoff):
					continue
				case <-ctx.Done():
					return nil
				}
			}
			return err
		}
		backoff = 0
		if limit := s.cfg.maxConns; limit > 0 && open.Load() >= int64(limit) {
			s.refuse(nc, RefusedMaxConnections)
			if time.Since(refusedLogged) >= 10*time.Second {
				refusedLogged = time.Now()
				s.cfg.logger.Warn("kafka listener: connection refused: at the connection limit", "remote", nc.RemoteAddr().String(), "max_connections", limit)
			}
			continue
		}
		ip, counted := perIP.Add(nc.RemoteAddr())
		if !counted {
			s.refuse(nc, RefusedPerIP)
			ipRefused++
			if time.Since(ipRefusedLogged) >= 10*time.Second {
				// The address of this one; "refused" tells how many
				// (from any address) the last 10 s of silence hid.
				ipRefusedLogged = time.Now()
				s.cfg.logger.Warn("kafka listener: connection refused: at the per-address connection limit",
					"remote", nc.RemoteAddr().String(), "max_connections_per_ip", perIP.Limit(ip), "refused", ipRefused)
				ipRefused = 0
			}
			continue
		}
		open.Add(1)
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer open.Add(-1)
			defer perIP.Done(ip)
			s.serveConn(ctx, nc)
		}()
	}
}

// refuse closes a connection at a connection limit.
func (s *Server) refuse(nc net.Conn, reason string) {
	// Counted before the close, so that whoever sees the close sees the
	// count.
	if m := s.cfg.metrics; m != nil && m.ConnRefused != nil {
		m.ConnRefused(nc.RemoteAddr(), reason)
	}
	nc.Close()
}

// ListenAndServe listens on the TCP address addr (such as "127.0.0.1:9092")
// and calls Serve.
func (s *Server) ListenAndServe(ctx context.Context, addr string) error {
	var lc net.ListenConfig
	ln, err := lc.Listen(ctx, "tcp", addr)
	if err != nil {
		return err
	}
	return s.Serve(ctx, ln)
}

// Addr returns the address of the listener Serve was last called with, or
// nil before that. With ListenAndServe on port 0 it tells which port was
// picked.
func (s *Server) Addr() net.Addr {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.addr
}

func isAlterer(log Log) bool {
	_, ok := log.(ConfigAlterer)
	return ok
}
