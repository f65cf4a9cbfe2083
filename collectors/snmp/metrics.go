package snmp

import (
	"github.com/prometheus/client_golang/prometheus"

	"github.com/weirnet/weir/internal/promreg"
)

// Metrics are the poller's self-metrics, per target.
type Metrics struct {
	Duration    *prometheus.HistogramVec
	Polls       *prometheus.CounterVec
	Varbinds    *prometheus.CounterVec
	LastSuccess *prometheus.GaugeVec
	Skipped     *prometheus.CounterVec
	NotOwned    prometheus.Counter
	// WrongType counts values a profile's column could not take (a
	// counter answered with an OCTET STRING or a negative number): left
	// out of the record.
	WrongType *prometheus.CounterVec
	// Retries counts requests sent again after no answer within the
	// timeout: a lossy path, which a poll that succeeds hides.
	Retries *prometheus.CounterVec
	// InvalidValues counts values left out of records because they are
	// past their SNMP type's range (InvalidOutOfRange), by column.
	InvalidValues *prometheus.CounterVec
	// PartialWalks counts column walks an agent ended early, by reason
	// (PartialEndOfMibView): the rows published are fewer than it has.
	PartialWalks *prometheus.CounterVec
	// DroppedDatagrams counts datagrams read from an agent's socket and
	// dropped before gosnmp saw them, by reason (DropMalformed, ...).
	DroppedDatagrams *prometheus.CounterVec
}

// InvalidOutOfRange is the reason of weir_snmp_values_invalid_total: an
// INTEGER, Counter32 or Gauge32 the agent encoded in more octets than 32
// bits need, which gosnmp decodes into a value its type cannot hold.
const InvalidOutOfRange = "out_of_range"

// Reasons of a walk the agent ended, saying its MIB view ends there,
// while it had objects after it (another column's, or more in the same
// answer): the "reason" label of weir_snmp_partial_walks_total.
const (
	PartialEndOfMibView = "end_of_mib_view" // the endOfMibView exception
	PartialNoSuchName   = "no_such_name"    // error-status noSuchName, SNMPv1's end of the view
	// An answer without varbinds and without an error: an agent that
	// could not fit one in its message size (RFC 3416 section 4.2.3 lets
	// it leave varbinds out), or that ends its view so.
	PartialEmptyAnswer = "empty_answer"
	// An OID before the one asked, outside the column: an agent that
	// wraps to the start of its MIB where it ends.
	PartialWrapped = "wrapped"
	// The noSuchObject or noSuchInstance exception in the answer to a
	// GETNEXT or GETBULK, where RFC 3416 has the next object or
	// endOfMibView (snmpd answers so at a table's and its view's end).
	PartialNoSuchObject = "no_such_object"
)

// Poll results, the "result" label of weir_snmp_polls_total.
const (
	ResultOK           = "ok"
	ResultTimeout      = "timeout"
	ResultAuth         = "auth_error" // v3: unknown user, wrong password, engine problems
	ResultError        = "error"      // anything else the agent or network did
	ResultPublishError = "publish_error"
)

// NewMetrics registers the poller's metrics on reg (nil: not registered).
// Registering twice on one registry reuses the first set, so a reload can
// build a new poller.
func NewMetrics(reg prometheus.Registerer) (*Metrics, error) {
	m := &Metrics{
		Duration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "weir_snmp_poll_duration_seconds",
			Help:    "Duration of SNMP polls, successful or not.",
			Buckets: []float64{.005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 30, 60},
		}, []string{"target"}),
		Polls: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "weir_snmp_polls_total",
			Help: "SNMP polls by result: ok, timeout, auth_error, error, publish_error.",
		}, []string{"target", "result"}),
		Varbinds: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "weir_snmp_varbinds_total",
			Help: "Variable bindings received from SNMP polls.",
		}, []string{"target"}),
		LastSuccess: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "weir_snmp_last_success_timestamp_seconds",
			Help: "Unix time of the last successful poll.",
		}, []string{"target"}),
		Skipped: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "weir_snmp_polls_skipped_total",
			Help: "Scheduled polls skipped because the previous one overran its interval or no concurrency slot was free in time.",
		}, []string{"target"}),
		WrongType: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "weir_snmp_values_wrong_type_total",
			Help: "Values left out of records because the agent answered a type the profile's column cannot take (a counter or gauge that is not a number, a negative counter).",
		}, []string{"target", "column"}),
		Retries: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "weir_snmp_retries_total",
			Help: "SNMP requests sent again after no valid answer within the target's timeout: lost, or (SNMPv3) not authentic.",
		}, []string{"target"}),
		InvalidValues: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "weir_snmp_values_invalid_total",
			Help: "Values left out of records because they are invalid for their SNMP type, by column and reason (out_of_range: an INTEGER, Counter32 or Gauge32 past its 32 bits).",
		}, []string{"target", "column", "reason"}),
		PartialWalks: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "weir_snmp_partial_walks_total",
			Help: "Table column walks the agent ended early, by reason (end_of_mib_view, no_such_name, empty_answer, wrapped, no_such_object: the agent ended the walk, yet answered with objects after that point): the table published is cut short.",
		}, []string{"target", "reason"}),
		DroppedDatagrams: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "weir_snmp_datagrams_dropped_total",
			Help: "Datagrams read from an agent's socket that were not taken as an answer, by reason (malformed: not an SNMP message; wrong_version; unknown_request_id, unknown_msg_id: no try of the request under way carried that ID, 0 included; late: an answer waiting in the socket when the session's next poll began).",
		}, []string{"target", "reason"}),
		NotOwned: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "weir_snmp_polls_not_owned_total",
			Help: "Scheduled polls left to the weir process that owns the target when several share the targets (cluster.shard_targets).",
		}),
	}
	if reg == nil {
		return m, nil
	}
	var err error
	m.Duration = promreg.Register(reg, m.Duration, &err)
	m.Polls = promreg.Register(reg, m.Polls, &err)
	m.Varbinds = promreg.Register(reg, m.Varbinds, &err)
	m.LastSuccess = promreg.Register(reg, m.LastSuccess, &err)
	m.Skipped = promreg.Register(reg, m.Skipped, &err)
	m.NotOwned = promreg.Register(reg, m.NotOwned, &err)
	m.WrongType = promreg.Register(reg, m.WrongType, &err)
	m.Retries = promreg.Register(reg, m.Retries, &err)
	m.PartialWalks = promreg.Register(reg, m.PartialWalks, &err)
	m.InvalidValues = promreg.Register(reg, m.InvalidValues, &err)
	m.DroppedDatagrams = promreg.Register(reg, m.DroppedDatagrams, &err)
	return m, err
}

// forget drops a removed target's series, so a target no longer
// configured is not reported (its last success growing old) for ever.
func (m *Metrics) forget(target string) {
	l := prometheus.Labels{"target": target}
	for _, v := range []interface{ DeletePartialMatch(prometheus.Labels) int }{
		m.Duration, m.Polls, m.Varbinds, m.LastSuccess, m.Skipped, m.WrongType, m.Retries, m.PartialWalks, m.InvalidValues,
		m.DroppedDatagrams,
	} {
		v.DeletePartialMatch(l)
	}
}
