package gnmi

import (
	"github.com/prometheus/client_golang/prometheus"

	"github.com/weirnet/weir/internal/promreg"
)

// Metrics are the collector's self-metrics, per target.
type Metrics struct {
	Connected  *prometheus.GaugeVec
	Reconnects *prometheus.CounterVec
	Updates    *prometheus.CounterVec
	LastUpdate *prometheus.GaugeVec
	Errors     *prometheus.CounterVec
	Dropped    *prometheus.CounterVec
	Syncs      *prometheus.CounterVec
	Published  *prometheus.CounterVec
	// ResyncDeletes are the deletes weir made up after a resubscription's
	// snapshot, for paths the target no longer reported (see resync.go).
	ResyncDeletes *prometheus.CounterVec
	// QueueMemory is what every target's queue holds together, as
	// gnmi.queue_memory counts it.
	QueueMemory prometheus.Gauge
}

// Drop reasons, the "reason" label of weir_gnmi_dropped_total.
const (
	DropQueueFull    = "queue_full"    // the target's queue was full
	DropPublishError = "publish_error" // the broker refused the record
	DropEncode       = "encode"        // a record could not be encoded
	// DropNoValue: updates with no value weir can read (none at all, a
	// kind newer than weir's gNMI, or JSON with no leaf: {}, null): they
	// give no field.
	DropNoValue = "no_value"
	// DropShutdown: left when the publisher's time ran out (weir's
	// shutdown grace, or a removed target's drain): the records of the
	// batch in flight and the notifications still queued.
	DropShutdown = "shutdown"
	// DropMemoryFull: the targets' queues together held gnmi.queue_memory
	// (or the target held more than its share of it; see memBudget).
	DropMemoryFull = "memory_full"
)

// NewMetrics registers the collector's metrics on reg (nil: not
// registered). Registering twice on one registry reuses the first set.
func NewMetrics(reg prometheus.Registerer) (*Metrics, error) {
	m := &Metrics{
		Connected: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "weir_gnmi_connected",
			Help: "1 while the target's Subscribe stream is up (it has answered), else 0.",
		}, []string{"target"}),
		Reconnects: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "weir_gnmi_reconnects_total",
			Help: "Connection attempts after the first: each one follows a failed or ended stream.",
		}, []string{"target"}),
		Updates: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "weir_gnmi_updates_total",
			Help: "Updates and deletes received in notifications.",
		}, []string{"target"}),
		LastUpdate: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "weir_gnmi_last_update_timestamp_seconds",
			Help: "Unix time a notification was last received from the target.",
		}, []string{"target"}),
		Errors: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "weir_gnmi_errors_total",
			Help: "Failed connections and streams by gRPC code (Unavailable, Unauthenticated, ...).",
		}, []string{"target", "code"}),
		Dropped: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "weir_gnmi_dropped_total",
			Help: "Notifications (queue_full, memory_full), records (publish_error, encode) or updates (no_value: no value weir can read) dropped; shutdown: records in flight and notifications queued when publishing stopped.",
		}, []string{"target", "reason"}),
		Syncs: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "weir_gnmi_sync_responses_total",
			Help: "sync_response messages received: the target has sent its initial state.",
		}, []string{"target"}),
		Published: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "weir_gnmi_records_published_total",
			Help: "Metric records published to the topic.",
		}, []string{"target"}),
		ResyncDeletes: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "weir_gnmi_resync_deletes_total",
			Help: "Deletes published for paths a target reported before a resubscription and not in its new snapshot (gone while the stream was down).",
		}, []string{"target"}),
		QueueMemory: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "weir_gnmi_queue_memory_bytes",
			Help: "Memory the targets' queues hold together (notifications waiting and batches being published), estimated; bounded by gnmi.queue_memory.",
		}),
	}
	if reg == nil {
		return m, nil
	}
	var err error
	m.Connected = promreg.Register(reg, m.Connected, &err)
	m.Reconnects = promreg.Register(reg, m.Reconnects, &err)
	m.Updates = promreg.Register(reg, m.Updates, &err)
	m.LastUpdate = promreg.Register(reg, m.LastUpdate, &err)
	m.Errors = promreg.Register(reg, m.Errors, &err)
	m.Dropped = promreg.Register(reg, m.Dropped, &err)
	m.Syncs = promreg.Register(reg, m.Syncs, &err)
	m.Published = promreg.Register(reg, m.Published, &err)
	m.ResyncDeletes = promreg.Register(reg, m.ResyncDeletes, &err)
	m.QueueMemory = promreg.Register(reg, m.QueueMemory, &err)
	return m, err
}

// forget drops a removed target's series, so a target no longer
// configured is not reported (as disconnected, say) for ever; but for its
// dropped{reason="shutdown"} when keepShutdown (its drain lost records).
func (m *Metrics) forget(target string, keepShutdown bool) {
	l := prometheus.Labels{"target": target}
	for _, v := range []interface{ DeletePartialMatch(prometheus.Labels) int }{
		m.Connected, m.Reconnects, m.Updates, m.LastUpdate, m.Errors, m.Syncs, m.Published, m.ResyncDeletes,
	} {
		v.DeletePartialMatch(l)
	}
	if !keepShutdown {
		m.Dropped.DeletePartialMatch(l)
		return
	}
	for _, reason := range []string{DropQueueFull, DropMemoryFull, DropPublishError, DropEncode, DropNoValue} {
		m.Dropped.DeleteLabelValues(target, reason)
	}
}
