package kafkawire

import (
	"net"
	"time"
)

// Reasons Metrics.ConnRefused is called with.
const (
	// RefusedMaxConnections: the listener had WithMaxConnections
	// connections.
	RefusedMaxConnections = "max_connections"
	// RefusedPerIP: the listener had WithMaxConnectionsPerIP connections
	// from the client's address.
	RefusedPerIP = "max_connections_per_ip"
)

// Metrics receives events from the listener so the caller can export them
// (weir maps them to Prometheus counters). The package itself keeps no
// counters: it does not know which metrics system is in use.
//
// Nil fields are skipped. The functions are called from connection
// goroutines, concurrently, on the request path: they must be safe for
// concurrent use and quick.
type Metrics struct {
	// ConnOpened is called when a client connects.
	ConnOpened func(remote net.Addr)
	// ConnRefused is called for a connection closed at once because the
	// listener is at a connection limit, with the reason:
	// RefusedMaxConnections (WithMaxConnections) or RefusedPerIP
	// (WithMaxConnectionsPerIP).
	ConnRefused func(remote net.Addr, reason string)
	// ConnClosed is called when a connection ends. err says why: nil when
	// the client hung up or the server is stopping; a net.Error whose
	// Timeout is true for an idle or stalled connection; one Malformed
	// reports for what is no Kafka request the server can read.
	ConnClosed func(remote net.Addr, err error)
	// Request is called after each request has been handled (and its
	// response, if any, queued), with the API key and version and the time
	// handling took, long-polling included.
	Request func(key, version int16, elapsed time.Duration)
	// Produced is called for each partition a Produce request appended
	// to, with the number of records and bytes of batches appended (from
	// the batch headers; records are never decoded).
	Produced func(topic string, partition int32, records, bytes int)
	// ProduceFailed is called for each partition of a Produce request
	// that was not appended, with the Kafka error code its client got.
	ProduceFailed func(topic string, partition int32, code int16)
	// Fetched is called for each partition a Fetch response carries data
	// for, with the records and bytes of the whole batches sent (a first
	// batch may hold records before the requested offset).
	Fetched func(topic string, partition int32, records, bytes int)
	// AuthFailed is called for each connection closed because its client
	// did not authenticate, with a reason: "tls" (the TLS handshake failed:
	// no or a wrong client certificate, a plaintext client), "mechanism"
	// (a SASL mechanism not enabled), "credentials" (unknown user or wrong
	// password), "malformed" (a SASL message that does not parse or comes
	// out of turn), "unauthenticated" (a request other than ApiVersions,
	// SaslHandshake and SaslAuthenticate before authenticating).
	AuthFailed func(remote net.Addr, reason string)
}
