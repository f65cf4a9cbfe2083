package kafkawire

import (
	"crypto/tls"
	"log/slog"
	"net/netip"
	"time"
)

// Defaults, chosen to match Apache Kafka's broker settings so that clients
// tuned for Kafka behave the same against weir.
const (
	// DefaultMaxRequestBytes is Kafka's socket.request.max.bytes.
	DefaultMaxRequestBytes = 100 << 20
	// DefaultIdleTimeout is Kafka's connections.max.idle.ms.
	DefaultIdleTimeout = 10 * time.Minute
	// DefaultMaxBufferedRequestBytes is what requests being read may hold
	// across all connections.
	DefaultMaxBufferedRequestBytes = 256 << 20
	// DefaultFrameTimeout is how long a request may take to arrive once
	// its length has: Kafka clients' request.timeout.ms.
	DefaultFrameTimeout = 30 * time.Second
	// DefaultClusterID is reported in Metadata when WithClusterID is not
	// used.
	DefaultClusterID = "weir"
	// DefaultMaxConnections bounds concurrent client connections. Kafka
	// sets none (max.connections), but each connection holds buffers and a
	// goroutine, so a client opening connections in a loop would take the
	// memory and file descriptors the log needs.
	DefaultMaxConnections = 4096
	// DefaultMaxConnectionsPerIP bounds concurrent connections from one
	// address (Kafka's max.connections.per.ip, which Kafka leaves
	// unbounded): a quarter of DefaultMaxConnections, so that one host
	// reconnecting in a loop cannot take every slot, while a host with
	// many clients (or loopback, weir's own tools) has hundreds.
	DefaultMaxConnectionsPerIP = DefaultMaxConnections / 4

	// maxControlRequestBytes bounds every request other than Produce.
	// Decoding allocates in proportion to the array lengths a request
	// declares, so a hostile 100 MiB Metadata or Fetch request could make
	// the server allocate gigabytes; legitimate ones are a few KiB.
	maxControlRequestBytes = 8 << 20
	// maxFetchResponseBytes caps a Fetch response whatever the client
	// asks for, as Kafka's fetch.max.bytes does.
	maxFetchResponseBytes = 55 << 20
	// maxRetainedBuffer is the largest per-connection buffer kept between
	// requests; bigger ones, grown for an unusual request, are dropped so
	// an idle connection does not pin them.
	maxRetainedBuffer = 8 << 20
	// grownBufferIdle is how long a connection keeps response buffers
	// grown past ioBufferSize that its requests no longer need (see
	// conn.trimBuffers).
	grownBufferIdle = 30 * time.Second
)

// config is what Options set; New fills in the defaults.
type config struct {
	logger          *slog.Logger
	maxRequestBytes int
	idleTimeout     time.Duration
	nodeID          int32
	clusterID       string
	advHost         string
	advPort         int32
	advertise       bool
	metrics         *Metrics
	parallelAppends int
	groups          Groups
	groupsSet       bool
	maxConns        int
	// maxConnsPerIP and perIPOverrides: see WithMaxConnectionsPerIP.
	maxConnsPerIP   int
	perIPOverrides  map[netip.Addr]int
	maxBuffered     int64
	frameTimeout    time.Duration
	grownIdle       time.Duration // grownBufferIdle; shorter in tests
	tls             *tls.Config
	sasl            *SASL
	failedAuthDelay time.Duration // see WithFailedAuthDelay
}

// Option configures a Server.
type Option func(*config)

// WithLogger sets the logger for connection events and protocol errors.
// The default discards everything.
func WithLogger(l *slog.Logger) Option {
	return func(c *config) {
		if l != nil {
			c.logger = l
		}
	}
}

// WithMaxRequestBytes bounds the size of one request frame (default 100 MiB,
// Kafka's socket.request.max.bytes). A client sending a larger frame is
// disconnected: the bytes cannot be skipped safely without reading them, and
// a frame that large is more likely garbage than a produce request. Requests
// other than Produce are further limited to 8 MiB. n <= 0 keeps the default.
func WithMaxRequestBytes(n int) Option {
	return func(c *config) {
		if n > 0 {
			c.maxRequestBytes = n
		}
	}
}

// WithAdvertisedAddr sets the host and port Metadata tells clients to connect
// to. By default each client is told the local address its own connection
// reached, which is right unless clients come through NAT, a container port
// mapping or a proxy (Kafka's advertised.listeners).
func WithAdvertisedAddr(host string, port int32) Option {
	return func(c *config) {
		c.advHost, c.advPort, c.advertise = host, port, true
	}
}

// WithNodeID sets the broker id this server reports (default 0).
func WithNodeID(id int32) Option {
	return func(c *config) { c.nodeID = id }
}

// WithClusterID sets the cluster id reported in Metadata (default "weir").
// Clients use it only to notice they were pointed at a different cluster.
func WithClusterID(id string) Option {
	return func(c *config) { c.clusterID = id }
}

// WithMaxBufferedRequestBytes bounds the request bytes all connections
// together hold (default DefaultMaxBufferedRequestBytes), as Kafka's
// queued.max.request.bytes does: without it every connection may hold a
// request of the maximum size, gigabytes for the default connection limit.
// A request that would go past it closes its connection (the client
// reconnects and sends it again).
func WithMaxBufferedRequestBytes(n int64) Option {
	return func(c *config) { c.maxBuffered = n }
}

// WithFrameTimeout bounds the time a request may take to arrive once its
// length has (default DefaultFrameTimeout; never more than the idle
// timeout), so a client cannot hold a half-sent request, and the memory
// it takes, until the idle timeout.
func WithFrameTimeout(d time.Duration) Option {
	return func(c *config) { c.frameTimeout = d }
}

// DefaultFailedAuthDelay is Kafka's connection.failed.authentication.delay.ms.
const DefaultFailedAuthDelay = 100 * time.Millisecond

// WithFailedAuthDelay sets how long a connection whose SASL credentials
// were refused (an unknown user, a wrong password) waits before it is
// answered and closed (default DefaultFailedAuthDelay, as Kafka's
// connection.failed.authentication.delay.ms; 0 or negative: none). A
// client guessing passwords gets its answers that much slower on each
// connection; other connections do not wait.
func WithFailedAuthDelay(d time.Duration) Option {
	return func(c *config) { c.failedAuthDelay = d }
}

// WithIdleTimeout closes connections that send no request for d (default 10
// minutes, Kafka's connections.max.idle.ms). Zero or negative disables it.
func WithIdleTimeout(d time.Duration) Option {
	return func(c *config) { c.idleTimeout = d }
}

// WithMetrics installs hooks that observe connections, requests and traffic;
// see Metrics.
func WithMetrics(m *Metrics) Option {
	return func(c *config) { c.metrics = m }
}

// WithParallelAppends appends up to n partitions of one Produce request
// concurrently. Worth it when the log fsyncs before acknowledging (the
// fsyncs then overlap); when appends only copy into the page cache, the
// default of 1 avoids goroutine hand-offs on the request path.
func WithParallelAppends(n int) Option {
	return func(c *config) { c.parallelAppends = n }
}

// WithGroups sets the consumer group coordinator. By default the Log is
// used when it implements Groups (the embedded broker does); WithGroups(nil)
// serves no group APIs even then.
func WithGroups(g Groups) Option {
	return func(c *config) { c.groups, c.groupsSet = g, true }
}

// WithMaxConnectionsPerIP bounds concurrent client connections from one
// IP address (default DefaultMaxConnectionsPerIP; 0 or less: no bound),
// as Kafka's max.connections.per.ip, and overrides the bound for the
// addresses in overrides (max.connections.per.ip.overrides; a value of 0
// or less there: no bound for that address). IPv4-mapped IPv6 addresses
// count as their IPv4 address. A connection past it is closed at once,
// reported to Metrics.ConnRefused (reason RefusedPerIP) and logged with
// the address (at most every 10 seconds).
func WithMaxConnectionsPerIP(n int, overrides map[netip.Addr]int) Option {
	return func(c *config) {
		c.maxConnsPerIP, c.perIPOverrides = n, overrides
	}
}

// WithMaxConnections bounds concurrent client connections (default
// DefaultMaxConnections; 0 or less: no bound). A connection past it is
// closed at once, reported to Metrics.ConnRefused (reason
// RefusedMaxConnections) and logged (at most
// every 10 seconds): clients see it close and retry later.
func WithMaxConnections(n int) Option {
	return func(c *config) { c.maxConns = n }
}
