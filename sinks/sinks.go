// Package sinks is the framework every sink (sinks/<type>) runs in: a
// consumer group of its own ("sink-<name>") over the sink's topics, records
// decoded by their schema header and filtered, handed to the destination in
// batches, offsets committed only after the destination accepted a batch,
// exponential back-off on retryable failures, and records the destination
// rejects for good written to the dead-letter topic so the sink moves on.
//
// A destination implements Destination; sinks/all maps a config `type:` to
// its constructor.
package sinks

import (
	"context"
	"crypto/tls"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"runtime"
	"slices"
	"sync"
	"syscall"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/weirnet/weir/broker"
	"github.com/weirnet/weir/configs"
	"github.com/weirnet/weir/internal/publish"
	"github.com/weirnet/weir/internal/throttle"
	"github.com/weirnet/weir/telemetry"
)

// Defaults for the common settings.
const (
	DefaultBatchSize     = 5000
	DefaultFlushInterval = time.Second
	DefaultRetryInitial  = 100 * time.Millisecond
	DefaultRetryMax      = 30 * time.Second
)

// Dead-letter headers, added to the record's own.
const (
	HeaderDeadLetterReason = "dead_letter_reason"
	HeaderDeadLetterSink   = "dead_letter_sink"
	HeaderOriginalTopic    = "original_topic"
	HeaderOriginalPosition = "original_partition_offset"
)

// Item is one record handed to a destination: the record (copied, so it
// outlives the Poll) and its decoded value according to its schema header.
// Exactly one of Metric (Point for a PointDestination), Log, Event is set
// for metric/1, log/1 and event/1 records; other schemas leave all nil and
// only Record.Value is there.
type Item struct {
	Record broker.Record
	Schema string
	Metric *telemetry.Metric
	// Point is a metric/1 record for a PointDestination, which gets it
	// instead of Metric. It is reused after the batch is delivered.
	Point *telemetry.Point
	Log   *telemetry.EnrichedLog
	Event *telemetry.Event
}

// MetricPoint is the item's metric as a Point: Point when the framework
// decoded one, else made from Metric; nil for a log or an event.
func (it *Item) MetricPoint() *telemetry.Point {
	switch {
	case it.Point != nil:
		return it.Point
	case it.Metric != nil:
		return telemetry.PointOf(it.Metric)
	}
	return nil
}

// Destination is where a sink delivers: a file, an InfluxDB, an HTTP
// endpoint. Write is called from one goroutine at a time.
type Destination interface {
	// Write delivers a batch; nil means the destination accepted every
	// item. A *RetryableError (or any error not a *RejectedError) is
	// retried with back-off; a *RejectedError sends the items to the
	// dead-letter topic. A destination that delivers item by item says
	// how far it got with a *PartialError, so that the first items are
	// not sent again. The items' slice and their Points are reused
	// after the batch is committed: keep strings and values from them,
	// not the items or Points.
	Write(ctx context.Context, items []Item) error
	// Close releases what the destination holds (files, connections).
	Close() error
}

// Concurrent is implemented by destinations that deliver record by record
// and can have several records in flight (the webhook's JSON form): with
// Lanes above 1, the sink queues the records it polls by key (by
// partition, for records without a key), and each of that many lanes
// takes the next key no other lane is writing and writes a few of its
// records, retried on its own: the records of a key go one write at a
// time and in their order, and a key being retried holds up one lane
// while the others go on with every other key. Up to batch_size × Lanes
// records are queued; polling waits while they are. Each partition is
// committed every flush_interval up to its first record not yet
// delivered or dead-lettered, whatever lane has it.
type Concurrent interface {
	// Lanes is how many records may be in flight at once; 1: one, and
	// Write alone is called.
	Lanes() int
	// WriteLane is Write for records of one key, on lane (0 <= lane <
	// Lanes()): lanes are written at once, each from one goroutine at a
	// time, and a key's next records may come on another lane. The
	// items' slice is reused after the call.
	WriteLane(ctx context.Context, lane int, items []Item) error
}

// Runner is implemented by destinations that serve something while the sink
// runs (the Prometheus exposition endpoint). Run blocks until ctx is done.
type Runner interface {
	Run(ctx context.Context) error
}

// PartitionReleaser is implemented by destinations that keep what they
// were sent (the Prometheus exposition serves the last values): told of
// the partitions this member of the sink's group no longer reads, they
// drop what came from them, which the partitions' new owner (another weir
// process) serves from now on. Kept, it would be served twice until it
// went stale.
type PartitionReleaser interface {
	ReleasePartitions(tps []broker.TopicPartition)
}

// SchemaFilter is implemented by destinations that only take some schemas
// (InfluxDB takes metrics); records of other schemas are skipped.
type SchemaFilter interface {
	Accepts(schema string) bool
}

// RawDestination is implemented by destinations that can write records as
// they are (the file sink). When RawRecords is true and the sink has no
// filter, values are not decoded: decoding JSON is most of a sink's cost
// per record.
type RawDestination interface {
	RawRecords() bool
}

// Resolver is a Destination some of whose records end what earlier ones
// began: the Alertmanager form, where an up resolves the alert a down
// fired. The sink's filter takes a record that ends something as it
// would take what it ends (its severity aside: a down is an error, its up
// a notice), so that a filter choosing which alerts fire (severities:
// [error], event_types: [interface_down]) does not leave them firing for
// good.
type Resolver interface {
	// Ends returns the event type an event of type typ ends, if any;
	// EndsAny for one the filter takes whatever it is (device_renamed,
	// which carries over what the old name began).
	Ends(typ string) (string, bool)
}

// EndsAny is what Resolver.Ends returns for an event that bears on
// whatever the filter took.
const EndsAny = "*"

// PointDestination is implemented by metric destinations that walk a
// metric's tags and fields (InfluxDB, Prometheus): when Points is true they
// get metric/1 records as Item.Point, decoded without maps and reused from
// batch to batch, instead of Item.Metric.
type PointDestination interface {
	Points() bool
}

// RetryableError is a failure worth trying again (connection refused,
// timeout, 5xx, 429). After, when set, is the least wait the destination
// asked for (Retry-After). Reason is a short, bounded label for
// weir_sink_retries_total (e.g. "http_429"); empty, the sink works one out
// from Err (RetryReason).
type RetryableError struct {
	Err    error
	After  time.Duration
	Reason string
}

func (e *RetryableError) Error() string { return e.Err.Error() }
func (e *RetryableError) Unwrap() error { return e.Err }

// RetryReason is the reason label of a retried failure: the
// RetryableError's own, else what the error is at bottom (a connection
// refused, a timeout, a TLS handshake, a name not resolved, a full disk,
// a read-only file system, a permission refused), else "error".
func RetryReason(err error) string {
	var re *RetryableError
	if errors.As(err, &re) && re.Reason != "" {
		return re.Reason
	}
	var dnsErr *net.DNSError
	var tlsErr *tls.CertificateVerificationError
	var recErr tls.RecordHeaderError
	var alert tls.AlertError
	var netErr net.Error
	switch {
	case errors.Is(err, syscall.ECONNREFUSED):
		return "refused"
	case errors.Is(err, context.DeadlineExceeded), errors.As(err, &netErr) && netErr.Timeout():
		return "timeout"
	case errors.As(err, &tlsErr), errors.As(err, &recErr), errors.As(err, &alert):
		return "tls"
	case errors.As(err, &dnsErr):
		return "dns"
	case errors.Is(err, syscall.ENOSPC), errors.Is(err, syscall.EDQUOT):
		return "no_space"
	case errors.Is(err, syscall.EROFS):
		return "read_only" // a volume remounted read-only after errors
	case errors.Is(err, syscall.EACCES), errors.Is(err, syscall.EPERM):
		return "permission"
	}
	return "error"
}

// RejectedError is a refusal for good (a 4xx): sending the same bytes again
// will fail again. Reason is a short, bounded label (e.g. "http_400") for
// the dead-letter metric; Err holds the detail for the header and log.
type RejectedError struct {
	Reason string
	Err    error
}

func (e *RejectedError) Error() string { return e.Reason + ": " + e.Err.Error() }
func (e *RejectedError) Unwrap() error { return e.Err }

// PartialError is a Write that delivered the first Done items (perhaps
// none) and then failed with Err (a *RetryableError or a *RejectedError,
// as Write would return) on item Done: the sink goes on from item Done,
// and a rejection is of that item alone, which is dead-lettered without
// the others being sent again one by one to find it. A webhook posting one record
// at a time under a rate limit would otherwise post the first ones again
// on every retry, and never get past the limit.
type PartialError struct {
	Done int
	Err  error
}

func (e *PartialError) Error() string { return e.Err.Error() }
func (e *PartialError) Unwrap() error { return e.Err }

// Env is what a constructor gets besides its config.
type Env struct {
	Logger *slog.Logger
	// Registerer takes the destination's own metrics, if any.
	Registerer prometheus.Registerer
	// StateDir is a directory a destination may keep state in across
	// restarts (data_dir/sinks under weir run); empty: keep none.
	StateDir string
	// SessionTimeout is how long a sink's group waits for a member that
	// went silent (a killed process) before another takes its
	// partitions; zero keeps the backend's (franz-go's 45 s on a Kafka
	// cluster). Build gives it to every sink it makes.
	SessionTimeout time.Duration
}

// Reloader is a destination that takes part of a reloaded config while it
// runs (the prometheus sink its staleness, whose default follows the
// collectors' intervals); the rest of a sink's config takes effect at the
// next start.
type Reloader interface {
	Reload(cfg configs.Sink)
}

// Constructor builds the destination of one configured sink.
type Constructor func(cfg configs.Sink, env Env) (Destination, error)

// Metrics are the metrics all sinks share, labelled by sink name.
type Metrics struct {
	records     *prometheus.CounterVec
	errors      *prometheus.CounterVec
	retries     *prometheus.CounterVec
	deadLetters *prometheus.CounterVec
	filtered    *prometheus.CounterVec
	batch       *prometheus.HistogramVec
}

// NewMetrics makes the sink metrics and registers them on reg (nil: not
// registered).
func NewMetrics(reg prometheus.Registerer) *Metrics {
	m := &Metrics{
		records: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "weir_sink_records_total",
			Help: "Records the sink's destination accepted."}, []string{"sink"}),
		errors: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "weir_sink_errors_total",
			Help: "Failures, by kind: requests the destination failed (retryable) or refused (rejected; each refused half of a batch searched for its bad records counts), records that did not decode (decode), failed writes of the dead-letter topic (dead_letter), records it refused (dead_letter_dropped), failed polls (poll)."}, []string{"sink", "kind"}),
		retries: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "weir_sink_retries_total",
			Help: "Batches sent again after a retryable failure, by its reason (http_<status>, refused, timeout, tls, dns, no_space, read_only, permission, error)."}, []string{"sink", "reason"}),
		deadLetters: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "weir_sink_dead_letters_total",
			Help: "Records written to the dead-letter topic, by reason."}, []string{"sink", "reason"}),
		filtered: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "weir_sink_filtered_total",
			Help: "Records the sink's filter or schema skipped."}, []string{"sink"}),
		batch: prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "weir_sink_batch_seconds",
			Help:    "Time to deliver one batch, retries included; with concurrency, one lane's write (the records it took from its queue at once).",
			Buckets: prometheus.ExponentialBuckets(0.0001, 4, 12)}, []string{"sink"}),
	}
	if reg != nil {
		reg.MustRegister(m.records, m.errors, m.retries, m.deadLetters, m.filtered, m.batch)
	}
	return m
}

// Sink runs one configured sink: its consumer group and its destination.
type Sink struct {
	b       broker.Broker
	cfg     configs.Sink
	dest    Destination
	filter  *filter
	logger  *slog.Logger
	m       *Metrics
	dlTopic string
	session time.Duration // of the group member; 0: the backend's

	batchSize     int
	flushInterval time.Duration
	retryInitial  time.Duration
	retryMax      time.Duration

	// What the destination takes, asked once.
	schemas SchemaFilter // nil: every schema
	raw     bool         // records as they are, nothing decoded
	points  bool         // metrics as Points
	ender   Resolver     // nil: no record ends another

	// lanes > 1: the destination is Concurrent, and records go to that
	// many lanes (see Concurrent and lanes).
	lanes int

	// Decoding state, one per decoding goroutine, and the Points of the
	// records not yet committed (reused after each commit).
	decoders []*decoder
	pts      []*telemetry.Point
	ptsUsed  int

	// A destination refusing record after record (a chat hook that
	// refuses the payload, InfluxDB refusing points past its retention)
	// is logged once per 10 s with how many, not once per record; each
	// is counted and dead-lettered with its reason.
	// failMu guards it and the retry log's state below: a Concurrent
	// destination's lanes fail and succeed at once.
	failMu    sync.Mutex
	rejectLog throttle.Throttle
	// Records that do not decode (a producer writing something else
	// under a weir schema) likewise: once per 10 s, with how many.
	decodeLog throttle.Throttle
	// A destination down for long under a short retry.max: its first
	// failed attempts are logged, then one line per 10 s (each attempt
	// is counted in weir_sink_retries_total).
	retryLog throttle.Throttle
	// failStreak counts failed attempts since a batch went through
	// without one, and decides the first ones logged: a batch's own
	// attempt count restarts after each record a per-record destination
	// takes, so a webhook failing one post in ten would log every
	// failure. failLogged: a failure was logged and its recovery not yet
	// (an outage may outlast batches given up under max_attempts, and
	// end at a batch's first attempt). failingSince: the first failure
	// since a Write went through.
	failStreak   int
	failLogged   bool
	failingSince time.Time
	// With lanes: how many lanes are failing (an attempt of their write
	// failed and none went through since), the last failed attempt, and
	// when (and on which lane) a write first went through after it. A
	// receiver failing a post now and then keeps some lane failing most
	// of the time under a backlog: the outage ends, and its recovery is
	// logged (once), when no lane is failing and none failed for a flush
	// interval, a write having gone through since; the failure streak
	// ends then too. See laneWentThrough and lanesQuiet.
	lanesFailing int
	lastFailure  time.Time
	throughAt    time.Time // zero: no write went through since lastFailure
	throughLane  int
	// Failed polls (a Kafka cluster down): the same.
	pollLog throttle.Throttle
	// pollRetryWait is the wait after a failed poll.
	pollRetryWait time.Duration
}

// Option configures a Sink.
type Option func(*Sink)

// WithLogger sets the logger.
func WithLogger(l *slog.Logger) Option { return func(s *Sink) { s.logger = l } }

// WithMetrics shares metrics between sinks (one registration).
func WithMetrics(m *Metrics) Option { return func(s *Sink) { s.m = m } }

// WithDeadLetterTopic overrides telemetry.TopicDeadLetter.
func WithDeadLetterTopic(t string) Option { return func(s *Sink) { s.dlTopic = t } }

// WithSessionTimeout sets the session timeout of the sink's group member
// (see Env.SessionTimeout).
func WithSessionTimeout(d time.Duration) Option { return func(s *Sink) { s.session = d } }

// WithPollRetryWait sets the wait after a failed poll (a Kafka cluster
// away) before the next; default 1s.
func WithPollRetryWait(d time.Duration) Option { return func(s *Sink) { s.pollRetryWait = d } }

// Group is the consumer group of the sink named name.
func Group(name string) string { return "sink-" + name }

// New makes a sink delivering cfg.Topics from b to dest.
func New(b broker.Broker, cfg configs.Sink, dest Destination, opts ...Option) (*Sink, error) {
	f, err := newFilter(cfg.Filter)
	if err != nil {
		return nil, fmt.Errorf("sink %s: %w", cfg.Name, err)
	}
	s := &Sink{b: b, cfg: cfg, dest: dest, filter: f, logger: slog.New(slog.DiscardHandler),
		dlTopic: telemetry.TopicDeadLetter, batchSize: cfg.BatchSize, flushInterval: cfg.FlushInterval.Std(),
		retryInitial: cfg.Retry.Initial.Std(), retryMax: cfg.Retry.Max.Std(), pollRetryWait: time.Second}
	for _, o := range opts {
		o(s)
	}
	if s.m == nil {
		s.m = NewMetrics(nil)
	}
	if s.batchSize <= 0 {
		s.batchSize = DefaultBatchSize
	}
	if s.flushInterval <= 0 {
		s.flushInterval = DefaultFlushInterval
	}
	if s.retryInitial <= 0 {
		s.retryInitial = DefaultRetryInitial
	}
	if s.retryMax <= 0 {
		s.retryMax = max(DefaultRetryMax, s.retryInitial)
	}
	s.schemas, _ = dest.(SchemaFilter)
	if rd, ok := dest.(RawDestination); ok && rd.RawRecords() && s.filter.empty() {
		s.raw = true
	}
	if pd, ok := dest.(PointDestination); ok && pd.Points() {
		s.points = true
	}
	s.ender, _ = dest.(Resolver)
	_, releaser := dest.(PartitionReleaser)
	_, warmer := dest.(Warmer)
	// The lanes' loop neither releases partitions nor warms up (no
	// Concurrent destination does): such a destination gets Write.
	if cd, ok := dest.(Concurrent); ok && cd.Lanes() > 1 && !releaser && !warmer {
		s.lanes = cd.Lanes()
		// Points are reused after each commit of a whole poll; lanes
		// finish records in any order: Metrics, each its own.
		s.points = false
	}
	return s, nil
}

// Reload hands cfg, this sink's entry of a reloaded config, to its
// destination if it is a Reloader.
func (s *Sink) Reload(cfg configs.Sink) {
	if r, ok := s.dest.(Reloader); ok {
		r.Reload(cfg)
	}
}

// Run consumes and delivers until ctx is done; it returns nil on a clean
// stop, committing what the destination took of the batch it was retrying
// (a webhook posting record by record). What was delivered but not
// committed (a crash, a failed commit) is delivered again on the next
// start (at least once; at most one batch per sink).
func (s *Sink) Run(ctx context.Context) error {
	defer s.dest.Close()
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	runErr := make(chan error, 1)
	if r, ok := s.dest.(Runner); ok {
		go func() {
			err := r.Run(ctx)
			if err != nil && ctx.Err() == nil {
				runErr <- err
				cancel()
			}
			close(runErr)
		}()
	} else {
		close(runErr)
	}
	err := s.consume(ctx)
	cancel()
	if rerr := <-runErr; rerr != nil {
		return fmt.Errorf("sink %s: %w", s.cfg.Name, rerr)
	}
	return err
}

// Close releases the destination of a sink that will not Run (Run closes
// it itself).
func (s *Sink) Close() error { return s.dest.Close() }

// errorKinds are the kinds of weir_sink_errors_total, exported at 0 from
// the start: an alert on a counter's increase sees nothing in a series
// that first appears at 1.
var errorKinds = [...]string{"retryable", "rejected", "decode", "dead_letter", "dead_letter_dropped", "poll"}

func (s *Sink) consume(ctx context.Context) error {
	s.m.records.WithLabelValues(s.cfg.Name)
	for _, k := range errorKinds {
		s.m.errors.WithLabelValues(s.cfg.Name, k)
	}
	// The dead-letter topic exists from the start, as the first dead
	// letter would make it, so that a consumer of it or an alert on it
	// can be set up before anything goes wrong.
	if err := s.b.CreateTopic(ctx, s.dlTopic, broker.TopicConfig{}); err != nil && !errors.Is(err, broker.ErrTopicExists) && ctx.Err() == nil {
		s.logger.Warn("sink: dead-letter topic not made now; the first dead letter makes it", "sink", s.cfg.Name, "topic", s.dlTopic, "err", err)
	}
	var c broker.Consumer
	for {
		var err error
		opts := []broker.ConsumerOption{broker.WithMemberID(Group(s.cfg.Name))}
		if s.cfg.StartsAtEnd() {
			opts = append(opts, broker.WithResetToLatest())
		}
		if s.session > 0 {
			opts = append(opts, broker.WithSessionTimeout(s.session))
		}
		c, err = s.b.Consume(ctx, Group(s.cfg.Name), s.cfg.Topics, opts...)
		if err == nil {
			break
		}
		if ctx.Err() != nil {
			return nil
		}
		if !errors.Is(err, broker.ErrGroupInUse) {
			return fmt.Errorf("sink %s: join group: %w", s.cfg.Name, err)
		}
		// A Kafka client holds the sink's group name (perhaps a crashed
		// one until its session times out): wait, do not stop weir.
		s.logger.Error("sink group is used by a Kafka client; retrying", "sink", s.cfg.Name, "err", err)
		select {
		case <-ctx.Done():
			return nil
		case <-time.After(5 * time.Second):
		}
	}
	defer c.Close()
	if s.lanes > 1 {
		return s.consumeLanes(ctx, c)
	}
	sink := prometheus.Labels{"sink": s.cfg.Name}
	filtered := s.m.filtered.With(sink)
	var pending []Item
	var dec []decoded
	releaser, _ := s.dest.(PartitionReleaser)
	var assigned []broker.TopicPartition // for releaser
	var warm *warmup
	if w, ok := s.dest.(Warmer); ok {
		warm = newWarmup(s, w)
	}
	// dirty: records were polled since the last commit, whether or not
	// they are pending (filtered ones need committing too).
	dirty := false
	pollFailures := 0 // in a row
	deadline := time.Now().Add(s.flushInterval)
	for {
		wait := time.Until(deadline)
		if len(pending) == 0 && !dirty {
			// Nothing to flush: wait a whole interval for data.
			wait = s.flushInterval
		}
		recs, timedOut, err := poll(ctx, c, wait)
		if err != nil {
			if !s.pollFailed(ctx, err, &pollFailures) {
				return nil
			}
			continue
		}
		s.pollWent(timedOut, &pollFailures)
		if releaser != nil {
			assigned, pending = s.release(releaser, assigned, c.Assigned(), pending)
		}
		if warm != nil {
			// Before the partitions' new records: the state they
			// update is that of the window before them.
			warm.run(ctx, c, recs)
		}
		if len(pending) == 0 && !dirty && len(recs) > 0 {
			deadline = time.Now().Add(s.flushInterval)
		}
		dec = s.decodeAll(recs, dec[:0])
		for i := range dec {
			dirty = true
			d := &dec[i]
			if d.err != nil {
				s.m.errors.WithLabelValues(s.cfg.Name, "decode").Inc()
				if n, ok := s.decodeLog.Due(time.Now()); ok {
					s.logger.Warn("sink dead-letters a record that does not decode", "sink", s.cfg.Name, "err", d.err, "times", n)
				}
				if err := s.deadLetter(ctx, []Item{d.it}, "decode", d.err); err != nil {
					return nil // ctx done: nothing committed
				}
				continue
			}
			if !d.ok {
				filtered.Inc()
				continue
			}
			pending = append(pending, d.it)
		}
		if !dirty || (len(pending) < s.batchSize && time.Now().Before(deadline)) {
			continue
		}
		for rest := pending; len(rest) > 0; {
			n := min(len(rest), s.batchSize)
			batch := rest[:n]
			if done, err := s.deliver(ctx, batch); err != nil {
				// ctx done while retrying: what the destination took
				// of the batch (a webhook posting record by record) is
				// committed, the rest is delivered again at the next
				// start.
				s.commitDone(c, done)
				return nil
			}
			rest = rest[n:]
			if len(rest) > 0 && ctx.Err() != nil {
				// Stopping: what was delivered is committed once, with
				// the few seconds a stop gives a commit, and the rest of
				// the poll comes again at the next start. Delivering it
				// now, each batch's commit with seconds of its own, made
				// a stop against a cluster that hangs last as many times
				// as the poll had batches.
				s.commitDone(c, batchEnd(pending[:len(pending)-len(rest)]))
				return nil
			}
			if oc, ok := c.(broker.OffsetCommitter); ok && len(rest) > 0 {
				// More batches to go: commit this one, so a crash
				// delivers one batch again, not the whole poll (a
				// partition not in it was committed with an earlier one).
				cctx, cancel := commitContext(ctx)
				if err := oc.CommitOffsets(cctx, batchEnd(batch)); err != nil {
					s.logger.Warn("sink commit failed", "sink", s.cfg.Name, "err", err)
				}
				cancel()
			}
		}
		// Delivered: the items' storage and Points serve the next batch.
		clear(pending)
		pending = pending[:0]
		s.ptsUsed = 0
		cctx, cancel := commitContext(ctx)
		cerr := c.Commit(cctx)
		cancel()
		if cerr != nil {
			// A failed commit only means some records come again.
			s.logger.Warn("sink commit failed", "sink", s.cfg.Name, "err", cerr)
		}
		if ctx.Err() != nil {
			return nil
		}
		dirty = false
		deadline = time.Now().Add(s.flushInterval)
	}
}

// poll polls c for up to wait (a millisecond at least): a poll that
// found nothing by then has timedOut, which is no error.
func poll(ctx context.Context, c broker.Consumer, wait time.Duration) (recs []broker.Record, timedOut bool, err error) {
	pctx, cancel := context.WithTimeout(ctx, max(wait, time.Millisecond))
	recs, err = c.Poll(pctx)
	cancel()
	if err != nil && ctx.Err() == nil && errors.Is(err, context.DeadlineExceeded) {
		return nil, true, nil
	}
	return recs, false, err
}

// pollFailed counts and logs a failed poll and waits before the next; false:
// stop (ctx done, the consumer closed).
func (s *Sink) pollFailed(ctx context.Context, err error, failures *int) bool {
	if ctx.Err() != nil || errors.Is(err, broker.ErrClosed) {
		return false
	}
	// A group session lost in a network blip, a coordinator
	// moving, a partition that cannot be read for now: the
	// client recovers, or the broker reports it. Stopping here
	// would stop weir. What is pending stays pending.
	// A cluster down for long fails poll after poll: the first
	// failures are logged, then one line per 10 s.
	s.m.errors.WithLabelValues(s.cfg.Name, "poll").Inc()
	*failures++
	// failures is how many in a row; the throttle's count (since
	// the line it last let through) does not know of the first
	// ones, logged whether it is due or not.
	if logFailure(&s.pollLog, *failures) {
		s.logger.Error("sink poll failed; polling again in a second", "sink", s.cfg.Name, "err", err,
			"failures", *failures)
	}
	select {
	case <-ctx.Done():
		return false
	case <-time.After(s.pollRetryWait):
	}
	return true
}

// pollWent notes a poll that did not fail after some that did.
func (s *Sink) pollWent(timedOut bool, failures *int) {
	if *failures > 0 && !timedOut {
		// A poll that timed out with nothing says nothing: between
		// failures, a Kafka client's do while it dials.
		s.logger.Info("sink polling again", "sink", s.cfg.Name, "failed_polls", *failures)
		*failures = 0
	}
}

// logFailure reports whether to log the nth failure in a row (a failed
// poll, a batch's failed attempt): the first three are, then one every
// throttle.Every on th, so a destination or cluster down for long does
// not fill the log while every failure is counted.
func logFailure(th *throttle.Throttle, nth int) bool {
	_, due := th.Due(time.Now())
	return due || nth <= 3
}

// commitContext is the context to commit a batch the destination took
// with: ctx, or once ctx is done (weir stopping while the batch was
// delivered) a few seconds of its own, as a Kafka cluster refuses a
// commit with a done context and the batch would come again at the next
// start.
func commitContext(ctx context.Context) (context.Context, context.CancelFunc) {
	if ctx.Err() == nil {
		return ctx, func() {}
	}
	return context.WithTimeout(context.WithoutCancel(ctx), stopCommitTimeout)
}

// stopCommitTimeout bounds a commit made once the sink is stopping.
const stopCommitTimeout = 5 * time.Second

// commitDone commits, per partition, the offsets of a batch the sink
// stops in up to its first record not delivered (or dead-lettered) before
// it stopped, so a restart does not deliver those again. ctx is done: the
// commit gets a few seconds of its own.
func (s *Sink) commitDone(c broker.Consumer, done map[broker.TopicPartition]int64) {
	oc, ok := c.(broker.OffsetCommitter)
	if !ok || len(done) == 0 {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), stopCommitTimeout)
	defer cancel()
	if err := oc.CommitOffsets(ctx, done); err != nil {
		s.logger.Warn("sink commit at the stop failed; what was delivered of the last batch comes again", "sink", s.cfg.Name,
			"partitions", len(done), "err", err)
	}
}

// batchEnd is, per partition, the offset after the last of items: items
// are in poll order, so every record of the partition before it was
// delivered, filtered or dead-lettered.
func batchEnd(items []Item) map[broker.TopicPartition]int64 {
	out := map[broker.TopicPartition]int64{}
	for i := range items {
		r := &items[i].Record
		tp := broker.TopicPartition{Topic: r.Topic, Partition: r.Partition}
		if r.Offset+1 > out[tp] {
			out[tp] = r.Offset + 1
		}
	}
	return out
}

type decoded struct {
	it  Item
	ok  bool
	err error
}

// parallelDecodeMin is the poll size from which decoding is spread over
// the cores: JSON decoding is most of a sink's work per record.
const parallelDecodeMin = 512

// decodeAll copies and decodes recs into out, in order.
func (s *Sink) decodeAll(recs []broker.Record, out []decoded) []decoded {
	out = slices.Grow(out[:0], len(recs))[:len(recs)]
	// A Point for every record (the arena is reset at each commit).
	var pts []*telemetry.Point
	if s.points {
		for len(s.pts) < s.ptsUsed+len(recs) {
			s.pts = append(s.pts, new(telemetry.Point))
		}
		pts = s.pts[s.ptsUsed : s.ptsUsed+len(recs)]
		s.ptsUsed += len(recs)
	}
	workers := min(runtime.GOMAXPROCS(0), len(recs)/parallelDecodeMin)
	for len(s.decoders) < max(workers, 1) {
		s.decoders = append(s.decoders, new(decoder))
	}
	if workers <= 1 {
		s.decodeRange(s.decoders[0], recs, out, pts, 0, len(recs))
		return out
	}
	var wg sync.WaitGroup
	chunk := (len(recs) + workers - 1) / workers
	for w, lo := 0, 0; lo < len(recs); w, lo = w+1, lo+chunk {
		hi := min(lo+chunk, len(recs))
		dc := s.decoders[w]
		wg.Go(func() { s.decodeRange(dc, recs, out, pts, lo, hi) })
	}
	wg.Wait()
	return out
}

func (s *Sink) decodeRange(dc *decoder, recs []broker.Record, out []decoded, pts []*telemetry.Point, lo, hi int) {
	copyRecords(recs[lo:hi], out[lo:hi])
	for i := lo; i < hi; i++ {
		d := &out[i]
		var pt *telemetry.Point
		if pts != nil {
			pt = pts[i]
		}
		d.ok, d.err = s.decode(dc, &d.it, pt)
	}
}

// copyRecords copies the records (valid until the next Poll) into out's
// items, all their bytes in one allocation and their headers in another,
// and names their schema.
func copyRecords(recs []broker.Record, out []decoded) {
	n, nh := 0, 0
	for i := range recs {
		r := &recs[i]
		n += len(r.Key) + len(r.Value)
		for _, h := range r.Headers {
			n += len(h.Value)
		}
		nh += len(r.Headers)
	}
	buf := make([]byte, 0, n)
	hs := make([]broker.Header, 0, nh)
	for i := range recs {
		r := &recs[i]
		c := broker.Record{Topic: r.Topic, Partition: r.Partition, Offset: r.Offset, Timestamp: r.Timestamp}
		start := len(buf)
		buf = append(buf, r.Key...)
		if r.Key != nil { // a null key stays null
			c.Key = buf[start:len(buf):len(buf)]
		}
		start = len(buf)
		buf = append(buf, r.Value...)
		if r.Value != nil { // a tombstone stays one
			c.Value = buf[start:len(buf):len(buf)]
		}
		schema := ""
		if len(r.Headers) > 0 {
			first := len(hs)
			for _, h := range r.Headers {
				start := len(buf)
				buf = append(buf, h.Value...)
				hc := broker.Header{Key: h.Key}
				if h.Value != nil {
					hc.Value = buf[start:len(buf):len(buf)]
				}
				hs = append(hs, hc)
				if h.Key == telemetry.HeaderSchema {
					schema = schemaName(h.Value)
				}
			}
			c.Headers = hs[first:len(hs):len(hs)]
		}
		out[i] = decoded{it: Item{Record: c, Schema: schema}}
	}
}

// schemaName is the schema header's value, without an allocation for the
// known ones.
func schemaName(v []byte) string {
	switch string(v) {
	case telemetry.SchemaMetric:
		return telemetry.SchemaMetric
	case telemetry.SchemaEvent:
		return telemetry.SchemaEvent
	case telemetry.SchemaLog:
		return telemetry.SchemaLog
	}
	return string(v)
}

// decoder is one decoding goroutine's state: telemetry's decoder and a
// Point for destinations that take telemetry.Metric.
type decoder struct {
	telemetry.Decoder
	pt telemetry.Point
}

// decode decodes the item's value by its schema (pt, when not nil, takes
// a metric); ok is false when the filter or the destination skips it.
func (s *Sink) decode(dc *decoder, it *Item, pt *telemetry.Point) (bool, error) {
	if s.schemas != nil && !s.schemas.Accepts(it.Schema) {
		return false, nil
	}
	if s.raw {
		return true, nil
	}
	var err error
	v := it.Record.Value
	switch it.Schema {
	case telemetry.SchemaMetric:
		if pt == nil {
			pt = &dc.pt // for a destination that takes Metrics
		}
		if err = dc.DecodePoint(v, pt); err == nil {
			if s.points {
				it.Point = pt
			} else {
				it.Metric = pt.Metric()
			}
		}
	case telemetry.SchemaLog:
		it.Log = new(telemetry.EnrichedLog)
		err = json.Unmarshal(v, it.Log)
	case telemetry.SchemaEvent:
		it.Event = new(telemetry.Event)
		err = dc.DecodeEvent(v, it.Event)
	}
	if err != nil {
		r := &it.Record
		return false, fmt.Errorf("%s record %s/%d@%d: %w", it.Schema, r.Topic, r.Partition, r.Offset, err)
	}
	if it.Schema == telemetry.SchemaMetric {
		return s.filter.matchPoint(pt), nil
	}
	if s.filter.match(it) {
		return true, nil
	}
	if it.Event != nil && s.ender != nil {
		if ended, ok := s.ender.Ends(it.Event.Type); ok {
			if ended == EndsAny {
				return true, nil
			}
			return s.filter.matchEnding(it.Event, ended), nil
		}
	}
	return false, nil
}

// deliver writes one batch, retrying until it is accepted or rejected; it
// only fails when ctx is done (or the dead-letter topic cannot be
// written), and then done holds, per partition, the offset up to which
// the batch's records were delivered or dead-lettered all the same.
func (s *Sink) deliver(ctx context.Context, items []Item) (done map[broker.TopicPartition]int64, err error) {
	// Observed once per batch: the halves a refused record is searched
	// in (send calls itself) are part of it.
	start := time.Now()
	defer func() { s.m.batch.WithLabelValues(s.cfg.Name).Observe(time.Since(start).Seconds()) }()
	n, err := s.send(ctx, s.dest.Write, items, nil)
	if err != nil {
		return batchEnd(items[:n]), err
	}
	return nil, nil
}

// send is deliver without the batch's observation, which it calls itself
// for the halves of a batch the destination refused. write is the
// destination's Write, or WriteLane for one lane; lane is nil for a
// whole batch, else where a lane notes how its write went (the lane's
// end of an outage is not the sink's: see laneWentThrough).
func (s *Sink) send(ctx context.Context, write func(context.Context, []Item) error, items []Item, lane *laneOutcome) (done int, err error) {
	backoff := s.retryInitial
	failed := false
	if lane != nil {
		defer func() { lane.failed = lane.failed || failed }()
	}
	for attempt := 1; ; attempt++ {
		err := write(ctx, items)
		var part *PartialError
		itemwise := errors.As(err, &part) && part.Done >= 0 && part.Done <= len(items)
		if itemwise {
			err = part.Err
		}
		if itemwise && part.Done > 0 {
			// Delivered so far: the rest is a batch of its own, with
			// its attempts counted afresh (the destination is taking
			// records, if slowly).
			s.m.records.WithLabelValues(s.cfg.Name).Add(float64(part.Done))
			if lane != nil {
				lane.note(items[:part.Done])
			}
			items = items[part.Done:]
			done += part.Done
			attempt, backoff = 1, s.retryInitial
			if len(items) == 0 {
				return done, nil
			}
		}
		if err == nil {
			s.m.records.WithLabelValues(s.cfg.Name).Add(float64(len(items)))
			if lane == nil {
				s.wentThrough(len(items), attempt, failed)
			} else {
				lane.through, lane.attempts = true, max(lane.attempts, attempt)
			}
			return done + len(items), nil
		}
		if ctx.Err() != nil {
			return done, ctx.Err()
		}
		var rej *RejectedError
		if errors.As(err, &rej) {
			s.m.errors.WithLabelValues(s.cfg.Name, "rejected").Inc()
			if itemwise && len(items) > 1 {
				// The destination said which record it refused: the
				// first of those left. It alone is dead-lettered; the
				// rest go on as a batch, not posted again one by one.
				if err := s.rejected(ctx, items[:1], rej); err != nil {
					return done, err
				}
				if lane != nil {
					lane.note(items[:1])
				}
				items, done = items[1:], done+1
				attempt, backoff = 0, s.retryInitial
				continue
			}
			if len(items) > 1 {
				// The destination refused the batch; find the records it
				// refuses by halving it until they are alone, so the good
				// ones still arrive (some perhaps twice, if it kept part of
				// the batch: at least once). A refused record costs about
				// 2·log2(n) writes, not n: one at a time, a field type
				// conflict in each batch of 5000 kept a remote InfluxDB
				// sink from ever catching up.
				half := len(items) / 2
				n, err := s.send(ctx, write, items[:half], lane)
				if err != nil {
					return done + n, err
				}
				n, err = s.send(ctx, write, items[half:], lane)
				return done + half + n, err
			}
			if err := s.rejected(ctx, items, rej); err != nil {
				return done, err
			}
			return done + len(items), nil
		}
		s.m.errors.WithLabelValues(s.cfg.Name, "retryable").Inc()
		failed = true
		logIt := s.noteFailure(lane)
		if max := s.cfg.Retry.MaxAttempts; max > 0 && attempt >= max {
			s.logger.Warn("sink gave up on a batch", laneAttrs(lane, "sink", s.cfg.Name, "records", len(items), "attempts", attempt, "err", err)...)
			if err := s.deadLetter(ctx, items, "retries_exhausted", err); err != nil {
				return done, err
			}
			return done + len(items), nil
		}
		wait := backoff
		var re *RetryableError
		if errors.As(err, &re) && re.After > wait {
			wait = re.After
		}
		// A blip is routine; a destination failing again and again (a
		// wrong token, a refused authorization) must stand out in the log.
		level := slog.LevelInfo
		if attempt >= 3 {
			level = slog.LevelError
		}
		if logIt {
			s.logger.Log(ctx, level, "sink delivery failed, retrying", laneAttrs(lane, "sink", s.cfg.Name, "records", len(items), "attempt", attempt,
				"wait", wait, "err", err)...)
		}
		s.m.retries.WithLabelValues(s.cfg.Name, RetryReason(err)).Inc()
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return done, ctx.Err()
		case <-t.C:
		}
		backoff = min(backoff*2, s.retryMax)
	}
}

// laneAttrs is args with the lane's number, if a lane's.
func laneAttrs(lane *laneOutcome, args ...any) []any {
	if lane == nil {
		return args
	}
	return append(args, "lane", lane.k)
}

// noteFailure counts a failed attempt (of lane's write, or of a whole
// batch when nil) in the streak, and reports whether to log it.
func (s *Sink) noteFailure(lane *laneOutcome) (logIt bool) {
	s.failMu.Lock()
	defer s.failMu.Unlock()
	s.failStreak++
	now := time.Now()
	if s.failingSince.IsZero() {
		s.failingSince = now
	}
	s.lastFailure = now
	s.throughAt = time.Time{}
	if lane != nil && !lane.failing {
		lane.failing = true
		s.lanesFailing++
	}
	if logFailure(&s.retryLog, s.failStreak) {
		s.failLogged = true
		return true
	}
	return false
}

// wentThrough notes a write (or a Concurrent destination's batch) that
// went through after attempts: clean (no attempt failed) ends the
// failure streak, and a failure logged is followed by its recovery.
func (s *Sink) wentThrough(records, attempts int, failed bool) {
	s.failMu.Lock()
	defer s.failMu.Unlock()
	if !failed {
		s.failStreak = 0
	}
	if s.failLogged {
		s.failLogged = false
		// The last line of an outage is not its error.
		s.logger.Info("sink delivering again", "sink", s.cfg.Name, "records", records, "attempts", attempts,
			"failing_for", time.Since(s.failingSince).Round(time.Millisecond))
	}
	s.failingSince = time.Time{}
}

// laneWentThrough notes the end of a lane's write of records, o its
// outcome: the lane is not failing any more, and a write that went
// through (not only given up under max_attempts) may end the outage (see
// laneOutageOver).
func (s *Sink) laneWentThrough(records int, o *laneOutcome) {
	s.failMu.Lock()
	defer s.failMu.Unlock()
	if o.failing {
		o.failing = false
		s.lanesFailing--
	}
	if !o.through {
		return
	}
	now := time.Now()
	if s.throughAt.IsZero() {
		s.throughAt, s.throughLane = now, o.k
	}
	s.laneOutageOver(now)
}

// lanesQuiet is laneOutageOver at a flush interval: the lanes may have
// nothing more to write once the outage is over.
func (s *Sink) lanesQuiet() {
	s.failMu.Lock()
	defer s.failMu.Unlock()
	s.laneOutageOver(time.Now())
}

// laneOutageOver ends the failure streak, and logs a failure logged as
// over (once per outage, not once per lane), once no lane is failing,
// none has failed for a flush interval and a write went through since.
// Ending it when no lane happens to be failing, a receiver failing one
// post in ten under a backlog logged a recovery of failing_for=4m43s
// while posts went on failing. failing_for is from the first failure to
// the first write that went through after the last.
func (s *Sink) laneOutageOver(now time.Time) {
	if s.lanesFailing > 0 || s.throughAt.IsZero() || now.Sub(s.lastFailure) < s.flushInterval {
		return
	}
	if s.failLogged {
		s.failLogged = false
		s.logger.Info("sink delivering again", "sink", s.cfg.Name, "failed_attempts", s.failStreak,
			"failing_for", s.throughAt.Sub(s.failingSince).Round(time.Millisecond), "lane", s.throughLane)
	}
	s.failStreak = 0
	s.failingSince = time.Time{}
}

// rejected logs (throttled) and dead-letters the one record the
// destination refused for good with rej.
func (s *Sink) rejected(ctx context.Context, items []Item, rej *RejectedError) error {
	s.failMu.Lock()
	n, ok := s.rejectLog.Due(time.Now())
	s.failMu.Unlock()
	if ok {
		s.logger.Warn("sink destination rejected a record", "sink", s.cfg.Name, "topic", items[0].Record.Topic,
			"partition", items[0].Record.Partition, "offset", items[0].Record.Offset, "err", rej, "times", n)
	}
	return s.deadLetter(ctx, items, rej.Reason, rej.Err)
}

// release tells r of the partitions in was that are not in now, and takes
// their records out of pending: not committed here, they are the new
// owner's to deliver. It returns now (a copy) and pending.
func (s *Sink) release(r PartitionReleaser, was, now []broker.TopicPartition, pending []Item) ([]broker.TopicPartition, []Item) {
	var gone []broker.TopicPartition
	for _, tp := range was {
		if !slices.Contains(now, tp) {
			gone = append(gone, tp)
		}
	}
	if len(gone) > 0 {
		pending = slices.DeleteFunc(pending, func(it Item) bool {
			return slices.Contains(gone, broker.TopicPartition{Topic: it.Record.Topic, Partition: it.Record.Partition})
		})
		r.ReleasePartitions(gone)
		// Another member's now, or the group's to hand out once the
		// cluster answers again (this member's session ended in an
		// outage): either way their next owner delivers them.
		s.logger.Info("sink released partitions the group took from it; their next owner delivers what it had not committed", "sink", s.cfg.Name, "partitions", len(gone))
	}
	return append(was[:0], now...), pending
}

// deadLetter writes items to the dead-letter topic with the reason and
// where they came from in headers; it only fails when the broker does
// (then nothing is committed and the records come again).
func (s *Sink) deadLetter(ctx context.Context, items []Item, reason string, cause error) error {
	recs := make([]broker.Record, len(items))
	for i, it := range items {
		r := it.Record
		hs := make([]broker.Header, 0, len(r.Headers)+4)
		hs = append(hs, r.Headers...)
		hs = append(hs,
			broker.Header{Key: HeaderDeadLetterReason, Value: []byte(reason + ": " + cause.Error())},
			broker.Header{Key: HeaderDeadLetterSink, Value: []byte(s.cfg.Name)},
			broker.Header{Key: HeaderOriginalTopic, Value: []byte(r.Topic)},
			broker.Header{Key: HeaderOriginalPosition, Value: fmt.Appendf(nil, "%d/%d", r.Partition, r.Offset)})
		recs[i] = broker.Record{Key: r.Key, Value: r.Value, Timestamp: r.Timestamp, Headers: hs}
	}
	// Retried while the broker fails; a record it refuses (one near the
	// size limit with the headers added) cannot be stored, and retrying
	// would stop the sink for good: counted, logged, and the others go.
	pub := publish.Publisher{Broker: s.b, Topic: s.dlTopic, MinBackoff: s.retryMax, MaxBackoff: s.retryMax,
		OnRetry: func(err error, _ time.Duration) {
			s.m.errors.WithLabelValues(s.cfg.Name, "dead_letter").Inc()
			s.logger.Error("sink cannot write the dead-letter topic", "sink", s.cfg.Name, "topic", s.dlTopic, "err", err)
		},
		OnDrop: func(why publish.Reason, _, n int, err error) {
			if why != publish.Refused {
				return // the context ended: nothing is committed, the records come again
			}
			s.m.errors.WithLabelValues(s.cfg.Name, "dead_letter_dropped").Add(float64(n))
			s.logger.Error("sink dropped records the dead-letter topic refused", "sink", s.cfg.Name,
				"topic", s.dlTopic, "records", n, "reason", reason, "err", err)
		}}
	res, err := pub.Publish(ctx, recs)
	s.m.deadLetters.WithLabelValues(s.cfg.Name, reason).Add(float64(res.Published))
	if err != nil {
		if cerr := ctx.Err(); cerr != nil {
			return cerr // stopping, as a sink does
		}
		return fmt.Errorf("sink %s: dead letters to %s: %w", s.cfg.Name, s.dlTopic, err)
	}
	return nil
}
