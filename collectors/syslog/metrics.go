package syslog

import (
	"slices"
	"sync"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/weirnet/weir/internal/promreg"
	"github.com/weirnet/weir/internal/throttle"
)

// metrics are the collector's self-metrics, resolved per listener once so
// the hot path only adds to counters, once per batch.
type metrics struct {
	messages       *prometheus.CounterVec
	bytes          *prometheus.CounterVec
	parseFailures  *prometheus.CounterVec
	truncated      *prometheus.CounterVec
	dropped        *prometheus.CounterVec
	connections    *prometheus.GaugeVec
	connsRejected  *prometheus.CounterVec
	publishErrors  *prometheus.CounterVec
	publishSeconds *prometheus.HistogramVec
}

// newMetrics makes the metrics, registered nowhere (see register).
func newMetrics() *metrics {
	m := &metrics{
		messages: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "weir_syslog_messages_total", Help: "Syslog messages received and published, by listener and detected format.",
		}, []string{"listener", "format"}),
		bytes: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "weir_syslog_bytes_total", Help: "Bytes of syslog messages received, by listener and detected format.",
		}, []string{"listener", "format"}),
		parseFailures: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "weir_syslog_parse_failures_total", Help: "Messages that did not parse (published as malformed with their raw bytes).",
		}, []string{"listener"}),
		truncated: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "weir_syslog_truncated_total", Help: "Messages published cut short: longer than max_message_size (cut at it), or cut by the end of their TCP connection (idle timeout, reset, weir stopping).",
		}, []string{"listener"}),
		dropped: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "weir_syslog_dropped_total", Help: "Messages or frames lost, by listener and reason.",
		}, []string{"listener", "reason"}),
		connections: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "weir_syslog_connections", Help: "Open TCP/TLS syslog connections.",
		}, []string{"listener"}),
		connsRejected: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "weir_syslog_connections_closed_total", Help: "TCP/TLS connections refused or closed by weir, by reason.",
		}, []string{"listener", "reason"}),
		publishErrors: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "weir_syslog_publish_errors_total", Help: "Failed attempts to publish a batch to the broker (retried).",
		}, []string{"listener"}),
		publishSeconds: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name: "weir_syslog_publish_seconds", Help: "Time to publish one batch to the broker.",
			Buckets: prometheus.ExponentialBuckets(0.00002, 4, 10),
		}, []string{"listener"}),
	}
	return m
}

// register registers m on reg; where reg has them already (a collector
// built again on it), m takes those.
func (m *metrics) register(reg prometheus.Registerer) error {
	var err error
	m.messages = promreg.Register(reg, m.messages, &err)
	m.bytes = promreg.Register(reg, m.bytes, &err)
	m.parseFailures = promreg.Register(reg, m.parseFailures, &err)
	m.truncated = promreg.Register(reg, m.truncated, &err)
	m.dropped = promreg.Register(reg, m.dropped, &err)
	m.connections = promreg.Register(reg, m.connections, &err)
	m.connsRejected = promreg.Register(reg, m.connsRejected, &err)
	m.publishErrors = promreg.Register(reg, m.publishErrors, &err)
	m.publishSeconds = promreg.Register(reg, m.publishSeconds, &err)
	return err
}

// listenerStats are one listener's resolved metric children.
type listenerStats struct {
	listener       string
	m              *metrics
	messages       [4]prometheus.Counter // by formatIndex
	bytes          [4]prometheus.Counter // by formatIndex
	parseFailures  prometheus.Counter
	truncated      prometheus.Counter
	connections    prometheus.Gauge // TCP and TLS listeners only (see streamListener)
	publishErrors  prometheus.Counter
	publishSeconds prometheus.Observer
	// refusedLog throttles the refused records' log line: the listener's
	// connections share it.
	refusedLog throttle.Shared

	mu    sync.Mutex
	drops map[string]prometheus.Counter
}

func (m *metrics) forListener(name string) *listenerStats {
	s := &listenerStats{
		listener:       name,
		m:              m,
		parseFailures:  m.parseFailures.WithLabelValues(name),
		truncated:      m.truncated.WithLabelValues(name),
		publishErrors:  m.publishErrors.WithLabelValues(name),
		publishSeconds: m.publishSeconds.WithLabelValues(name),
		drops:          map[string]prometheus.Counter{},
	}
	for i, f := range []string{FormatRFC5424, FormatRFC3164, FormatCisco, FormatMalformed} {
		s.messages[i] = m.messages.WithLabelValues(name, f)
		s.bytes[i] = m.bytes.WithLabelValues(name, f)
	}
	return s
}

// streamListener resolves the open-connections gauge, which only TCP and
// TLS listeners have: a UDP listener exporting it at 0 would say it has
// connections to count.
func (s *listenerStats) streamListener() {
	s.connections = s.m.connections.WithLabelValues(s.listener)
}

// Reasons a listener counts, exported at 0 from the start (expose), so
// that a rate or an alert on them has a series before the first drop.
var (
	udpDropReasons  = []string{"kernel", "rejected", "shutdown"}
	tcpDropReasons  = []string{"frame_too_large", "bad_frame", "truncated_frame", "rejected", "shutdown"}
	tcpCloseReasons = []string{"too_many_connections", "too_many_connections_per_ip", "accept_failed", "idle", "frame_too_large", "bad_frame", "truncated_frame", "error"}
	tlsCloseReasons = append(slices.Clone(tcpCloseReasons), "tls_handshake")
)

// expose makes the listener's counters of these reasons, at 0.
func (s *listenerStats) expose(drops, closes []string) {
	for _, r := range drops {
		s.dropped(r)
	}
	for _, r := range closes {
		s.m.connsRejected.WithLabelValues(s.listener, r)
	}
}

func (s *listenerStats) dropped(reason string) prometheus.Counter {
	s.mu.Lock()
	defer s.mu.Unlock()
	c, ok := s.drops[reason]
	if !ok {
		c = s.m.dropped.WithLabelValues(s.listener, reason)
		s.drops[reason] = c
	}
	return c
}

func (s *listenerStats) closed(reason string) {
	s.m.connsRejected.WithLabelValues(s.listener, reason).Inc()
}
