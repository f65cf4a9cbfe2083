package enrich

import (
	"context"
	"fmt"
	"log/slog"
	"math"
	"net/netip"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/weirnet/weir/broker"
	"github.com/weirnet/weir/internal/throttle"
	"github.com/weirnet/weir/telemetry"
)

// MetricsWorker is a member of the "enrich" group over raw.snmp (or
// raw.gnmi): it turns counters into per-second rates, adds interface
// utilisation and normalised interface fields, joins the inventory,
// publishes to enriched.metrics, and raises events from state changes it
// sees (ifOperStatus, snmp_up, sysUpTime going back), exactly once like
// the syslog worker. Interface counters from both sources are also
// published as one "interface" measurement (tags device and interface),
// so one dashboard query shows SNMP and gNMI devices alike.
type MetricsWorker struct {
	gate     *gateTicket // its passage through the detector's warm gate, made at its first Run
	b        broker.Broker
	inv      *Inventory
	input    string
	topics   Topics
	metrics  string
	logger   *slog.Logger
	m        *workerMetrics
	memberID string
	session  time.Duration
	det      *detector
	evEnc    eventRecords
	targets  *SNMPTargets // told the targets' sysNames, for traps and syslog
	gnmi     *GNMITargets // the gNMI targets' addresses, for records without an agent tag

	// Per-row scratch, reused: the row decoded and enriched in place, its
	// interface view, and the tags and fields being merged into them.
	dec       telemetry.Decoder
	row, view telemetry.Point
	tagBuf    []telemetry.Tag  // swapped with row.Tags
	targetTag [1]telemetry.Tag // the target's own name, when the inventory renames it
	fieldBuf  []telemetry.Field
	rateBuf   []telemetry.Field
	normBuf   []telemetry.Field
	rateNames map[string]string // counter name -> its rate field's name
	rowID     []byte            // the row's appendRowID, for its counters
	indexBuf  []byte            // a gNMI row's ifindex, formatted
	// counterDel is the row's delete of a counter it forgot the rates of
	// (deletedCounter), for enrichBatch.
	counterDel counterDelete
	// What the row before worked out, for rows of the same names.
	fieldsPlan   mergePlan
	viewRecipe   viewRecipe
	longNames    longNames
	counterInfos []counterInfo
	spareInfo    counterInfo
	enc          telemetry.PointEncoder
	lastTarget   targetLookup
	arena        arena // output keys and values

	rates *rates
	// The last ifOperStatus per device and interface, snmp_up per device,
	// gNMI states, and sysUpTime and sysName per device, each with when
	// it was last seen (rates.now): forgotten after an hour unseen, as
	// rates are, so memory follows the live network.
	state map[stateKey]seen[stateSample]
	// firstSeen are the events the record enrich last read would raise
	// from the first states of its rows (no change of their own), kept
	// only when another path reported their object in the other state
	// (see detector.firstMayChange); enrichBatch passes them to the
	// detector as changes.
	firstSeen []telemetry.Event
	uptimes   map[string]seen[uptimeSample]
	sysNames  map[string]*sysName
	// Their peaks, for forgetStates to rebuild them once most is gone.
	statePeak, uptimesPeak, sysNamesPeak shrinkable
	// maxObjects bounds each of rates.rows, state, uptimes and sysNames
	// (maxMetricsObjects; tests lower it): past it, a new one is not kept
	// and counted in untracked, per kind, and logged (untrackedLog).
	maxObjects int
	// stateBytes is the length of state's keys, bounded by maxStateBytes
	// (maxStateKeyBytes): a gNMI object's name is as long as its target
	// makes it.
	stateBytes, maxStateBytes int
	// targetBytes is the length of uptimes' and sysNames' keys (a
	// target's name, which any producer to raw.snmp picks) and of the
	// sysNames they hold, bounded by maxTargetBytes (maxStateKeyBytes).
	targetBytes, maxTargetBytes int
	untracked                   [len(untrackedKinds)]prometheus.Counter
	untrackedLog                throttle.Throttle
	out                         *outputs
	lastSweep                   time.Time

	warmup  time.Duration
	warmer  *warmer
	warming bool // enriching a warm-up record: nothing is counted or logged
	// olderWarm: the warm-up record is older than those fed before it
	// (warmer.reachBack's): no sample of it takes a state's place, and a
	// row it makes is as seen at olderSeen (see trackedRow).
	olderWarm bool
	olderSeen int64
	// warmPolls are the targets whose polls a partition's warm-up read,
	// for lostPolls.
	warmPolls map[string]warmPoll
	// gnmiInput: the input is the gNMI collector's, whose on_change
	// states a warm-up reads back past its window (see lostPolls).
	gnmiInput bool
	// gnmiDown are the gNMI targets whose last gnmi_status said down
	// (see gnmiAnswered).
	gnmiDown map[string]bool
	// invalidLog, uptimeLog and decodeLog throttle the warnings for
	// fields listed as counters that hold none, for uptimes that are none
	// and for undecodable records: one per record from a wrong producer
	// would flood the log.
	invalidLog, uptimeLog, decodeLog throttle.Throttle
}

// NewMetricsWorker builds a metrics worker over raw.snmp.
func NewMetricsWorker(b broker.Broker, inv *Inventory, opts ...WorkerOption) *MetricsWorker {
	w := NewWorker(b, inv, nil, opts...) // shares option handling
	input := w.input
	if input == "" {
		input = telemetry.TopicRawSNMP
	}
	mw := &MetricsWorker{
		b: b, inv: inv, input: input, topics: w.topics, metrics: telemetry.TopicEnrichedMetrics, warmup: w.warmup,
		logger: w.logger, m: w.m, memberID: w.memberID, session: w.session, det: w.det, targets: w.targets, gnmi: w.gnmi,
		rates: newRates(), state: map[stateKey]seen[stateSample]{}, uptimes: map[string]seen[uptimeSample]{},
		sysNames: map[string]*sysName{}, rateNames: map[string]string{}, maxObjects: maxMetricsObjects, maxStateBytes: maxStateKeyBytes,
		maxTargetBytes: maxStateKeyBytes,
		longNames:      longNames{},
		gnmiInput:      w.gnmiInput || input == telemetry.TopicRawGNMI,
	}
	for i, kind := range untrackedKinds {
		mw.untracked[i] = w.m.untrackedKind.WithLabelValues(kind)
	}
	// At 0 from the start, so an alert on its increase sees the first.
	w.m.invalidCounters.WithLabelValues(input)
	w.m.invalidUptimes.WithLabelValues(input)
	w.m.countDecodeErrorsFrom(input)
	return mw
}

// maxMetricsObjects bounds each kind of a metrics worker's state: rows of
// counters, states, uptimes and sysNames. Each is forgotten an hour
// unseen, but a gNMI path with a counter in its keys, or any Kafka client
// producing to its input, makes new ones at the input's rate: a million
// rows (a few hundred bytes each) is past any network a worker reads.
const maxMetricsObjects = 1 << 20

// maxStateKeyBytes bounds the length of a worker's states' keys together
// (device, measurement, object), as maxMetricsObjects bounds their number:
// a key is under a hundred bytes, so a million real states stay below it;
// a gNMI target naming a million interfaces with 20 KB names held 40 GB.
const maxStateKeyBytes = 256 << 20

// size is the length of k's strings, for maxStateKeyBytes.
func (k stateKey) size() int {
	return len(k.row.device) + len(k.row.measurement) + len(k.row.object) + len(k.what) + len(k.object)
}

// deleteState forgets the state under key.
func (w *MetricsWorker) deleteState(key stateKey) {
	if _, ok := w.state[key]; ok {
		delete(w.state, key)
		w.stateBytes -= key.size()
	}
}

// The kinds of state maxMetricsObjects bounds, as counted (untracked).
const (
	untrackedRates = iota
	untrackedStates
	untrackedUptimes
	untrackedSysNames
)

var untrackedKinds = [...]string{"rates", "states", "uptimes", "sysnames"}

// untrack counts a row or state of kind not kept, past maxObjects, and
// logs it at most once per throttle.Every; not while warming up.
func (w *MetricsWorker) untrack(kind int, device string) {
	if w.warming {
		return
	}
	w.untracked[kind].Inc()
	if n, ok := w.untrackedLog.Due(time.Now()); ok {
		w.logger.Warn("enrich metrics: too many rows or states kept; a new one is not (no rates, or no events, for it)",
			slog.String("kind", untrackedKinds[kind]), slog.String("device", device), slog.Int("max", w.maxObjects), slog.Int("times", n))
	}
}

// trackedRow returns the row's counters (rates.row), nil past maxObjects.
func (w *MetricsWorker) trackedRow(device string) *rowCounters {
	if w.olderWarm {
		// A row of a poll older than the window's: one the window (or
		// live records) gave stays as seen then; a new one is as seen
		// when that poll was, as a worker that ran all along saw it, so
		// it is forgotten as that worker's was an hour into an outage,
		// and the first poll after the outage starts its rates again.
		if row := w.rates.rows[string(w.rowID)]; row != nil {
			return row
		}
		row := w.rates.row(w.rowID, w.maxObjects)
		if row != nil {
			row.seen = min(row.seen, w.olderSeen)
		}
		return row
	}
	row := w.rates.row(w.rowID, w.maxObjects)
	if row == nil {
		w.untrack(untrackedRates, device)
	}
	return row
}

// seenNow is when a state sampled now is seen: weir's clock, or for a
// record older than the window's (olderWarm) its own time, as a worker that
// ran all along saw it, so that it is forgotten as that worker's was.
func (w *MetricsWorker) seenNow() int64 {
	if w.olderWarm {
		return min(w.rates.now, w.olderSeen)
	}
	return w.rates.now
}

// putState keeps a state sample under key, unless key is new and
// maxObjects are kept.
func (w *MetricsWorker) putState(key stateKey, s stateSample) {
	// Put first, taken back if new and past the bounds: one map access
	// for the usual put of a known key, not two.
	n0 := len(w.state)
	s.older = w.olderWarm
	w.state[key] = seen[stateSample]{s, w.seenNow()}
	if len(w.state) == n0 {
		return
	}
	n := key.size()
	if n0 >= w.maxObjects || w.stateBytes+n > w.maxStateBytes {
		delete(w.state, key)
		w.untrack(untrackedStates, key.row.device)
		return
	}
	w.stateBytes += n
}

// Run consumes until ctx ends.
func (w *MetricsWorker) Run(ctx context.Context) error {
	gate := w.det.gate.ticket(&w.gate, w.logger) // closed on any return: the others do not wait for this one
	defer gate.close()
	m, err := join(ctx, w.b, []string{w.input}, consumerOptions(w.memberID, w.session, metricsPollBytes), w.logger)
	if err != nil || m == nil {
		return err
	}
	defer m.close()
	if !gate.awaitJoins(ctx) {
		return nil
	}
	gate.checkInput(ctx, w.b, w.input)
	gate.watch(func() broker.Consumer { return m.c })
	w.out = newOutputs(w.b, w.input, w.logger, w.m, m.txn != nil)
	w.out.useArenas(&w.arena, &w.evEnc.arena)
	w.out.origins, w.out.events = w.det, w.topics.Events
	if !w.out.alignRetrying(ctx, w.metrics, w.topics.Events) {
		return nil // ctx ended
	}
	defer w.out.startPublisher(ctx)()
	w.warmer = newWarmer(w.b, w.warmup, w.logger)
	w.warmer.ended = w.det.warmupEnder(w)
	w.warmer.adopt = w.det.adopter(w.b, w.topics.Events, w.logger)
	w.warmer.uncommitted = w.det.uncommittedAdopter(w.b, w.out, w.topics.Events, w.logger)
	w.warmer.lost = w.lostPolls
	var metrics, events []outRecord
	var polls pollHealth // failing polls, across polls
	for {
		// Until the gate lets it through, briefly: the partitions it
		// holds are warmed up before their first poll (warmer.idle), as
		// the other workers wait for. Then until records come.
		// A carry (events taken over from another worker, see
		// detector.takeOver, whose transaction aborted) goes out
		// without waiting for a record: the partition may have gone.
		usual := time.Duration(0)
		if len(w.out.carry) > 0 {
			usual = time.Second
		}
		recs, ok := poll(ctx, m.c, gate.pollWait(usual), w.logger, &polls)
		if !ok {
			return nil
		}
		start := time.Now()
		w.det.reportClock(w, recs, start)
		assigned := m.c.Assigned()
		w.out.track(ctx, assigned, recs)
		w.rates.setNow(start)
		w.warmer.retain(assigned)
		w.warmer.before(ctx, recs, w.warm)
		if !gate.through {
			w.warmer.idleRound(ctx, m.c, assigned, len(recs) > 0, true, w.warm)
		}
		if ctx.Err() != nil {
			return nil // see warmer.before: a warm-up may have been cut short
		}
		if !gate.through && !gate.pass(ctx, len(assigned) > 0 || len(recs) > 0, nil) {
			if ctx.Err() != nil {
				return nil
			}
			continue
		}
		// Before the batch: a row back after more than an hour of
		// nothing at all (no batch swept since) starts again, rather
		// than rating the whole gap.
		w.sweepForgotten(start)
		if len(recs) == 0 && len(w.out.carry) == 0 {
			continue
		}
		metrics, events = metrics[:0], events[:0]
		eachChunk(recs, func(chunk []broker.Record) {
			metrics, events = w.enrichBatch(chunk, metrics, events)
			w.out.flush(outBatch{w.metrics, metrics}, outBatch{w.topics.Events, events})
		})
		w.m.in.WithLabelValues(w.input).Add(float64(len(recs)))
		// A rename said with the batch's events is kept as said before
		// their commit (see saveRenames).
		w.det.saveRenames()
		if !w.out.deliver(ctx, m, outBatch{w.metrics, metrics}, outBatch{w.topics.Events, events}) {
			return nil
		}
		w.out.recycle(&w.arena, &w.evEnc.arena)
		w.m.batchSeconds.Observe(time.Since(start).Seconds())
	}
}

// forgetAfter is how long a row (or a device's states) goes unseen before
// it is forgotten; forgetEvery, how often that is looked for, so a row is
// forgotten between forgetAfter and forgetAfter+forgetEvery after its last
// record.
const (
	forgetAfter = time.Hour
	forgetEvery = 10 * time.Minute
)

// sweepForgotten forgets the rows and states unseen for forgetAfter, at
// most once every forgetEvery.
func (w *MetricsWorker) sweepForgotten(now time.Time) {
	if now.Sub(w.lastSweep) < forgetEvery {
		return
	}
	w.rates.forget(now.Add(-forgetAfter), w.forgetName)
	w.forgetStates(now.Add(-forgetAfter))
	w.lastSweep = now
}

// enrichBatch enriches a batch of raw metric records, appending the
// enriched records (and interface views) and the events they raise.
func (w *MetricsWorker) enrichBatch(recs []broker.Record, metrics, events []outRecord) ([]outRecord, []outRecord) {
	for i := range recs {
		r := &recs[i]
		var replayed bool
		if metrics, events, replayed = w.out.replay.get(r, metrics, events); replayed {
			continue
		}
		evs, ok := w.enrich(r)
		if !ok {
			continue
		}
		m0, e0 := len(metrics), len(events)
		metrics = w.appendMetricRecord(metrics, &w.row, r)
		metrics = w.appendCounterDeletes(metrics, &w.row, r)
		if w.interfaceView(&w.row, &w.view) {
			metrics = w.appendMetricRecord(metrics, &w.view, r)
		}
		if len(evs) > 0 || len(w.firstSeen) > 0 {
			// One redo decision for all of the record's events (a
			// reboot and a link change from one row).
			cause := w.firstSeen
			if len(evs) > 0 {
				cause = evs
			}
			redo := w.det.beginRecord(cause[0].Cause, detectAt(r, cause[0].Time))
			for _, ev := range evs {
				for _, out := range w.det.observeInto(ev, detectAt(r, ev.Time), redo, nil) {
					events = w.evEnc.append(w.m, events, w.topics.Events, out, r.Partition, r.Offset)
				}
			}
			for _, ev := range w.firstSeen {
				for _, out := range w.det.observeInto(ev, detectAt(r, ev.Time), redo, nil) {
					events = w.evEnc.append(w.m, events, w.topics.Events, out, r.Partition, r.Offset)
				}
			}
		}
		w.out.replay.put(r, metrics[m0:], events[e0:])
	}
	return metrics, events
}

// warm enriches a record read by the warmer for its counters and states
// only: its outputs and events are thrown away.
func (w *MetricsWorker) warm(r *broker.Record, end time.Time) {
	w.warming = true
	evs, _ := w.enrich(r)
	w.warming = false
	w.det.remember(r, evs, end.Add(-w.det.window))
}

// metricHeaders are every enriched metric's headers, shared: outputs copy
// a record's headers before adding to them.
var metricHeaders = []broker.Header{{Key: telemetry.HeaderSource, Value: sourceEnr}, {Key: telemetry.HeaderSchema, Value: []byte(telemetry.SchemaMetric)}}

// appendMetricRecord encodes p as a record for the metrics topic, taking
// the source record r's time and position; a metric that cannot be encoded
// (checkFields refuses what is known to fail) is dropped and counted.
func (w *MetricsWorker) appendMetricRecord(recs []outRecord, p *telemetry.Point, r *broker.Record) []outRecord {
	val, err := w.enc.AppendJSON(w.arena.start(), p)
	if err != nil {
		w.m.dropped.WithLabelValues(w.metrics, "unencodable").Inc()
		w.logger.Warn("enrich: dropping a metric that cannot be encoded", slog.String("topic", r.Topic),
			slog.Int("partition", int(r.Partition)), slog.Int64("offset", r.Offset), slog.Any("error", err))
		return recs
	}
	val = w.arena.keep(val)
	key := w.arena.keep(append(w.arena.start(), p.Device...))
	return append(recs, outRecord{broker.Record{Key: key, Value: val, Timestamp: r.Timestamp, Headers: metricHeaders}, r.Partition, r.Offset})
}

// checkFields refuses a metric with a field no topic can carry (an object
// or an array, which JSON allows and the metric schema does not): its
// enriched record could not be encoded, and it would vanish uncounted.
func checkFields(p *telemetry.Point) error {
	// A sink would name a series without its measurement's prefix, or
	// with no device, and enrichment could key no state by it.
	if p.Measurement == "" {
		return incomplete("no measurement")
	}
	if p.Device == "" {
		return incomplete("no device")
	}
	for i := range p.Fields {
		if f := &p.Fields[i]; f.Kind == telemetry.FieldInvalid {
			return fmt.Errorf("field %q: %s is not a metric value (a number, a boolean, a string or null)", f.Key, f.Str)
		}
	}
	return nil
}

// rowKey names an object's row for its state: a device's measurement for
// one object (an interface, or "" for the device).
type rowKey struct{ device, measurement, object string }

// stateKey names a state events are raised from: what ("up", "oper", or
// an OpenConfig family) of a row, and the object in it.
type stateKey struct {
	row          rowKey
	what, object string
}

// sentOnChange reports whether k is a gNMI state (an interface's
// oper-status, a BGP session's state), which an on_change subscription
// without heartbeats sends only when it changes: unseen for an hour, it
// is calm, not gone (a gone object's delete forgets it, and the gNMI
// collector sends the deletes a reconnect's snapshot implies), so it is
// kept for forgetQuietAfter.
func (k stateKey) sentOnChange() bool {
	return k.what == "interface" || k.what == "bgp_peer"
}

// forgetQuietAfter is how long a gNMI state unseen is kept (see
// stateKey.sentOnChange): past it, one of a target taken out of the config
// goes.
const forgetQuietAfter = 7 * 24 * time.Hour

// enrich decodes a raw metric record into w.row and enriches it there,
// returning the events it shows.
func (w *MetricsWorker) enrich(r *broker.Record) ([]telemetry.Event, bool) {
	p := &w.row
	w.firstSeen = w.firstSeen[:0]
	err := w.dec.DecodePoint(r.Value, p)
	if err == nil {
		err = checkVersion(p.V)
	}
	if err == nil {
		err = checkFields(p)
	}
	if err != nil {
		if w.warming {
			return nil, false // counted and logged when it was enriched
		}
		w.m.decodeFailed(r.Topic, err)
		if n, due := w.decodeLog.Due(time.Now()); due {
			w.logger.Warn("enrich: skipping undecodable metric", slog.String("topic", r.Topic),
				slog.Int("partition", int(r.Partition)), slog.Int64("offset", r.Offset), slog.Any("error", err), slog.Int("times", n))
		}
		return nil, false
	}
	if p.UptimeInvalid() && !w.warming {
		// Enriched without one, as a gNMI record is: no restart is told
		// from it, and its counters' rates go on.
		w.m.invalidUptime(&w.uptimeLog, w.logger, r, "metric",
			slog.String("device", p.Device), slog.String("measurement", p.Measurement))
	}
	if p.Time.IsZero() && p.ReceivedAt.IsZero() {
		// A Kafka client's record with neither: taken at its record's
		// time, which the log sets when the producer does not. It was
		// published at year 1, its events too, and gave no rates.
		p.Time, p.ReceivedAt = r.Timestamp, r.Timestamp
	}
	at := p.Time
	if at.IsZero() {
		at = p.ReceivedAt
	}
	w.rowID = appendRowID(w.rowID[:0], p.Device, p.Measurement, p.Tags)
	w.counterDel.ok = false
	// A delete is read before the inventory's tags and name: a free tag
	// "name" of the device's entry is no interface's.
	del, deleted := openConfigDelete(p)
	if p.IsDelete() && !w.olderWarm {
		// Not one older than the window (a reach back's): the
		// counter samples and speeds it would forget are the
		// window's, newer.
		w.deletedCounter(p)
		w.deletedOperStatus(p)
		w.deletedSpeed(p, p.Device, at)
	}
	agent, _ := p.Tag("agent")
	if agent == "" {
		// A gNMI record names its target, not the address it is
		// dialed at, which the config gives.
		agent = w.gnmi.address(p.Device)
	}
	// State stays keyed by the target's name; records and events take the
	// inventory's, as syslog and traps do, so one change seen by several
	// paths is one event. A renamed record keeps the target's name in a
	// target tag (unless it has one), so two targets polling one device
	// stay two series.
	target := p.Device
	d := w.lookupTarget(p.Device, agent)
	if !d.named() {
		// Neither the target's name nor its address is a named entry:
		// the name the device gives itself (its sysName, as its syslog
		// hostname usually is) may be.
		if d2 := w.lookupSysName(p, target); d2 != nil {
			d = d2
		}
	}
	if d != nil {
		// The row's own tags win: an inventory label that a collector
		// also uses (gNMI's interface key name) must not make every
		// interface one series.
		p.Tags, w.tagBuf = mergeTags(w.tagBuf[:0], d.TagList(), p.Tags), p.Tags
		if d.named() && d.Name != target {
			p.Device = d.Name
			w.targetTag[0] = telemetry.Tag{Key: "target", Value: target}
			p.Tags, w.tagBuf = mergeTags(w.tagBuf[:0], w.targetTag[:], p.Tags), p.Tags
		}
	} else {
		p.Tags, w.tagBuf = mergeTags(w.tagBuf[:0], p.Tags, unknownTags), p.Tags
		if !w.warming {
			w.m.unknown.Inc()
		}
	}
	var events []telemetry.Event
	// msg is the message of the events raised next: what the poll or
	// the update said ("ifOperStatus down(2)", the poll's error), as a
	// syslog line's and a trap's events carry theirs (an Alertmanager
	// alert's summary). Set where an event may follow, so a row that
	// raises none costs nothing; never the record's bytes (kept past
	// it in the detector's first-seen events).
	var msg string
	newEvent := func(typ, object string) telemetry.Event {
		return telemetry.Event{V: telemetry.Version, Type: typ, Device: p.Device, Object: object, Severity: typeSeverity(typ),
			Message: msg, Tags: tagMap(p.Tags), Time: at, Cause: telemetry.Cause{Topic: r.Topic, Partition: r.Partition, Offset: r.Offset}}
	}
	event := func(typ, object string) { events = append(events, newEvent(typ, object)) }
	// first is event for a row's first state (see firstSeen), kept only
	// when the detector may take it for a change: most first states
	// (every row of a new target) cost a look-up, no event.
	first := func(typ, object string) {
		if w.warming {
			return // a warm-up's first sample is the start of what it reads
		}
		if !w.det.firstMayChange(p.Device, typ, object, detectAt(r, at)) {
			return
		}
		w.firstSeen = append(w.firstSeen, newEvent(typ, object))
	}
	// A device whose sysUpTime went back restarted: at the poll's time
	// less its uptime, which the coldStart trap of the same restart
	// gives too (see bootTime). Not when that boot is before the poll
	// before: the agent answering was up then, so it is another agent
	// than the one that answered that poll (the target's address
	// changed, an HA pair's floating address), and nothing restarted.
	if p.Uptime != 0 {
		prev, ok := w.uptimes[target]
		if ok && restarted(prev.v.ticks, p.Uptime, at.Sub(prev.v.at)) && !upBefore(prev.v.at, at, p.Uptime) {
			msg = "sysUpTime went back to " + ticks(p.Uptime).String()
			event("device_rebooted", "")
			events[len(events)-1].Time = bootTime(at, p.Uptime)
		}
		switch {
		case !ok && (len(w.uptimes) >= w.maxObjects || w.targetBytes+len(target) > w.maxTargetBytes):
			w.untrack(untrackedUptimes, target)
		case !ok || at.After(prev.v.at) || stampedAhead(prev.v.at, w.rates.now) && !stampedAhead(at, w.rates.now):
			if !ok {
				w.targetBytes += len(target)
			}
			w.uptimes[target] = seen[uptimeSample]{uptimeSample{p.Uptime, at}, w.rates.now}
		}
	} else if p.Measurement == telemetry.MeasurementSNMPStatus {
		// A poll that failed (no sysUpTime) still polls the target: its
		// last sysUpTime stays, or the reboot that ends an outage of
		// over an hour (forgetAfter) would have nothing to compare with.
		if prev, ok := w.uptimes[target]; ok && prev.seen != w.rates.now {
			prev.seen = w.rates.now
			w.uptimes[target] = prev
		}
	}
	object := firstTag(p, "ifName", "ifDescr", "ifIndex", "name")
	speed := -1.0 // the row's interface speed, looked up once needed
	var norm interfaceRates
	rates := w.rateBuf[:0]
	var row *rowCounters
	rowLooked := false // row is looked up (nil: not kept, past maxObjects)
	if d, epoch, ok := discontinuityTime(p); ok {
		if row, rowLooked = w.trackedRow(p.Device), true; row != nil {
			row.discontinued(d, epoch, at)
		}
	}
	counters := 0 // the counters so far: where this one sits in the row's samples
	var gap sampleGap
	invalid := "" // the first field listed as a counter whose value is none
	for i := range p.Fields {
		f := &p.Fields[i]
		if !f.Counter {
			continue
		}
		v, ok := counterValue(f)
		if !ok {
			if invalid == "" {
				invalid = f.Key
			}
			continue
		}
		if !rowLooked {
			row, rowLooked = w.trackedRow(p.Device), true
		}
		info := w.counterInfo(counters, p.Measurement, f.Key)
		counters++
		if row == nil {
			// Not kept: as a row's first sample, no rate.
			if info.hasNorm {
				norm.present(info.norm)
			}
			continue
		}
		// A 64-bit octet counter at 0 beside a 32-bit one counting is
		// one the agent leaves unset on this port (looked up only then:
		// the hot path pays nothing for it): the 32-bit one gives the
		// rate. Nor is the 0 its last sample, or its next real value
		// would be a rate of its whole count over one interval.
		if v == 0 && info.hasNorm && info.norm.rank == 0 && lowBitsCounting(p, info.norm.rate) {
			continue
		}
		octets := info.hasNorm && (info.norm.rate == inOctets || info.norm.rate == outOctets)
		// IF-MIB's 32-bit octet counters (ifInOctets, ifOutOctets); a
		// value past 2^32 is a producer's 64-bit one, unlisted.
		narrowOctets := octets && info.norm.rank == 1 && !f.Counter64 && v <= math.MaxUint32
		// What the link can carry at least, in Mbit/s: its speed, else
		// what a saturated ifSpeed says (looked up for a 32-bit octet
		// counter, which may wrap unseen, or a wrap).
		carries := 0.0
		if narrowOctets {
			if speed < 0 {
				speed = interfaceSpeed(p)
			}
			carries = speed
			if carries == 0 {
				carries = leastSpeed(p)
			}
			carries = max(carries, row.speed) // it may have gone down since the last
		}
		rate, secs, ok, wrapped := row.observeGap(&gap, counters-1, f.Key, v, at, p.Uptime, f.Counter64, carries*1e6/8)
		if info.hasNorm {
			norm.present(info.norm)
		}
		if ok && wrapped == wrapFar && !octets {
			// No speed tells a wrap of 2^31 or more from a reset but an
			// octet counter's: errors and discards (IF-MIB's are 32 bits
			// only) are mostly small, so their reset is a wrap of nearly
			// 2^32, which a fast port could carry as minimum-size frames
			// (10 Gbit/s polled every 5 minutes): a spike of millions a
			// second. 2^31 of them in one poll is no real port's.
			ok = false
		}
		if ok && (info.hasNorm || info.packets) && (wrapped != noWrap || narrowOctets) {
			if speed < 0 {
				speed = w.linkSpeed(p, target)
			}
			switch {
			case narrowOctets && carries*1e6/8*secs >= 1<<32:
				// The link can carry 2^32 octets between the samples:
				// the counter may have wrapped any number of times,
				// seen or not, and its rate is unknown. (Errors and
				// discards would need the link full of them.)
				ok = false
			case wrapped != noWrap && max(speed, row.speed) > 0:
				// A 32-bit counter that went back: a wrap, or its
				// reset (clear counters) with sysUpTime moving on
				// (or a 64-bit one, back from an agent's 2^64-1). A
				// wrap carries no more than the link can; more is a
				// reset, whose rate would be a spike over 100%
				// utilisation, or more packets than the link can carry
				// (errors and discards, which IF-MIB has in 32 bits
				// only, and its 32-bit packet counters: a line card
				// reloaded with ifInUcastPkts over 2^31 read as a wrap
				// of a billion packets a minute).
				bits := 8.0 // an octet
				if !octets {
					bits = minFrameBits // a packet
				}
				ok = rate*bits <= max(speed, row.speed)*1e6*maxUtilisation
			case wrapped == wrapFar:
				ok = false // no speed to tell it from a reset
			}
		}
		if !ok {
			continue
		}
		rate = telemetry.RoundSignificant(rate, rateDigits)
		rates = append(rates, telemetry.FloatField(info.rate, rate))
		if info.hasNorm {
			norm.add(info.norm, rate)
		}
	}
	w.rateBuf = rates
	if invalid != "" {
		w.unlistInvalidCounters(p, r, invalid)
	}
	if !slices.IsSortedFunc(rates, compareFields) {
		slices.SortFunc(rates, compareFields) // a counter name that is a prefix of another
	}
	normalised := w.normBuf[:0]
	if len(w.gnmiDown) > 0 && p.Source == sourceGNMI && p.Measurement != gnmiStatus && w.gnmiAnswered(p, target) {
		msg = "gNMI subscription answered again"
		event("device_reachable", gnmiReach(target))
		// When weir received it, as the down and the collector's own
		// gnmi_up 1 are stamped: the device's clock may be minutes off.
		events[len(events)-1].Time = p.ReceivedAt
	}
	switch p.Measurement {
	case telemetry.MeasurementSNMPStatus, gnmiStatus:
		key := stateKey{row: rowKey{device: target}, what: "up"}
		// Each target's reachability is its own: of two targets
		// polling one device (a v2c and a v3 one), one failing
		// (wrong credentials) must not hide the other's outage, nor
		// the other's recovery say it came back. A target the
		// inventory names otherwise is the events' object.
		reach := ""
		switch {
		case p.Measurement == gnmiStatus:
			reach = gnmiReach(target)
		case p.Device != target:
			reach = target
		}
		if targetRemoved(p) {
			// A reload took the target out of the config: its
			// reachability is no longer known. An outage it was in ends
			// with a cleared event (which resolves its alert) instead of
			// standing for good; polled again, its first poll is a first.
			if prev, ok := w.state[key]; ok && w.newer(at, prev) {
				w.deleteState(key)
				if prev.v.v == 0 {
					msg = "SNMP target taken out of the config (removed): its reachability is no longer polled"
					if p.Measurement == gnmiStatus {
						msg = "gNMI target taken out of the config (removed): its reachability is no longer known"
						w.noteGNMIDown(target, false)
					}
					event(typeUnreachableCleared, reach)
				}
			}
		} else if up, ok := reachability(p); ok {
			if w.warming && p.Measurement == telemetry.MeasurementSNMPStatus {
				w.noteWarmPoll(target, r.Key, up == 1)
			}
			if prev, ok := w.state[key]; !ok || w.newer(at, prev) {
				w.putState(key, stateSample{v: up, at: at})
				_, kept := w.state[key]
				if p.Measurement == gnmiStatus {
					w.noteGNMIDown(target, up == 0 && kept)
				}
				switch {
				case ok && prev.v.v != up && up == 1:
					msg = "SNMP poll answered again"
					if p.Measurement == gnmiStatus {
						msg = "gNMI subscription answered again"
					}
					event("device_reachable", reach)
				case ok && prev.v.v != up, !ok && up == 0 && kept:
					// Down from its first poll (down when weir started,
					// a mistyped address) is news, unlike an interface's
					// first state (an unused port is down for good);
					// once, so only when the state is kept.
					msg = pollFailure(p)
					event("device_unreachable", reach)
				}
			}
		}
	case "interfaces_interface_state_counters": // OpenConfig over gNMI: the counters alone, most rows
		s := w.gnmiSpeed(p, target)
		normalised = norm.appendFields(normalised, s, row.spanSpeed(s))
	case "interfaces_interface_state", "interfaces_interface":
		w.noteSpeed(p, target, at) // a subscription to the interface has its ethernet/state too
		s := w.gnmiSpeed(p, target)
		normalised = norm.appendFields(normalised, s, row.spanSpeed(s))
		if v, ok := openConfigLeaf(p, "oper-status", "state/oper-status"); ok {
			// As ifOperStatus's: up only when UP (TESTING, DORMANT are not).
			normalised = insertField(normalised, telemetry.BoolField("oper_up", v == "UP"))
		}
		if n, ok := openConfigIfIndex(p); ok {
			// The interface's ifIndex, for traps that name it by that
			// alone, as an SNMP row's.
			if name, _ := p.Tag("name"); name != "" {
				if !rowLooked {
					row, rowLooked = w.trackedRow(p.Device), true
				}
				w.indexBuf = strconv.AppendUint(w.indexBuf[:0], n, 10)
				if row != nil && !row.names(p.Device, string(w.indexBuf), name) {
					w.nameInterface(row, p.Device, string(w.indexBuf), name, w.gnmiAgent(agent), false)
				}
			}
		}
	case "snmp_interface":
		if speed < 0 {
			speed = interfaceSpeed(p)
		}
		normalised = norm.appendFields(normalised, speed, row.spanSpeed(speed))
		if index, _ := p.Tag("ifIndex"); index != "" && object != "" && object != index {
			// For traps that name the interface by ifIndex alone.
			if !rowLooked {
				row, rowLooked = w.trackedRow(p.Device), true
			}
			if row != nil && !row.names(p.Device, index, object) {
				agent, _ := p.Tag("agent")
				w.nameInterface(row, p.Device, index, object, senderAddr(agent), true)
			}
		}
		if st, ok := intField(p, "ifOperStatus"); ok {
			normalised = insertField(normalised, telemetry.BoolField("oper_up", st == 1))
			if oper, ok := operState(st); ok && object != "" {
				// Two ports may share an ifDescr (no ifName): the
				// ifIndex tells them apart, with the name, so a port
				// renumbered after a reboot is not another's change.
				key := stateKey{row: rowKey{target, p.Measurement, object}, what: "oper", object: firstTag(p, "ifIndex")}
				if prev, ok := w.state[key]; !ok || w.newer(at, prev) {
					typ := stateType("interface", oper == stateUp)
					msg = ifOperStatusMessage(st)
					reports := w.det.reports.Load()
					switch {
					case !ok:
						first(typ, object)
					case prev.v.v != oper:
						event(typ, object)
					case w.warming:
						reports = prev.v.reports // asked at the first live poll
					case reports != prev.v.reports:
						// Unchanged here: unless another path's report
						// since says otherwise, which is the change it
						// missed (asked again next poll while unsettled).
						contradicts, settled := w.det.pollContradicts(p.Device, typ, object, detectAt(r, at))
						if contradicts && prev.v.warm && w.det.pollAnswered(newEvent(typ, object), prev.v.at) {
							// The warm-up's last sample, the same, already
							// contradicted the report: the process that
							// took it live published the missed change.
							contradicts = false
						}
						if contradicts {
							w.firstSeen = append(w.firstSeen, newEvent(typ, object))
						}
						if !settled {
							reports = prev.v.reports
						}
					}
					w.putState(key, stateSample{v: oper, at: at, reports: reports, warm: w.warming})
				}
			}
		}
	case "interfaces_interface_ethernet_state", "interfaces_interface_ethernet",
		"interfaces_interface_aggregation_state", "interfaces_interface_aggregation":
		w.noteSpeed(p, target, at) // for the interface's counter rows
	}
	w.normBuf = normalised
	if ch, ok := openConfigState(p); ok && ch.object != "" {
		// gNMI on_change: interface oper-status and BGP session state.
		// Keyed by the family, not the measurement: a target may send its
		// initial sync as the interface container (interfaces_interface)
		// and its changes as leaves (interfaces_interface_state), one
		// state all the same.
		key := stateKey{row: rowKey{target, "", object}, what: ch.family, object: ch.object}
		if prev, ok := w.state[key]; !ok || w.newer(at, prev) {
			// Deleted since (see forgetDeleted), the object is new: its
			// first state is a baseline. Unless it was deleted by this
			// very notification (the same time), which replaced it.
			if ok && !prev.v.deleted.IsZero() && !at.Equal(prev.v.deleted) {
				ok = false
			}
			if !ok {
				// Never seen, or new since its delete: a start, unless
				// another path said otherwise.
				msg = ch.leaf + " " + ch.value
				first(stateType(ch.family, ch.state == stateUp), ch.object)
			}
			if ok && prev.v.v != ch.state {
				if ch.state == stateUp || prev.v.v == stateUp {
					msg = ch.leaf + " " + ch.value
					event(stateType(ch.family, ch.state == stateUp), ch.object)
				}
			}
			w.putState(key, stateSample{v: ch.state, at: at})
		}
	}
	if deleted {
		w.forgetDeleted(target, object, del, at, p.Device, detectAt(r, at))
	}
	if len(rates) > 0 || len(normalised) > 0 {
		// Rates, then normalised fields, replace fields of the same name.
		p.Fields, w.fieldBuf = w.fieldsPlan.merge(w.fieldBuf[:0], p.Fields, rates, normalised), p.Fields
	}
	if row != nil && !p.Time.IsZero() {
		p.Time = row.restamp(p.Time, p.ReceivedAt, p.Uptime)
	}
	p.Source = "enrich"
	p.EnsureFields() // an enriched record always has a fields object
	return events, true
}

// targetLookup is the inventory's entry for a target and agent, found in
// the inventory's index idx.
type targetLookup struct {
	idx         *inventoryIndex
	name, agent string
	d           *Device
}

// lookupTarget is w.inv.LookupTarget, from the last look-up while it was
// of the same target and agent in the same index: a poll's rows come a
// device at a time, and looking one up (its address parsed, the ranges
// searched) was 3% of a row.
func (w *MetricsWorker) lookupTarget(name, agent string) *Device {
	c := &w.lastTarget
	if idx := w.inv.idx.Load(); idx == nil || idx != c.idx || name != c.name || agent != c.agent {
		// idx loaded before the look-up: after a reload in between, the
		// next look-up (in the new index) misses this one.
		*c = targetLookup{idx: idx, name: name, agent: agent, d: w.inv.LookupTarget(name, agent)}
	}
	return c.d
}

// unlistInvalidCounters takes out of p's counters the fields it lists
// whose value is no counter value (a string, a negative number, a
// fraction, a number past 2^64-1, a boolean, null: a counter written as
// 1000.0 was decoded as the integer it is; from a producer other than weir's
// collectors), which give no rate: listed, a sink would write them as
// counters (Prometheus a `_total` of -5). Their values stay, as what they
// are. The record is counted in weir_enrich_invalid_counters_total and
// logged with first, the first such field.
func (w *MetricsWorker) unlistInvalidCounters(p *telemetry.Point, r *broker.Record, first string) {
	invalid := func(name string) bool {
		f, ok := p.Field(name)
		if !ok {
			return false
		}
		_, ok = counterValue(f)
		return !ok
	}
	p.Counters = slices.DeleteFunc(p.Counters, invalid)
	p.Counters64 = slices.DeleteFunc(p.Counters64, invalid)
	if w.warming {
		return // counted and logged when it was enriched
	}
	w.m.invalidCounters.WithLabelValues(r.Topic).Inc()
	n, due := w.invalidLog.Due(time.Now())
	if !due {
		return
	}
	f, _ := p.Field(first)
	w.logger.Warn("enrich: a field listed as a counter holds no counter value (a whole number from 0 to 2^64-1); no rate, not listed as a counter",
		slog.String("topic", r.Topic), slog.Int("partition", int(r.Partition)), slog.Int64("offset", r.Offset),
		slog.String("device", p.Device), slog.String("measurement", p.Measurement), slog.String("field", first),
		slog.Any("value", f.Value()), slog.Int("times", n))
}

// stateSample is a status (snmp_up, an interface's or a BGP session's
// state) at a sample's time.
type stateSample struct {
	v  int64
	at time.Time
	// reports is the detector's count of state reports when this
	// state last asked it (see detector.pollContradicts).
	reports uint64
	// deleted is when a gNMI delete removed the object since
	// (openConfigDelete); zero if none did.
	deleted time.Time
	// warm says a warm-up took the sample: the process before a restart
	// (or the partition's previous owner) judged it live.
	warm bool
	// older says a reach back took it (warmOlder): older than the
	// window's, it is the only kind a reach back's sample replaces.
	older bool
}

// newer reports whether a sample of time at is to be taken over the last
// one of a state, prev: not older (an older one is a poll produced again,
// or another poller's crossing at a handover: its status is of the past,
// and flipping the state back would raise a change and its reverse). Nor
// an older one after a last stamped ahead of weir's clock, which a device
// clock set back left (see stampedAhead). A reach back's sample (olderWarm)
// takes the place of another reach back's, or of one seen before its
// record's time (kept from before the worker lost the partition), alone,
// as a worker that ran all along took it, by that worker's clock then
// (olderSeen): the window's are newer in the log whatever their times say
// (a device clock ahead then and set right since; a resync delete stamped
// by weir's clock, the updates by a device's behind it).
func (w *MetricsWorker) newer(at time.Time, prev seen[stateSample]) bool {
	now := w.rates.now
	if w.olderWarm {
		if !prev.v.older && prev.seen >= w.olderSeen {
			return false
		}
		now = w.olderSeen
	}
	return !at.Before(prev.v.at) || stampedAhead(prev.v.at, now) && !stampedAhead(at, now)
}

// uptimeSample is a device's sysUpTime (hundredths of a second) at a
// sample's time.
type uptimeSample struct {
	ticks uint32
	at    time.Time
}

// seen is a value with when it was last seen (Unix seconds, weir's clock).
type seen[T any] struct {
	v    T
	seen int64
}

// nameInterface tells the detector's interfaceNames that device's
// interface index is named name, by row (polled: an SNMP row; else a gNMI
// one) from agent, when row.names says it must. A row whose index changed
// (a gNMI interface renumbered) drops the index it named before, if it
// still holds it.
func (w *MetricsWorker) nameInterface(row *rowCounters, device, index, name string, agent netip.Addr, polled bool) {
	if row.nameID == 0 {
		row.nameID = w.det.names.newRowID()
	}
	if row.nameEntry != nil && row.namedDevice == device && row.namedIndex != index {
		w.det.names.drop(row.namedDevice, row.namedIndex, row.nameID)
	}
	row.nameEntry, row.nameSets = w.det.names.set(device, index, name, row.nameID, agent, polled)
	row.named, row.namedDevice, row.namedIndex = name, device, index
}

// gnmiAgent is the address a gNMI row's target is dialed at (agent, from
// the GNMITargets), as the interface names take it for a trap's address:
// none when no trap from it is named the target's (several targets are
// dialed at it, or an SNMP target polls it, whose rows name it).
func (w *MetricsWorker) gnmiAgent(agent string) netip.Addr {
	a := senderAddr(agent)
	if _, ok := w.gnmi.device(a); !ok {
		return netip.Addr{}
	}
	if _, ok := w.targets.device(a); ok {
		return netip.Addr{}
	}
	return a
}

// openConfigIfIndex is a gNMI interface row's OpenConfig ifindex
// (/interfaces/interface/state/ifindex, a uint32: the leaf, or the field
// of the interface's JSON object), when it has one.
func openConfigIfIndex(p *telemetry.Point) (uint64, bool) {
	for _, k := range [...]string{"ifindex", "state/ifindex"} {
		f, ok := p.Field(k)
		if !ok {
			continue
		}
		var n uint64
		switch f.Kind {
		case telemetry.FieldInt:
			if f.Int() <= 0 {
				return 0, false
			}
			n = uint64(f.Int())
		case telemetry.FieldUint:
			n = f.Uint()
		case telemetry.FieldFloat:
			x := f.Float()
			if x != math.Trunc(x) || x <= 0 || x > math.MaxUint32 {
				return 0, false
			}
			n = uint64(x)
		case telemetry.FieldString: // a uint64 in JSON-IETF; not uint32's, but a target may
			v, err := strconv.ParseUint(f.Str, 10, 32)
			if err != nil {
				return 0, false
			}
			n = v
		default:
			return 0, false
		}
		if n == 0 || n > math.MaxUint32 {
			return 0, false // 0: no ifIndex (RFC 2863's start at 1)
		}
		return n, true
	}
	return 0, false
}

// forgetName drops the interface name a forgotten row gave traps, unless
// another row has set it since.
func (w *MetricsWorker) forgetName(row *rowCounters) {
	if row.nameEntry != nil {
		w.det.names.drop(row.namedDevice, row.namedIndex, row.nameID)
	}
}

// forgetStates drops the states and uptimes not seen since cutoff.
func (w *MetricsWorker) forgetStates(cutoff time.Time) {
	c := cutoff.Unix()
	w.statePeak.note(len(w.state))
	w.uptimesPeak.note(len(w.uptimes))
	w.sysNamesPeak.note(len(w.sysNames))
	quietSince := cutoff.Add(forgetAfter - forgetQuietAfter).Unix()
	for k, s := range w.state {
		if s.seen < c && !w.inOutage(k.row.device, c) && !(k.sentOnChange() && s.seen >= quietSince) {
			w.deleteState(k)
		}
	}
	for k, s := range w.uptimes {
		if s.seen < c {
			delete(w.uptimes, k)
			w.targetBytes -= len(k)
		}
	}
	for k, s := range w.sysNames {
		if s.seen < c {
			delete(w.sysNames, k)
			w.targetBytes -= len(k) + len(s.name)
		}
	}
	// A target down whose down went with its state (its statuses stopped:
	// the collector moved to another process, or its queue had no room
	// for the removal) is no longer known down.
	for target := range w.gnmiDown {
		if _, ok := w.state[stateKey{row: rowKey{device: target}, what: "up"}]; !ok {
			delete(w.gnmiDown, target)
		}
	}
	w.state = shrunk(w.state, &w.statePeak)
	w.uptimes = shrunk(w.uptimes, &w.uptimesPeak)
	w.sysNames = shrunk(w.sysNames, &w.sysNamesPeak)
}

// inOutage reports whether target's polls fail, as they have since its
// states were last seen: its last poll (at or after cutoff, a Unix time)
// said snmp_up 0. The states of its interfaces and sessions are kept
// through such an outage, however long: a link that went down during it
// is a change when the device answers again, not a first state. Once its
// polls answer, those of objects gone meanwhile (a removed port) go an
// hour later, as ever.
func (w *MetricsWorker) inOutage(target string, cutoff int64) bool {
	up, ok := w.state[stateKey{row: rowKey{device: target}, what: "up"}]
	return ok && up.v.v == 0 && up.seen >= cutoff
}

// sysName is a target's sysName, with the named inventory entry it finds
// in the inventory it was last looked up in.
type sysName struct {
	name string
	idx  *inventoryIndex // nil: not looked up yet
	d    *Device
	seen int64
}

// nameOrNone is the sysName held, "" for none (a nil sn).
func (sn *sysName) nameOrNone() string {
	if sn == nil {
		return ""
	}
	return sn.name
}

// lookupSysName finds the named inventory entry of target's sysName, which
// its system rows (the system profile's snmp_system) give; the target's
// other rows follow them in each poll, in the same partition. nil when the
// target has not given one or the inventory has no such name. The lookup
// is made once per sysName and inventory (reloaded), not once per row.
func (w *MetricsWorker) lookupSysName(p *telemetry.Point, target string) *Device {
	sn := w.sysNames[target]
	if p.Measurement == "snmp_system" {
		if f, ok := p.Field("sysName"); ok && f.Kind == telemetry.FieldString && f.Str != "" {
			if sn == nil || sn.name != f.Str {
				grow := len(f.Str) - len(sn.nameOrNone())
				if sn == nil {
					grow += len(target)
				}
				if sn == nil && len(w.sysNames) >= w.maxObjects || grow > 0 && w.targetBytes+grow > w.maxTargetBytes {
					w.untrack(untrackedSysNames, target)
					return nil
				}
				if sn == nil {
					sn = &sysName{}
					w.sysNames[target] = sn
				}
				w.targetBytes += grow
				sn.name, sn.idx = strings.Clone(f.Str), nil // kept past the record
			}
			sn.seen = w.rates.now
			w.targets.setSysName(target, sn.name) // at every system row, once a poll
		}
	}
	if sn == nil {
		return nil
	}
	if p.Measurement == telemetry.MeasurementSNMPStatus {
		if up, ok := intField(p, "snmp_up"); ok && up == 0 {
			// A failed poll reads no sysName but still polls the target:
			// forgotten an hour into an outage, its events (its removal's
			// cleared event) would go out under the target's name.
			sn.seen = w.rates.now
		}
	}
	if idx := w.inv.idx.Load(); sn.idx != idx {
		// A reload between this load and the lookup is looked up again
		// at the next row.
		before, learned := sn.d, sn.idx == nil
		sn.idx, sn.d = idx, w.inv.lookupNamed(sn.name)
		if learned && !before.named() && sn.d.named() && sn.d.Name != target && !w.warming {
			// Named as the target until now (its first polls failed,
			// reading no sysName): an outage raised under that name
			// ends under this one. (A reload's renames are the
			// detector's own: followInventory.)
			w.det.targetNamed(target, sn.d.Name)
		}
	}
	return sn.d
}

// States openConfigState reports.
const (
	stateUp   = 1
	stateDown = 2
)

// operState reads an IF-MIB ifOperStatus as openConfigState reads
// oper-status (the same enumeration): up(1) is up; down(2), notPresent(6)
// and lowerLayerDown(7) are down; testing(3), unknown(4) and dormant(5)
// are neither (false), so they raise nothing and a change from up to
// down across them is one interface_down.
func operState(st int64) (int64, bool) {
	switch st {
	case 1:
		return stateUp, true
	case 2, 6, 7:
		return stateDown, true
	}
	return 0, false
}

// stateChange is an OpenConfig state leaf read from a gNMI record.
type stateChange struct {
	family string // "interface" or "bgp_peer", the events' prefix
	object string // the interface name or the neighbor address
	state  int64  // stateUp or stateDown
	leaf   string // "oper-status" or "session-state", and its value
	value  string // (without its module), for the events' message
}

// openConfigState reads the state a gNMI record reports, whether the
// subscription was to the leaf or to a container above it (then the leaf
// arrives expanded from JSON as state/oper-status):
//
//   - /interfaces/interface[name=X]/state/oper-status: UP is up; DOWN,
//     LOWER_LAYER_DOWN and NOT_PRESENT are down (TESTING, DORMANT and
//     UNKNOWN are neither, so they raise nothing);
//   - .../bgp/neighbors/neighbor[neighbor-address=A]/state/session-state:
//     ESTABLISHED is up, any other state down (leaving ESTABLISHED is a
//     lost session; IDLE -> ACTIVE is not an event).
//
// Module prefixes on values ("openconfig-bgp-types:ESTABLISHED") are
// dropped.
func openConfigState(p *telemetry.Point) (stateChange, bool) {
	switch {
	case p.Measurement == "interfaces_interface_state" || p.Measurement == "interfaces_interface":
		v, ok := openConfigLeaf(p, "oper-status", "state/oper-status")
		if !ok {
			return stateChange{}, false
		}
		name, _ := p.Tag("name")
		ch := stateChange{family: "interface", object: name, leaf: "oper-status", value: v}
		switch v {
		case "UP":
			ch.state = stateUp
		case "DOWN", "LOWER_LAYER_DOWN", "NOT_PRESENT":
			ch.state = stateDown
		default:
			return stateChange{}, false
		}
		return ch, true
	case strings.HasSuffix(p.Measurement, "bgp_neighbors_neighbor_state") || strings.HasSuffix(p.Measurement, "bgp_neighbors_neighbor"):
		v, ok := openConfigLeaf(p, "session-state", "state/session-state")
		if !ok {
			return stateChange{}, false
		}
		addr, _ := p.Tag("neighbor-address")
		instance, _ := p.Tag("name") // the network-instance's
		ch := stateChange{family: "bgp_peer", object: sessionObject(addr, instance), state: stateDown, leaf: "session-state", value: v}
		if v == "ESTABLISHED" {
			ch.state = stateUp
		}
		return ch, true
	}
	return stateChange{}, false
}

// stateDelete is what a gNMI delete removes of the states openConfigState
// reads: one object of a family, or every one (of one network instance,
// for BGP sessions).
type stateDelete struct {
	family   string // "interface" or "bgp_peer"
	object   string // the interface or the session (sessionObject); "" every one
	instance string // for every bgp_peer of one network instance
	// byInstance: only the sessions of instance.
	byInstance bool
}

// bgpStatePath is an OpenConfig BGP session state's path as a measurement
// names it (what openConfigState reads is under it).
const bgpStatePath = "network_instances_network_instance_protocols_protocol_bgp_neighbors_neighbor_state_session_state"

// openConfigDelete reads a gNMI delete (the single field deleted=true,
// collectors/gnmi) of a path at or above an interface's oper-status or a
// BGP session's state: a port-channel or a peer removed from the config,
// a network instance removed. False for any other record.
func openConfigDelete(p *telemetry.Point) (stateDelete, bool) {
	if !p.IsDelete() {
		return stateDelete{}, false
	}
	m := p.Measurement
	switch m {
	case "interfaces", "interfaces_interface", "interfaces_interface_state", "interfaces_interface_state_oper_status":
		name, _ := p.Tag("name")
		return stateDelete{family: "interface", object: name}, true
	}
	// At or above a neighbor's session-state: a prefix of the OpenConfig
	// path, or its bgp part under another root (openConfigState takes
	// any measurement ending in bgp_neighbors_neighbor_state).
	under := strings.HasPrefix(bgpStatePath, m) && (len(m) == len(bgpStatePath) || bgpStatePath[len(m)] == '_')
	if !under {
		for _, s := range [...]string{"_bgp", "_bgp_neighbors", "_bgp_neighbors_neighbor", "_bgp_neighbors_neighbor_state", "_bgp_neighbors_neighbor_state_session_state"} {
			if strings.HasSuffix("_"+m, s) {
				under = true
				break
			}
		}
	}
	if !under {
		return stateDelete{}, false
	}
	if id, ok := p.Tag("identifier"); ok {
		// A protocol deleted: BGP's only.
		if i := strings.LastIndexByte(id, ':'); i >= 0 {
			id = id[i+1:]
		}
		if !strings.EqualFold(id, "BGP") {
			return stateDelete{}, false
		}
	}
	addr, _ := p.Tag("neighbor-address")
	instance, byInstance := p.Tag("name") // the network-instance's
	if addr != "" {
		return stateDelete{family: "bgp_peer", object: sessionObject(addr, instance)}, true
	}
	return stateDelete{family: "bgp_peer", instance: instance, byInstance: byInstance}, true
}

// forgetDeleted marks the states of target that del removed at at as
// deleted: the object's next state is a baseline, not a change (see
// enrich). rowObject is the delete's row object, as enrich keys the
// states of the rows below it. A delete older than a state's last sample
// leaves it. The detector forgets the events the object's state raised
// too (device is the events' device, detectedAt the delete's time on the
// detector's clock): else the object made again would have its first
// state judged against them.
func (w *MetricsWorker) forgetDeleted(target, rowObject string, del stateDelete, at time.Time, device string, detectedAt time.Time) {
	mark := func(key stateKey) {
		if prev, ok := w.state[key]; ok && w.newer(at, prev) {
			// The state's own time stays: a target may stamp its
			// deletes by another clock than its updates.
			prev.v.deleted, prev.seen = at, w.seenNow()
			w.state[key] = prev
			if w.det != nil {
				w.det.forgetObject(device, key.what, key.object, detectedAt)
			}
		}
	}
	if del.object != "" {
		mark(stateKey{row: rowKey{target, "", rowObject}, what: del.family, object: del.object})
		return
	}
	for key := range w.state {
		if key.row.device != target || key.row.measurement != "" || key.what != del.family {
			continue
		}
		if del.byInstance && key.object != sessionObject(sessionNeighbor(key.object), del.instance) {
			continue
		}
		mark(key)
	}
}

// sessionNeighbor is the neighbor of a sessionObject.
func sessionNeighbor(object string) string {
	neighbor, _, _ := strings.Cut(object, vrfSep)
	return neighbor
}

// openConfigLeaf is the first of the string fields names that p has, in
// upper case and without a module prefix ("openconfig-bgp-types:ESTABLISHED"
// is ESTABLISHED); false when p has none.
func openConfigLeaf(p *telemetry.Point, names ...string) (string, bool) {
	for _, n := range names {
		if f, ok := p.Field(n); ok && f.Kind == telemetry.FieldString {
			v := f.Str
			if i := strings.LastIndexByte(v, ':'); i >= 0 {
				v = v[i+1:]
			}
			return strings.ToUpper(v), true
		}
	}
	return "", false
}

// The normalised interface rates, one naming for interface counters
// whichever the source, so dashboards need one query.
const (
	inDiscards = iota
	inErrors
	inOctets
	outDiscards
	outErrors
	outOctets
	normalisedRates
)

// normalisedRateNames are the fields of the normalised rates, by index.
var normalisedRateNames = [normalisedRates]string{"in_discards_rate", "in_errors_rate", "in_octets_rate",
	"out_discards_rate", "out_errors_rate", "out_octets_rate"}

// counterRate says which normalised rate a counter gives, and how much
// it is preferred (0 first: IF-MIB's 64-bit counters over the 32-bit ones).
type counterRate struct{ rate, rank int }

// snmpInterfaceCounters and openConfigCounters are the counters the
// normalised rates come from, by source.
var (
	snmpInterfaceCounters = map[string]counterRate{
		"ifHCInOctets": {inOctets, 0}, "ifInOctets": {inOctets, 1},
		"ifHCOutOctets": {outOctets, 0}, "ifOutOctets": {outOctets, 1},
		"ifInErrors": {inErrors, 0}, "ifOutErrors": {outErrors, 0},
		"ifInDiscards": {inDiscards, 0}, "ifOutDiscards": {outDiscards, 0},
	}
	openConfigCounters = map[string]counterRate{
		"in-octets": {inOctets, 0}, "out-octets": {outOctets, 0},
		"in-errors": {inErrors, 0}, "out-errors": {outErrors, 0},
		"in-discards": {inDiscards, 0}, "out-discards": {outDiscards, 0},
	}
	// The same, from a subscription to the state container or the
	// interface, sent as one JSON object (collectors/gnmi expands it).
	openConfigStateCounters     = prefixedCounters("counters/", openConfigCounters)
	openConfigInterfaceCounters = prefixedCounters("state/counters/", openConfigCounters)
)

func prefixedCounters(prefix string, m map[string]counterRate) map[string]counterRate {
	out := make(map[string]counterRate, len(m))
	for k, v := range m {
		out[prefix+k] = v
	}
	return out
}

// interfaceCounterNames returns the counters the normalised rates of a
// measurement come from, or nil for a measurement that has none.
func interfaceCounterNames(measurement string) map[string]counterRate {
	switch measurement {
	case "snmp_interface":
		return snmpInterfaceCounters
	case "interfaces_interface_state_counters":
		return openConfigCounters
	case "interfaces_interface_state":
		return openConfigStateCounters
	case "interfaces_interface":
		return openConfigInterfaceCounters
	}
	return nil
}

// lowBitsCounting reports whether an IF-MIB row's 32-bit octet counter of
// normalised rate rate (in or out octets) is not 0. Its 64-bit one reading
// 0 then cannot be the port's (the 32-bit one is its low 32 bits, RFC
// 2863): an agent that lists ifXTable's counters and leaves them at 0 on
// some ports. The 32-bit one gives that rate; else the normalised rate
// would be 0 for ever on a busy port.
func lowBitsCounting(p *telemetry.Point, rate int) bool {
	if p.Measurement != "snmp_interface" {
		return false
	}
	name := ""
	switch rate {
	case inOctets:
		name = "ifInOctets"
	case outOctets:
		name = "ifOutOctets"
	default:
		return false
	}
	f, ok := p.Field(name)
	if !ok || !f.Counter {
		return false
	}
	v, ok := counterValue(f)
	return ok && v != 0
}

// interfaceRates collects a row's normalised rates.
type interfaceRates struct {
	rate [normalisedRates]float64
	rank [normalisedRates]int8 // 0 none yet, else 1 + the rank of the counter it came from
	// best is 1 + the best rank of the counters the row has, with a rate
	// or not: a rate comes only from that counter. When ifHCInOctets was
	// reset (no rate), ifInOctets, its low 32 bits, went back too and
	// reads as a 32-bit wrap: a phantom rate, and utilisation over 100%.
	best [normalisedRates]int8
}

// present notes that the row has the counter c comes from, whether it
// gave a rate or not.
func (n *interfaceRates) present(c counterRate) {
	if b := n.best[c.rate]; b == 0 || int(b) > c.rank+1 {
		n.best[c.rate] = int8(c.rank + 1)
	}
}

// add offers the rate of the counter c comes from.
func (n *interfaceRates) add(c counterRate, rate float64) {
	if r := n.rank[c.rate]; r == 0 || int(r) > c.rank+1 {
		n.rate[c.rate], n.rank[c.rate] = rate, int8(c.rank+1)
	}
}

// appendFields appends the normalised rates and, for a known speed in
// Mbit/s, speed_mbps and the utilisation in percent of span, what the
// link could carry over the rates' interval (rowCounters.spanSpeed: at
// least speed), sorted by key.
func (n *interfaceRates) appendFields(fs []telemetry.Field, speed, span float64) []telemetry.Field {
	for i := range n.rank {
		if n.rank[i] != n.best[i] {
			n.rank[i] = 0 // the best counter gave no rate this time
		}
	}
	for i, name := range normalisedRateNames {
		if n.rank[i] != 0 {
			fs = append(fs, telemetry.FloatField(name, n.rate[i]))
		}
	}
	if speed > 0 {
		fs = append(fs, telemetry.FloatField("speed_mbps", speed))
		for _, dir := range [...]struct {
			rate int
			name string
		}{{inOctets, "in_utilization_pct"}, {outOctets, "out_utilization_pct"}} {
			if n.rank[dir.rate] != 0 {
				pct := telemetry.RoundSignificant(n.rate[dir.rate]*8/(span*1e6)*100, rateDigits)
				fs = insertField(fs, telemetry.FloatField(dir.name, pct))
			}
		}
	}
	return fs
}

// maxUtilisation is the most of its speed an interface's octet rate is
// believed across a 32-bit wrap: above it (a fifth over, for samples a few
// seconds off their schedule), the counter was reset, not wrapped.
const maxUtilisation = 1.2

// minFrameBits is the least a packet takes of a link: a minimum Ethernet
// frame of 64 octets (runts, counted as errors, are shorter, but not by
// the preamble and gap of 20 octets more that every frame takes too).
const minFrameBits = 64 * 8

// interfaceSpeed is an IF-MIB row's speed in Mbit/s: ifSpeed where it is
// exact (below 2^32-1 bit/s) and agrees with ifHighSpeed, which is it
// rounded to the nearest Mbit/s (RFC 2863: a T1's 1.544 is 2, a 512 kbit/s
// line's 1), else ifHighSpeed, else ifSpeed when it is not saturated; 0
// when unknown. An ifSpeed that does not agree (an agent that wraps a 10G
// port's modulo 2^32) is not taken over ifHighSpeed.
func interfaceSpeed(p *telemetry.Point) float64 {
	var high, bps float64
	if speed, ok := gauge32(p, "ifHighSpeed"); ok && speed > 0 {
		high = speed
	}
	if speed, ok := gauge32(p, "ifSpeed"); ok && speed > 0 && speed < 4294967295 {
		bps = speed
	}
	if high == 0 || bps > 0 && math.Abs(bps-high*1e6) < 1e6 {
		// Within a Mbit/s: ifHighSpeed rounded, or truncated as some
		// agents do.
		return bps / 1e6
	}
	return high
}

// linkSpeed is the speed in Mbit/s of the interface of a row with
// normalised rates, 0 when unknown: a gNMI row's is its interface's
// speed rows' (gnmiSpeed), else an IF-MIB row's own (interfaceSpeed). A
// wrap of a gNMI counter is measured against it too, as an IF-MIB one is.
func (w *MetricsWorker) linkSpeed(p *telemetry.Point, target string) float64 {
	switch p.Measurement {
	case "interfaces_interface_state_counters", "interfaces_interface_state", "interfaces_interface":
		return w.gnmiSpeed(p, target)
	}
	return interfaceSpeed(p)
}

// gauge32 is field k of p when it is a Gauge32's value (ifSpeed,
// ifHighSpeed; a gNMI lag-speed, a uint32): a whole number from 0 to 2^32-1. A fraction or a boolean
// (Number takes true for 1) is a producer's mistake, no speed: 5e-324
// Mbit/s made utilisation +Inf, which no JSON holds (the row was dropped),
// and 0.001 made it 800,000 percent.
func gauge32(p *telemetry.Point, k string) (float64, bool) {
	f, ok := p.Field(k)
	if !ok || f.Kind == telemetry.FieldBool {
		return 0, false
	}
	x, ok := f.Number()
	return x, ok && x >= 0 && x <= math.MaxUint32 && x == math.Trunc(x)
}

// leastSpeed is the least an IF-MIB row's speed can be, in Mbit/s, when
// interfaceSpeed knows none: an ifSpeed of 4294967295 (2^32-1) without
// an ifHighSpeed (no ifXTable, or 0) is a link of that speed or more (RFC
// 2863), whose 32-bit octet counter can wrap in 8 s. 0 otherwise.
func leastSpeed(p *telemetry.Point) float64 {
	if f, ok := p.Field("ifSpeed"); ok && f.Kind != telemetry.FieldBool {
		if speed, ok := f.Number(); ok && speed >= 4294967295 {
			return 4294967295 / 1e6
		}
	}
	return 0
}

// rateDigits are the significant digits rates and utilisation keep. Two
// counter samples taken milliseconds off their schedule tell no more, and
// shorter numbers are cheaper to write and store (2057167.43, not
// 2057167.430390082; 0.56, not 0.5599999999999999).
const rateDigits = 9

// rateName is a counter's rate field name (name + "_rate"), made once per
// counter name.
func (w *MetricsWorker) rateName(counter string) string {
	n, ok := w.rateNames[counter]
	if !ok {
		if len(w.rateNames) > 100_000 {
			clear(w.rateNames) // bounded, whatever the counters' names
		}
		n = counter + "_rate"
		w.rateNames[counter] = n
	}
	return n
}

// normalisedFields are what interfaceView carries over, sorted.
var normalisedFields = []string{"in_discards_rate", "in_errors_rate", "in_octets_rate", "in_utilization_pct",
	"oper_up", "out_discards_rate", "out_errors_rate", "out_octets_rate", "out_utilization_pct", "speed_mbps"}

// viewDroppedTags are the row tags an interface view does not carry: the
// interface is its "interface" tag, its alias "description".
var viewDroppedTags = map[string]bool{"ifName": true, "ifDescr": true, "ifIndex": true, "ifAlias": true,
	"name": true, "path": true, "agent": true}

// interfaceView makes v the source-independent "interface" record of an
// enriched SNMP or gNMI interface row p; false for other rows.
func (w *MetricsWorker) interfaceView(p, v *telemetry.Point) bool {
	if object, ok := viewDeleted(p); ok {
		deleteView(p, v, w.longNames.of(object))
		return true
	}
	object, ok := viewObjectOf(p, w.longNames)
	if !ok {
		return false
	}
	rc := &w.viewRecipe
	if !rc.sameFields(p.Fields) {
		rc.planFields(p.Fields)
	}
	fields := v.Fields[:0]
	for _, i := range rc.fieldPicks {
		fields = append(fields, p.Fields[i])
	}
	if object == "" || len(fields) == 0 {
		v.Fields = fields
		return false
	}
	alias, _ := p.Tag("ifAlias")
	withIndex := viewKeepsIndex(p)
	if !rc.sameTags(p.Tags, alias != "", withIndex) {
		rc.planTags(p.Tags, alias != "", withIndex)
	}
	tags := v.Tags[:0]
	for _, step := range rc.tagSteps {
		switch step {
		case viewInterface:
			tags = append(tags, telemetry.Tag{Key: "interface", Value: object})
		case viewDescription:
			tags = append(tags, telemetry.Tag{Key: "description", Value: alias})
		default:
			tags = append(tags, p.Tags[step])
		}
	}
	*v = telemetry.Point{V: telemetry.Version, Measurement: "interface", Device: p.Device, Tags: tags, Fields: fields,
		Counters: v.Counters[:0], Time: p.Time, ReceivedAt: p.ReceivedAt, Source: "enrich"}
	return true
}

// viewDeleted reports whether p is a gNMI delete of an interface, of its
// state or of every interface (object ""): what its "interface" record
// shows is gone. A leaf's or a counters container's delete is not: the
// record's other fields stay.
func viewDeleted(p *telemetry.Point) (object string, ok bool) {
	if !p.IsDelete() {
		return "", false // every row but a delete: checked first, at a length's cost
	}
	switch p.Measurement {
	case "interfaces", "interfaces_interface", "interfaces_interface_state":
	default:
		return "", false
	}
	del, ok := openConfigDelete(p)
	return del.object, ok && del.family == "interface"
}

// deleteView makes v the delete of the "interface" record of object
// (every one of the device, for ""), from the delete row p: deleted=true,
// as the gNMI collector publishes a delete, with the view's tags but no
// path. Rare: not planned as interfaceView's rows are.
func deleteView(p, v *telemetry.Point, object string) {
	tags := v.Tags[:0]
	for _, t := range p.Tags {
		if !viewDroppedTags[t.Key] && t.Key != "interface" {
			tags = append(tags, t)
		}
	}
	if object != "" {
		at, _ := slices.BinarySearchFunc(tags, "interface", func(t telemetry.Tag, k string) int { return strings.Compare(t.Key, k) })
		tags = slices.Insert(tags, at, telemetry.Tag{Key: "interface", Value: object})
	}
	fields := append(v.Fields[:0], telemetry.BoolField("deleted", true))
	*v = telemetry.Point{V: telemetry.Version, Measurement: "interface", Device: p.Device, Tags: tags, Fields: fields,
		Counters: v.Counters[:0], Time: p.Time, ReceivedAt: p.ReceivedAt, Source: "enrich"}
}

// viewObject is the interface an interface row p is about (possibly
// empty); false for rows that have no interface view.
func viewObject(p *telemetry.Point) (string, bool) { return viewObjectOf(p, nil) }

// viewObjectOf is viewObject, keeping the NX-OS names it makes in names.
func viewObjectOf(p *telemetry.Point, names longNames) (string, bool) {
	switch p.Measurement {
	case "snmp_interface":
		name := firstTag(p, "ifName", "ifDescr", "ifIndex")
		if descr, ok := p.Tag("ifDescr"); ok && abbreviates(name, descr) {
			// Cisco IOS's ifName is Gi0/1, its ifDescr and gNMI's name
			// GigabitEthernet0/1: one port, one view, whichever polls it.
			return descr, true
		}
		return name, true
	case "interfaces_interface_state_counters", "interfaces_interface_state", "interfaces_interface":
		object, _ := p.Tag("name")
		return names.of(object), true
	}
	return "", false
}

// longNames maps NX-OS's OpenConfig port names to its IF-MIB ones, made
// once each, not at every row (a nil one makes them each time).
type longNames map[string]string

// maxLongNames bounds longNames: past it, it starts again.
const maxLongNames = 1 << 14

// of is name as the view names it: NX-OS's OpenConfig eth1/1 is
// Ethernet1/1, its ifName and ifDescr (and syslog's), so a port both
// polled and streamed is one series; other names are as they are.
func (m longNames) of(name string) string {
	if !nxosOpenConfigEth(name) {
		return name
	}
	if long, ok := m[name]; ok {
		return long
	}
	long := "Ethernet" + name[len("eth"):]
	if m != nil {
		if len(m) >= maxLongNames {
			clear(m)
		}
		m[name] = long
	}
	return long
}

// nxosOpenConfigEth: name is lower-case eth, a digit and a slash after
// it (eth1/1, eth1/49/1), as NX-OS's OpenConfig names a port; a Linux
// name (eth0, eth0.100) cannot hold a slash, and is its own.
func nxosOpenConfigEth(name string) bool {
	return len(name) > 4 && name[:3] == "eth" && name[3] >= '0' && name[3] <= '9' && strings.IndexByte(name[4:], '/') >= 0
}

// viewKeepsIndex reports whether the interface view of row p keeps its
// ifIndex tag: an IF-MIB row without an ifName is named by its ifDescr,
// which two ports of a device may share (an agent without ifXTable, whose
// ports are all "Ethernet Interface"); without its ifIndex, their views
// would be one series, each poll's second value overwriting the first.
func viewKeepsIndex(p *telemetry.Point) bool {
	if p.Measurement != "snmp_interface" {
		return false
	}
	name, _ := p.Tag("ifName")
	descr, _ := p.Tag("ifDescr")
	index, _ := p.Tag("ifIndex")
	return name == "" && descr != "" && index != ""
}

// unknownTags mark a device the inventory does not know.
var unknownTags = []telemetry.Tag{{Key: "unknown", Value: "true"}}

// mergeTags appends to dst the tags of a and b, both sorted by key, in
// key order; b's tag wins where both have a key.
func mergeTags(dst, a, b []telemetry.Tag) []telemetry.Tag {
	return mergeSorted(dst, a, b, func(t telemetry.Tag) string { return t.Key })
}

// mergeSorted appends to dst the elements of a and b, both sorted by key,
// in key order; b's element wins where both have a key.
func mergeSorted[T any](dst, a, b []T, key func(T) string) []T {
	i, j := 0, 0
	for i < len(a) && j < len(b) {
		switch c := strings.Compare(key(a[i]), key(b[j])); {
		case c < 0:
			dst = append(dst, a[i])
			i++
		case c > 0:
			dst = append(dst, b[j])
			j++
		default:
			dst = append(dst, b[j])
			i, j = i+1, j+1
		}
	}
	dst = append(dst, a[i:]...)
	return append(dst, b[j:]...)
}

func compareFields(a, b telemetry.Field) int { return strings.Compare(a.Key, b.Key) }

// insertField inserts f into fs, sorted by key, replacing a field of the
// same key.
func insertField(fs []telemetry.Field, f telemetry.Field) []telemetry.Field {
	i, found := slices.BinarySearchFunc(fs, f, compareFields)
	if found {
		fs[i] = f
		return fs
	}
	return slices.Insert(fs, i, f)
}

// tagMap is tags as a map, for the events a row raises.
func tagMap(tags []telemetry.Tag) map[string]string {
	m := make(map[string]string, len(tags))
	for _, t := range tags {
		m[t.Key] = t.Value
	}
	return m
}

// abbreviates reports whether interface name short is long abbreviated
// as IOS abbreviates it (Gi0/1, GigabitEthernet0/1; Po1, Port-channel1):
// the letters before the first digit a prefix of long's, ignoring case,
// and the rest the same.
func abbreviates(short, long string) bool {
	i := strings.IndexAny(short, "0123456789")
	j := strings.IndexAny(long, "0123456789")
	return i > 0 && j > i && short[i:] == long[j:] && strings.EqualFold(short[:i], long[:i])
}

// firstTag returns the first of the keys p has a non-empty tag for.
func firstTag(p *telemetry.Point, keys ...string) string {
	for _, k := range keys {
		if v, _ := p.Tag(k); v != "" {
			return v
		}
	}
	return ""
}

// discontinuityTime is when the row's counters last started again, by
// the agent's word: IF-MIB's ifCounterDiscontinuityTime (a sysUpTime) or
// OpenConfig's counters/last-clear (ns since the epoch, a float past 2^53:
// compared, never computed with; epoch says it is one), named as the
// row's subscription path makes it. Looked up once, in an SNMP row only
// when it has counters; in a gNMI one whatever it has: a target sending
// the leaves that changed may send last-clear without them.
func discontinuityTime(p *telemetry.Point) (t float64, epoch, ok bool) {
	var key string
	switch p.Measurement {
	case "interfaces_interface_state_counters", "interfaces_interface_subinterfaces_subinterface_state_counters":
		key = "last-clear"
	case "interfaces_interface_state", "interfaces_interface_subinterfaces_subinterface_state":
		key = "counters/last-clear"
	case "interfaces_interface", "interfaces_interface_subinterfaces_subinterface":
		key = "state/counters/last-clear"
	default:
		if len(p.Counters) == 0 {
			return 0, false, false
		}
		key = "ifCounterDiscontinuityTime"
	}
	if f, ok := p.Field(key); ok && f.Kind != telemetry.FieldBool {
		if v, ok := f.Number(); ok && v >= 0 {
			return v, key != "ifCounterDiscontinuityTime", true
		}
	}
	return 0, false, false
}

// counterValue is a counter field's value; false for a negative or
// non-integer one. (A counter written as a whole-number float, 1000.0, is
// a FieldInt already: telemetry decodes it as one.)
func counterValue(f *telemetry.Field) (uint64, bool) {
	switch f.Kind {
	case telemetry.FieldUint:
		return f.Uint(), true
	case telemetry.FieldInt:
		return uint64(f.Int()), f.Int() >= 0
	}
	return 0, false
}

// pollFailure is the message of a device_unreachable: the poll's error,
// as the snmp_status record gives it (a copy: the record's bytes are
// reused).
func pollFailure(p *telemetry.Point) string {
	what := "SNMP poll failed"
	if p.Measurement == gnmiStatus {
		what = "gNMI subscription failed"
	}
	if f, ok := p.Field("error"); ok && f.Kind == telemetry.FieldString && f.Str != "" {
		return what + ": " + f.Str
	}
	return what
}

// gnmiStatus is the measurement of the gNMI collector's records of a
// target's failed attempts (gnmi_up 0, with the error) and of its first
// session after (gnmi_up 1). A target that serves publishes none; its data
// says it answers.
const gnmiStatus = telemetry.MeasurementGNMIStatus

// gnmiReach is the object of a gNMI target's reachability events: its
// name after "gnmi:", so that an SNMP target of the same name (whose
// object is "", or its name where the inventory names the device
// otherwise) neither hides its outage nor ends it, as two SNMP targets of
// one device do not.
func gnmiReach(target string) string { return "gnmi:" + target }

// sourceGNMI is the source of the gNMI collector's records.
const sourceGNMI = "gnmi"

// reachability is the target's reachability p says: snmp_up of an
// snmp_status, gnmi_up of a gnmi_status.
func reachability(p *telemetry.Point) (int64, bool) {
	if p.Measurement == gnmiStatus {
		return intField(p, "gnmi_up")
	}
	return intField(p, "snmp_up")
}

// noteGNMIDown keeps the set of gNMI targets whose last status said down
// (gnmiAnswered's): a record of one of them otherwise costs nothing.
func (w *MetricsWorker) noteGNMIDown(target string, down bool) {
	if !down {
		delete(w.gnmiDown, target)
		return
	}
	if w.gnmiDown == nil {
		w.gnmiDown = map[string]bool{}
	}
	if !w.gnmiDown[target] {
		w.gnmiDown[strings.Clone(target)] = true
	}
}

// gnmiAnswered takes data from a gNMI target whose last status said down,
// received after it, for its gnmi_up 1: the target answers. The collector
// says so itself at the first session after a failed attempt, but not
// when the target came back while weir was stopped (the new process's
// first attempt did not fail), nor when its queue had no room for the
// status. Received times both: a status is stamped with weir's clock, data
// with the device's. True when p ends the down: device_reachable, at
// p.ReceivedAt.
func (w *MetricsWorker) gnmiAnswered(p *telemetry.Point, target string) bool {
	if !w.gnmiDown[target] {
		return false
	}
	key := stateKey{row: rowKey{device: target}, what: "up"}
	prev, ok := w.state[key]
	if !ok || prev.v.v != 0 || p.ReceivedAt.IsZero() || !p.ReceivedAt.After(prev.v.at) {
		return false
	}
	w.putState(key, stateSample{v: 1, at: p.ReceivedAt})
	w.noteGNMIDown(target, false)
	return true
}

// ifOperStatusMessage is the message of an interface event a poll raised:
// the status as IF-MIB names it.
func ifOperStatusMessage(st int64) string {
	switch st {
	case 1:
		return "ifOperStatus up(1)"
	case 2:
		return "ifOperStatus down(2)"
	case 6:
		return "ifOperStatus notPresent(6)"
	case 7:
		return "ifOperStatus lowerLayerDown(7)"
	}
	return "ifOperStatus " + strconv.FormatInt(st, 10)
}

// targetRemoved reports the record the SNMP poller publishes for a target a
// reload removed: a snmp_status whose field removed is true.
func targetRemoved(p *telemetry.Point) bool {
	f, ok := p.Field("removed")
	return ok && f.Kind == telemetry.FieldBool && f.Bool()
}

// intField is field k of p as an integer, when it is one.
func intField(p *telemetry.Point, k string) (int64, bool) {
	f, ok := p.Field(k)
	if !ok {
		return 0, false
	}
	switch f.Kind {
	case telemetry.FieldInt:
		return f.Int(), true
	case telemetry.FieldFloat:
		x := f.Float()
		if x == math.Trunc(x) && math.Abs(x) < 1<<53 {
			return int64(x), true
		}
	}
	return 0, false
}
