package enrich

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"
	"unicode/utf8"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/weirnet/weir/broker"
	"github.com/weirnet/weir/internal/throttle"
	"github.com/weirnet/weir/telemetry"
)

// Group is the consumer group enrichment workers share.
const Group = "enrich"

// Topics names what a worker reads and writes.
type Topics struct {
	RawSyslog, EnrichedSyslog, Events string
}

// DefaultTopics are the design's topic names.
func DefaultTopics() Topics {
	return Topics{RawSyslog: telemetry.TopicRawSyslog, EnrichedSyslog: telemetry.TopicEnrichedSyslog, Events: telemetry.TopicEvents}
}

// Worker is one member of the "enrich" group: it reads raw.syslog, writes
// enriched.syslog and events, then commits. Several workers (in one or
// several processes) share the partitions.
//
// Delivery is exactly once. The output topics have the input's partition
// count and what comes from input partition P goes to output partition P,
// so each output partition has one writer: the owner of P. Every output
// record carries the offset of its input record (header src_offset). When
// a worker takes over P it reads the last src_offset of each output
// partition P and, reprocessing from the committed offset, skips what an
// output already has: a crash between publishing and committing neither
// loses nor duplicates derived records. A device's records stay in order,
// since a device's input records are all in one partition. If an output
// topic exists with another partition count, the worker falls back to at
// least once, keyed by device, and says so in the log.
type Worker struct {
	gate     *gateTicket // its passage through the detector's warm gate, made at its first Run
	b        broker.Broker
	inv      *Inventory
	cls      *Classifier
	topics   Topics
	logger   *slog.Logger
	m        *workerMetrics
	memberID string
	session  time.Duration
	det      *detector
	targets  *SNMPTargets // the config's SNMP targets, naming devices by address
	gnmi     *GNMITargets // the config's gNMI targets' addresses, naming devices by address and raw.gnmi targets by theirs
	input    string       // metrics workers: the raw topic they read
	// gnmiInput: a metrics worker's input is the gNMI collector's (see
	// WithGNMIInput).
	gnmiInput bool
	// How far back to read a partition the worker takes (see warmer);
	// DefaultWarmup unless set.
	warmup    time.Duration
	warmupSet bool
	warmer    *warmer
	warming   bool // decoding a warm-up record: nothing is counted or logged
	trying    bool // in Try: a record with no device is taken (weir classify of a line without a hostname)
	// clears is what the events topic says of flapping objects while
	// some of the warm-up's rebuilt ones have not settled (see
	// unpublishedClears); nil otherwise.
	clears *clearsScan
	// maxClears bounds the objects clears keeps (maxDetectorObjects;
	// tests lower it).
	maxClears int

	evEnc eventRecords

	// scratch is what enrichSyslog reuses from record to record.
	scratch syslogScratch
	ahead   decodeAhead // a poll's records decoded on a goroutine of their own
	// warmBatch are the records of a warm-up's fetch, to be warmed from
	// with warmEnd (see queueWarm), decoded by warmAhead on two
	// goroutines (created at the first warm-up of a fetch of more than
	// one unit).
	warmBatch []broker.Record
	warmEnd   time.Time
	warmAhead *decodeAhead
	arena     arena // the enriched records' keys and values

	// The tags of devices not in the inventory, shared by their records.
	unknownTags     map[string]string
	unknownTagsJSON []byte
	// unknownEventTagsJSON is unknownTags as an event writes them.
	unknownEventTagsJSON []byte

	out *outputs
	// decodeLog throttles the warning for undecodable records: one per
	// record from a wrong producer would flood the log.
	decodeLog throttle.Throttle
}

// WorkerOption configures a Worker.
type WorkerOption func(*Worker)

// WithWorkerLogger sets the logger.
func WithWorkerLogger(l *slog.Logger) WorkerOption { return func(w *Worker) { w.logger = l } }

// WithWorkerMetrics shares one set of metrics between workers.
func WithWorkerMetrics(m *WorkerMetrics) WorkerOption { return func(w *Worker) { w.m = m.m } }

// WithTopics overrides the topic names.
func WithTopics(t Topics) WorkerOption { return func(w *Worker) { w.topics = t } }

// WithEventRules sets the de-duplication window (the same event from
// several paths within it is published once) and flap detection: more than
// threshold state changes of one interface or BGP session within window
// raise a flapping event, and a cleared one once it has been stable for a
// window. A threshold of 0 turns flap detection off.
func WithEventRules(dedup time.Duration, threshold int, window time.Duration) WorkerOption {
	return func(w *Worker) { w.det = newDetector(dedup, threshold, window) }
}

// WithSharedEventRules makes the worker use rules shared with other
// workers (see EventRules).
func WithSharedEventRules(r *EventRules) WorkerOption {
	return func(w *Worker) { w.det = r.d }
}

// WithSNMPTargets gives the SNMP targets of the config, shared by the
// workers of a process: a trap, or a syslog line without a hostname, from
// an address the inventory does not name but a target polls takes the
// target's name (see SNMPTargets).
func WithSNMPTargets(t *SNMPTargets) WorkerOption { return func(w *Worker) { w.targets = t } }

// WithGNMITargets gives the gNMI targets of the config, shared by the
// workers of a process: a metrics worker reading raw.gnmi looks a record
// of a target the inventory does not list by name up by the address the
// target is dialed at, as an SNMP target's polls are by their agent's; a
// syslog or trap worker names a trap, or a syslog line without a
// hostname, from an address the inventory does not name, that no SNMP
// target polls but one gNMI target is dialed at, after that target (see
// GNMITargets), as WithSNMPTargets does after an SNMP target.
func WithGNMITargets(t *GNMITargets) WorkerOption { return func(w *Worker) { w.gnmi = t } }

// WithInputTopic sets the raw topic a worker reads, where its collector
// writes: for a syslog worker Topics.RawSyslog, for a trap worker
// raw.traps, for a metrics worker raw.snmp (the defaults), or raw.gnmi.
func WithInputTopic(topic string) WorkerOption { return func(w *Worker) { w.input = topic } }

// WithGNMIInput tells a metrics worker that its input (WithInputTopic) is
// the gNMI collector's, as raw.gnmi is: its warm-up then reads back past
// its window for the states a target sends only when they change (see
// warmer.quietBack).
func WithGNMIInput() WorkerOption { return func(w *Worker) { w.gnmiInput = true } }

// WithMemberID names the worker in group descriptions (and, on a Kafka
// cluster, in its transactional id: unique within the process).
func WithMemberID(id string) WorkerOption { return func(w *Worker) { w.memberID = id } }

// WithSessionTimeout sets how long the group waits for a worker that
// stopped heartbeating (a killed process) before giving its partitions to
// the others (see broker.WithSessionTimeout); zero keeps the backend's
// default.
func WithSessionTimeout(d time.Duration) WorkerOption { return func(w *Worker) { w.session = d } }

// NewWorker builds a worker over b with an inventory and a classifier that
// workers may share.
func NewWorker(b broker.Broker, inv *Inventory, cls *Classifier, opts ...WorkerOption) *Worker {
	w := &Worker{b: b, inv: inv, cls: cls, topics: DefaultTopics(), logger: slog.New(slog.DiscardHandler),
		det: newDetector(DefaultDedupWindow, DefaultFlapThreshold, DefaultFlapWindow)}
	for _, o := range opts {
		o(w)
	}
	if w.input != "" {
		w.topics.RawSyslog = w.input // for a syslog worker; the others keep w.input
	}
	if w.m == nil {
		w.m = NewWorkerMetrics(nil).m
	}
	w.det.countUntracked(w.m.untracked)
	w.m.untrackedKind.WithLabelValues("clears") // at 0 from the start, as the metrics worker's kinds
	if w.targets != nil {
		w.det.targets.Store(w.targets) // the workers sharing the detector share the targets
	}
	if inv != nil {
		w.det.inv.Store(inv) // and the inventory, whose renames it follows
	}
	if w.gnmi != nil {
		w.det.gnmi.Store(w.gnmi)
	}
	w.unknownTags = map[string]string{"unknown": "true"}
	w.unknownTagsJSON = telemetry.AppendStringMapField(nil, "tags", w.unknownTags)
	w.unknownEventTagsJSON = telemetry.AppendMarshalTagsField(nil, w.unknownTags)
	if !w.warmupSet {
		w.warmup = DefaultWarmup
	}
	if cls != nil { // a syslog worker; the trap and metrics workers count their own topics
		w.m.countDecodeErrorsFrom(w.topics.RawSyslog)
		w.det.logsFrom(w.topics.RawSyslog)
	}
	return w
}

// eventWarmup is how far back the syslog and trap workers, whose records
// matter to the event detector only, read a partition they take: as long
// as the detector holds states (the flap window, or the de-duplication
// window or twice the longest poll interval, if longer), so that an object
// flapping before a restart is still known to flap and its cleared event
// follows; and at least rebootLogDelay, so that a restart's log line after
// the start is judged against its trap's boot time (rebootHold). Zero when
// warm-up is off.
func eventWarmup(warmup time.Duration, det *detector) time.Duration {
	if warmup <= 0 {
		return 0
	}
	return det.rebootHold()
}

// checkVersion refuses a raw record whose schema version is not
// telemetry.Version: any Kafka client may write to a raw topic, and a JSON
// object that is not a weir record ({"hello":"world"}, or a newer
// schema) decodes to zero values, which would be enriched as a log of
// severity emergency from no device.
func checkVersion(v int) error {
	if v != telemetry.Version {
		return fmt.Errorf("schema version %d (\"v\"), want %d: %w", v, telemetry.Version, errVersion)
	}
	return nil
}

// errVersion is the error of a record of another schema version.
var errVersion = errors.New("not a weir record of this version")

// incomplete is the error of a record that lacks what enrichment keys it
// by: a device (nor anything to name it by), a metric's measurement.
type incomplete string

func (e incomplete) Error() string { return string(e) }

// decodeReasons are the reasons weir_enrich_decode_errors_total counts
// input records skipped by.
var decodeReasons = [...]string{"malformed", "version", "incomplete"}

// decodeFailed counts a record of topic skipped for err, by its reason.
func (m *workerMetrics) decodeFailed(topic string, err error) {
	reason := "malformed"
	var inc incomplete
	switch {
	case errors.Is(err, errVersion):
		reason = "version"
	case errors.As(err, &inc):
		reason = "incomplete"
	}
	m.decodeErrors.WithLabelValues(topic, reason).Inc()
}

// invalidUptime counts a record of r whose uptime was no sysUpTime (-1,
// 1.5, "x": a producer other than weir's collectors), taken without one
// rather than skipped whole for a value only reset detection reads, and
// warns of it (at most as often as th lets), naming the record: a kind
// ("metric", "trap") and what attrs tell.
func (m *workerMetrics) invalidUptime(th *throttle.Throttle, logger *slog.Logger, r *broker.Record, kind string, attrs ...slog.Attr) {
	m.invalidUptimes.WithLabelValues(r.Topic).Inc()
	n, due := th.Due(time.Now())
	if !due {
		return
	}
	at := []slog.Attr{slog.String("topic", r.Topic), slog.Int("partition", int(r.Partition)), slog.Int64("offset", r.Offset)}
	logger.LogAttrs(context.Background(), slog.LevelWarn, "enrich: a "+kind+"'s uptime is no sysUpTime (a whole number from 0 to 4294967295); taken without one",
		append(append(at, attrs...), slog.Int("times", n))...)
}

// countDecodeErrorsFrom shows topic's decode errors at 0 from the start,
// so an alert on their increase sees the first.
func (m *workerMetrics) countDecodeErrorsFrom(topic string) {
	for _, reason := range decodeReasons {
		m.decodeErrors.WithLabelValues(topic, reason)
	}
}

// WorkerMetrics are the enrichment self-metrics.
type WorkerMetrics struct{ m *workerMetrics }

type workerMetrics struct {
	in, out *prometheus.CounterVec
	dropped *prometheus.CounterVec // topic, reason
	// invalidCounters: per input topic, metrics whose counters named a
	// field holding no counter value (published without its rate).
	invalidCounters *prometheus.CounterVec
	// invalidUptimes: per input topic, metrics and traps whose uptime
	// was no sysUpTime (taken without one).
	invalidUptimes *prometheus.CounterVec
	publishErrors  *prometheus.CounterVec // topic
	events         *prometheus.CounterVec
	unknown        prometheus.Counter
	untracked      prometheus.Counter
	// untrackedKind: per kind (untrackedKinds, and "clears"), rows and
	// objects enrichment did not keep past its bounds.
	untrackedKind *prometheus.CounterVec
	decodeErrors  *prometheus.CounterVec // topic, reason (decodeReasons)
	batchSeconds  prometheus.Histogram
}

// NewWorkerMetrics registers the metrics on reg (nil: not registered).
func NewWorkerMetrics(reg prometheus.Registerer) *WorkerMetrics {
	m := &workerMetrics{
		in: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "weir_enrich_records_in_total",
			Help: "Records enrichment consumed, per topic."}, []string{"topic"}),
		out: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "weir_enrich_records_out_total",
			Help: "Records enrichment published, per topic."}, []string{"topic"}),
		dropped: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "weir_enrich_dropped_total",
			Help: "Output records left out, per topic and reason (too_large: the broker refuses its size; already_published: on the embedded log, the output partition has it from before a crash, a restart or a hand-over; unencodable: an enriched metric or event JSON cannot hold)."}, []string{"topic", "reason"}),
		invalidCounters: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "weir_enrich_invalid_counters_total",
			Help: "Metrics, per input topic, whose counters named a field holding no counter value (a string, a negative number, a fraction): published without that field's rate, the field no longer listed as a counter."}, []string{"topic"}),
		invalidUptimes: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "weir_enrich_invalid_uptimes_total",
			Help: "Metrics and traps, per input topic, whose uptime was no sysUpTime (a whole number from 0 to 2^32-1: -1, 1.5, a string, a boolean): taken without an uptime, as unknown."}, []string{"topic"}),
		publishErrors: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "weir_enrich_publish_errors_total",
			Help: "Failed attempts to publish output records (retried: a full disk, a cluster away), per topic."}, []string{"topic"}),
		events: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "weir_enrich_events_total",
			Help: "Events raised, per type."}, []string{"type"}),
		unknown: prometheus.NewCounter(prometheus.CounterOpts{Name: "weir_enrich_unknown_devices_total",
			Help: "Records from devices not in the inventory (tagged unknown)."}),
		untracked: prometheus.NewCounter(prometheus.CounterOpts{Name: "weir_enrich_events_untracked_total",
			Help: "Events passed on without de-duplication or flap detection: the detector kept state for a million objects already."}),
		untrackedKind: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "weir_enrich_untracked_total",
			Help: "Records whose new row or object enrichment did not keep: it kept a million of the kind already (rates: no rates for the row; states, uptimes: no events from its first state; sysnames: not matched by sysName; clears: a flapping object read back from the events topic, whose cleared event may repeat)."}, []string{"kind"}),
		decodeErrors: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "weir_enrich_decode_errors_total",
			Help: "Input records skipped (and logged), per topic and reason: malformed (not JSON, or not of its record's shape), version (another schema version), incomplete (no device nor anything to name it by, a metric with no measurement, or a trap with neither trap_oid nor trap_name)."}, []string{"topic", "reason"}),
		batchSeconds: prometheus.NewHistogram(prometheus.HistogramOpts{Name: "weir_enrich_batch_seconds",
			Help: "Time to enrich, publish and commit one batch.", Buckets: prometheus.ExponentialBuckets(0.0001, 4, 10)}),
	}
	if reg != nil {
		reg.MustRegister(m.in, m.out, m.dropped, m.invalidCounters, m.invalidUptimes, m.publishErrors, m.events, m.unknown, m.untracked, m.untrackedKind, m.decodeErrors, m.batchSeconds)
	}
	return &WorkerMetrics{m: m}
}

// Run consumes until ctx ends.
func (w *Worker) Run(ctx context.Context) error {
	gate := w.det.gate.ticket(&w.gate, w.logger) // closed on any return: the others do not wait for this one
	defer gate.close()
	m, err := join(ctx, w.b, []string{w.topics.RawSyslog}, consumerOptions(w.memberID, w.session, syslogPollBytes), w.logger)
	if err != nil || m == nil {
		return err
	}
	defer m.close()
	if !gate.awaitJoins(ctx) {
		return nil
	}
	gate.checkInput(ctx, w.b, w.topics.RawSyslog)
	gate.watch(func() broker.Consumer { return m.c })
	w.out = newOutputs(w.b, w.topics.RawSyslog, w.logger, w.m, m.txn != nil)
	w.out.useArenas(&w.arena, &w.evEnc.arena)
	w.out.origins, w.out.events = w.det, w.topics.Events
	if !w.out.alignRetrying(ctx, w.topics.EnrichedSyslog, w.topics.Events) {
		return nil // ctx ended
	}
	defer w.out.startPublisher(ctx)()
	w.warmer = newWarmer(w.b, eventWarmup(w.warmup, w.det), w.logger)
	w.warmer.ended = w.det.warmupEnder(w)
	w.warmer.adopt = w.det.adopter(w.b, w.topics.Events, w.logger)
	w.warmer.uncommitted = w.det.uncommittedAdopter(w.b, w.out, w.topics.Events, w.logger)
	w.warmer.fetched = w.warmFetched
	var enriched, events []outRecord
	var polls pollHealth // failing polls, across polls
	lastSettle := time.Now()
	for {
		// Poll at most a second at a time, so flapping objects that have
		// settled are reported even when no records arrive.
		recs, ok := poll(ctx, m.c, gate.pollWait(time.Second), w.logger, &polls)
		if !ok {
			return nil
		}
		start := time.Now()
		w.det.reportClock(w, recs, start)
		assigned := m.c.Assigned()
		w.out.track(ctx, assigned, recs)
		w.warmer.retain(assigned)
		w.warmer.before(ctx, recs, w.queueWarm)
		w.warmer.idleRound(ctx, m.c, assigned, len(recs) > 0, !gate.through, w.queueWarm)
		if ctx.Err() != nil {
			return nil // see warmer.before: a warm-up may have been cut short
		}
		if !gate.pass(ctx, len(assigned) > 0 || len(recs) > 0, nil) {
			if ctx.Err() != nil {
				return nil
			}
			continue
		}
		enriched, events = enriched[:0], events[:0]
		var ahead *decodeAhead
		if w.ahead.start(recs, w.decodeSyslogInto) {
			ahead = &w.ahead
		}
		eachChunk(recs, func(chunk []broker.Record) {
			enriched, events = w.enrichSyslogRecords(chunk, ahead, enriched, events)
			w.out.flush(outBatch{w.topics.EnrichedSyslog, enriched}, outBatch{w.topics.Events, events})
		})
		if now := time.Now(); now.Sub(lastSettle) >= time.Second {
			for _, out := range w.settled(ctx, now) {
				events = w.evEnc.append(w.m, events, w.topics.Events, out, -1, -1)
			}
			lastSettle = now
		}
		// A carry (cleared events of an aborted transaction) goes out
		// without waiting for a record: a quiet partition may get none.
		if len(recs) == 0 && len(events) == 0 && len(w.out.carry) == 0 {
			continue
		}
		w.m.in.WithLabelValues(w.topics.RawSyslog).Add(float64(len(recs)))
		// A rename said with the batch's events is kept as said before
		// their commit (see saveRenames).
		w.det.saveRenames()
		if !w.out.deliver(ctx, m, outBatch{w.topics.EnrichedSyslog, enriched}, outBatch{w.topics.Events, events}) {
			return nil // ctx ended
		}
		w.out.recycle(&w.arena, &w.evEnc.arena)
		w.m.batchSeconds.Observe(time.Since(start).Seconds())
	}
}

// settled returns the flapping cleared events due at now (see
// detector.settleClears), with the tags the inventory gives their devices
// now (see retagCleared).
func (w *Worker) settled(ctx context.Context, now time.Time) []telemetry.Event {
	cleared, rebuilt := w.det.settleClears(now)
	live := len(cleared) // those after, of flappings a warm-up rebuilt (see sayRenamedBefore)
	if len(rebuilt) > 0 {
		cleared = append(cleared, w.unpublishedClears(ctx, rebuilt)...)
	} else if w.clears != nil && !w.det.rebuiltFlapping() {
		w.clears = nil // every rebuilt one settled
	}
	for i := range cleared {
		w.retagCleared(&cleared[i])
	}
	cleared = w.det.sayRenamedBefore(cleared, live)
	w.det.saveRenames()
	return cleared
}

// retagCleared gives a cleared event, which the detector made from the
// object's last change, the tags the inventory gives its device now: no
// record causes it, and like any event enriched after a reload it carries
// the new ones, not those of a change before the reload. They win over the
// change's tags; the change's others stay (an SNMP row's ifName, and a tag
// the reload removed from the device: which were the inventory's is not
// kept). A device named by its address (a hostless line's, inside a cidr
// range or of an entry without a name) takes the tags of the entry that
// finds the address now. A device the inventory does not find now keeps
// what it had.
func (w *Worker) retagCleared(ev *telemetry.Event) {
	d := w.inv.Lookup(ev.Device, "")
	if d == nil {
		return
	}
	tags := make(map[string]string, len(ev.Tags)+len(d.tags))
	for k, v := range ev.Tags {
		tags[k] = v
	}
	delete(tags, "unknown")
	for k, v := range d.tags {
		tags[k] = v
	}
	ev.Tags, ev.TagsJSON = tags, nil
}

// enrichSyslogBatch enriches a batch of raw.syslog records, appending
// the enriched records and the events they raise.
func (w *Worker) enrichSyslogBatch(recs []broker.Record, enriched, events []outRecord) ([]outRecord, []outRecord) {
	return w.enrichSyslogRecords(recs, nil, enriched, events)
}

// enrichSyslogRecords is enrichSyslogBatch taking each record's decoding
// from ahead, in turn, when ahead is not nil (see decodeAhead).
func (w *Worker) enrichSyslogRecords(recs []broker.Record, ahead *decodeAhead, enriched, events []outRecord) ([]outRecord, []outRecord) {
	for i := range recs {
		r := &recs[i]
		var d *decodedSyslog
		if ahead != nil {
			d = ahead.next() // for every record, so the turns stay in step
		}
		var replayed bool
		if enriched, events, replayed = w.out.replay.get(r, enriched, events); replayed {
			continue
		}
		if d == nil {
			d = &w.scratch.one
			w.decodeSyslogInto(r, d)
		}
		if !w.noteDecoded(r, d) {
			continue
		}
		w.det.vendors.note(d.log.Device, d.info)
		e, ev := w.encodeSyslog(r, d)
		m0, e0 := len(enriched), len(events)
		enriched = append(enriched, outRecord{e, r.Partition, r.Offset})
		if ev.Type != "" {
			at := detectAt(r, ev.Time)
			w.scratch.events = w.det.observeLinkInto(ev, adjacencyOf(d.info), at, w.det.beginRecord(ev.Cause, at), w.scratch.events[:0])
			for _, out := range w.scratch.events {
				events = w.evEnc.append(w.m, events, w.topics.Events, out, r.Partition, r.Offset)
			}
		}
		w.out.replay.put(r, enriched[m0:], events[e0:])
	}
	return enriched, events
}

// eventRecords encodes events as records for the events topic, reusing
// its scratch space; the zero value is ready.
type eventRecords struct {
	keys  []string
	arena arena // the records' keys and values
}

// append encodes ev onto recs for topic; part and src locate the input
// record that caused it (-1 for cleared events, which time causes). An
// event that cannot be encoded (a time outside years 0 to 9999, which JSON
// cannot hold) is left out and counted.
func (e *eventRecords) append(m *workerMetrics, recs []outRecord, topic string, ev telemetry.Event, part int32, src int64) []outRecord {
	val, keys, err := ev.AppendJSON(e.arena.start(), e.keys)
	e.keys = keys
	if err != nil {
		m.dropped.WithLabelValues(topic, "unencodable").Inc()
		return recs
	}
	val = e.arena.keep(val)
	m.events.WithLabelValues(ev.Type).Inc()
	key := e.arena.keep(append(e.arena.start(), ev.Device...))
	return append(recs, outRecord{broker.Record{Key: key, Value: val, Headers: eventHeaders}, part, src})
}

// logHeaders and eventHeaders are every enriched log's and event's
// headers, shared: outputs copy a record's headers before adding to them.
var (
	logHeaders   = []broker.Header{{Key: telemetry.HeaderSource, Value: sourceEnr}, {Key: telemetry.HeaderSchema, Value: schemaLog}}
	eventHeaders = []broker.Header{{Key: telemetry.HeaderSource, Value: sourceEnr}, {Key: telemetry.HeaderSchema, Value: schemaEvent}}
)

// syslogScratch is what the syslog worker reuses from one record to the
// next: nothing in it outlives the record. The strings of a decoded record
// point into the record's bytes (decoded in place), which the broker reuses
// after the batch: outputs are copied out, and the detector copies what it
// keeps.
type syslogScratch struct {
	one    decodedSyslog // the record decoded where no decodeAhead did
	events []telemetry.Event
}

var (
	schemaLog   = []byte(telemetry.SchemaLog)
	schemaEvent = []byte(telemetry.SchemaEvent)
	sourceEnr   = []byte("enrich")
)

// enrichSyslog turns one raw.syslog record into its enriched.syslog record
// and, when the message reports a state change, an event (else an event
// with no Type), with the OSPF adjacency the line names (see adjacencyOf).
func (w *Worker) enrichSyslog(r *broker.Record) (broker.Record, telemetry.Event, adjacency, bool) {
	d, ok := w.decodeSyslog(r)
	if !ok {
		return broker.Record{}, telemetry.Event{}, adjacency{}, false
	}
	out, ev := w.encodeSyslog(r, d)
	return out, ev, adjacencyOf(d.info), true
}

// encodeSyslog is the enriched record and the event (Type "": none) of
// r, which decodeSyslog decoded into d.
func (w *Worker) encodeSyslog(r *broker.Record, d *decodedSyslog) (broker.Record, telemetry.Event) {
	e := &d.log
	// The tags go in as encoded once per device, last, where AppendJSON
	// would put them.
	// The raw record, its tags and room for the enrichment.
	val := e.AppendJSONFrom(w.arena.startFor(len(r.Value)+len(d.tagsJSON)+512), r.Value, d.layout)
	val = w.arena.keep(append(append(val[:len(val)-1], d.tagsJSON...), '}'))
	key := w.arena.keep(append(w.arena.start(), e.Device...))
	out := broker.Record{Key: key, Value: val, Timestamp: r.Timestamp, Headers: logHeaders}
	return out, w.syslogEvent(r, d)
}

// maxKeptUnescaped bounds the room for unescaped strings a decodedSyslog
// keeps from record to record: the corpus's lines need a few hundred
// bytes, and a decodeAhead has up to 1,024 slots.
const maxKeptUnescaped = 4 << 10

// decodedSyslog is a raw.syslog record decoded and classified, with its
// device's inventory tags: what encodeSyslog and syslogEvent need.
type decodedSyslog struct {
	log  telemetry.EnrichedLog
	sev  int       // what log.MnemonicSeverity points to
	time time.Time // what log.Time points to
	// unescaped holds the log's strings that had escapes, kept for the
	// next record (telemetry.DecodeLogLayoutShared) up to
	// maxKeptUnescaped.
	unescaped []byte
	fields    map[string]string // what log.Fields is, when the message has any; kept for the next record
	layout    telemetry.LogLayout
	info      SyslogInfo
	// The device's tags, and encoded for the record and for events: the
	// record's are appended to its encoding, not put in the log's Tags.
	tags                    map[string]string
	tagsJSON, eventTagsJSON []byte
	err                     error // why the record was not decoded; nil when it was
	unknown                 bool  // the inventory does not know the device
}

// decodeSyslog decodes and classifies r into the worker's scratch, with
// the device's inventory tags, counting and logging what noteDecoded
// does.
func (w *Worker) decodeSyslog(r *broker.Record) (*decodedSyslog, bool) {
	d := &w.scratch.one
	w.decodeSyslogInto(r, d)
	return d, w.noteDecoded(r, d)
}

// noteDecoded counts (and logs, throttled) what decodeSyslogInto found
// wrong with r or its device, unless warming, and says whether r was
// decoded. The worker's goroutine calls it in the records' order, while
// decodeSyslogInto may run ahead on another (see decodeAhead).
func (w *Worker) noteDecoded(r *broker.Record, d *decodedSyslog) bool {
	if w.warming {
		return d.err == nil
	}
	if d.err != nil {
		w.m.decodeFailed(r.Topic, d.err)
		if n, due := w.decodeLog.Due(time.Now()); due {
			w.logger.Warn("enrich: skipping undecodable record", slog.String("topic", r.Topic),
				slog.Int("partition", int(r.Partition)), slog.Int64("offset", r.Offset), slog.Any("error", d.err), slog.Int("times", n))
		}
		return false
	}
	if d.unknown {
		w.m.unknown.Inc()
	}
	return true
}

// decodeSyslogInto decodes and classifies r into d, with the device's
// inventory tags. It changes nothing but d, and reads only what is safe to
// read beside the worker's goroutine (the inventory, the classifier's rules
// and the targets, each swapped whole by a reload), so a decodeAhead can
// run it on a goroutine of its own.
func (w *Worker) decodeSyslogInto(r *broker.Record, d *decodedSyslog) {
	d.empty()
	e := &d.log
	// In place: nothing decoded outlives the record, but what the event
	// detector keeps, which it copies.
	lay, err := telemetry.DecodeLogLayoutShared(r.Value, &e.Log, &d.time, &d.unescaped)
	if err == nil {
		err = checkVersion(e.V) // JSON, but not a weir syslog record
	}
	if err == nil && e.Device == "" {
		// A Kafka client's record: named as weir's receiver names a
		// line. With no hostname or sender either it would give events
		// of device "", keyed "", as a metric with no device would.
		if e.Device = recordDevice(e.Hostname, e.SourceAddr); e.Device == "" && !w.trying {
			err = incomplete("no device, hostname or source_addr")
		}
	}
	if err != nil {
		d.err = err
		return
	}
	if e.ReceivedAt.IsZero() {
		// A Kafka client's record with no received_at: taken at its
		// record's time, which the log sets when the producer does not.
		// It and its event were published at year 1. Its bytes hold
		// no received_at, so they are encoded again, not copied.
		e.ReceivedAt = r.Timestamp
		lay.Copyable = false
	}
	d.layout = lay
	if d.fields == nil {
		d.fields = make(map[string]string, 8)
	}
	info := w.cls.ClassifyInto(&e.Log, d.fields)
	d.info = info
	e.Vendor, e.Fields, e.Event = info.Vendor, info.Fields, info.Event
	e.MnemonicFacility, e.Mnemonic = info.Facility, info.Mnemonic
	if info.MnemonicSeverity >= 0 {
		d.sev = info.MnemonicSeverity
		e.MnemonicSeverity = &d.sev
	}
	if e.Severity >= 0 && e.Severity < len(telemetry.SeverityNames) {
		e.SeverityName = telemetry.SeverityNames[e.Severity]
	}
	if e.Facility >= 0 && e.Facility < len(FacilityNames) {
		e.FacilityName = FacilityNames[e.Facility]
	}
	d.tags, d.tagsJSON, d.eventTagsJSON = w.unknownTags, w.unknownTagsJSON, w.unknownEventTagsJSON
	// A line without a hostname (IOS sends none unless told to) names
	// its device by its address, and may be an SNMP or gNMI target's.
	var dev *Device
	if e.Device, dev = nameDevice(w.inv, w.targets, w.gnmi, e.Device, e.Hostname, e.SourceAddr); dev != nil {
		d.tags, d.tagsJSON, d.eventTagsJSON = dev.tags, dev.tagsJSON, dev.eventTagsJSON
		if (e.Vendor == VendorGeneric || info.VendorByRule) && dev.Vendor != "" {
			e.Vendor = dev.Vendor
		}
	} else {
		d.unknown = true
	}
}

// recordDevice names the device of a record without one as weir's
// receiver names a line's: by its hostname, else its sender's address.
func recordDevice(hostname, source string) string {
	if hostname != "" {
		return hostname
	}
	if a := senderAddr(source); a.IsValid() {
		return a.String()
	}
	return source
}

// maxEventMessage bounds the syslog message an event carries: an event is
// an alert, and one of a line near the broker's size limit would be left
// out with it (outputs.fits); the enriched record keeps the line whole.
const maxEventMessage = 4 << 10

// eventMessage is msg, cut at a character boundary to maxEventMessage
// bytes with "…" when longer.
func eventMessage(msg string) string {
	if len(msg) <= maxEventMessage {
		return msg
	}
	cut := maxEventMessage - len("…")
	for cut > 0 && !utf8.RuneStart(msg[cut]) {
		cut--
	}
	return msg[:cut] + "…"
}

// syslogEvent is the event the record decodeSyslog decoded reports, with
// no Type when it reports none.
func (w *Worker) syslogEvent(r *broker.Record, d *decodedSyslog) telemetry.Event {
	e := &d.log
	if e.Event == "" {
		return telemetry.Event{}
	}
	ev := telemetry.Event{
		V: telemetry.Version, Type: e.Event, Device: e.Device, Object: ObjectOf(d.info),
		Severity: e.SeverityName, Message: eventMessage(e.Message), Tags: d.tags, TagsJSON: d.eventTagsJSON, Time: e.ReceivedAt,
		Cause: telemetry.Cause{Topic: r.Topic, Partition: r.Partition, Offset: r.Offset},
	}
	if e.Time != nil {
		ev.Time = *e.Time
	}
	if ev.Severity == "" {
		// A line without a PRI: its mnemonic's severity
		// (%LINEPROTO-5-UPDOWN), else its type's.
		if sev := d.info.MnemonicSeverity; sev >= 0 && sev < len(telemetry.SeverityNames) {
			ev.Severity = telemetry.SeverityNames[sev]
		} else {
			ev.Severity = typeSeverity(ev.Type)
		}
	}
	return ev
}

// warmSyslog takes a raw.syslog record a warm-up read again into the
// event detector's state (see detector.remember); nothing is published.
func (w *Worker) warmSyslog(r *broker.Record, end time.Time) {
	w.warming = true
	defer func() { w.warming = false }()
	w.decodeSyslogInto(r, &w.scratch.one)
	w.warmDecoded(r, &w.scratch.one, end)
}

// warmDecoded is warmSyslog's work once r is decoded into d.
func (w *Worker) warmDecoded(r *broker.Record, d *decodedSyslog, end time.Time) {
	if !w.noteDecoded(r, d) {
		return
	}
	w.det.vendors.note(d.log.Device, d.info)
	if ev := w.syslogEvent(r, d); ev.Type != "" {
		w.det.rememberLine(r, ev, adjacencyOf(d.info), end.Add(-w.det.window))
	}
}

// queueWarm is the worker's warm-up feed: it keeps the records of a
// fetch for warmFetched, which the warmer calls once they are all fed,
// while they are still valid, or warms from them once warmChunk are kept.
func (w *Worker) queueWarm(r *broker.Record, end time.Time) {
	if w.warmBatch == nil {
		w.warmBatch = make([]broker.Record, 0, warmChunk)
	}
	w.warmBatch = append(w.warmBatch, *r)
	w.warmEnd = end
	if len(w.warmBatch) == warmChunk {
		w.warmFetched()
	}
}

// warmChunk bounds the records queueWarm keeps: a fetch of 8 MiB of the
// shortest lines is 200,000 records, and one of a compressed Kafka batch
// more; kept whole, each fetch's batch was allocated anew (168 MB a
// benchmark's warm-up, against 52 MB a record at a time). Its 32 units
// keep both decoding goroutines busy.
const warmChunk = 4096

// warmFetched warms up from the records queueWarm kept, decoded ahead on
// two goroutines (see decodeAhead): decoding and classifying are nearly
// all of a warm-up's work, and a restart at a high rate reads back
// millions of records, 1.5 times as fast so (BenchmarkWarmupPartition).
// The batch is emptied after, as its records point into the fetch's
// buffer, which a quiet partition would otherwise keep; its array of
// warmChunk records stays for the next.
func (w *Worker) warmFetched() {
	recs := w.warmBatch
	if len(recs) == 0 {
		return
	}
	defer func() {
		clear(recs) // the records point into the fetch's buffer
		w.warmBatch = recs[:0]
	}()
	w.warming = true
	defer func() { w.warming = false }()
	if w.warmAhead == nil {
		w.warmAhead = &decodeAhead{goroutines: 2}
	}
	ahead := w.warmAhead.start(recs, w.decodeSyslogInto)
	for i := range recs {
		d := &w.scratch.one
		if ahead {
			d = w.warmAhead.next()
		} else {
			w.decodeSyslogInto(&recs[i], d)
		}
		w.warmDecoded(&recs[i], d, w.warmEnd)
	}
	// What was decoded shares the fetch buffer's bytes, which the slots
	// (a thousand records) or the scratch (a fetch's last record, when
	// the fetches after it are decoded ahead) would keep until the next
	// warm-up, for good on a quiet partition: the copy of the window's
	// last record (warmer.read) covers neither. Let go of them, keeping
	// the maps. The decoding goroutines are done with the slots once the
	// last next returned.
	if !ahead {
		releaseDecoded(&w.scratch.one)
		return
	}
	for i := range w.warmAhead.slots {
		releaseDecoded(&w.warmAhead.slots[i])
	}
}

// releaseDecoded empties d but for its fields map.
func releaseDecoded(d *decodedSyslog) {
	clear(d.fields)
	d.empty()
}

// empty empties d but for the room it keeps for the next record: its
// fields map and, up to maxKeptUnescaped, its unescaped strings' bytes.
func (d *decodedSyslog) empty() {
	unescaped := d.unescaped
	if cap(unescaped) > maxKeptUnescaped {
		unescaped = nil // a long line's: not kept by each of a thousand slots
	}
	*d = decodedSyslog{fields: d.fields, unescaped: unescaped}
}
