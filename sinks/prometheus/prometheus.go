// Package prometheus is the Prometheus exposition sink: the latest value of
// every metric series it consumed, served on its own address for Prometheus
// to scrape. Names are <measurement>_<field> and labels the metric's tags
// plus device, sanitised to the Prometheus data model and snake_case (what
// `promtool check metrics` asks for); counter fields (listed in
// Metric.Counters) are counters named ..._total, every other number a
// gauge; a series not updated for the staleness period is dropped, so a
// removed interface does not linger forever.
package prometheus

import (
	"cmp"
	"compress/gzip"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math"
	"net"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/prometheus/client_golang/prometheus"
	"golang.org/x/net/netutil"

	"github.com/weirnet/weir/broker"
	"github.com/weirnet/weir/configs"
	"github.com/weirnet/weir/internal/promreg"
	"github.com/weirnet/weir/sinks"
	"github.com/weirnet/weir/telemetry"
)

// DefaultStaleness drops series not updated for this long, when the
// config gives no staleness and no default.
const DefaultStaleness = configs.DefaultPrometheusStaleness

// Sink holds the series and serves them.
type Sink struct {
	path string
	ln   net.Listener
	col  *Collector
	// idleTimeout closes a keep-alive connection no request came on for
	// that long (the const; tests shorten it).
	idleTimeout time.Duration
}

// idleTimeout is how long a scraper's connection may wait for its next
// request: Prometheus' own client keeps an idle connection as long, so a
// scrape every minute or five reuses its connection; a client that
// scraped once and holds the connection (a crashed scraper behind a NAT,
// or many on purpose) has it closed, not kept with its file descriptor
// for as long as weir runs. net/http has no idle limit by default.
const idleTimeout = 5 * time.Minute

// maxConnections bounds the connections the sink serves at once; more wait
// in the kernel's accept queue, holding no file descriptor of weir's,
// until one closes. Scrapers need a few; without a bound, one client
// holding connections open took every descriptor weir had, and with them
// its log's flushes and its other listeners.
const maxConnections = 256

// New builds the Prometheus sink of cfg and binds its listener, so a port
// in use fails at start, not later.
func New(cfg configs.Sink, env sinks.Env) (sinks.Destination, error) {
	s, err := NewSink(cfg, time.Now)
	if err != nil {
		return nil, err
	}
	if env.Registerer != nil {
		var rerr error // the first failure of either
		old := promreg.Register(env.Registerer, prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "weir_prometheus_sink_old_points_total",
			Help: "Metrics not served because they were older than the sink's staleness when it read them (a new sink reading the log from its start, a sink catching up after an outage).",
		}, []string{"sink"}), &rerr)
		limited := promreg.Register(env.Registerer, prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "weir_prometheus_sink_series_limited_total",
			Help: "Values not served because they would have made a new series while the sink held max_series (until stale series go).",
		}, []string{"sink"}), &rerr)
		if rerr != nil {
			s.Close()
			return nil, fmt.Errorf("prometheus sink %s: %w", cfg.Name, rerr)
		}
		s.col.old, s.col.limited = old.WithLabelValues(cfg.Name), limited.WithLabelValues(cfg.Name)
	}
	// The logger names the sink already (sinks/all.Build gives it sink
	// and type): naming it again made a duplicate key.
	s.col.logger = env.Logger
	s.col.labeler.logger = env.Logger
	return s, nil
}

// NewSink is New with a clock for staleness.
func NewSink(cfg configs.Sink, now func() time.Time) (*Sink, error) {
	staleness := stalenessOf(cfg)
	col := NewCollector(cfg.Namespace, staleness, now)
	col.maxSeries = cmp.Or(cfg.MaxSeries, configs.DefaultPrometheusMaxSeries)
	ln, err := net.Listen("tcp", string(cfg.Listen))
	if err != nil {
		return nil, fmt.Errorf("prometheus sink %s: %w", cfg.Name, err)
	}
	path := cfg.MetricsPath
	if path == "" {
		path = "/metrics"
	}
	return &Sink{path: path, ln: ln, col: col, idleTimeout: idleTimeout}, nil
}

// stalenessOf is the staleness cfg gives, else its default.
func stalenessOf(cfg configs.Sink) time.Duration {
	if d := cmp.Or(cfg.Staleness, cfg.DefaultStaleness).Std(); d > 0 {
		return d
	}
	return DefaultStaleness
}

// Reload takes the staleness of a reloaded config (its default follows
// the collectors' intervals, which a reload changes) and its max_series:
// series held past a lowered max_series stay until they go stale, and no
// new one is taken until then.
func (s *Sink) Reload(cfg configs.Sink) {
	d := stalenessOf(cfg)
	s.col.mu.Lock()
	s.col.staleness = d
	s.col.maxSeries = cmp.Or(cfg.MaxSeries, configs.DefaultPrometheusMaxSeries)
	s.col.mu.Unlock()
}

// Addr is the address the endpoint listens on.
func (s *Sink) Addr() net.Addr { return s.ln.Addr() }

// Collector returns the collector holding the series (for tests and
// benchmarks).
func (s *Sink) Collector() *Collector { return s.col }

// Accepts takes metrics only.
func (s *Sink) Accepts(schema string) bool { return schema == telemetry.SchemaMetric }

// Points: metrics come as telemetry.Point, walked without maps.
func (s *Sink) Points() bool { return true }

// Write stores the latest values; it cannot fail.
func (s *Sink) Write(_ context.Context, items []sinks.Item) error {
	s.col.UpdateItems(items)
	return nil
}

// WarmWindow is the staleness: a restarted sink, or one given partitions
// in a rebalance, serves the series of that window before its position at
// once, not from their next update (sinks.Warmer).
func (s *Sink) WarmWindow() time.Duration {
	s.col.mu.Lock()
	defer s.col.mu.Unlock()
	return s.col.staleness
}

// Warm takes the records of the window read back; those past staleness
// are left out without being counted as old points.
func (s *Sink) Warm(items []sinks.Item) { s.col.updateItems(items, false) }

// ReleasePartitions drops what came from partitions another member of the
// sink's group reads now (sinks.PartitionReleaser).
func (s *Sink) ReleasePartitions(tps []broker.TopicPartition) { s.col.Release(tps) }

// Run serves the endpoint until ctx is done.
func (s *Sink) Run(ctx context.Context) error {
	// The path is compared, not made a ServeMux pattern: any path the
	// config takes works, "{" and spaces included.
	handler := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != s.path {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", "text/plain; version=0.0.4; charset=utf-8")
		w.Header().Set("Vary", "Accept-Encoding")
		if !acceptsGzip(r.Header.Get("Accept-Encoding")) {
			s.col.WriteText(w) // an error: the scraper went away
			return
		}
		w.Header().Set("Content-Encoding", "gzip")
		zw := gzipWriters.Get().(*gzip.Writer)
		zw.Reset(w)
		if s.col.WriteText(zw) == nil {
			zw.Close()
		}
		gzipWriters.Put(zw)
	})
	srv := &http.Server{Handler: handler, ReadHeaderTimeout: 10 * time.Second, WriteTimeout: time.Minute, IdleTimeout: s.idleTimeout}
	// served ends the sweeper when Serve fails on its own (its listener
	// broke), so the failure is reported now and not at shutdown.
	served := make(chan struct{})
	done := make(chan struct{})
	go func() {
		defer close(done)
		sweep := time.NewTicker(time.Minute)
		defer sweep.Stop()
		for {
			select {
			case <-sweep.C:
				s.col.Sweep()
				continue
			case <-ctx.Done():
			case <-served:
			}
			break
		}
		sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		srv.Shutdown(sctx)
	}()
	err := srv.Serve(netutil.LimitListener(s.ln, maxConnections))
	close(served)
	<-done
	if errors.Is(err, http.ErrServerClosed) {
		return nil
	}
	return fmt.Errorf("prometheus sink: %w", err)
}

// gzipWriters are reused across scrapes: a gzip.Writer is some 800 KB of
// state. BestSpeed: an exposition compresses some tenfold at it, and the
// scrape of a large one costs less CPU than at the default level.
var gzipWriters = sync.Pool{New: func() any {
	zw, _ := gzip.NewWriterLevel(io.Discard, gzip.BestSpeed)
	return zw
}}

// acceptsGzip reports whether an Accept-Encoding header takes gzip (as
// Prometheus' scrapes always do), not refused with q=0.
func acceptsGzip(header string) bool {
	for part := range strings.SplitSeq(header, ",") {
		coding, params, _ := strings.Cut(part, ";")
		if !strings.EqualFold(strings.TrimSpace(coding), "gzip") {
			continue
		}
		q := strings.TrimSpace(params)
		if v, ok := strings.CutPrefix(q, "q="); ok {
			if f, err := strconv.ParseFloat(v, 64); err == nil && f == 0 {
				return false
			}
		}
		return true
	}
	return false
}

// Close closes the listener (if Run never ran).
func (s *Sink) Close() error {
	if err := s.ln.Close(); err != nil && !errors.Is(err, net.ErrClosed) {
		return err
	}
	return nil
}

// Collector is a prometheus.Collector holding the latest value of every
// series. It is unchecked (describes nothing) because the series are only
// known as data arrives.
type Collector struct {
	namespace string
	staleness time.Duration
	now       func() time.Time
	// old counts points older than staleness when read (nil: uncounted).
	old prometheus.Counter
	// maxSeries bounds the series held: a sender inventing label values
	// (a gNMI path with a counter in it, an ifAlias with a timestamp)
	// must not grow memory and the scrape without bound. Values that
	// would make a series past it are counted in limited (nil:
	// uncounted) and logged once a minute.
	maxSeries   int
	limited     prometheus.Counter
	logger      *slog.Logger
	limitLogged time.Time
	live        int // series held (not dropped)
	// limitMsg is what refuse logs (the scrape sink's or remote write's
	// wording).
	limitMsg string
	// ended, when set, is told of each series a delete drops, with its
	// set (remote write sends it a staleness marker, stamped from the
	// set's lastMS and clockMS).
	ended func(s *series, set *seriesSet)
	// sampleMS, when not 0, is the time of the sample update notes as
	// sent (remote write): a field whose series was sent one as new or
	// newer is left as it is, and its index goes in late.
	sampleMS int64
	late     []int
	pass     uint64 // update calls, to tell a series this one updated
	// endedMS is, by series, the time of the staleness marker remote
	// write sent when a delete ended it (see RemoteWrite.endSeries):
	// Prometheus refuses a sample not after it, and the series itself
	// goes (its set with a path's delete, its family with its last
	// series, from its set at the next sweep) long before a sample
	// stamped before the delete stops coming. Kept while a sample could
	// be that old (see sweep), for up to maxSeries series.
	endedMS map[endedKey]int64

	mu       sync.Mutex
	lastSize int // bytes of the last exposition, to size the next
	families map[string]*family
	// Sanitising is a third of an update; the distinct measurement,
	// field and tag names are few, so remember the results: the family
	// of each (measurement, field, counter) and the label name of each
	// tag key.
	byName  map[nameKey]*family
	labeler labeler
	// The series by label set, so that an update hashes its labels once
	// rather than once per field; and the families of the fields of the
	// update before, by position, which the next one usually repeats.
	sets map[string]*seriesSet
	// byDevice is sets by their device label (its value; "" for none),
	// so that a delete, which names a device, looks at that device's
	// sets alone: a gNMI target's deletes (route churn sends many) each
	// went through every set under the lock scrapes take.
	byDevice map[string]map[string]*seriesSet
	lastFam  []famAt
	key      []byte
}

type famAt struct {
	nk nameKey
	f  *family
}

// seriesSet is the series of one label set, one per family it has a
// value in.
type seriesSet struct {
	key    string
	labels []label
	text   string
	series []*series
	from   broker.TopicPartition // the partition its last update came from
	lastMS int64                 // newest sample time sent (remote write)
	// clockMS is how far lastMS was ahead of the time weir received
	// its sample (negative: behind): the device's clock against weir's,
	// to stamp a marker of a delete made by weir in the device's time
	// (remote write, see RemoteWrite.endSeries).
	clockMS int64
}

// endedKey is a series by its metric name and its set's key.
type endedKey struct{ name, set string }

type nameKey struct {
	measurement, field string
	counter            bool
}

type family struct {
	name    string
	help    string
	counter bool
	series  map[string]*series // by label names and values joined
	dropped bool               // no longer in families
	// clashLogged: a field of the other type giving this name was
	// logged (see clash).
	clashLogged bool
}

type series struct {
	fam     *family
	labels  []label // sorted by name; those of its seriesSet
	text    string  // `{a="x",b="y"}` for the text exposition, made once
	value   float64
	updated time.Time
	dropped bool // stale: no longer in its family
	// Remote write: the newest sample time sent (or its marker's), and
	// the update call that sent it.
	lastMS   int64
	lastPass uint64
}

// NewCollector makes an empty collector.
func NewCollector(namespace string, staleness time.Duration, now func() time.Time) *Collector {
	return &Collector{namespace: namespace, staleness: staleness, now: now, families: map[string]*family{},
		byName: map[nameKey]*family{}, sets: map[string]*seriesSet{}, byDevice: map[string]map[string]*seriesSet{}, maxSeries: configs.DefaultPrometheusMaxSeries, limitMsg: scrapeLimitMsg}
}

// Update records the numeric fields of m; strings have no Prometheus value
// and are skipped, booleans become 0 or 1.
func (c *Collector) Update(m *telemetry.Metric) { c.UpdatePoint(telemetry.PointOf(m)) }

// UpdatePoint is Update for a telemetry.Point.
func (c *Collector) UpdatePoint(p *telemetry.Point) {
	now := c.now()
	c.mu.Lock()
	defer c.mu.Unlock()
	c.update(p, now, true)
}

// UpdateItems updates the metrics of a batch under one lock and one clock
// reading.
func (c *Collector) UpdateItems(items []sinks.Item) { c.updateItems(items, true) }

// updateItems is UpdateItems; countOld: count the points past staleness
// in old (not those a warm-up reads back).
func (c *Collector) updateItems(items []sinks.Item, countOld bool) {
	now := c.now()
	c.mu.Lock()
	defer c.mu.Unlock()
	for i := range items {
		p := items[i].MetricPoint()
		if p == nil {
			continue
		}
		if set := c.update(p, now, countOld); set != nil {
			set.from = broker.TopicPartition{Topic: items[i].Record.Topic, Partition: items[i].Record.Partition}
		}
	}
}

// Release drops the series whose last update came from one of tps: this
// process no longer reads those partitions, and another serves their
// series now (see sinks.PartitionReleaser).
func (c *Collector) Release(tps []broker.TopicPartition) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for k, set := range c.sets {
		if !slices.Contains(tps, set.from) {
			continue
		}
		c.dropSet(k, set, false)
	}
}

// update records p's fields and returns its series set; nil for a point
// that is no current value (too old, a gNMI delete).
func (c *Collector) update(p *telemetry.Point, now time.Time, countOld bool) *seriesSet {
	// A series is as fresh as the point weir received, not as its
	// reading here: records a new sink reads from the log's start, days
	// back, must not be served as now. Weir's clock, not the device's
	// (a gNMI target's may be off by hours).
	at := cmp.Or(p.ReceivedAt, p.Time)
	if at.IsZero() || at.After(now) {
		at = now
	}
	if now.Sub(at) >= c.staleness {
		if c.old != nil && countOld {
			c.old.Inc()
		}
		return nil
	}
	if path, deleted := deletedPath(p); deleted {
		if path != "" {
			c.deletePath(p, path)
		} else {
			c.deleteMatching(p)
		}
		return nil
	}
	c.pass++
	labels := c.labeler.labels(p)
	c.key = appendSeriesKey(c.key[:0], labels)
	set := c.sets[string(c.key)]
	if set == nil && c.live >= c.maxSeries {
		// At the bound: refused before it makes a set or a family (a
		// flood of new names would hold them until the next sweep).
		for i := range p.Fields {
			if _, ok := p.Fields[i].Number(); ok {
				c.refuse(p, now)
			}
		}
		return nil
	}
	if set == nil {
		kept := slices.Clone(labels)
		set = &seriesSet{key: string(c.key), labels: kept, text: labelText(kept)}
		c.addSet(set)
	}
	for i := range p.Fields {
		fd := &p.Fields[i]
		x, ok := fd.Number()
		if !ok {
			continue
		}
		f := c.familyAt(i, nameKey{p.Measurement, fd.Key, fd.Counter})
		if f.counter != fd.Counter {
			// A counter x and a gauge x_total: one name, one type
			// (the first seen); the other's values would overwrite
			// the series, a counter going down and up.
			c.clash(f, p, fd)
			continue
		}
		var s *series
		for _, t := range set.series {
			if t.fam == f {
				s = t
				break
			}
		}
		if c.sampleMS != 0 && c.isLate(s, f, set, x) {
			// Older than the series' last sent (or its marker), or
			// another value at its time: Prometheus refuses it, and
			// the request with it (the same value again it takes). The
			// same time from this update is a second field of the
			// name, which the encoder skips anyway.
			c.late = append(c.late, i)
			continue
		}
		if c.sampleMS != 0 && s != nil && s.lastPass == c.pass {
			// A second field of the name in this update: the encoder
			// sends the first (rwWorker.name), whose value the series
			// keeps for the next sample at its time.
			continue
		}
		if s == nil || s.dropped {
			if c.live >= c.maxSeries {
				c.refuse(p, now)
				continue
			}
			c.live++
			if s == nil {
				s = &series{fam: f, labels: set.labels, text: set.text}
				set.series = append(set.series, s)
				if len(c.endedMS) > 0 {
					delete(c.endedMS, endedKey{f.name, set.key}) // s has it now
				}
			}
			s.dropped = false
			f.series[set.key] = s
		}
		if c.sampleMS != 0 {
			s.lastMS, s.lastPass = c.sampleMS, c.pass
		}
		s.value, s.updated = x, at
	}
	if len(set.series) == 0 {
		c.removeSet(set.key, set) // every value refused
		return nil
	}
	return set
}

// isLate reports whether a sample x at c.sampleMS of the series of
// family f in set (s; nil: none in the set) is older than the one last
// sent of the series, or its marker, or another value at its time.
func (c *Collector) isLate(s *series, f *family, set *seriesSet, x float64) bool {
	var lastMS int64
	var last uint64
	pass := false
	if s != nil {
		lastMS, last, pass = s.lastMS, math.Float64bits(s.value), s.lastPass == c.pass
	} else if ms, ok := c.endedMS[endedKey{f.name, set.key}]; ok {
		lastMS, last = ms, staleNaN // ended by a delete, and gone since
	}
	return c.sampleMS < lastMS || c.sampleMS == lastMS && !pass && math.Float64bits(x) != last
}

// endedAt notes that remote write ended s, of set, with a staleness marker
// at ms.
func (c *Collector) endedAt(s *series, set *seriesSet, ms int64) {
	s.lastMS, s.value = ms, math.Float64frombits(staleNaN)
	if c.endedMS == nil {
		c.endedMS = map[endedKey]int64{}
	}
	if k := (endedKey{s.fam.name, set.key}); len(c.endedMS) < c.maxSeries || c.endedMS[k] != 0 {
		c.endedMS[k] = ms
	}
}

// clash says, once per family, that a field of the other type than f's
// gives f's name and is not served.
func (c *Collector) clash(f *family, p *telemetry.Point, fd *telemetry.Field) {
	if f.clashLogged || c.logger == nil {
		return
	}
	f.clashLogged = true
	kind, other := "gauge", "counter"
	if f.counter {
		kind, other = other, kind
	}
	c.logger.Warn("prometheus sink: a counter and a gauge field give one metric name; the first type seen is served, the other field is not",
		slog.String("name", f.name), slog.String("metric_type", kind), slog.String("measurement", p.Measurement),
		slog.String("field", fd.Key), slog.String("field_type", other), slog.String("device", p.Device))
}

// refuse counts a value of p that would have made a series past
// maxSeries, and says so once a minute.
func (c *Collector) refuse(p *telemetry.Point, now time.Time) {
	if c.limited != nil {
		c.limited.Inc()
	}
	if c.logger != nil && now.Sub(c.limitLogged) >= time.Minute {
		c.limitLogged = now
		c.logger.Warn(c.limitMsg, slog.Int("max_series", c.maxSeries), slog.String("measurement", p.Measurement), slog.String("device", p.Device))
	}
}

// scrapeLimitMsg is what the scrape sink logs at max_series.
const scrapeLimitMsg = "prometheus sink: at max_series, new series not served until stale ones go; raise max_series, or find the label that grows"

// deletedPath reports whether p is a delete, a point with the single
// field deleted=true, and the path it names: a gNMI delete's
// (collectors/gnmi), or "" for enrich's delete (source "enrich") of the
// "interface" records of an interface the target removed.
func deletedPath(p *telemetry.Point) (string, bool) {
	if !p.IsDelete() {
		return "", false
	}
	path, _ := p.Tag("path")
	// Any other producer's lone field "deleted" is a value like any.
	return path, path != "" || p.Source == "enrich"
}

// deleteMatching drops the series of p's measurement whose labels include
// all of p's (its device and tags; enrich's delete of an interface's
// records names the interface, or no interface for every one). A
// measurement that names a field of one too, as a gNMI leaf's delete
// does (interface_in_octets_rate: field in_octets_rate of interface), drops
// that field's series alone: enrich's delete of what it derived from a
// deleted counter.
func (c *Collector) deleteMatching(p *telemetry.Point) {
	var fams []*family
	for k, f := range c.byName {
		if k.measurement == p.Measurement || isLeafOf(p.Measurement, k) {
			fams = append(fams, f)
		}
	}
	if len(fams) == 0 {
		return
	}
	want := c.labeler.labels(p)
	sets := c.sets
	if dev, ok := labelValue(want, "device"); ok {
		sets = c.byDevice[dev]
	}
	for _, set := range sets {
		if hasLabels(set.labels, want) {
			c.dropFields(set, fams, true)
		}
	}
}

// leafFamilies are the families a delete of measurement and path names a
// field of, by the path of the series sets that have the field: the rows
// telemetry.LeafRows names, the leaf's container (in-octets at
// …/state/counters) and those above it up to the first list entry
// (state/counters/in-octets at /interfaces/interface[name=X]); nil for a
// path that ends at a list entry.
func (c *Collector) leafFamilies(measurement, path string) map[string][]*family {
	var out map[string][]*family
	for row := range telemetry.LeafRows(measurement, path) {
		for _, counter := range []bool{false, true} {
			if f := c.byName[nameKey{row.Measurement, row.Field, counter}]; f != nil {
				if out == nil {
					out = map[string][]*family{}
				}
				out[row.Path] = append(out[row.Path], f)
			}
		}
	}
	return out
}

// isLeafOf reports whether measurement names field k.field of k's
// measurement, as a gNMI leaf's delete is named: the two joined by "_",
// "-" turned into "_".
func isLeafOf(measurement string, k nameKey) bool {
	rest, ok := strings.CutPrefix(measurement, k.measurement)
	return ok && len(rest) == len(k.field)+1 && rest[0] == '_' && rest[1:] == strings.ReplaceAll(k.field, "-", "_")
}

// hasLabels reports whether labels, sorted by name, include every one of
// want, sorted likewise.
func hasLabels(labels, want []label) bool {
	i := 0
	for _, w := range want {
		for i < len(labels) && labels[i].name < w.name {
			i++
		}
		if i == len(labels) || labels[i] != w {
			return false
		}
	}
	return true
}

// deletePath drops the series of p's device at path and below it: the
// target removed them (an interface, a BGP neighbor), so they are gone
// now, not once stale.
func (c *Collector) deletePath(p *telemetry.Point, path string) {
	device := validUTF8(p.Device)
	path = validUTF8(path)
	// A leaf's delete (…/counters/in-octets) names a field of the series
	// set at its container's path (in-octets), or of one further up that
	// got it inside a JSON object (state/counters/in-octets at the
	// interface's path): those fields' series go.
	leafFams := c.leafFamilies(p.Measurement, path)
	var underFams map[string][]*family // by path below a set's (telemetry.FieldPathBelow)
	for k, set := range c.byDevice[device] {
		at, _ := labelValue(set.labels, "path")
		if !telemetry.PathUnder(at, path) {
			if fams := leafFams[at]; len(fams) > 0 {
				c.dropFields(set, fams, true)
			} else if rel, ok := telemetry.FieldPathBelow(path, at); ok {
				// A container or list entry below the set's path: the
				// fields it got inside a JSON object under it go
				// (state/counters/... of the interface's set, for a
				// delete of its state/counters), their rates with them.
				fams, seen := underFams[rel]
				if !seen {
					fams = c.fieldFamilies(rel + "/")
					if underFams == nil {
						underFams = map[string][]*family{}
					}
					underFams[rel] = fams
				}
				if len(fams) > 0 {
					c.dropFields(set, fams, true)
				}
			}
			continue
		}
		c.dropSet(k, set, true)
	}
}

// fieldFamilies are the families of the fields named with prefix (fields
// below a path, and the rates enrich derived from them).
func (c *Collector) fieldFamilies(prefix string) []*family {
	var out []*family
	for k, f := range c.byName {
		if strings.HasPrefix(k.field, prefix) && !slices.Contains(out, f) {
			out = append(out, f)
		}
	}
	return out
}

// addSet adds a new series set.
func (c *Collector) addSet(set *seriesSet) {
	c.sets[set.key] = set
	dev, _ := labelValue(set.labels, "device")
	m := c.byDevice[dev]
	if m == nil {
		m = map[string]*seriesSet{}
		c.byDevice[dev] = m
	}
	m[set.key] = set
}

// removeSet removes the series set stored under key.
func (c *Collector) removeSet(key string, set *seriesSet) {
	delete(c.sets, key)
	dev, _ := labelValue(set.labels, "device")
	if m := c.byDevice[dev]; m != nil {
		delete(m, key)
		if len(m) == 0 {
			delete(c.byDevice, dev)
		}
	}
}

// labelValue is the value of the label name in labels.
func labelValue(labels []label, name string) (string, bool) {
	for _, l := range labels {
		if l.name == name {
			return l.value, true
		}
	}
	return "", false
}

// dropSet drops every series of set, stored under key, and the set;
// deleted: a delete ends them (see ended).
func (c *Collector) dropSet(key string, set *seriesSet, deleted bool) {
	c.dropFields(set, nil, deleted)
	c.removeSet(key, set)
}

// dropFields drops the series of set in the families fams (nil: all),
// and the families left without series; deleted: a delete ends them, and
// ended is told of each.
func (c *Collector) dropFields(set *seriesSet, fams []*family, deleted bool) {
	for _, s := range set.series {
		if fams != nil && !slices.Contains(fams, s.fam) {
			continue
		}
		if !s.dropped {
			c.dropSeries(s.fam, set.key, s)
			if deleted && c.ended != nil {
				c.ended(s, set)
			}
		}
		if len(s.fam.series) == 0 && !s.fam.dropped {
			c.dropFamily(s.fam)
		}
	}
}

// familyAt is the family of the i-th field of an update, nk.
func (c *Collector) familyAt(i int, nk nameKey) *family {
	if i < len(c.lastFam) {
		if at := &c.lastFam[i]; at.nk == nk && !at.f.dropped {
			return at.f
		}
	}
	f := c.byName[nk]
	if f == nil || f.dropped {
		f = c.family(nk)
	}
	if i < len(c.lastFam) {
		c.lastFam[i] = famAt{nk, f}
	} else if i == len(c.lastFam) && i < 64 {
		c.lastFam = append(c.lastFam, famAt{nk, f})
	}
	return f
}

// dropSeries removes a stale series from its family.
func (c *Collector) dropSeries(f *family, key string, s *series) {
	delete(f.series, key)
	s.dropped = true
	c.live--
}

// family finds or makes the family of nk and remembers it.
func (c *Collector) family(nk nameKey) *family {
	name := MetricName(c.namespace, nk.measurement, nk.field, nk.counter)
	f := c.families[name]
	if f == nil {
		kind := "gauge"
		if nk.counter {
			kind = "counter"
		}
		// The first type seen wins: one name has one type.
		f = &family{name: name, counter: nk.counter, series: map[string]*series{},
			help: fmt.Sprintf("weir: %s field %s of measurement %s.", kind, nk.field, nk.measurement)}
		c.families[name] = f
	}
	c.byName[nk] = f
	return f
}

// dropFamily removes a family without series.
func (c *Collector) dropFamily(f *family) {
	delete(c.families, f.name)
	f.dropped = true
	if len(c.byName) > 4*len(c.families)+1024 {
		// Forget the names of families long gone.
		for nk, f := range c.byName {
			if f.dropped {
				delete(c.byName, nk)
			}
		}
	}
}

func appendSeriesKey(b []byte, labels []label) []byte {
	for _, l := range labels {
		b = append(b, l.name...)
		b = append(b, 0xff)
		b = append(b, l.value...)
		b = append(b, 0xfe)
	}
	return b
}

type label struct{ name, value string }

// labeler makes the labels of a metric: its tags with values, names
// sanitised, and the device unless a tag already gives a "device" label;
// sorted by name, one label per name (when two tags sanitise to one name,
// the later in key order wins). The label names are remembered by tag
// key; the result is scratch, valid until the next call.
type labeler struct {
	names map[string]string
	lbl   []label
	// logger says, once per label name, that two tags gave it (nil:
	// not said); said are the names said, shared by the labelers of one
	// sink (nil: this labeler's own, made on the first clash).
	logger *slog.Logger
	said   *saidNames
}

// saidNames are the label names a clash was said of, for labelers that
// work at once (remote write's encoding workers).
type saidNames struct {
	mu    sync.Mutex
	names map[string]bool
}

// first reports whether name was not said yet, and takes it as said
// from then on; past 1024 names, none is said.
func (s *saidNames) first(name string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.names[name] || len(s.names) >= 1024 {
		return false
	}
	if s.names == nil {
		s.names = map[string]bool{}
	}
	s.names[name] = true
	return true
}

func (l *labeler) labels(p *telemetry.Point) []label {
	if l.names == nil {
		l.names = map[string]string{}
	}
	lbl := l.lbl[:0]
	device := p.Device != ""
	for _, t := range p.Tags {
		if t.Value == "" {
			continue
		}
		ln, ok := l.names[t.Key]
		if !ok {
			ln = LabelName(t.Key)
			if len(l.names) > 1<<16 {
				clear(l.names)
			}
			l.names[t.Key] = ln
		}
		if ln == "device" {
			device = false
		}
		lbl = append(lbl, label{ln, validUTF8(t.Value)})
	}
	if device {
		lbl = append(lbl, label{"device", validUTF8(p.Device)})
	}
	if !slices.IsSortedFunc(lbl, compareLabels) {
		slices.SortStableFunc(lbl, compareLabels)
	}
	// One label per name: the last of equal names.
	out := lbl[:0]
	for i, x := range lbl {
		if i+1 < len(lbl) && lbl[i+1].name == x.name {
			l.clash(p, x.name)
			continue
		}
		out = append(out, x)
	}
	l.lbl = out
	return out
}

// clash warns, once per label name, that several tags of p give the
// label name, and that the later in key order is served.
func (l *labeler) clash(p *telemetry.Point, name string) {
	if l.logger == nil {
		return
	}
	if l.said == nil {
		l.said = &saidNames{}
	}
	if !l.said.first(name) {
		return
	}
	var keys []string
	for _, t := range p.Tags {
		if t.Value != "" && l.names[t.Key] == name {
			keys = append(keys, t.Key)
		}
	}
	l.logger.Warn("prometheus sink: several tags give one label name; the last in key order is served, the others are left out",
		slog.String("label", name), slog.String("tags", strings.Join(keys, ",")),
		slog.String("measurement", p.Measurement), slog.String("device", p.Device))
}

func compareLabels(a, b label) int { return strings.Compare(a.name, b.name) }

// validUTF8 is s with invalid bytes replaced, without a copy when there
// are none.
func validUTF8(s string) string {
	if utf8.ValidString(s) {
		return s
	}
	return strings.ToValidUTF8(s, "\uFFFD")
}

// Describe sends nothing: the collector is unchecked.
func (c *Collector) Describe(chan<- *prometheus.Desc) {}

// Collect drops stale series and emits the rest. Within a name, series may
// carry different tags; every series gets the union of label names, empty
// where it has none, which Prometheus treats as absent.
func (c *Collector) Collect(ch chan<- prometheus.Metric) {
	c.mu.Lock()
	defer c.mu.Unlock()
	cutoff := c.now().Add(-c.staleness)
	for _, f := range c.families {
		names := map[string]bool{}
		for k, s := range f.series {
			if s.updated.Before(cutoff) {
				c.dropSeries(f, k, s)
				continue
			}
			for _, l := range s.labels {
				names[l.name] = true
			}
		}
		if len(f.series) == 0 {
			c.dropFamily(f)
			continue
		}
		labelNames := make([]string, 0, len(names))
		for l := range names {
			labelNames = append(labelNames, l)
		}
		slices.Sort(labelNames)
		desc := prometheus.NewDesc(f.name, f.help, labelNames, nil)
		vt := prometheus.GaugeValue
		if f.counter {
			vt = prometheus.CounterValue
		}
		values := make([]string, len(labelNames))
		for _, s := range f.series {
			for i, l := range labelNames {
				values[i] = ""
				if j, ok := slices.BinarySearchFunc(s.labels, l, func(x label, n string) int { return strings.Compare(x.name, n) }); ok {
					values[i] = s.labels[j].value
				}
			}
			m, err := prometheus.NewConstMetric(desc, vt, s.value, values...)
			if err != nil {
				ch <- prometheus.NewInvalidMetric(desc, err)
				continue
			}
			ch <- m
		}
	}
}

// labelText renders labels in exposition syntax ("" for none).
func labelText(labels []label) string {
	if len(labels) == 0 {
		return ""
	}
	var b strings.Builder
	b.WriteByte('{')
	for i, l := range labels {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(l.name)
		b.WriteString(`="`)
		for j := 0; j < len(l.value); j++ {
			switch c := l.value[j]; c {
			case '\\':
				b.WriteString(`\\`)
			case '"':
				b.WriteString(`\"`)
			case '\n':
				b.WriteString(`\n`)
			default:
				b.WriteByte(c)
			}
		}
		b.WriteByte('"')
	}
	b.WriteByte('}')
	return b.String()
}

// WriteText writes every live series in the Prometheus text exposition
// format, dropping stale ones. It is what the sink's endpoint serves: a
// hundred thousand series through client_golang's registry (which builds,
// sorts and checks a metric object per series) take about a second; this
// writes precomputed label text and takes a fraction of it. A series
// carries only its own labels (an absent label equals an empty one).
func (c *Collector) WriteText(w io.Writer) error {
	// Render under the lock, write without it: a scraper that stops
	// reading must not block Update (and so the sink's consumer).
	buf := c.render()
	_, err := w.Write(buf)
	return err
}

// helpEscaper escapes HELP text as the exposition format wants.
var helpEscaper = strings.NewReplacer(`\`, `\\`, "\n", `\n`)

// render returns the exposition of every live series, dropping stale ones.
func (c *Collector) render() []byte {
	c.mu.Lock()
	defer c.mu.Unlock()
	cutoff := c.now().Add(-c.staleness)
	names := make([]string, 0, len(c.families))
	for name := range c.families {
		names = append(names, name)
	}
	slices.Sort(names)
	buf := make([]byte, 0, c.lastSize+c.lastSize/8+4096)
	for _, name := range names {
		f := c.families[name]
		for k, s := range f.series {
			if s.updated.Before(cutoff) {
				c.dropSeries(f, k, s)
			}
		}
		if len(f.series) == 0 {
			c.dropFamily(f)
			continue
		}
		kind := "gauge"
		if f.counter {
			kind = "counter"
		}
		buf = append(buf, "# HELP "...)
		buf = append(buf, name...)
		buf = append(buf, ' ')
		buf = append(buf, helpEscaper.Replace(f.help)...)
		buf = append(buf, "\n# TYPE "...)
		buf = append(buf, name...)
		buf = append(buf, ' ')
		buf = append(buf, kind...)
		buf = append(buf, '\n')
		for _, s := range f.series {
			buf = append(buf, name...)
			buf = append(buf, s.text...)
			buf = append(buf, ' ')
			switch {
			case math.IsNaN(s.value):
				buf = append(buf, "NaN"...)
			case math.IsInf(s.value, 1):
				buf = append(buf, "+Inf"...)
			case math.IsInf(s.value, -1):
				buf = append(buf, "-Inf"...)
			default:
				buf = strconv.AppendFloat(buf, s.value, 'g', -1, 64)
			}
			buf = append(buf, '\n')
		}
	}
	c.lastSize = len(buf)
	return buf
}

// Sweep drops series not updated for the staleness period, so memory
// follows the live series even when nobody scrapes.
func (c *Collector) Sweep() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.sweep()
}

// sweep is Sweep with c.mu held.
func (c *Collector) sweep() {
	cutoff := c.now().Add(-c.staleness)
	for _, f := range c.families {
		for k, s := range f.series {
			if s.updated.Before(cutoff) {
				c.dropSeries(f, k, s)
			}
		}
		if len(f.series) == 0 {
			c.dropFamily(f)
		}
	}
	// Forget the markers' times no sample can come before any more: a
	// sample's time is at most maxClockSkew before when weir received
	// it, which is within staleness (update leaves older points out).
	cutoffMS := cutoff.Add(-maxClockSkew).UnixMilli()
	for k, ms := range c.endedMS {
		if ms < cutoffMS {
			delete(c.endedMS, k)
		}
	}
	// Forget the label sets whose series are all gone.
	for k, set := range c.sets {
		set.series = slices.DeleteFunc(set.series, func(s *series) bool { return s.dropped })
		if len(set.series) == 0 {
			c.removeSet(k, set)
		}
	}
}

// MetricName is namespace_measurement_field in snake_case, with _total on
// counters.
func MetricName(namespace, measurement, field string, counter bool) string {
	parts := make([]string, 0, 3)
	for _, p := range []string{namespace, measurement, field} {
		if p = snake(p); p != "" {
			parts = append(parts, p)
		}
	}
	name := strings.Join(parts, "_")
	if name == "" {
		name = "unnamed"
	}
	if name[0] >= '0' && name[0] <= '9' {
		name = "_" + name
	}
	if counter && !strings.HasSuffix(name, "_total") {
		name += "_total"
	}
	return name
}

// LabelName sanitises a tag key: snake_case, only [a-z0-9_], not starting
// with a digit, and never "__" at the start (reserved for Prometheus).
func LabelName(k string) string {
	n := snake(k)
	if n == "" {
		return "tag"
	}
	if n[0] >= '0' && n[0] <= '9' {
		n = "_" + n
	}
	if strings.HasPrefix(n, "__") {
		n = "tag" + n[1:]
	}
	return n
}

// snake turns "ifHCInOctets" into "if_hc_in_octets" and any character
// outside [A-Za-z0-9_] into "_", collapsing repeats.
func snake(s string) string {
	var b strings.Builder
	rs := []rune(s)
	lastUnderscore := true // no leading underscore from a separator
	for i, r := range rs {
		switch {
		case r >= 'A' && r <= 'Z':
			lowerBefore := i > 0 && (rs[i-1] >= 'a' && rs[i-1] <= 'z' || rs[i-1] >= '0' && rs[i-1] <= '9')
			acronymEnd := i > 0 && rs[i-1] >= 'A' && rs[i-1] <= 'Z' && i+1 < len(rs) && rs[i+1] >= 'a' && rs[i+1] <= 'z'
			if (lowerBefore || acronymEnd) && !lastUnderscore {
				b.WriteByte('_')
			}
			b.WriteRune(r + ('a' - 'A'))
			lastUnderscore = false
		case r >= 'a' && r <= 'z', r >= '0' && r <= '9':
			b.WriteRune(r)
			lastUnderscore = false
		default:
			if !lastUnderscore {
				b.WriteByte('_')
				lastUnderscore = true
			}
		}
	}
	return strings.TrimSuffix(b.String(), "_")
}
