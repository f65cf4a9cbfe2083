package enrich

import (
	"context"
	"encoding/json"
	"log/slog"
	"strconv"
	"strings"
	"time"

	"github.com/weirnet/weir/broker"
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
	keys     []string // scratch for sorting map keys

	rateOf    map[string]float64 // scratch: a row's counter rates
	rateNames map[string]string  // counter name -> its rate field's name

	rates    *rates
	state    map[string]int64  // last ifOperStatus per device/interface, snmp_up per device
	uptimes  map[string]uint32 // last sysUpTime per device
	out      *outputs
	lastSeen time.Time
}

// NewMetricsWorker builds a metrics worker over raw.snmp.
func NewMetricsWorker(b broker.Broker, inv *Inventory, opts ...WorkerOption) *MetricsWorker {
	w := NewWorker(b, inv, nil, opts...) // shares option handling
	input := w.input
	if input == "" {
		input = telemetry.TopicRawSNMP
	}
	return &MetricsWorker{
		b: b, inv: inv, input: input, topics: w.topics, metrics: telemetry.TopicEnrichedMetrics,
		logger: w.logger, m: w.m, memberID: w.memberID, session: w.session, det: w.det,
		rates: newRates(), state: map[string]int64{}, uptimes: map[string]uint32{},
		rateOf: map[string]float64{}, rateNames: map[string]string{},
	}
}

// Run consumes until ctx ends.
func (w *MetricsWorker) Run(ctx context.Context) error {
	m, err := join(ctx, w.b, []string{w.input}, consumerOptions(w.memberID, w.session), w.logger)
	if err != nil || m == nil {
		return err
	}
	defer m.close()
	w.out = newOutputs(w.b, w.input, w.logger, w.m, m.txn != nil)
	if err := w.out.align(ctx, w.metrics, w.topics.Events); err != nil {
		return err
	}
	var metrics, events []outRecord
	for {
		recs, ok := poll(ctx, m.c, 0, w.logger)
		if !ok {
			return nil
		}
		start := time.Now()
		w.out.track(m.c.Assigned())
		w.rates.setNow(start)
		metrics, events = w.enrichBatch(recs, metrics[:0], events[:0])
		w.m.in.WithLabelValues(w.input).Add(float64(len(recs)))
		if !w.out.deliver(ctx, m, outBatch{w.metrics, metrics}, outBatch{w.topics.Events, events}) {
			return nil
		}
		if now := time.Now(); now.Sub(w.lastSeen) > time.Hour {
			w.rates.forget(now.Add(-time.Hour)) // devices gone for an hour
			w.lastSeen = now
		}
		w.m.batchSeconds.Observe(time.Since(start).Seconds())
	}
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
		m, evs, ok := w.enrich(r)
		if !ok {
			continue
		}
		m0, e0 := len(metrics), len(events)
		metrics, w.keys = appendMetricRecord(metrics, w.keys, &m, r)
		for _, view := range interfaceView(&m) {
			metrics, w.keys = appendMetricRecord(metrics, w.keys, &view, r)
		}
		for _, ev := range evs {
			for _, out := range w.det.observe(ev, detectAt(r, ev.Time)) {
				events = w.evEnc.append(w.m, events, out, r.Partition, r.Offset)
			}
		}
		w.out.replay.put(r, metrics[m0:], events[e0:])
	}
	return metrics, events
}

var schemaMetric = []byte(telemetry.SchemaMetric)

// appendMetricRecord encodes m as a record for the metrics topic, taking
// the source record r's time and position; a metric that cannot be encoded
// is skipped. keys is AppendJSON's scratch.
func appendMetricRecord(recs []outRecord, keys []string, m *telemetry.Metric, r *broker.Record) ([]outRecord, []string) {
	val, keys, err := m.AppendJSON(nil, keys)
	if err != nil {
		return recs, keys
	}
	return append(recs, outRecord{broker.Record{Key: []byte(m.Device), Value: val, Timestamp: r.Timestamp,
		Headers: []broker.Header{{Key: telemetry.HeaderSource, Value: sourceEnr}, {Key: telemetry.HeaderSchema, Value: schemaMetric}}}, r.Partition, r.Offset}), keys
}

// enrich computes one record's enriched metric and the events it shows.
func (w *MetricsWorker) enrich(r *broker.Record) (telemetry.Metric, []telemetry.Event, bool) {
	var m telemetry.Metric
	if err := telemetry.DecodeMetric(r.Value, &m); err != nil {
		w.m.decodeErrors.Inc()
		w.logger.Warn("enrich: skipping undecodable metric", slog.String("topic", r.Topic),
			slog.Int("partition", int(r.Partition)), slog.Int64("offset", r.Offset), slog.Any("error", err))
		return m, nil, false
	}
	at := m.Time
	if at.IsZero() {
		at = m.ReceivedAt
	}
	tags := m.Tags // freshly decoded: ours to add to
	if tags == nil {
		tags = make(map[string]string, 8)
	}
	if d := w.inv.Lookup(m.Device, tags["agent"]); d != nil {
		for k, v := range d.TagsOf() {
			tags[k] = v
		}
	} else {
		tags["unknown"] = "true"
		w.m.unknown.Inc()
	}
	var events []telemetry.Event
	event := func(typ, object string) {
		events = append(events, telemetry.Event{V: telemetry.Version, Type: typ, Device: m.Device, Object: object,
			Tags: tags, Time: at, Cause: telemetry.Cause{Topic: r.Topic, Partition: r.Partition, Offset: r.Offset}})
	}
	// A device whose sysUpTime went back restarted.
	if m.Uptime != 0 {
		if prev, ok := w.uptimes[m.Device]; ok && m.Uptime < prev && prev-m.Uptime < 1<<31 {
			event("device_rebooted", "")
		}
		w.uptimes[m.Device] = m.Uptime
	}
	fields := m.Fields // freshly decoded: numbers typed in place
	if fields == nil {
		fields = make(map[string]any, 8)
	}
	for k, v := range fields {
		fields[k] = plainNumber(v)
	}
	object := firstNonEmpty(tags["ifName"], tags["ifDescr"], tags["ifIndex"], tags["name"])
	series := m.Device + "\x00" + m.Measurement + "\x00" + object
	rateOf := w.rateOf
	clear(rateOf)
	for _, name := range m.Counters {
		v, ok := asUint(fields[name])
		if !ok {
			continue
		}
		if rate, ok := w.rates.observe(series, name, v, at, m.Uptime); ok {
			fields[w.rateName(name)] = rate
			rateOf[name] = rate
		}
	}
	switch m.Measurement {
	case "snmp_status":
		if up, ok := asInt(m.Fields["snmp_up"]); ok {
			key := m.Device + "\x00up"
			if prev, seen := w.state[key]; seen && prev != up {
				if up == 1 {
					event("device_reachable", "")
				} else {
					event("device_unreachable", "")
				}
			}
			w.state[key] = up
		}
	case "interfaces_interface_state_counters": // OpenConfig over gNMI
		normaliseOpenConfig(fields, rateOf)
	case "snmp_interface":
		normaliseInterface(fields, rateOf)
		if st, ok := asInt(m.Fields["ifOperStatus"]); ok && object != "" {
			key := series + "\x00oper"
			if prev, seen := w.state[key]; seen && prev != st && (st == 1 || st == 2) {
				if st == 1 {
					event("interface_up", object)
				} else {
					event("interface_down", object)
				}
			}
			w.state[key] = st
		}
	}
	if ch, ok := openConfigState(&m); ok && ch.object != "" {
		// gNMI on_change: interface oper-status and BGP session state.
		key := series + "\x00" + ch.family + "\x00" + ch.object
		if prev, seen := w.state[key]; seen && prev != ch.state {
			if ch.state == stateUp {
				event(ch.family+"_up", ch.object)
			} else if prev == stateUp {
				event(ch.family+"_down", ch.object)
			}
		}
		w.state[key] = ch.state
	}
	m.Tags, m.Fields, m.Source = tags, fields, "enrich"
	return m, events, true
}

// States openConfigState reports.
const (
	stateUp   = 1
	stateDown = 2
)

// stateChange is an OpenConfig state leaf read from a gNMI record.
type stateChange struct {
	family string // "interface" or "bgp_peer", the events' prefix
	object string // the interface name or the neighbor address
	state  int64  // stateUp or stateDown
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
func openConfigState(m *telemetry.Metric) (stateChange, bool) {
	leaf := func(names ...string) (string, bool) {
		for _, n := range names {
			if v, ok := m.Fields[n].(string); ok {
				if i := strings.LastIndexByte(v, ':'); i >= 0 {
					v = v[i+1:]
				}
				return strings.ToUpper(v), true
			}
		}
		return "", false
	}
	switch {
	case m.Measurement == "interfaces_interface_state" || m.Measurement == "interfaces_interface":
		v, ok := leaf("oper-status", "state/oper-status")
		if !ok {
			return stateChange{}, false
		}
		ch := stateChange{family: "interface", object: m.Tags["name"]}
		switch v {
		case "UP":
			ch.state = stateUp
		case "DOWN", "LOWER_LAYER_DOWN", "NOT_PRESENT":
			ch.state = stateDown
		default:
			return stateChange{}, false
		}
		return ch, true
	case strings.HasSuffix(m.Measurement, "bgp_neighbors_neighbor_state") || strings.HasSuffix(m.Measurement, "bgp_neighbors_neighbor"):
		v, ok := leaf("session-state", "state/session-state")
		if !ok {
			return stateChange{}, false
		}
		ch := stateChange{family: "bgp_peer", object: m.Tags["neighbor-address"], state: stateDown}
		if v == "ESTABLISHED" {
			ch.state = stateUp
		}
		return ch, true
	}
	return stateChange{}, false
}

// interfaceRates are the normalised interface rates and the IF-MIB
// counters they come from, in order of preference.
var interfaceRates = []struct {
	name string
	from []string
}{
	{"in_octets_rate", []string{"ifHCInOctets", "ifInOctets"}},
	{"out_octets_rate", []string{"ifHCOutOctets", "ifOutOctets"}},
	{"in_errors_rate", []string{"ifInErrors"}},
	{"out_errors_rate", []string{"ifOutErrors"}},
	{"in_discards_rate", []string{"ifInDiscards"}},
	{"out_discards_rate", []string{"ifOutDiscards"}},
}

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

// normaliseInterface adds one naming for interface counters, whichever
// source (64-bit when the agent has them), so dashboards need one query:
// in_octets_rate, out_octets_rate, in_errors_rate, out_errors_rate,
// in_discards_rate, out_discards_rate, speed_mbps and utilisation in
// percent of the speed.
func normaliseInterface(fields map[string]any, rateOf map[string]float64) {
	pick := func(names ...string) (float64, bool) {
		for _, n := range names {
			if r, ok := rateOf[n]; ok {
				return r, true
			}
		}
		return 0, false
	}
	for _, n := range interfaceRates {
		if r, ok := pick(n.from...); ok {
			fields[n.name] = r
		}
	}
	speed, ok := asFloat(fields["ifHighSpeed"]) // Mbit/s
	if !ok || speed == 0 {
		if bps, ok := asFloat(fields["ifSpeed"]); ok && bps > 0 && bps < 4294967295 {
			speed, ok = bps/1e6, true
		}
	}
	if speed > 0 {
		fields["speed_mbps"] = speed
		for _, dir := range []string{"in", "out"} {
			if r, ok := fields[dir+"_octets_rate"].(float64); ok {
				fields[dir+"_utilization_pct"] = r * 8 / (speed * 1e6) * 100
			}
		}
	}
	if st, ok := asFloat(fields["ifOperStatus"]); ok {
		fields["oper_up"] = st == 1
	}
}

// normaliseOpenConfig gives OpenConfig interface counters the names
// normaliseInterface gives SNMP's.
func normaliseOpenConfig(fields map[string]any, rateOf map[string]float64) {
	for out, name := range map[string]string{
		"in_octets_rate": "in-octets", "out_octets_rate": "out-octets",
		"in_errors_rate": "in-errors", "out_errors_rate": "out-errors",
		"in_discards_rate": "in-discards", "out_discards_rate": "out-discards",
	} {
		if r, ok := rateOf[name]; ok {
			fields[out] = r
		}
	}
}

// normalisedFields are what interfaceView carries over.
var normalisedFields = []string{"in_octets_rate", "out_octets_rate", "in_errors_rate", "out_errors_rate",
	"in_discards_rate", "out_discards_rate", "speed_mbps", "in_utilization_pct", "out_utilization_pct", "oper_up"}

// interfaceView returns the source-independent "interface" record of an
// enriched SNMP or gNMI interface row, or nothing for other records.
func interfaceView(m *telemetry.Metric) []telemetry.Metric {
	var object string
	switch m.Measurement {
	case "snmp_interface":
		object = firstNonEmpty(m.Tags["ifName"], m.Tags["ifDescr"], m.Tags["ifIndex"])
	case "interfaces_interface_state_counters":
		object = m.Tags["name"]
	default:
		return nil
	}
	fields := map[string]any{}
	for _, f := range normalisedFields {
		if v, ok := m.Fields[f]; ok {
			fields[f] = v
		}
	}
	if object == "" || len(fields) == 0 {
		return nil
	}
	tags := map[string]string{"interface": object}
	for k, v := range m.Tags {
		switch k {
		case "ifName", "ifDescr", "ifIndex", "ifAlias", "name", "path", "agent":
		default:
			tags[k] = v // inventory and target tags
		}
	}
	if a := m.Tags["ifAlias"]; a != "" {
		tags["description"] = a
	}
	return []telemetry.Metric{{V: telemetry.Version, Measurement: "interface", Device: m.Device, Tags: tags, Fields: fields,
		Time: m.Time, ReceivedAt: m.ReceivedAt, Source: "enrich"}}
}

func firstNonEmpty(vs ...string) string {
	for _, v := range vs {
		if v != "" {
			return v
		}
	}
	return ""
}

// plainNumber turns a json.Number into int64, uint64 or float64.
func plainNumber(v any) any {
	n, ok := v.(json.Number)
	if !ok {
		return v
	}
	if i, err := strconv.ParseInt(string(n), 10, 64); err == nil {
		return i
	}
	if u, err := strconv.ParseUint(string(n), 10, 64); err == nil {
		return u
	}
	f, _ := n.Float64()
	return f
}

func asUint(v any) (uint64, bool) {
	switch n := v.(type) {
	case json.Number:
		u, err := strconv.ParseUint(string(n), 10, 64)
		return u, err == nil
	case uint64:
		return n, true
	case int64:
		return uint64(n), n >= 0
	}
	return 0, false
}

func asInt(v any) (int64, bool) {
	switch n := v.(type) {
	case json.Number:
		i, err := strconv.ParseInt(string(n), 10, 64)
		return i, err == nil
	case int64:
		return n, true
	}
	return 0, false
}

func asFloat(v any) (float64, bool) {
	switch n := v.(type) {
	case json.Number:
		f, err := n.Float64()
		return f, err == nil
	case int64:
		return float64(n), true
	case uint64:
		return float64(n), true
	case float64:
		return n, true
	}
	return 0, false
}
