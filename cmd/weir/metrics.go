package main

import (
	"errors"
	"net"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/weirnet/weir/broker/kafkawire"
)

// kafkaMetrics exports the Kafka listener's events to Prometheus.
func kafkaMetrics(reg prometheus.Registerer) *kafkawire.Metrics {
	conns := prometheus.NewGauge(prometheus.GaugeOpts{
		Name: "weir_kafka_connections",
		Help: "Open Kafka client connections.",
	})
	closed := prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "weir_kafka_connections_closed_total",
		Help: "Kafka client connections closed, by reason (ok: the client hung up or weir stopped; timeout: weir closed it, idle for 10 minutes (as Kafka's connections.max.idle.ms) or stalled in a request or a response; malformed: weir closed it, what the client sent is no Kafka request it can read (random bytes, TLS at a plaintext listener, a frame past the size limits), logged at most every 10 s; error: weir closed it for another reason, see the log).",
	}, []string{"reason"})
	reqs := prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name:    "weir_kafka_request_duration_seconds",
		Help:    "Time to handle Kafka requests by API, long-polling included.",
		Buckets: prometheus.ExponentialBuckets(0.00005, 4, 10),
	}, []string{"api"})
	refused := prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "weir_kafka_connections_refused_total",
		Help: "Kafka client connections closed on arrival, by reason (max_connections: the listener was at broker.max_connections; max_connections_per_ip: it had broker.max_connections_per_ip connections from the client's address, the log says which, at most every 10 s).",
	}, []string{"reason"})
	produceErrs := prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "weir_kafka_produce_errors_total",
		Help: "Partitions of Kafka clients' produce requests not appended, by the Kafka error the client got (KAFKA_STORAGE_ERROR: a full disk or I/O error, see the log).",
	}, []string{"error"})
	authFailed := prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "weir_kafka_auth_failures_total",
		Help: "Kafka client connections closed because the client did not authenticate, by reason (tls: TLS handshake failed, a missing or untrusted client certificate; mechanism: a SASL mechanism broker.kafka_sasl does not enable; credentials: unknown user or wrong password; malformed: a SASL message that does not parse or comes out of turn; unauthenticated: a request before SASL authentication, or none within broker.request_timeout of connecting). The log says which client, at most every 10 s.",
	}, []string{"reason"})
	reg.MustRegister(conns, closed, reqs, refused, produceErrs, authFailed)
	closed.WithLabelValues("ok")
	closed.WithLabelValues("timeout")
	closed.WithLabelValues("malformed")
	closed.WithLabelValues("error")
	refused.WithLabelValues(kafkawire.RefusedMaxConnections)
	refused.WithLabelValues(kafkawire.RefusedPerIP)
	return &kafkawire.Metrics{
		ConnOpened:  func(net.Addr) { conns.Inc() },
		ConnRefused: func(_ net.Addr, reason string) { refused.WithLabelValues(reason).Inc() },
		ConnClosed: func(_ net.Addr, err error) {
			conns.Dec()
			var ne net.Error
			switch {
			case err == nil:
				closed.WithLabelValues("ok").Inc()
			case errors.As(err, &ne) && ne.Timeout():
				closed.WithLabelValues("timeout").Inc()
			case kafkawire.Malformed(err):
				closed.WithLabelValues("malformed").Inc()
			default:
				closed.WithLabelValues("error").Inc()
			}
		},
		ProduceFailed: func(_ string, _ int32, code int16) {
			name := "UNKNOWN"
			if err := kerr.ErrorForCode(code); err != nil {
				if ke, ok := err.(*kerr.Error); ok {
					name = ke.Message
				}
			}
			produceErrs.WithLabelValues(name).Inc()
		},
		AuthFailed: func(_ net.Addr, reason string) { authFailed.WithLabelValues(reason).Inc() },
		Request: func(key, _ int16, d time.Duration) {
			reqs.WithLabelValues(kmsg.NameForKey(key)).Observe(d.Seconds())
		},
	}
}
