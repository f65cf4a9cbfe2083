package prometheus

import (
	"cmp"
	"context"
	"encoding/binary"
	"fmt"
	"log/slog"
	"math"
	"net/http"
	"slices"
	"time"

	"github.com/klauspost/compress/s2"
	"github.com/prometheus/client_golang/prometheus"
	"google.golang.org/protobuf/encoding/protowire"

	"github.com/weirnet/weir/broker"
	"github.com/weirnet/weir/configs"
	"github.com/weirnet/weir/internal/promreg"
	"github.com/weirnet/weir/sinks"
	"github.com/weirnet/weir/sinks/internal/httpx"
	"github.com/weirnet/weir/sinks/internal/par"
	"github.com/weirnet/weir/sinks/internal/shrink"
	"github.com/weirnet/weir/telemetry"
)

// RemoteWrite is the prometheus_remote_write sink: every numeric field as a
// sample, pushed with the Remote Write 1.0 protocol (protobuf WriteRequest,
// snappy) to Prometheus (--web.enable-remote-write-receiver), Mimir,
// Thanos or VictoriaMetrics. Names and labels are those of the exposition
// sink.
//
// The message is encoded with protowire by hand: client_golang's
// exp/api/remote speaks only Remote Write 2.0, which the Prometheus 2.x
// servers in use (Debian's 2.42) do not accept, and prompb would pull in the
// whole Prometheus server module for three small messages.
//
// A gNMI delete ends the series it covers with a staleness marker, as
// Prometheus ends a scrape's vanished series: the sink remembers the
// series it sent (sent) to know which a delete covers.
type RemoteWrite struct {
	url       string
	namespace string
	headers   map[string]string
	client    *http.Client
	logger    *slog.Logger // nil: no warnings
	said      saidNames    // label clashes said, by all workers

	workers        []*rwWorker
	compressed     []byte
	compressedKeep shrink.Tracker

	// sent holds the series sent by label set (values unused), with the
	// scrape sink's delete matching, max_series bound and staleness;
	// swept every minute from Write.
	sent      *Collector
	lastSweep time.Time
	// next is, by partition, the offset past the last record noted in
	// sent: a batch written again (a retry, the halves of a refused one)
	// is not noted twice, and its deletes' markers are taken from ends.
	next map[broker.TopicPartition]int64
	// ends are the markers of the deletes noted since a write began
	// with a new record, by record, as ranges of endBody.
	ends    map[recordAt]endRange
	endBody []byte
	marks   []rwMark // this write's markers, in item order
	delMS   int64    // time of the delete being noted
	delRecv int64    // when weir received it, in ms
	// warming: Warm is noting the window read back, whose deletes were
	// sent with their markers before; they drop series, sending none.
	warming bool
	// lates are the fields left out of the records noted since a write
	// began with a new record (samples older than their series' last
	// sent, or another value at its time, which Prometheus refuses), by
	// record, as ranges of lateFields, so that a retry leaves out the
	// same; skips are this write's, in item order.
	lates      map[recordAt]endRange
	lateFields []int
	skips      []rwSkip
	// outOfOrder counts the samples left out (nil: uncounted); lateSaid
	// is when that was last logged, lateUnsaid how many since.
	outOfOrder prometheus.Counter
	lateSaid   time.Time
	lateUnsaid int
}

// rwSkip is a field of items[item] left out of the request.
type rwSkip struct{ item, field int }

// endRange is where a delete's markers are in endBody.
type endRange struct{ lo, hi int }

// rwMark is the markers sent in the place of items[item], a delete.
type rwMark struct {
	item int
	endRange
}

// rwWorker encodes and compresses one chunk of a batch: the chunks of a
// large batch are encoded at once, on every core.
type rwWorker struct {
	namespace       string
	body, lb, z     []byte
	bodyKeep, zKeep shrink.Tracker // body's and z's uses (RemoteWrite.letGo)
	names           map[nameKey]rwName
	// owners is the first field of a measurement given each metric
	// name, for finding fields whose names sanitise to one.
	owners  map[nameOwner]nameKey
	emitted []string // this metric's names of fields that share one
	labeler labeler
}

// rwName is a field's metric name; shared when another field of the
// measurement has the same one (in-octets_rate and in_octets_rate).
type rwName struct {
	name   string
	shared bool
}

// nameOwner is a metric name within a measurement.
type nameOwner struct{ measurement, name string }

// newRWWorker returns a worker with empty name caches.
func newRWWorker(namespace string, l labeler) *rwWorker {
	return &rwWorker{namespace: namespace, names: map[nameKey]rwName{}, owners: map[nameOwner]nameKey{}, labeler: l}
}

// minChunk is the least metrics a worker takes.
const minChunk = 512

// NewRemoteWrite builds the remote-write sink of cfg.
func NewRemoteWrite(cfg configs.Sink, env sinks.Env) (sinks.Destination, error) {
	timeout := cfg.Timeout.Std()
	if timeout <= 0 {
		timeout = 30 * time.Second
	}
	client, err := httpx.NewClient(timeout, cfg.TLS.Client())
	if err != nil {
		return nil, fmt.Errorf("remote write sink %s: %w", cfg.Name, err)
	}
	r := &RemoteWrite{url: cfg.URL, namespace: cfg.Namespace, headers: cfg.Headers, client: client, logger: env.Logger,
		sent: NewCollector(cfg.Namespace, stalenessOf(cfg), time.Now), next: map[broker.TopicPartition]int64{}, ends: map[recordAt]endRange{},
		lates: map[recordAt]endRange{}}
	r.sent.maxSeries = cmp.Or(cfg.MaxSeries, configs.DefaultPrometheusMaxSeries)
	r.sent.limitMsg = "remote write sink: at max_series, new series are sent but not tracked, so a gNMI delete sends no staleness marker for them; raise max_series, or find the label that grows"
	r.sent.logger = env.Logger
	r.sent.ended = r.endSeries
	if env.Registerer != nil {
		var rerr error
		untracked := promreg.Register(env.Registerer, prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "weir_prometheus_remote_write_untracked_total",
			Help: "Samples sent whose series the remote write sink did not track, as it tracked max_series: a gNMI delete sends no staleness marker for them.",
		}, []string{"sink"}), &rerr)
		if rerr != nil {
			return nil, fmt.Errorf("remote write sink %s: %w", cfg.Name, rerr)
		}
		r.sent.limited = untracked.WithLabelValues(cfg.Name)
		outOfOrder := promreg.Register(env.Registerer, prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "weir_prometheus_remote_write_out_of_order_total",
			Help: "Samples the remote write sink left out as older than the last it sent of their series (or another value at its time), which Prometheus refuses with the whole request: two sources feeding one series, or a device clock going back.",
		}, []string{"sink"}), &rerr)
		if rerr != nil {
			return nil, fmt.Errorf("remote write sink %s: %w", cfg.Name, rerr)
		}
		r.outOfOrder = outOfOrder.WithLabelValues(cfg.Name)
	}
	return r, nil
}

// Reload takes the staleness and max_series of a reloaded config: series
// tracked past a lowered max_series stay until they go stale.
func (r *RemoteWrite) Reload(cfg configs.Sink) {
	r.sent.mu.Lock()
	defer r.sent.mu.Unlock()
	r.sent.staleness = stalenessOf(cfg)
	r.sent.maxSeries = cmp.Or(cfg.MaxSeries, configs.DefaultPrometheusMaxSeries)
}

// WarmWindow is the staleness: a restarted sink, or one given partitions
// in a rebalance, starts past the records it (or another process) sent
// before, and reads that window back to know their series, so that a
// delete read after the start ends them too (sinks.Warmer).
func (r *RemoteWrite) WarmWindow() time.Duration {
	r.sent.mu.Lock()
	defer r.sent.mu.Unlock()
	return r.sent.staleness
}

// Warm notes the series of the window read back, sending nothing; a
// delete among them drops what it covers without a marker (its markers
// went with it), noting their times.
func (r *RemoteWrite) Warm(items []sinks.Item) {
	c := r.sent
	now := c.now()
	c.mu.Lock()
	defer c.mu.Unlock()
	r.warming = true
	defer func() { r.warming, c.sampleMS = false, 0 }()
	for i := range items {
		p := items[i].MetricPoint()
		if p == nil {
			continue
		}
		ms := sampleTime(p).UnixMilli()
		if _, ok := deletedPath(p); ok {
			r.delMS, r.delRecv = ms, receivedMS(p, ms) // its markers' times (endSeries)
		}
		c.sampleMS, c.late = ms, c.late[:0]
		if set := c.update(p, now, false); set != nil {
			rec := &items[i].Record
			set.from = broker.TopicPartition{Topic: rec.Topic, Partition: rec.Partition}
			set.noteSent(ms, receivedMS(p, ms))
		}
	}
}

// ReleasePartitions forgets the series of partitions another member of
// the sink's group reads now: their deletes are its to end
// (sinks.PartitionReleaser).
func (r *RemoteWrite) ReleasePartitions(tps []broker.TopicPartition) {
	r.sent.Release(tps)
	for _, tp := range tps {
		delete(r.next, tp)
	}
}

// Accepts takes metrics only.
func (r *RemoteWrite) Accepts(schema string) bool { return schema == telemetry.SchemaMetric }

// Points: metrics come as telemetry.Point, walked without maps.
func (r *RemoteWrite) Points() bool { return true }

// encode encodes items in chunks, one a worker, and returns the workers
// used.
func (r *RemoteWrite) encode(items []sinks.Item) []*rwWorker {
	r.note(items)
	k := par.Chunks(len(items), minChunk)
	for len(r.workers) < k {
		r.workers = append(r.workers, newRWWorker(r.namespace, labeler{logger: r.logger, said: &r.said}))
	}
	workers := r.workers[:k]
	par.Do(len(items), minChunk, func(w, lo, hi int) {
		// The markers of the chunk's deletes.
		a, _ := slices.BinarySearchFunc(r.marks, lo, func(m rwMark, i int) int { return m.item - i })
		b, _ := slices.BinarySearchFunc(r.marks, hi, func(m rwMark, i int) int { return m.item - i })
		sa, _ := slices.BinarySearchFunc(r.skips, lo, func(k rwSkip, i int) int { return k.item - i })
		sb, _ := slices.BinarySearchFunc(r.skips, hi, func(k rwSkip, i int) int { return k.item - i })
		workers[w].run(items[lo:hi], lo, r.marks[a:b], r.endBody, r.skips[sa:sb])
	})
	return workers
}

// note notes the series of items in sent, in order, and sets marks to
// the staleness markers of the series their deletes end and skips to the
// fields to leave out. Items of records noted already (a batch written
// again) are not noted again; their deletes' markers and the fields left
// out are those noted the first time.
func (r *RemoteWrite) note(items []sinks.Item) {
	r.marks, r.skips = r.marks[:0], r.skips[:0]
	c := r.sent
	now := c.now()
	c.mu.Lock()
	defer c.mu.Unlock()
	if now.Sub(r.lastSweep) >= time.Minute {
		r.lastSweep = now
		c.sweep()
	}
	first := true
	for i := range items {
		p := items[i].MetricPoint()
		if p == nil {
			continue
		}
		rec := &items[i].Record
		tp := broker.TopicPartition{Topic: rec.Topic, Partition: rec.Partition}
		if next, ok := r.next[tp]; ok && rec.Topic != "" && rec.Offset < next {
			if e, ok := r.ends[r.endKey(rec)]; ok {
				r.marks = append(r.marks, rwMark{i, e})
			}
			if e, ok := r.lates[r.endKey(rec)]; ok {
				for _, f := range r.lateFields[e.lo:e.hi] {
					r.skips = append(r.skips, rwSkip{i, f})
				}
			}
			first = false
			continue
		}
		if first {
			// A new batch: the markers and fields left out of the
			// last are done with.
			first = false
			clear(r.ends)
			clear(r.lates)
			r.endBody, r.lateFields = r.endBody[:0], r.lateFields[:0]
		}
		if rec.Topic != "" {
			r.next[tp] = rec.Offset + 1
		}
		ms := sampleTime(p).UnixMilli()
		if _, ok := deletedPath(p); ok {
			lo := len(r.endBody)
			r.delMS, r.delRecv = ms, receivedMS(p, ms)
			c.update(p, now, false) // endSeries encodes each series it ends
			if e := (endRange{lo, len(r.endBody)}); e.hi > e.lo {
				r.marks = append(r.marks, rwMark{i, e})
				if rec.Topic != "" {
					r.ends[r.endKey(rec)] = e
				}
			}
			continue
		}
		c.sampleMS, c.late = ms, c.late[:0]
		set := c.update(p, now, false)
		c.sampleMS = 0
		if set != nil {
			set.from = tp
			set.noteSent(ms, receivedMS(p, ms))
		}
		if len(c.late) > 0 {
			r.leaveOut(i, rec, p, ms)
		}
	}
}

// leaveOut notes the fields of items[i] (record rec, point p of sample
// time ms) that sent's update found late, counts and logs them.
func (r *RemoteWrite) leaveOut(i int, rec *broker.Record, p *telemetry.Point, ms int64) {
	late := r.sent.late
	for _, f := range late {
		r.skips = append(r.skips, rwSkip{i, f})
	}
	if rec.Topic != "" {
		lo := len(r.lateFields)
		r.lateFields = append(r.lateFields, late...)
		r.lates[r.endKey(rec)] = endRange{lo, len(r.lateFields)}
	}
	if r.outOfOrder != nil {
		r.outOfOrder.Add(float64(len(late)))
	}
	r.lateUnsaid += len(late)
	if now := time.Now(); r.logger != nil && now.Sub(r.lateSaid) >= time.Minute {
		// Once a minute, with the count: a device polled by SNMP and
		// streamed by gNMI under one name has this every poll.
		var since time.Duration
		if !r.lateSaid.IsZero() {
			since = now.Sub(r.lateSaid).Round(time.Second)
		}
		r.logger.Warn("remote write sink: samples older than their series' last sent left out, as Prometheus refuses them; two sources feeding one series (SNMP and gNMI under one device name) or a device clock going back",
			slog.Int("samples", r.lateUnsaid), slog.Duration("since", since),
			slog.String("measurement", p.Measurement), slog.String("field", p.Fields[late[0]].Key),
			slog.String("device", p.Device), slog.Time("sample_time", time.UnixMilli(ms)))
		r.lateSaid, r.lateUnsaid = now, 0
	}
}

// recordAt is a record's place in the log.
type recordAt struct {
	tp     broker.TopicPartition
	offset int64
}

// endKey is the key of rec in ends.
func (r *RemoteWrite) endKey(rec *broker.Record) recordAt {
	return recordAt{broker.TopicPartition{Topic: rec.Topic, Partition: rec.Partition}, rec.Offset}
}

// endSeries encodes a staleness marker for the series name of set, which
// the delete being noted ends: 1 ms before the delete's time, or just
// after the newest sample sent for the set if that is not older
// (Prometheus refuses a sample not newer than the series' last with
// another value, and the whole request with it).
//
// Before the delete's time, not at it: a target replacing an entry sends
// its delete and its new values in one notification, at one time (gNMI
// applies the deletes first), and the new samples after a marker at that
// time were lost: Prometheus keeps a series' first sample of a time in a
// request and refuses another in a later one ("duplicate sample for
// timestamp", 400, and the record is dead-lettered).
//
// The delete's time is taken no later than the device's clock read then,
// judged from the set's newest sample (its time against when weir received
// it): a resubscription's deletes are made, and stamped, by weir, and a
// marker at weir's time on a series whose device's clock is behind would
// be ahead of the samples the device sends if the series comes back (the
// next snapshot has it), which Prometheus would refuse as out of order
// until the device's clock passed the marker.
//
// Warming, the marker went before the restart: its time alone is noted.
func (r *RemoteWrite) endSeries(s *series, set *seriesSet) {
	at := max(min(r.delMS, r.delRecv+set.clockMS)-1, set.lastMS+1)
	if !r.warming {
		r.endBody = appendMarker(r.endBody, s.fam.name, set.labels, at)
	}
	// A sample not after the marker is refused too.
	r.sent.endedAt(s, set, at)
}

// noteSent notes a sample sent for set at ms, which weir received at
// recvMS: the newest one's time, and how far it was from weir's clock,
// are kept for the markers of its deletes (endSeries).
func (set *seriesSet) noteSent(ms, recvMS int64) {
	if ms >= set.lastMS {
		set.lastMS, set.clockMS = ms, ms-recvMS
	}
}

// receivedMS is when weir received p, in ms; ms (its sample time) when
// not known.
func receivedMS(p *telemetry.Point, ms int64) int64 {
	if p.ReceivedAt.IsZero() {
		return ms
	}
	return p.ReceivedAt.UnixMilli()
}

// staleNaN is the value of a staleness marker: Prometheus'
// pkg/value.StaleNaN, a NaN no arithmetic gives, which ends a series at
// its time for instant queries and range functions.
const staleNaN = 0x7ff0000000000002

// appendMarker appends a TimeSeries of the series name{labels} (labels
// sorted by name) with one staleness marker sample at ms.
func appendMarker(b []byte, name string, labels []label, ms int64) []byte {
	sampleLen := 1 + 8 + 1 + protowire.SizeVarint(uint64(ms))
	n := labelSize("__name__", name) + 1 + protowire.SizeVarint(uint64(sampleLen)) + sampleLen
	for _, l := range labels {
		n += labelSize(l.name, l.value)
	}
	b = protowire.AppendTag(b, 1, protowire.BytesType)
	b = protowire.AppendVarint(b, uint64(n))
	named := false
	for _, l := range labels {
		if !named && l.name > "__name__" {
			b, named = appendLabel(b, "__name__", name), true
		}
		b = appendLabel(b, l.name, l.value)
	}
	if !named {
		b = appendLabel(b, "__name__", name)
	}
	b = protowire.AppendTag(b, 2, protowire.BytesType)
	b = protowire.AppendVarint(b, uint64(sampleLen))
	b = protowire.AppendTag(b, 1, protowire.Fixed64Type)
	b = protowire.AppendFixed64(b, staleNaN)
	b = protowire.AppendTag(b, 2, protowire.VarintType)
	return protowire.AppendVarint(b, uint64(ms))
}

// Write pushes the batch as one request.
func (r *RemoteWrite) Write(ctx context.Context, items []sinks.Item) error {
	workers := r.encode(items)
	k := len(workers)
	n := 0
	for _, w := range workers {
		n += len(w.body)
	}
	if n == 0 {
		return nil
	}
	body := workers[0].z
	if k > 1 {
		// One snappy block: the length of everything, then the
		// chunks' elements one after the other (a chunk's copies
		// only reach back into the chunk itself).
		body = binary.AppendUvarint(r.compressed[:0], uint64(n))
		for _, w := range workers {
			_, hdr := binary.Uvarint(w.z)
			body = append(body, w.z[hdr:]...)
		}
		r.compressed = body
	}
	req, rb, err := httpx.NewRequest(ctx, r.url, body)
	if err != nil {
		return &sinks.RejectedError{Reason: "request", Err: err}
	}
	defer func() {
		if !rb.Released(httpx.ReleaseWait) { // still being read: take new buffers
			r.compressed, workers[0].z = nil, nil
		}
		r.letGo(k)
	}()
	req.Header.Set("Content-Type", "application/x-protobuf")
	req.Header.Set("Content-Encoding", "snappy")
	req.Header.Set("X-Prometheus-Remote-Write-Version", "0.1.0")
	for k, v := range r.headers {
		req.Header.Set(k, v)
	}
	resp, err := r.client.Do(req)
	if err != nil {
		return httpx.Transport("remote write sink", err)
	}
	return httpx.Classify("remote write sink", resp, time.Now())
}

// letGo lets go of the buffers a backlog's large batches grew, once the
// batches after it have used a fraction of them for a while (shrink):
// measured after a 90 s outage of Prometheus, the workers' buffers held
// 40 MB of a 190 MB process for good. used is how many workers this write
// took.
func (r *RemoteWrite) letGo(used int) {
	if used <= 1 {
		r.compressed = r.compressed[:0] // not used: one worker's block is sent as it is
	}
	r.compressed = r.compressedKeep.Keep(r.compressed)
	for i, w := range r.workers {
		if i >= used {
			w.body, w.z = w.body[:0], w.z[:0]
		}
		w.body, w.z = w.bodyKeep.Keep(w.body), w.zKeep.Keep(w.z)
	}
}

// run encodes items (from the batch's item base on) as TimeSeries of a
// WriteRequest and compresses them as a snappy block, in s2's fastest
// mode: several times faster than the "better" mode snappy.Encode uses,
// for a few percent of bytes. A delete has no sample: its place gets the
// staleness markers marks give (ranges of ends, in item order).
func (w *rwWorker) run(items []sinks.Item, base int, marks []rwMark, ends []byte, skips []rwSkip) {
	w.body = w.body[:0]
	for i := range items {
		p := items[i].MetricPoint()
		if p == nil {
			continue
		}
		if _, ok := deletedPath(p); ok {
			for len(marks) > 0 && marks[0].item == base+i {
				w.body = append(w.body, ends[marks[0].lo:marks[0].hi]...)
				marks = marks[1:]
			}
			continue
		}
		n := 0
		for n < len(skips) && skips[n].item == base+i {
			n++
		}
		w.appendPoint(p, skips[:n])
		skips = skips[n:]
	}
	if n := s2.MaxEncodedLen(len(w.body)); cap(w.z) < n {
		w.z = make([]byte, n)
	}
	w.z = s2.EncodeSnappy(w.z[:cap(w.z)], w.body)
}

// appendPoint appends one TimeSeries (field 1 of WriteRequest) per numeric
// field: labels (name 1, value 2) sorted by name with __name__ in its
// place, as the protocol requires, and one sample (value 1 double,
// timestamp 2 ms). The labels other than __name__ are encoded once per
// metric, and every message is written in place, its size computed first.
func (w *rwWorker) appendPoint(p *telemetry.Point, leave []rwSkip) {
	ms := uint64(sampleTime(p).UnixMilli())
	// Labels sorted by name, __name__ included: a sanitised label such
	// as "_1x" sorts before it, and receivers (Mimir, Cortex) refuse
	// out-of-order label names.
	labels := w.labeler.labels(p)
	w.lb = w.lb[:0]
	split := -1
	for _, l := range labels {
		if split < 0 && l.name > "__name__" {
			split = len(w.lb)
		}
		w.lb = appendLabel(w.lb, l.name, l.value)
	}
	if split < 0 {
		split = len(w.lb)
	}
	sampleLen := 1 + 8 + 1 + protowire.SizeVarint(ms)
	w.emitted = w.emitted[:0]
	for i := range p.Fields {
		if len(leave) > 0 && leave[0].field == i {
			leave = leave[1:] // not newer than its series' last sent (note)
			continue
		}
		f := &p.Fields[i]
		x, ok := f.Number()
		if !ok {
			continue
		}
		name, ok := w.name(p, i)
		if !ok {
			continue // another field of the metric has the name: one series, one sample
		}
		tsLen := len(w.lb) + labelSize("__name__", name) + 1 + protowire.SizeVarint(uint64(sampleLen)) + sampleLen
		b := w.body
		b = protowire.AppendTag(b, 1, protowire.BytesType)
		b = protowire.AppendVarint(b, uint64(tsLen))
		b = append(b, w.lb[:split]...)
		b = appendLabel(b, "__name__", name)
		b = append(b, w.lb[split:]...)
		b = protowire.AppendTag(b, 2, protowire.BytesType)
		b = protowire.AppendVarint(b, uint64(sampleLen))
		b = protowire.AppendTag(b, 1, protowire.Fixed64Type)
		b = protowire.AppendFixed64(b, math.Float64bits(x))
		b = protowire.AppendTag(b, 2, protowire.VarintType)
		b = protowire.AppendVarint(b, ms)
		w.body = b
	}
}

// name is the metric name of p's field i, and false when an earlier
// field of p had it: two samples of one series at one time are one too
// many for a receiver (Prometheus keeps one, Mimir refuses the
// duplicate). Fields are sorted by key, so a counter x comes before a
// gauge x_total and is the series, as the exposition serves it. Only the
// names two fields of a measurement share are looked for (w.emitted holds
// those appendPoint sent for p).
func (w *rwWorker) name(p *telemetry.Point, i int) (string, bool) {
	f := &p.Fields[i]
	nk := nameKey{p.Measurement, f.Key, f.Counter}
	n, ok := w.names[nk]
	if !ok {
		if len(w.names) > 1<<16 {
			clear(w.names)
			clear(w.owners)
		}
		n.name = MetricName(w.namespace, p.Measurement, f.Key, f.Counter)
		o := nameOwner{p.Measurement, n.name}
		if first, ok := w.owners[o]; !ok {
			w.owners[o] = nk
		} else if first != nk {
			n.shared = true
			if fn, ok := w.names[first]; ok {
				fn.shared = true
				w.names[first] = fn
			}
			// An earlier field of p named before the two were known
			// to share it was sent without being noted.
			for j := range p.Fields[:i] {
				if e := &p.Fields[j]; e.Key == first.field && e.Counter == first.counter {
					if _, num := e.Number(); num {
						w.emitted = append(w.emitted, n.name)
					}
				}
			}
		}
		w.names[nk] = n
	}
	if !n.shared {
		return n.name, true
	}
	if slices.Contains(w.emitted, n.name) {
		return "", false
	}
	w.emitted = append(w.emitted, n.name)
	return n.name, true
}

// maxClockSkew is how far a metric's own time (a gNMI target's clock) may
// be from when weir received it and still stamp its samples.
const maxClockSkew = time.Minute

// sampleTime is the time p's samples are stamped with: its own (the
// device's sampling time, which rate() wants), kept within maxClockSkew
// of when weir received it. Prometheus takes one sample hours ahead (a
// target's clock off), which moves its head on: it then refuses every
// other series' samples as out of bounds for hours. And it refuses samples
// more than an hour behind its head (a clock hours behind, a target
// stamping its initial sync with the time each value last changed). A time
// past the bound is stamped at the bound, not at weir's clock: a clock
// drifting across it (59 s ahead, then 61) would otherwise send its series
// back a minute, and Prometheus refuses a sample older than the series'
// last ("out of order sample").
func sampleTime(p *telemetry.Point) time.Time {
	t, r := p.Time, p.ReceivedAt
	switch {
	case r.IsZero():
	case t.IsZero():
		t = r
	case t.Before(r.Add(-maxClockSkew)):
		t = r.Add(-maxClockSkew)
	case t.After(r.Add(maxClockSkew)):
		t = r.Add(maxClockSkew)
	}
	if t.IsZero() {
		t = time.Now()
	}
	return t
}

// labelSize is the size of a Label message with its tag and length, as
// TimeSeries field 1.
func labelSize(name, value string) int {
	n := 1 + protowire.SizeVarint(uint64(len(name))) + len(name) + 1 + protowire.SizeVarint(uint64(len(value))) + len(value)
	return 1 + protowire.SizeVarint(uint64(n)) + n
}

func appendLabel(b []byte, name, value string) []byte {
	n := 1 + protowire.SizeVarint(uint64(len(name))) + len(name) + 1 + protowire.SizeVarint(uint64(len(value))) + len(value)
	b = protowire.AppendTag(b, 1, protowire.BytesType)
	b = protowire.AppendVarint(b, uint64(n))
	b = protowire.AppendTag(b, 1, protowire.BytesType)
	b = protowire.AppendString(b, name)
	b = protowire.AppendTag(b, 2, protowire.BytesType)
	return protowire.AppendString(b, value)
}

// Close releases idle connections.
func (r *RemoteWrite) Close() error {
	r.client.CloseIdleConnections()
	return nil
}
