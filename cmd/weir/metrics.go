package main

import (
	"net"
	"time"

	"github.com/prometheus/client_golang/prometheus"
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
		Help: "Kafka client connections closed, by reason (ok: the client hung up or weir stopped; error: weir closed it, see the log).",
	}, []string{"reason"})
	reqs := prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name:    "weir_kafka_request_duration_seconds",
		Help:    "Time to handle Kafka requests by API, long-polling included.",
		Buckets: prometheus.ExponentialBuckets(0.00005, 4, 10),
	}, []string{"api"})
	refused := prometheus.NewCounter(prometheus.CounterOpts{
		Name: "weir_kafka_connections_refused_total",
		Help: "Kafka client connections closed on arrival: the listener was at broker.max_connections.",
	})
	reg.MustRegister(conns, closed, reqs, refused)
	closed.WithLabelValues("ok")
	closed.WithLabelValues("error")
	return &kafkawire.Metrics{
		ConnOpened:  func(net.Addr) { conns.Inc() },
		ConnRefused: func(net.Addr) { refused.Inc() },
		ConnClosed: func(_ net.Addr, err error) {
			conns.Dec()
			if err != nil {
				closed.WithLabelValues("error").Inc()
			} else {
				closed.WithLabelValues("ok").Inc()
			}
		},
		Request: func(key, _ int16, d time.Duration) {
			reqs.WithLabelValues(kmsg.NameForKey(key)).Observe(d.Seconds())
		},
	}
}
