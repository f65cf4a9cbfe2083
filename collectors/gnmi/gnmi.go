// Package gnmi is weir's gNMI collector: it dials each configured target,
// holds one Subscribe stream per target (STREAM with SAMPLE, ON_CHANGE or
// TARGET_DEFINED, ONCE or POLL), reconnects with exponential backoff and
// jitter, and publishes every notification, flattened to telemetry.Metric
// records (see Flatten), to raw.gnmi keyed by the target's name.
//
// Each target is isolated: its stream is read by its own goroutine into a
// bounded queue, and its own publisher drains the queue into the broker,
// so a target that floods or a slow broker costs that target counted drops
// and never stalls another target or the stream's reads.
package gnmi

import (
	"cmp"
	"context"
	"crypto/sha256"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"net"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	gpb "github.com/openconfig/gnmi/proto/gnmi"
	"github.com/prometheus/client_golang/prometheus"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/keepalive"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"

	"github.com/weirnet/weir/broker"
	"github.com/weirnet/weir/collectors/gnmi/gpath"
	"github.com/weirnet/weir/configs"
	"github.com/weirnet/weir/internal/publish"
	"github.com/weirnet/weir/internal/runset"
	"github.com/weirnet/weir/internal/targetfile"
	"github.com/weirnet/weir/internal/throttle"
	"github.com/weirnet/weir/internal/tlsconf"
	"github.com/weirnet/weir/telemetry"
)

// Source is the "source" header and Metric.Source of every record.
const Source = "gnmi"

// maxBatch bounds the notifications one Produce call carries.
const maxBatch = 512

// maxKeptRecords is how many record slots a target's publisher keeps
// between batches: a larger batch's (a notification of many paths) are
// let go once it is published.
const maxKeptRecords = 4 * maxBatch

// Option configures a Collector.
type Option func(*Collector)

// WithLogger sets the logger (default: discard).
func WithLogger(l *slog.Logger) Option { return func(c *Collector) { c.log = l } }

// WithMetrics sets the self-metrics (default: unregistered ones).
func WithMetrics(m *Metrics) Option { return func(c *Collector) { c.m = m } }

// Owner says which targets this process subscribes to when several weir
// processes share them (internal/shard.Member implements it).
type Owner interface {
	// Owns reports whether this process collects the target now.
	Owns(name string) bool
	// Changed returns a channel closed at the next change of ownership.
	Changed() <-chan struct{}
}

// WithOwner subscribes to a target only while o owns it: its stream
// starts when it is gained and stops when it is lost (what it received by
// then is still published). Without an owner every target is subscribed.
func WithOwner(o Owner) Option { return func(c *Collector) { c.owner = o } }

// WithDeviceName keys a target's records by name(target), asked at each
// batch with the target's name: weir passes enrichment's naming
// (enrich.DeviceNamer.GNMITarget: the inventory's name for the target),
// so the device's records and the records and events enriched from them
// share one key and partition. Without it, or where it gives "", they
// are keyed by the target's name. Only the key changes; the records name
// the target. name is called from every target's goroutine.
func WithDeviceName(name func(target string) string) Option {
	return func(c *Collector) { c.deviceName = name }
}

// WithDialOptions adds gRPC dial options to every target's connection.
func WithDialOptions(opts ...grpc.DialOption) Option {
	return func(c *Collector) { c.dialOpts = append(c.dialOpts, opts...) }
}

// Collector subscribes to gNMI targets and publishes their notifications.
type Collector struct {
	cfg      configs.GNMI
	b        broker.Broker
	topic    string
	log      *slog.Logger
	m        *Metrics
	dialOpts []grpc.DialOption
	owner    Owner
	set      runset.Set // the targets' goroutines
	// deviceName names a target's device for its key (WithDeviceName).
	deviceName func(target string) string

	// grace bounds the whole drain at shutdown (default
	// shutdownDrainTimeout; tests shorten it).
	grace time.Duration
	// failLogEvery is how often a target that keeps failing is logged
	// (default failLogEvery; tests shorten it).
	failLogEvery time.Duration
	// resyncPaths bounds the paths a target's resync tracking keeps
	// (default maxResyncPaths; tests shorten it).
	resyncPaths int

	// retryLog throttles the targets' "publish failed, retrying" lines
	// together: a broker that cannot take records fails every target.
	retryLog throttle.Shared
	// removedLog: the removals not published, of a reload or a start.
	removedLog throttle.Shared
	// budget is queue_memory, shared by every target's queue, and
	// memoryLog throttles the targets' lines about it together.
	budget    *memBudget
	memoryLog throttle.Shared

	mu      sync.Mutex
	targets []*target // the latest list asked for (New, Update)
	// pubCtx is what publishers run under: Run's context, outliving it
	// by grace (see publish.Grace).
	pubCtx context.Context
	// down are the targets whose last gnmi_status published said down
	// (see target.statusDown).
	downMu sync.Mutex
	down   map[string]bool
	// stateFile keeps the targets' names (WithStateFile), with known,
	// which also keeps those removed whose removal was not published,
	// until the next start tells them.
	stateFile string
	known     *targetfile.Keeper[string]
	// knownRetry is how often a failed save of stateFile is tried again
	// (0: wholefile.RetryEvery).
	knownRetry time.Duration
}

// New builds a collector for cfg's targets, publishing through b. TLS
// files are read here, so a missing CA fails at start.
func New(cfg configs.GNMI, b broker.Broker, opts ...Option) (*Collector, error) {
	c := &Collector{cfg: cfg, b: b, topic: cfg.Topic, log: slog.New(slog.DiscardHandler), grace: shutdownDrainTimeout, failLogEvery: failLogEvery, resyncPaths: maxResyncPaths}
	for _, o := range opts {
		o(c)
	}
	if b == nil {
		return nil, errors.New("gnmi: no broker")
	}
	c.known = targetfile.New(c.stateFile, c.targetNames, func(n string) string { return n }, c.log, "gnmi")
	if c.topic == "" {
		c.topic = telemetry.TopicRawGNMI
	}
	if c.m == nil {
		m, err := NewMetrics(nil)
		if err != nil {
			return nil, err
		}
		c.m = m
	}
	if c.cfg.QueueSize <= 0 {
		c.cfg.QueueSize = configs.DefaultGNMIQueueSize
	}
	if c.cfg.QueueBytes <= 0 {
		c.cfg.QueueBytes = configs.DefaultGNMIQueueBytes
	}
	if c.cfg.QueueMemory <= 0 {
		c.cfg.QueueMemory = configs.DefaultGNMIQueueMemory
	}
	c.budget = newMemBudget(int64(c.cfg.QueueMemory), c.m.QueueMemory)
	// A reload's removals (publishRemoved) share one bound, however many.
	c.set.GoneWithin = removedGrace
	if c.cfg.RetryMin <= 0 {
		c.cfg.RetryMin = configs.Duration(configs.DefaultGNMIRetryMin)
	}
	if c.cfg.RetryMax < c.cfg.RetryMin {
		c.cfg.RetryMax = max(c.cfg.RetryMin, configs.Duration(configs.DefaultGNMIRetryMax))
	}
	targets, err := c.build(cfg.Targets)
	if err != nil {
		return nil, err
	}
	if c.owner == nil {
		for _, t := range targets {
			t.exportState() // from the start, not at the first stream
		}
	}
	c.targets = targets
	return c, nil
}

func (c *Collector) build(cfgs []configs.GNMITarget) ([]*target, error) {
	var targets []*target
	for _, tc := range cfgs {
		t, err := c.newTarget(tc)
		if err != nil {
			return nil, err
		}
		targets = append(targets, t)
	}
	return targets, nil
}

// Run subscribes to every target until ctx is done, then returns nil once
// every stream and publisher has stopped: the streams stop at once, and
// the publishers go on publishing what was queued for up to
// shutdownDrainTimeout in all; what is left then is counted as dropped
// (shutdown).
func (c *Collector) Run(ctx context.Context) error {
	// One deadline for every target's drain, however many targets there
	// are: a broker that is down must not hold up weir's exit.
	pubCtx, stop := publish.Grace(ctx, c.grace)
	defer stop()
	c.removedWhileStopped(ctx)
	c.mu.Lock()
	c.pubCtx = pubCtx
	members := c.members(c.targets)
	c.mu.Unlock()
	var wg sync.WaitGroup
	defer wg.Wait()
	wg.Go(func() { c.known.Run(ctx, c.knownRetry) })
	c.set.Run(ctx, members)
	return nil
}

// shutdownDrainTimeout bounds how long, in all, the publishers go on
// publishing what was queued once weir stops.
const shutdownDrainTimeout = 5 * time.Second

// Update replaces the targets while the collector runs (a config reload):
// added targets are subscribed to, removed ones unsubscribed (what they
// queued is published first, for up to drainTimeout), changed ones
// resubscribed with their new settings, and unchanged ones keep their
// streams (the set keeps them running, and the targets built for them
// here are dropped). A target that fails to build (a TLS file missing)
// fails the whole update, and the running targets stay.
func (c *Collector) Update(cfgs []configs.GNMITarget) error {
	// Built under mu: a removed target's Gone (which deletes its series)
	// runs either before, and these targets take new series, or after,
	// and then sees the name listed again and keeps the series they use.
	c.mu.Lock()
	targets, err := c.build(cfgs)
	if err != nil {
		c.mu.Unlock()
		return err
	}
	c.targets = targets
	members := c.members(targets)
	c.mu.Unlock()
	c.known.Save()
	c.set.Update(members)
	return nil
}

// drainTimeout bounds how long a removed or changed target's publisher
// goes on publishing what its stream had queued (less if weir stops
// meanwhile: shutdownDrainTimeout bounds it then).
const drainTimeout = 10 * time.Second

// members are the targets' goroutines, keyed by name and config (the line
// a target is written on does not count). c.mu must be held.
func (c *Collector) members(targets []*target) []runset.Member {
	out := make([]runset.Member, len(targets))
	for i, t := range targets {
		out[i] = runset.Member{Name: t.cfg.Name, Config: memberKey{t.cfg.Settings(), t.tlsFiles}, Value: t,
			Run: func(ctx context.Context) {
				if c.owner == nil {
					// With an owner, only while owned (runWhileOwned).
					t.exportState()
				}
				// The stream stops with ctx; the publisher drains the
				// queue after it, for up to drainTimeout, or until the
				// collector's shutdown grace ends.
				pub, stop := context.WithCancel(c.pubCtx)
				defer stop()
				defer context.AfterFunc(ctx, func() { time.AfterFunc(drainTimeout, stop) })()
				if c.owner != nil {
					t.runWhileOwned(pub, ctx)
				} else {
					t.run(pub, ctx)
				}
			},
			Gone: func(ctx context.Context) {
				c.mu.Lock()
				gone := !slices.ContainsFunc(c.targets, func(o *target) bool { return o.cfg.Name == t.cfg.Name })
				if gone {
					// Not added back meanwhile. What its drain lost stays
					// shown (until weir restarts): a reload that lost
					// records must not hide it.
					c.m.forget(t.cfg.Name, t.lost.Load())
				}
				c.mu.Unlock()
				if gone {
					if t.statusDown {
						t.publishRemoved(ctx)
					}
					c.noteDown(t.cfg.Name, false)
				}
			},
		}
	}
	return out
}

// runWhileOwned runs the target's stream while the owner says this process
// collects it, until ctx ends; its publisher runs until pubCtx ends.
func (t *target) runWhileOwned(pubCtx, ctx context.Context) {
	o := t.c.owner
	log := t.c.log.With(slog.String("target", t.cfg.Name))
	for {
		changed := o.Changed()
		if !o.Owns(t.cfg.Name) {
			// Another process streams it and exports its state: a
			// "disconnected" here would fire alerts on a healthy target.
			t.c.m.Connected.DeleteLabelValues(t.cfg.Name)
			t.c.m.LastUpdate.DeleteLabelValues(t.cfg.Name)
			select {
			case <-ctx.Done():
				return
			case <-changed:
				continue
			}
		}
		log.Debug("gnmi target taken over from another process")
		// Its gauges again (deleted while another process had it).
		t.exportState()
		streamCtx, stop := context.WithCancel(ctx)
		done := make(chan struct{})
		go func() {
			defer close(done)
			t.run(pubCtx, streamCtx)
		}()
		for owned := true; owned; {
			select {
			case <-ctx.Done():
				stop()
				<-done
				return
			case <-changed:
				changed = o.Changed()
				owned = o.Owns(t.cfg.Name)
			}
		}
		log.Debug("gnmi target handed over to another process")
		stop()
		<-done
		// Its reachability is the new owner's to tell: a removal
		// published from here would end an outage that process knows
		// better (as the SNMP poller checks it owns a target).
		t.statusDown = false
		t.c.noteDown(t.cfg.Name, false)
	}
}

// running returns the targets that run now (before Run: those it will
// start).
func (c *Collector) running() []*target {
	if ms, ok := c.set.Members(); ok {
		out := make([]*target, len(ms))
		for i, m := range ms {
			out[i] = m.Value.(*target)
		}
		return out
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.targets
}

// TargetStatus is a target's state, for tests and diagnostics.
type TargetStatus struct {
	Name      string
	Connected bool
	Synced    bool
	// Completed: a ONCE subscription got its snapshot and ended, as
	// ONCE does (not connected, and not failing either).
	Completed  bool
	Sessions   int
	LastError  error
	LastUpdate time.Time
}

// Status returns every target's state.
func (c *Collector) Status() []TargetStatus {
	targets := c.running()
	out := make([]TargetStatus, 0, len(targets))
	for _, t := range targets {
		t.mu.Lock()
		out = append(out, t.st)
		t.mu.Unlock()
	}
	return out
}

type item struct {
	n    *gpb.Notification
	at   time.Time
	size int // queueCharge(n), counted against queue_bytes and queue_memory
	// status, in the place of n, is a gnmi_status record to publish.
	status *sessionStatus
}

// StatusMeasurement is the measurement of the records that say a target's
// sessions fail (gnmi_up 0, with the error) or came back (gnmi_up 1):
// published when an attempt fails without the target having answered,
// and at the first session that answers after one did; none while the
// target serves (its data says that). A stream that ends after serving
// is no failure: the next attempt tells whether the target is gone.
const StatusMeasurement = telemetry.MeasurementGNMIStatus

// sessionStatus is what a gnmi_status record says.
type sessionStatus struct {
	up  bool
	err string
}

type target struct {
	c     *Collector
	cfg   configs.GNMITarget
	creds credentials.TransportCredentials
	req   *gpb.SubscribeRequest
	poll  time.Duration
	// idle is how long the stream may be silent once the target has
	// answered (0: no bound; see idleBound); for STREAM, once its fastest
	// periodic subscription delivers (a session takes the bound of the
	// fastest that does, see streamBound).
	idle time.Duration
	// periodic are the STREAM subscriptions sure to send periodically,
	// which idle is for, fastest first.
	periodic []periodicSub
	queue    *queue
	key      []byte
	// named is the key WithDeviceName last gave (publishLoop's only).
	named []byte
	// tlsFiles are the TLS files' versions as they were read, so a reload
	// after a certificate is renewed resubscribes with the new one.
	tlsFiles []fileStamp
	mu       sync.Mutex
	st       TargetStatus

	// connected and lastUpdate are the target's state series, made when
	// it runs (exportState), not when it is built: a reload builds every
	// target, and would bring back the series of one that has them
	// deleted (a ONCE that completed, one another process owns) while it
	// keeps running untouched.
	connected, lastUpdate prometheus.Gauge
	reconnects, updates   prometheus.Counter
	syncs, published      prometheus.Counter
	dropQueue, dropPub    prometheus.Counter
	dropEncode, dropValue prometheus.Counter
	dropShutdown          prometheus.Counter
	dropMemory            prometheus.Counter
	resyncDeleted         prometheus.Counter
	// resync keeps the paths reported, to delete those a resubscription's
	// snapshot leaves out (nil: not a STREAM with a snapshot).
	resync *resyncPaths
	// noValueLog throttles the no_value log line (publishLoop's only).
	noValueLog throttle.Throttle
	// queueFullLog throttles the queue_full log line (the stream's
	// reader's only: one session at a time).
	queueFullLog throttle.Throttle
	// refusedLog throttles the refused records' log line.
	refusedLog throttle.Shared
	// lost: its publishing stopped with records unpublished (counted in
	// dropShutdown), so that series outlives the target's removal.
	lost atomic.Bool

	// pub publishes the target's batches (see publishLoop).
	pub publish.Publisher

	// answered: the session under way has had a message from the
	// target other than an in-band error. statusDown: the last
	// gnmi_status published of the target said gnmi_up 0 (Collector.down
	// keeps it across a reload that makes the target again). upOwed: the
	// next session that answers publishes gnmi_up 1. The run loop's and
	// its session's, one goroutine.
	answered, statusDown, upOwed bool
}

// withDefaults is tc with the defaults a target runs with filled in.
func withDefaults(tc configs.GNMITarget) configs.GNMITarget {
	if tc.Timeout <= 0 {
		tc.Timeout = configs.Duration(configs.DefaultGNMITimeout)
	}
	return tc
}

func (c *Collector) newTarget(tc configs.GNMITarget) (*target, error) {
	tc = withDefaults(tc)
	// Stamped before they are read: a file replaced in between is read
	// new under the old stamp, so the next reload sees it changed again.
	var files []fileStamp
	if tls := tc.TLS; tls != nil && !tc.Insecure {
		files = stampFiles(tls.CAFile, tls.CertFile, tls.KeyFile)
	}
	creds, err := transportCreds(tc)
	if err != nil {
		return nil, fmt.Errorf("gnmi %s: %w", tc.Name, err)
	}
	req, err := subscribeRequest(tc)
	if err != nil {
		return nil, fmt.Errorf("gnmi %s: %w", tc.Name, err)
	}
	t := &target{
		c: c, cfg: tc, creds: creds, req: req, tlsFiles: files,
		queue:         newQueue(c.cfg.QueueSize, int(c.cfg.QueueBytes), c.budget),
		key:           []byte(tc.Name),
		st:            TargetStatus{Name: tc.Name},
		reconnects:    c.m.Reconnects.WithLabelValues(tc.Name),
		updates:       c.m.Updates.WithLabelValues(tc.Name),
		syncs:         c.m.Syncs.WithLabelValues(tc.Name),
		published:     c.m.Published.WithLabelValues(tc.Name),
		dropQueue:     c.m.Dropped.WithLabelValues(tc.Name, DropQueueFull),
		dropPub:       c.m.Dropped.WithLabelValues(tc.Name, DropPublishError),
		dropEncode:    c.m.Dropped.WithLabelValues(tc.Name, DropEncode),
		dropValue:     c.m.Dropped.WithLabelValues(tc.Name, DropNoValue),
		dropShutdown:  c.m.Dropped.WithLabelValues(tc.Name, DropShutdown),
		dropMemory:    c.m.Dropped.WithLabelValues(tc.Name, DropMemoryFull),
		resyncDeleted: c.m.ResyncDeletes.WithLabelValues(tc.Name),
	}
	if sl := req.GetSubscribe(); sl.GetMode() == gpb.SubscriptionList_STREAM && !sl.GetUpdatesOnly() {
		// Only a STREAM's snapshot lists every path (updates_only has
		// none; ONCE and POLL have no earlier session to tell from).
		t.resync = newResyncPaths(c.resyncPaths, lateSubscriptions(tc))
	}
	t.pub = publish.Publisher{Broker: c.b, Topic: c.topic, Name: "gnmi", Logger: c.log.With(slog.String("target", tc.Name)),
		RefusedLog: &t.refusedLog, RetryLog: &c.retryLog, RetryLogger: c.log, // every target's: no target named
		OnDrop: func(reason publish.Reason, _, n int, _ error) {
			if reason == publish.Refused {
				t.dropPub.Add(float64(n))
			} else {
				// Unsent: the publisher's time ran out (weir stopping,
				// or a removed target's drain).
				t.dropShutdown.Add(float64(n))
			}
		}}
	if len(tc.Subscriptions) > 0 && tc.Subscriptions[0].Mode == "poll" {
		t.poll = tc.Subscriptions[0].PollInterval.Std()
		if t.poll <= 0 {
			t.poll = configs.DefaultGNMIPollInterval
		}
	}
	t.idle = idleBound(tc, t.poll)
	t.periodic = periodicPaths(tc)
	return t, nil
}

// idleBound is how long a target's stream may go without data, once
// the target has answered, before the session is taken for stalled: a
// hung gNMI daemon keeps the stream open and sends nothing, with no error
// to notice. 0 is no bound.
func idleBound(tc configs.GNMITarget, poll time.Duration) time.Duration {
	timeout := tc.Timeout.Std()
	switch tc.Subscriptions[0].Mode {
	case "once":
		// The snapshot comes in one go.
		return timeout
	case "poll":
		// Quiet between polls, but each poll is answered within timeout.
		return poll + timeout
	}
	// The fastest periodic subscription, when it delivers, keeps the
	// stream busy.
	var period time.Duration
	for _, s := range tc.Subscriptions {
		if p := sendsEvery(s); p > 0 && (period == 0 || p < period) {
			period = p
		}
	}
	return streamBound(period, timeout)
}

// streamBound is how long a STREAM may be silent when the fastest of its
// periodic subscriptions that deliver sends every period: three periods
// leave room for a late sample. 0 (none delivers, or none is periodic:
// ON_CHANGE without heartbeats may be silent for ever, and only the gRPC
// keepalive finds a dead link under it) is no bound.
func streamBound(period, timeout time.Duration) time.Duration {
	if period == 0 {
		return 0
	}
	return max(3*period, timeout)
}

// sendsEvery is the longest a healthy target leaves a STREAM subscription
// silent, when the subscription says (0: it may be silent for ever, or
// the target chooses).
func sendsEvery(s configs.GNMISubscription) time.Duration {
	switch s.StreamMode {
	case "sample":
		if s.SuppressRedundant {
			return s.HeartbeatInterval.Std() // unchanged values only at heartbeats
		}
		return s.SampleInterval.Std() // 0: the target's default, unknown here
	case "on_change":
		return s.HeartbeatInterval.Std()
	}
	return 0 // target_defined: the target picks per leaf
}

// periodicSub is a STREAM subscription sure to send periodically: its
// path, with the request's prefix, and its period (see sendsEvery).
type periodicSub struct {
	path  []gpath.Elem
	every time.Duration
}

// subscriptionPath is s's path with its prefix in front; false for one
// that does not parse (subscribeRequest refused it).
func subscriptionPath(s configs.GNMISubscription) ([]gpath.Elem, bool) {
	p, err := gpath.Parse(s.Path)
	if err != nil {
		return nil, false
	}
	if s.Prefix == "" {
		return p, true
	}
	pre, err := gpath.Parse(s.Prefix)
	if err != nil {
		return nil, false
	}
	return append(pre, p...), true
}

// periodicPaths are tc's STREAM subscriptions sure to send periodically,
// fastest first.
func periodicPaths(tc configs.GNMITarget) []periodicSub {
	var out []periodicSub
	for _, s := range tc.Subscriptions {
		every := sendsEvery(s)
		if (s.Mode != "stream" && s.Mode != "") || every == 0 {
			continue
		}
		p, ok := subscriptionPath(s)
		if !ok {
			continue
		}
		out = append(out, periodicSub{p, every})
	}
	slices.SortStableFunc(out, func(a, b periodicSub) int { return cmp.Compare(a.every, b.every) })
	return out
}

// periodOf is the shortest period, below below (0: any), of the
// periodic subscriptions n carries data of (0: none): those with an
// update whose path lies under the subscription's, or above it (a JSON
// value holding it). t.periodic is fastest first: once the fastest has
// delivered, nothing is looked at.
func (t *target) periodOf(n *gpb.Notification, below time.Duration) time.Duration {
	if len(t.periodic) == 0 || below > 0 && t.periodic[0].every >= below {
		return 0
	}
	period := below
	prefix := elems(n.GetPrefix())
	for _, u := range n.GetUpdate() {
		p := join(prefix, elems(u.GetPath()))
		for _, sp := range t.periodic {
			if period > 0 && sp.every >= period {
				break
			}
			if overlaps(sp.path, p) {
				period = sp.every
				break
			}
		}
	}
	if period == below {
		return 0
	}
	return period
}

// overlaps reports whether the data path p and the subscription path sp
// name the same data over their common length: names equal (YANG
// module prefixes aside) or "*" in sp, "..." in sp matching the rest, and
// each key sp gives, but "*", equal in p when p has it.
func overlaps(sp, p []gpath.Elem) bool {
	for i := 0; i < len(sp) && i < len(p); i++ {
		name := stripModule(sp[i].Name)
		if name == "..." {
			return true
		}
		if name != "*" && name != stripModule(p[i].Name) {
			return false
		}
		for k, v := range sp[i].Keys {
			if v == "*" {
				continue
			}
			if pv, ok := p[i].Keys[k]; ok && pv != v {
				return false
			}
		}
	}
	return true
}

func transportCreds(tc configs.GNMITarget) (credentials.TransportCredentials, error) {
	if tc.Insecure {
		return insecure.NewCredentials(), nil
	}
	var c tlsconf.Client
	if tc.TLS != nil {
		c = tc.TLS.Client()
	}
	cfg, err := c.Config()
	if err != nil {
		return nil, err
	}
	return credentials.NewTLS(cfg), nil
}

// subscribeRequest builds the target's one SubscribeRequest.
func subscribeRequest(tc configs.GNMITarget) (*gpb.SubscribeRequest, error) {
	list := &gpb.SubscriptionList{}
	switch strings.ToLower(tc.Encoding) { // JSON_IETF, as gnmic writes it
	case "", "json":
		list.Encoding = gpb.Encoding_JSON
	case "json_ietf":
		list.Encoding = gpb.Encoding_JSON_IETF
	case "proto":
		list.Encoding = gpb.Encoding_PROTO
	default:
		return nil, fmt.Errorf("unknown encoding %q", tc.Encoding)
	}
	if len(tc.Subscriptions) == 0 {
		return nil, errors.New("no subscriptions")
	}
	first := tc.Subscriptions[0]
	switch first.Mode {
	case "", "stream":
		list.Mode = gpb.SubscriptionList_STREAM
	case "once":
		list.Mode = gpb.SubscriptionList_ONCE
	case "poll":
		list.Mode = gpb.SubscriptionList_POLL
	default:
		return nil, fmt.Errorf("unknown mode %q", first.Mode)
	}
	if first.Prefix != "" {
		p, err := ParsePath(first.Prefix, first.PrefixOrigin)
		if err != nil {
			return nil, err
		}
		list.Prefix = p
	}
	if tc.PrefixTarget != "" {
		if list.Prefix == nil {
			list.Prefix = &gpb.Path{}
		}
		list.Prefix.Target = tc.PrefixTarget
	}
	for _, s := range tc.Subscriptions {
		p, err := ParsePath(s.Path, s.Origin)
		if err != nil {
			return nil, err
		}
		sub := &gpb.Subscription{
			Path:              p,
			SampleInterval:    uint64(s.SampleInterval.Std().Nanoseconds()),
			HeartbeatInterval: uint64(s.HeartbeatInterval.Std().Nanoseconds()),
			SuppressRedundant: s.SuppressRedundant,
		}
		switch s.StreamMode {
		case "sample":
			sub.Mode = gpb.SubscriptionMode_SAMPLE
		case "on_change":
			sub.Mode = gpb.SubscriptionMode_ON_CHANGE
		default:
			sub.Mode = gpb.SubscriptionMode_TARGET_DEFINED
		}
		if s.UpdatesOnly {
			list.UpdatesOnly = true
		}
		list.Subscription = append(list.Subscription, sub)
	}
	return &gpb.SubscribeRequest{Request: &gpb.SubscribeRequest_Subscribe{Subscribe: list}}, nil
}

// ParsePath parses a path string (/a/b[k=v]/c) into a gNMI path.
func ParsePath(s, origin string) (*gpb.Path, error) {
	es, err := gpath.Parse(s)
	if err != nil {
		return nil, err
	}
	p := &gpb.Path{Origin: origin}
	for _, e := range es {
		p.Elem = append(p.Elem, &gpb.PathElem{Name: e.Name, Key: e.Keys})
	}
	return p, nil
}

// PathString prints a gNMI path in the form ParsePath reads.
func PathString(p *gpb.Path) string { return gpath.String(elems(p)) }

// errOnceDone ends a ONCE subscription that got its sync_response.
var errOnceDone = errors.New("once subscription complete")

// run holds the target's stream until ctx ends (or a ONCE subscription
// completes), and publishes what it received: what is still queued when
// the stream stops is published before run returns, unless pubCtx ends
// first, and then it is counted as dropped (shutdown).
func (t *target) run(pubCtx, ctx context.Context) {
	// Counted in queue_memory's shares while it runs (its drain too).
	t.c.budget.join()
	defer t.c.budget.leave()
	streamDone := make(chan struct{})
	var wg sync.WaitGroup
	var unsent int
	var pubErr error
	wg.Go(func() { unsent, pubErr = t.publishLoop(pubCtx, streamDone) })
	defer func() {
		// Once both have stopped, nothing takes from the queue or adds
		// to it: what is left was accepted and will not be published.
		wg.Wait()
		queued := t.queue.discard()
		t.dropShutdown.Add(float64(queued))
		if unsent > 0 || queued > 0 {
			t.lost.Store(true)
			t.c.log.Error("gnmi publishing stopped before the queue was published; dropped", slog.String("target", t.cfg.Name),
				slog.Int("records", unsent), slog.Int("notifications", queued), slog.Any("err", pubErr))
		}
	}()
	defer close(streamDone)
	defer t.connected.Set(0)
	log := t.c.log.With(slog.String("target", t.cfg.Name))
	retryMin, retryMax := t.c.cfg.RetryMin.Std(), t.c.cfg.RetryMax.Std()
	backoff := retryMin
	fails := failRun{every: t.c.failLogEvery}
	t.mu.Lock()
	t.st.Completed = false // a ONCE runs again (a target gained back)
	t.mu.Unlock()
	// A target made again by a reload (its wrong password fixed, say)
	// while down owes its gnmi_up 1 as the one it replaces did.
	t.upOwed = t.c.wasDown(t.cfg.Name)
	t.statusDown = t.upOwed
	for attempt := 0; ; attempt++ {
		if attempt > 0 {
			t.reconnects.Inc()
		}
		t.mu.Lock()
		t.st.Sessions++
		t.mu.Unlock()
		t.answered = false
		up, err := t.session(ctx, log, &fails)
		if errors.Is(err, errOnceDone) {
			t.onceComplete(log)
			return
		}
		t.setConnected(false)
		if ctx.Err() != nil {
			return
		}
		if !t.answered {
			// An attempt the target did not answer: it is down (or
			// refuses weir), as a failed SNMP poll says.
			t.pushStatus(false, err, time.Now())
		}
		code := status.Code(err) // finds the status through the wrapping
		t.c.m.Errors.WithLabelValues(t.cfg.Name, code.String()).Inc()
		t.mu.Lock()
		t.st.LastError = err
		t.mu.Unlock()
		// Only a target that served its stream a while earns a quick
		// retry: one that answers and fails every time (each time with a
		// full resync) is retried no faster than the backoff allows.
		if up >= retryMax {
			backoff = retryMin
			fails = failRun{every: fails.every} // it served a while: a new run of failures
		}
		wait := jitter(backoff)
		fails.failed(log, err, code, wait, time.Now())
		timer := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			timer.Stop()
			return
		case <-timer.C:
		}
		backoff = min(backoff*2, retryMax)
	}
}

// failLogEvery is how often a target that keeps failing is logged as
// still failing; weir_gnmi_errors_total counts every attempt.
const failLogEvery = 10 * time.Minute

// failRun is a target's run of failed sessions, from the first failure
// after a session that served for retry_max (or from the start) to the
// next such session: its first failure is logged, and the first of each
// other cause in it (see causeClass), the first after its coming back was
// logged, and then one line every failLogEvery with how many failed
// meanwhile, not one per attempt (a target down for a day at retry_max
// 60s would be 1,440 warnings). Its Capabilities and subscribed lines are
// logged once in the run and after each line of failure but the one after
// a logged recovery (that would be two lines at every drop of a target
// that keeps dropping), at debug after.
type failRun struct {
	every   time.Duration
	failing int // failed sessions in the run
	since   time.Time
	logged  time.Time
	codes   []codes.Code
	causes  []string // causeClass of the run's failures
	// capsLogged, subscribed, noData: the run's Capabilities,
	// subscribed and no-data lines were logged at info (warn).
	capsLogged, subscribed, noData bool
	// recovered: the last line logged said the target was back, so its
	// next failure is news. owed: the last line logged is a failure,
	// and the target serving again is to be said (see serving).
	recovered, owed bool
}

// causeClass tells a failure's cause: its code and its message without
// addresses, ports and other numbers (Unavailable is a refused
// connection, a name that does not resolve, a certificate not trusted,
// ...; the same cause at another of the target's addresses, or from
// another local port, is not).
func causeClass(err error, code codes.Code) string {
	msg := ipAddr.ReplaceAllString(err.Error(), "ADDR")
	return code.String() + " " + digits.ReplaceAllString(msg, "#")
}

var (
	ipAddr = regexp.MustCompile(`\[[0-9A-Fa-f:.%a-zA-Z]*\]|[0-9]{1,3}(\.[0-9]{1,3}){3}`)
	digits = regexp.MustCompile(`[0-9]+`)
)

func (f *failRun) failed(log *slog.Logger, err error, code codes.Code, wait time.Duration, now time.Time) {
	f.failing++
	if f.failing == 1 {
		f.since = now
	}
	if !slices.Contains(f.codes, code) {
		f.codes = append(f.codes, code)
	}
	cause := causeClass(err, code)
	seen := slices.Contains(f.causes, cause)
	if !seen {
		f.causes = append(f.causes, cause)
	}
	recovered := f.recovered
	f.recovered = false
	switch {
	case f.failing == 1 || !seen:
		log.Warn("gnmi stream failed; reconnecting", slog.Any("err", err), slog.String("code", code.String()), slog.Duration("in", wait))
	case recovered:
		// Not a new subscribed line after it: a target that keeps
		// dropping is then said every failLogEvery, or when it serves
		// a while again (serving).
		log.Warn("gnmi stream failed again after coming back; reconnecting", slog.Any("err", err), slog.String("code", code.String()), slog.Duration("in", wait),
			slog.Int("failed_attempts", f.failing), slog.Duration("failing_for", now.Sub(f.since).Round(time.Second)))
		f.logged, f.owed = now, true
		return
	case now.Sub(f.logged) >= f.every:
		log.Warn("gnmi stream still failing; reconnecting", slog.Any("err", err), slog.String("code", code.String()), slog.Duration("in", wait),
			slog.Int("failed_attempts", f.failing), slog.Duration("failing_for", now.Sub(f.since).Round(time.Second)))
	default:
		log.Debug("gnmi stream failed; reconnecting", slog.Any("err", err), slog.String("code", code.String()), slog.Duration("in", wait))
		return
	}
	f.logged, f.owed = now, true
	f.subscribed = false // the next subscribed line says it is back
}

// subscribedLevel is the level of a session's subscribed line.
func (f *failRun) subscribedLevel() slog.Level {
	lvl := f.level(&f.subscribed, slog.LevelInfo)
	if lvl == slog.LevelInfo && f.failing > 0 {
		f.recovered, f.owed = true, false
	}
	return lvl
}

// serving says, once, that a target whose last line logged was a failure
// has served its stream for retryMax since: it is back for good, as far as
// the backoff goes.
func (f *failRun) serving(ctx context.Context, log *slog.Logger, up time.Duration, retryMax time.Duration) {
	if !f.owed || up < retryMax {
		return
	}
	f.owed = false
	log.LogAttrs(ctx, slog.LevelInfo, "gnmi stream serving again", slog.Int("failed_attempts", f.failing),
		slog.Duration("serving_for", up.Round(time.Second)))
}

// level is lvl for the run's first line of a kind (*logged, then set),
// debug after.
func (f *failRun) level(logged *bool, lvl slog.Level) slog.Level {
	if *logged {
		return slog.LevelDebug
	}
	*logged = true
	return lvl
}

// jitter spreads d over [0.75d, 1.25d) so targets that failed together do
// not reconnect together.
func jitter(d time.Duration) time.Duration {
	return time.Duration(float64(d) * (0.75 + rand.Float64()/2))
}

// exportState makes the target's connected (0 until the stream is up)
// and last-update series, or takes them again after they were deleted.
func (t *target) exportState() {
	t.connected = t.c.m.Connected.WithLabelValues(t.cfg.Name)
	t.lastUpdate = t.c.m.LastUpdate.WithLabelValues(t.cfg.Name)
	t.connected.Set(0)
}

// onceComplete ends a ONCE subscription that got its snapshot: it is
// disconnected by design, so its weir_gnmi_connected goes (a 0 would read
// as a target down) until it runs again, and its status keeps Synced.
func (t *target) onceComplete(log *slog.Logger) {
	t.mu.Lock()
	t.st.Connected, t.st.Completed = false, true
	t.mu.Unlock()
	t.c.m.Connected.DeleteLabelValues(t.cfg.Name)
	log.Info("gnmi once subscription complete")
}

func (t *target) setConnected(up bool) {
	t.mu.Lock()
	t.st.Connected = up
	if !up {
		t.st.Synced = false
	}
	t.mu.Unlock()
	if up {
		t.connected.Set(1)
	} else {
		t.connected.Set(0)
	}
}

// maxRecvMsgSize bounds a message weir receives from a target (gRPC's
// default is 4 MiB, less than a full BGP table in one JSON value).
const maxRecvMsgSize = 64 << 20

// keepaliveTime is how long a connection is quiet before the client
// pings the target. grpc-go servers answer pings more frequent than 5
// minutes (their default MinTime) with GOAWAY too_many_pings.
const keepaliveTime = 5 * time.Minute

// session dials, checks Capabilities, subscribes and reads the stream
// until it fails, stalls (see idleBound) or ctx ends; up is how long the
// target served the stream: from its first response until the stream
// ended, or until its last message when it stalled (0 if it never
// answered).
func (t *target) session(ctx context.Context, log *slog.Logger, fails *failRun) (up time.Duration, err error) {
	name := t.cfg.Name
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	// Stream data counts as it arrives, not only as whole messages (see
	// watchdog).
	prog := newProgress()
	opts := append([]grpc.DialOption{
		grpc.WithTransportCredentials(progressCreds{t.creds, prog}),
		grpc.WithStatsHandler(msgStats{prog}), // the messages decoded, against the bytes come (see refusal)
		grpc.WithDefaultCallOptions(grpc.MaxCallRecvMsgSize(maxRecvMsgSize), grpc.ForceCodecV2(newLenientCodec())),
		// Pings find a half-open connection (a target rebooted, state a
		// firewall or NAT dropped) under a stream allowed to be silent.
		grpc.WithKeepaliveParams(keepalive.ClientParameters{Time: keepaliveTime, Timeout: 20 * time.Second, PermitWithoutStream: false}),
	}, t.c.dialOpts...)
	conn, err := grpc.NewClient(t.cfg.Address, opts...)
	if err != nil {
		return 0, fmt.Errorf("gnmi %s: dial %s: %w", name, t.cfg.Address, err)
	}
	defer conn.Close()
	if t.cfg.Username != "" {
		ctx = metadata.AppendToOutgoingContext(ctx, "username", t.cfg.Username, "password", t.cfg.Password)
	}
	client := gpb.NewGNMIClient(conn)

	if err := t.capabilities(ctx, client, log, fails.level(&fails.capsLogged, slog.LevelInfo)); err != nil {
		return 0, err
	}

	// Until the first response the target has timeout to answer (a POLL
	// target, which may send nothing before it is polled, the first
	// poll's interval too); then t.idle between messages.
	firstBound := t.cfg.Timeout.Std()
	if t.poll > 0 {
		firstBound = t.idle
	}
	idle := newWatchdog(firstBound, prog, cancel)
	defer idle.stop()
	stream, err := client.Subscribe(ctx)
	if err != nil {
		return 0, t.streamError(ctx, err, false)
	}
	if err := stream.Send(t.req); err != nil {
		_, rerr := stream.Recv() // the status explains a failed send
		if rerr != nil && rerr != io.EOF {
			err = rerr
		}
		return 0, t.streamError(ctx, err, false)
	}
	var pollers sync.WaitGroup
	defer pollers.Wait()
	// answered: a sync_response came, the poll is answered; updated: an
	// update came (see pollLoop).
	answered, updated := make(chan struct{}, 1), make(chan struct{}, 1)
	defer cancel(nil) // again, before pollers.Wait: the cancel is what stops pollLoop
	if t.poll > 0 {
		// Polled from the start, not from the first sync_response: the
		// specification has a POLL target answer Poll requests, and many
		// send nothing before the first (NX-OS); one that sends the
		// current values at once is polled poll_interval after them.
		pollers.Go(func() { t.pollLoop(ctx, stream, answered, updated, log) })
	}
	once := t.req.GetSubscribe().GetMode() == gpb.SubscriptionList_ONCE
	if t.resync != nil {
		t.resync.begin()
	}
	// up, whichever way the session ends, from the target's first and
	// last messages.
	var first, last time.Time
	// data: an update has come. watched: data has come that the stall
	// bound is for (a ONCE snapshot's; for STREAM, of a subscription sure
	// to send periodically). A STREAM whose periodic paths match nothing
	// (an interface not configured yet) sends its sync_response and then,
	// for them, rightly nothing, whatever its ON_CHANGE paths sent: it is
	// watched for stalls only once their data comes, and with the bound
	// of the fastest that delivers (period): 1s samples beside 20s
	// heartbeats are watched at 3s, not 60s.
	data, watched := false, false
	var period time.Duration
	bound := t.idle // ONCE, POLL
	// inband is the target's last Error message (gNMI before 0.7), when
	// no update followed it: the reason if the target then ends the RPC.
	var inband *status.Status
	// refusing ends a session whose target sent only Error messages for
	// the first response's bound (timeout; poll_interval too for POLL),
	// holding the stream open: it serves nothing, and would
	// otherwise never be retried nor said to be down.
	var refusing *refusal
	defer func() {
		if refusing != nil {
			refusing.stop()
		}
	}()
	announced := false // the subscribed line
	defer func() {
		if first.IsZero() {
			return
		}
		end := time.Now()
		var stalled *stalledError
		if errors.As(err, &stalled) {
			end = last // it was silent since
		}
		up = end.Sub(first)
	}()
	for {
		resp, err := stream.Recv()
		if err == io.EOF {
			if once && data {
				// The snapshot came and the target ended the RPC
				// cleanly, without the sync_response the
				// specification asks for: that is done, not a failure
				// to retry (a fresh snapshot every backoff).
				log.Debug("gnmi once subscription ended without a sync_response")
				return 0, errOnceDone
			}
			if inband != nil {
				return 0, fmt.Errorf("gnmi %s: subscribe: stream closed by the target after its error: %w", name, inband.Err())
			}
			return 0, fmt.Errorf("gnmi %s: subscribe: %w", name, status.Error(codes.Unavailable, "stream closed by the target"))
		}
		if err != nil {
			err = t.streamError(ctx, err, !first.IsZero())
			if once && data && errors.As(err, new(*stalledError)) {
				// The snapshot came, and then neither a sync_response nor
				// the end of the RPC: it is done all the same, not a
				// failure to retry (the same snapshot at every backoff).
				log.Warn("gnmi once subscription: the target sent no sync_response and kept the stream open; taken as complete", slog.Duration("silent", t.idle))
				return 0, errOnceDone
			}
			return 0, err
		}
		if u, update := resp.GetResponse().(*gpb.SubscribeResponse_Update); update {
			data = true // a sync_response or an (old-style) error message is not data
			watched = watched || once
			if p := t.periodOf(u.Update, period); p > 0 {
				period = p
				watched = true
				bound = streamBound(period, t.cfg.Timeout.Std())
			}
		}
		if watched || t.poll > 0 {
			idle.arm(bound)
		} else {
			idle.arm(0)
		}
		last = time.Now()
		if first.IsZero() {
			first = last
			t.setConnected(true)
		}
		_, isErr := resp.GetResponse().(*gpb.SubscribeResponse_Error)
		if !t.answered && !isErr {
			if !prog.answered() {
				// The refusal was decided before this message came
				// (only it refuses): it ends the session.
				return 0, fmt.Errorf("gnmi %s: subscribe: %w", name, refusing.err)
			}
			// An in-band error is no answer (a path refused by a
			// target before gNMI 0.7): the attempt it ends failed.
			t.answered = true
			if t.upOwed {
				t.pushStatus(true, nil, last) // before this message's data
			}
		}
		if !announced && !isErr {
			// Not at an in-band error: that is no target back.
			announced = true
			attrs := []slog.Attr{slog.String("address", t.cfg.Address), slog.String("mode", strings.ToLower(t.req.GetSubscribe().GetMode().String()))}
			if fails.failing > 0 {
				attrs = append(attrs, slog.Int("failed_attempts", fails.failing), slog.Duration("failing_for", last.Sub(fails.since).Round(time.Second)))
			}
			log.LogAttrs(ctx, fails.subscribedLevel(), "gnmi subscribed", attrs...)
		}
		fails.serving(ctx, log, last.Sub(first), t.c.cfg.RetryMax.Std())
		switch r := resp.GetResponse().(type) {
		case *gpb.SubscribeResponse_Update:
			inband = nil
			if t.poll > 0 {
				select {
				case updated <- struct{}{}:
				default:
				}
			}
			now := last
			n := r.Update
			t.updates.Add(float64(len(n.GetUpdate()) + len(n.GetDelete())))
			t.lastUpdate.Set(float64(now.UnixNano()) / 1e9)
			t.trackPaths(log, n)
			t.enqueue(log, n, now)
		case *gpb.SubscribeResponse_SyncResponse:
			t.syncs.Inc()
			if t.poll > 0 {
				select {
				case answered <- struct{}{}:
				default:
				}
			}
			t.mu.Lock()
			first := !t.st.Synced
			t.st.Synced = true
			t.st.LastUpdate = time.Now()
			t.mu.Unlock()
			if first {
				log.Debug("gnmi sync_response: initial state received")
				noPeriodic := !watched && !once && t.poll == 0 && t.idle > 0
				if noPeriodic {
					log.Log(ctx, fails.level(&fails.noData, slog.LevelWarn), "gnmi sync_response with no data for the sampled subscriptions: their paths match nothing on the target (yet); the stream is not taken for stalled until their data comes")
				}
				switch {
				case t.resync == nil:
				case !data:
					// A snapshot with no data is as likely a target that
					// answers sync_response before its first sample:
					// paths are deleted only after a snapshot that has
					// them (and, of a sampled subscription's paths, its
					// data: see resyncPaths.waitsForData).
					log.Debug("gnmi sync_response with no data: no paths deleted for the resubscription")
				default:
					t.deleteVanished(log, time.Now())
				}
				if t.resync != nil {
					t.resync.synced()
				}
			}
			if once {
				// Let the publisher see what came before the sync.
				return 0, errOnceDone
			}
		case *gpb.SubscribeResponse_Error:
			code := codes.Code(r.Error.GetCode())
			if code == codes.OK {
				code = codes.Unknown // an error all the same
			}
			inband = status.New(code, r.Error.GetMessage())
			if !t.answered && refusing == nil {
				// The bound of the first response: a POLL target
				// that refused one path sends the others' data only
				// once polled, poll_interval after the subscription.
				refusing = newRefusal(&refusingError{bound: firstBound, inband: inband}, prog, cancel)
			}
			level := slog.LevelWarn
			if fails.failing > 0 && slices.Contains(fails.codes, code) {
				level = slog.LevelDebug // this run of failures had it already: the failure's line has its message
			}
			log.Log(ctx, level, "gnmi error message from target", slog.String("message", r.Error.GetMessage()), slog.String("code", code.String()))
		}
	}
}

// pushStatus queues a gnmi_status record (see StatusMeasurement); one
// the queue or queue_memory has no room for is counted dropped, as a
// notification is.
func (t *target) pushStatus(up bool, err error, at time.Time) {
	st := &sessionStatus{up: up}
	if err != nil {
		st.err = err.Error()
	}
	switch t.queue.push(item{status: st, at: at, size: len(st.err) + 64}) {
	case pushed:
		t.statusDown, t.upOwed = !up, !up
		t.c.noteDown(t.cfg.Name, !up)
	case queueFull:
		t.dropQueue.Inc()
	case memoryFull:
		t.dropMemory.Inc()
	}
}

// noteDown keeps whether the last gnmi_status published of target said
// down, for the target a reload makes in its place (wasDown).
func (c *Collector) noteDown(target string, down bool) {
	c.downMu.Lock()
	defer c.downMu.Unlock()
	if !down {
		delete(c.down, target)
		return
	}
	if c.down == nil {
		c.down = map[string]bool{}
	}
	c.down[target] = true
}

// wasDown reports whether the last gnmi_status published of target said
// down.
func (c *Collector) wasDown(target string) bool {
	c.downMu.Lock()
	defer c.downMu.Unlock()
	return c.down[target]
}

// removedGrace bounds publishRemoved: a reload waits for it. The removals
// of one reload, or of one start, share it: they go at once.
const removedGrace = 5 * time.Second

// publishRemoved says that a reload took out the target, down when it
// stopped: a gnmi_status with the one field removed (true), from which
// enrichment ends its outage (device_unreachable_cleared), as an SNMP
// target's; else no record would ever end it. One removed while weir was
// stopped is told at the next start (WithStateFile).
func (t *target) publishRemoved(ctx context.Context) {
	err := publishRemoved(ctx, &t.pub, t.cfg.Name, t.recordKey())
	if err == nil {
		return
	}
	c := t.c
	// Once per 10 s, with a count: a reload removing hundreds with the
	// broker down gave a line each.
	if n, ok := c.removedLog.Due(time.Now()); ok {
		c.log.Warn("gnmi: the removed target's last status was not published; the next start tries again",
			slog.String("target", t.cfg.Name), slog.Any("err", err), slog.Int("times", n))
	}
	c.mu.Lock()
	gone := !slices.ContainsFunc(c.targets, func(o *target) bool { return o.cfg.Name == t.cfg.Name })
	c.mu.Unlock()
	if gone {
		c.known.SaveSince(c.known.Unsaid(t.cfg.Name))
	}
}

// statusMetric is the gnmi_status record it says.
func (t *target) statusMetric(it item) telemetry.Metric {
	up := int64(0)
	if it.status.up {
		up = 1
	}
	return telemetry.Metric{
		V: telemetry.Version, Measurement: StatusMeasurement, Device: t.cfg.Name,
		Fields: map[string]any{"gnmi_up": up, "error": it.status.err},
		Time:   it.at, ReceivedAt: it.at, Source: Source,
	}
}

// enqueue queues n for the publisher, or counts it dropped (and logs
// it, throttled) when the queue or queue_memory is full.
func (t *target) enqueue(log *slog.Logger, n *gpb.Notification, now time.Time) bool {
	switch t.queue.push(item{n: n, at: now, size: queueCharge(n)}) {
	case queueFull:
		t.dropQueue.Inc()
		t.queueFull(log, now)
		return false
	case memoryFull:
		t.dropMemory.Inc()
		t.memoryFull(now)
		return false
	}
	return true
}

// queueFull logs notifications dropped for a full queue, once per
// throttle.Every, with how many and the queue's state against its bounds
// (which of queue_size and queue_bytes it hit).
func (t *target) queueFull(log *slog.Logger, now time.Time) {
	missed, due := t.queueFullLog.Due(now)
	if !due {
		return
	}
	n, bytes := t.queue.state()
	log.Warn("gnmi queue full: notifications dropped (the broker takes them slower than the target sends them)",
		slog.Int("notifications", missed), slog.Int("queued", n), slog.Int("queue_size", t.queue.max),
		slog.Int("queued_bytes", bytes), slog.Int("queue_bytes", t.queue.maxBytes))
}

// memoryFull logs notifications dropped for a full queue_memory, once
// per throttle.Every for every target together (when memory is short,
// most of them drop), with the target that met it this time, what it
// holds against its share, and what all hold against queue_memory.
func (t *target) memoryFull(now time.Time) {
	missed, due := t.c.memoryLog.Due(now)
	if !due {
		return
	}
	_, own := t.queue.state()
	used, max, share := t.c.budget.state()
	t.c.log.Warn("gnmi queue memory full: new notifications dropped (the broker takes them slower than the targets send them; targets over their share are refused first)",
		slog.String("target", t.cfg.Name), slog.Int("notifications", missed), slog.Int("target_bytes", own),
		slog.Int64("share_bytes", share), slog.Int64("queued_bytes", used), slog.Int64("queue_memory", max))
}

// pollLoop sends a Poll every poll interval, but not while the last one
// is unanswered (no sync_response since): a target slower to answer than
// the interval would have the requests pile up, each a full snapshot to
// send. A target that answers polls with updates and never a
// sync_response is polled again once its updates have come and the poll
// has waited pollPatience intervals. The first skip of a session is
// logged.
func (t *target) pollLoop(ctx context.Context, stream gpb.GNMI_SubscribeClient, answered, updated <-chan struct{}, log *slog.Logger) {
	tick := time.NewTicker(t.poll)
	defer tick.Stop()
	pending, data, waited, skipped := false, false, 0, false
	for {
		select {
		case <-ctx.Done():
			return
		case <-answered:
			pending = false
		case <-updated:
			data = true
		case <-tick.C:
			if pending && !(data && waited >= pollPatience) {
				waited++
				if !skipped {
					skipped = true
					log.Info("gnmi poll skipped: the last one is not answered yet (the target takes longer than poll_interval)",
						slog.Duration("poll_interval", t.poll))
				}
				continue
			}
			if err := stream.Send(&gpb.SubscribeRequest{Request: &gpb.SubscribeRequest_Poll{Poll: &gpb.Poll{}}}); err != nil {
				log.Debug("gnmi poll send failed", slog.Any("err", err))
				return
			}
			pending, data, waited = true, false, 0
		}
	}
}

// pollPatience is how many intervals a poll answered with updates but no
// sync_response waits before the next is sent.
const pollPatience = 3

func (t *target) capabilities(ctx context.Context, client gpb.GNMIClient, log *slog.Logger, level slog.Level) error {
	cctx, cancel := context.WithTimeout(ctx, t.cfg.Timeout.Std())
	defer cancel()
	caps, err := client.Capabilities(cctx, &gpb.CapabilityRequest{})
	if status.Code(err) == codes.Unimplemented {
		log.Debug("gnmi target does not implement Capabilities")
		return nil
	}
	if err != nil {
		return t.rpcError(ctx, "capabilities", err)
	}
	encs := make([]string, 0, len(caps.GetSupportedEncodings()))
	supported := false
	for _, e := range caps.GetSupportedEncodings() {
		encs = append(encs, strings.ToLower(e.String()))
		if e == t.req.GetSubscribe().GetEncoding() {
			supported = true
		}
	}
	log.Log(ctx, level, "gnmi capabilities", slog.String("gnmi_version", caps.GetGNMIVersion()),
		slog.Int("models", len(caps.GetSupportedModels())), slog.String("encodings", strings.Join(encs, ",")))
	if len(encs) > 0 && !supported {
		warn := slog.LevelWarn
		if level < slog.LevelInfo {
			warn = slog.LevelDebug // said already in this run of failures
		}
		log.Log(ctx, warn, "gnmi target does not list the configured encoding", slog.String("encoding", t.cfg.Encoding), slog.String("supported", strings.Join(encs, ",")))
	}
	return nil
}

// stalledError ends a session whose stream was silent for longer than
// its bound; it counts as DeadlineExceeded.
type stalledError struct{ idle time.Duration }

func (e *stalledError) Error() string {
	return fmt.Sprintf("stream stalled: no data received for %v", e.idle)
}

func (e *stalledError) GRPCStatus() *status.Status {
	return status.New(codes.DeadlineExceeded, e.Error())
}

// refusingError ends a session whose target sent only in-band Error
// messages for bound, keeping the stream open; its code is the error's.
type refusingError struct {
	bound  time.Duration
	inband *status.Status
}

func (e *refusingError) Error() string {
	return fmt.Sprintf("the target sent only an error message for %v, keeping the stream open: %s", e.bound, e.inband.Message())
}

func (e *refusingError) GRPCStatus() *status.Status {
	return status.New(e.inband.Code(), e.Error())
}

// refusal cancels a session, with its refusingError, when the target
// has sent only in-band Error messages for the error's bound. The target
// answering and being refused are one decision (progress.answer), so
// exactly one of its first real answer and the refusal wins. A message
// that came but is not yet decoded when the bound passes, as a large one
// still arriving over a slow link, may be that answer: the refusal waits
// for it as the watchdog does, a link quiet for the bound in the middle
// of it being a stall.
type refusal struct {
	p      *progress
	cancel context.CancelCauseFunc
	err    *refusingError

	mu      sync.Mutex
	timer   *time.Timer
	stopped bool
}

func newRefusal(err *refusingError, p *progress, cancel context.CancelCauseFunc) *refusal {
	r := &refusal{p: p, cancel: cancel, err: err}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.timer = time.AfterFunc(err.bound, r.fire)
	return r
}

func (r *refusal) fire() {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.stopped {
		return
	}
	if r.p.pending() {
		if quiet := r.p.quiet(); quiet < r.err.bound {
			r.timer.Reset(r.err.bound - quiet)
			return
		}
		r.cancel(&stalledError{r.err.bound})
		return
	}
	if r.p.refuse() {
		r.cancel(r.err)
	}
}

// stop ends the refusal: a fire under way neither arms the timer again
// nor cancels.
func (r *refusal) stop() {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.stopped = true
	r.timer.Stop()
}

// watchdog cancels a session, with a stalledError, when no stream data
// came for the bound it was last armed with: bytes count as they arrive
// (see progress), so a message that takes longer than the bound over a
// slow link is no stall while it comes.
type watchdog struct {
	p      *progress
	cancel context.CancelCauseFunc

	mu    sync.Mutex
	timer *time.Timer
	bound time.Duration // 0: no bound
}

func newWatchdog(bound time.Duration, p *progress, cancel context.CancelCauseFunc) *watchdog {
	w := &watchdog{p: p, cancel: cancel, bound: bound}
	p.mark() // the bound counts from now
	w.mu.Lock()
	defer w.mu.Unlock()
	w.timer = time.AfterFunc(bound, w.fire)
	return w
}

func (w *watchdog) fire() {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.bound <= 0 {
		return
	}
	if quiet := w.p.quiet(); quiet < w.bound {
		w.timer.Reset(w.bound - quiet) // data came meanwhile
		return
	}
	w.cancel(&stalledError{w.bound})
}

// arm sets the bound at d, after a message; 0 is no bound. The timer
// is reset only when the bound changes: fire looks at the data's
// progress, which the message moved.
func (w *watchdog) arm(d time.Duration) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if d == w.bound {
		return
	}
	w.bound = d
	if d <= 0 {
		w.timer.Stop()
		return
	}
	w.timer.Reset(max(d-w.p.quiet(), 0))
}

// stop ends the watchdog: a fire under way finds no bound, and neither
// arms the timer again nor cancels.
func (w *watchdog) stop() {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.bound = 0
	w.timer.Stop()
}

// streamError wraps an error of the Subscribe stream, or says the stream
// stalled when that is what ended it (gRPC reports only Canceled).
// answered: a response came before it, so no path was refused.
func (t *target) streamError(ctx context.Context, err error, answered bool) error {
	var stalled *stalledError
	if errors.As(context.Cause(ctx), &stalled) {
		return fmt.Errorf("gnmi %s: subscribe: %w", t.cfg.Name, stalled)
	}
	var refused *refusingError
	if errors.As(context.Cause(ctx), &refused) {
		return fmt.Errorf("gnmi %s: subscribe: %w", t.cfg.Name, refused)
	}
	if !answered && t.refusedPath(err) {
		return fmt.Errorf("gnmi %s: subscribe: %w (%s)", t.cfg.Name, err, t.refusedHint())
	}
	return t.rpcError(ctx, "subscribe", err)
}

// rpcError wraps a gRPC error with the target and the call, and says
// plainly when credentials were refused.
func (t *target) rpcError(ctx context.Context, call string, err error) error {
	switch status.Code(err) {
	case codes.Unauthenticated, codes.PermissionDenied:
		if t.cfg.Username == "" {
			return fmt.Errorf("gnmi %s: %s: %s refused the call without credentials (set username and password): %w", t.cfg.Name, call, t.cfg.Address, err)
		}
		return fmt.Errorf("gnmi %s: %s: %s refused the credentials for user %q: %w", t.cfg.Name, call, t.cfg.Address, t.cfg.Username, err)
	case codes.Unavailable:
		if strings.Contains(status.Convert(err).Message(), "produced zero addresses") {
			// gRPC's DNS resolver hides a name that does not exist
			// (NXDOMAIN) behind this, naming neither the host nor DNS.
			if lerr := lookupFails(ctx, t.cfg.Address); lerr != nil {
				return fmt.Errorf("gnmi %s: %s: %w (%s does not resolve: %v)", t.cfg.Name, call, err, hostOf(t.cfg.Address), lerr)
			}
		}
		if hint := t.tlsHint(status.Convert(err).Message()); hint != "" {
			return fmt.Errorf("gnmi %s: %s: %w (%s)", t.cfg.Name, call, err, hint)
		}
		if !t.cfg.Insecure && strings.Contains(status.Convert(err).Message(), "first record does not look like a TLS handshake") {
			// The target answered the TLS handshake in something else:
			// plaintext gRPC, as labs and simulators serve it.
			return fmt.Errorf("gnmi %s: %s: %w (%s does not speak TLS: a target serving plaintext gRPC needs insecure: true)",
				t.cfg.Name, call, err, t.cfg.Address)
		}
		if t.cfg.Insecure && strings.Contains(status.Convert(err).Message(), "server preface") && servesTLS(ctx, t.cfg.Address) {
			// A TLS server closes on the plaintext HTTP/2 preface; so
			// do a proxy whose backend is down and a target over its
			// session limit, which a TLS handshake tells apart.
			return fmt.Errorf("gnmi %s: %s: %w (insecure: true speaks plaintext, but %s serves TLS: remove insecure, and set tls.ca_file or tls.insecure_skip_verify if its certificate needs them)",
				t.cfg.Name, call, err, t.cfg.Address)
		}
	case codes.DeadlineExceeded:
		if call == "capabilities" && strings.Contains(status.Convert(err).Message(), "context deadline exceeded") {
			// weir's own deadline, on the dial or the answer: gRPC
			// names neither the setting nor its value.
			return fmt.Errorf("gnmi %s: %s: %w (no answer from %s within timeout (%v): a slow link or a slow target needs a longer timeout; a port that accepts connections and never answers is hung or not gNMI)",
				t.cfg.Name, call, err, t.cfg.Address, t.cfg.Timeout.Std())
		}
	case codes.ResourceExhausted:
		if strings.Contains(status.Convert(err).Message(), "received message larger than max") {
			// One notification past what weir receives: the target
			// sends it again at every retry.
			return fmt.Errorf("gnmi %s: %s: %w (one notification larger than weir receives, %d MiB: subscribe to narrower paths, a list's entries rather than the whole list)",
				t.cfg.Name, call, err, maxRecvMsgSize>>20)
		}
	case codes.InvalidArgument:
		if msg := status.Convert(err).Message(); t.cfg.PrefixTarget == "" && (strings.Contains(msg, "prefix") || strings.Contains(msg, "target")) {
			// A gateway or reference server that fronts several devices.
			return fmt.Errorf("gnmi %s: %s: %w (if %s serves several devices, set prefix_target to the one wanted)",
				t.cfg.Name, call, err, t.cfg.Address)
		}
	}
	return fmt.Errorf("gnmi %s: %s: %w", t.cfg.Name, call, err)
}

// refusedPath reports whether err, ending a Subscribe before any response,
// is the target's refusal of one of several subscriptions' paths: a
// NotFound or InvalidArgument that is neither a gateway's about its
// devices (rpcError's prefix_target hint) nor names prefix_target's.
func (t *target) refusedPath(err error) bool {
	st := status.Convert(err)
	msg := st.Message()
	switch st.Code() {
	case codes.NotFound:
	case codes.InvalidArgument:
		if t.cfg.PrefixTarget == "" && (strings.Contains(msg, "prefix") || strings.Contains(msg, "target")) {
			return false
		}
	default:
		return false
	}
	return len(t.cfg.Subscriptions) > 1 && !t.namesPrefixTarget(msg)
}

// namesPrefixTarget reports whether a refusal's message names the device
// prefix_target asks for: a gateway's that fronts no such device (the
// reference server's NotFound "no such target"), refused before any path.
func (t *target) namesPrefixTarget(msg string) bool {
	return t.cfg.PrefixTarget != "" && strings.Contains(msg, t.cfg.PrefixTarget)
}

// refusedHint says what a Subscribe refused for a path or a mode means
// for a target of several subscriptions: the target names the path, not
// the subscription, nor that the others stopped with it.
func (t *target) refusedHint() string {
	var b strings.Builder
	b.WriteString("a target refuses the whole Subscribe for one path or mode it does not serve, so none of this target's subscriptions stream: ")
	const most = 8
	for i, s := range t.cfg.Subscriptions {
		if i == most {
			fmt.Fprintf(&b, ", and %d more", len(t.cfg.Subscriptions)-most)
			break
		}
		if i > 0 {
			b.WriteString(", ")
		}
		if s.Name != "" {
			fmt.Fprintf(&b, "%s (%s)", s.Name, s.Path)
		} else {
			b.WriteString(s.Path)
		}
	}
	b.WriteString("; take the one it names out of this target's subscriptions")
	return b.String()
}

// tlsHint says what to set for a TLS handshake that failed with msg, or
// "": crypto/tls names neither the file nor the setting.
func (t *target) tlsHint(msg string) string {
	if t.cfg.Insecure {
		return ""
	}
	var c configs.GNMITLS
	if t.cfg.TLS != nil {
		c = *t.cfg.TLS
	}
	switch {
	case strings.Contains(msg, "tls: certificate required") && c.CertFile == "":
		return fmt.Sprintf("%s requires a client certificate: set tls.cert_file and tls.key_file", t.cfg.Address)
	case strings.Contains(msg, "remote error: tls: bad certificate"), strings.Contains(msg, "remote error: tls: unknown certificate authority"):
		if c.CertFile != "" {
			return fmt.Sprintf("%s refused the client certificate %s: is it signed by a CA the target trusts, and not expired?", t.cfg.Address, c.CertFile)
		}
	case strings.Contains(msg, "doesn't contain any IP SANs") && c.ServerName == "":
		// Device certificates mostly name the device, not its address.
		return fmt.Sprintf("the certificate of %s names no IP address: set tls.server_name to a name it is issued for", t.cfg.Address)
	case strings.Contains(msg, "x509: certificate is valid for"):
		if c.ServerName != "" {
			return fmt.Sprintf("tls.server_name (%s) is not a name the certificate of %s is issued for", c.ServerName, t.cfg.Address)
		}
		return fmt.Sprintf("set tls.server_name to a name the certificate of %s is issued for", t.cfg.Address)
	case strings.Contains(msg, "x509: certificate signed by unknown authority"):
		if c.CAFile == "" {
			return fmt.Sprintf("the certificate of %s is not signed by a CA of the system roots: set tls.ca_file to its CA", t.cfg.Address)
		}
		return fmt.Sprintf("the certificate of %s is not signed by tls.ca_file (%s)", t.cfg.Address, c.CAFile)
	}
	return ""
}

// lookupFails is the error of looking addr's host up, if it fails; it
// waits at most tlsProbeTimeout.
func lookupFails(ctx context.Context, addr string) error {
	ctx, cancel := context.WithTimeout(ctx, tlsProbeTimeout)
	defer cancel()
	_, err := net.DefaultResolver.LookupHost(ctx, hostOf(addr))
	return err
}

func hostOf(addr string) string {
	if host, _, err := net.SplitHostPort(addr); err == nil {
		return host
	}
	return addr
}

// servesTLS reports whether addr answers a TLS handshake: with a
// certificate (not verified: only whether TLS is spoken), or with a TLS
// alert (a client certificate required, say). It waits at most
// tlsProbeTimeout, and not past ctx: weir stopping ends the probe.
func servesTLS(ctx context.Context, addr string) bool {
	ctx, cancel := context.WithTimeout(ctx, tlsProbeTimeout)
	defer cancel()
	var d net.Dialer
	conn, err := d.DialContext(ctx, "tcp", addr)
	if err != nil {
		return false
	}
	defer conn.Close()
	host, _, _ := net.SplitHostPort(addr)
	c := tls.Client(conn, &tls.Config{InsecureSkipVerify: true, ServerName: host, NextProtos: []string{"h2"}}) //nolint:gosec // a probe: nothing is sent over it
	err = c.HandshakeContext(ctx)
	return err == nil || strings.Contains(err.Error(), "remote error: tls:")
}

const tlsProbeTimeout = 3 * time.Second

var headers = []broker.Header{
	{Key: telemetry.HeaderSource, Value: []byte(Source)},
	{Key: telemetry.HeaderSchema, Value: []byte(telemetry.SchemaMetric)},
}

// queue is a target's bounded queue of notifications. Its memory follows
// the backlog (a channel would hold queue_size slots per target from the
// start, which at thousands of targets is most of weir's memory).
type queue struct {
	mu       sync.Mutex
	items    []item
	spare    []item
	max      int
	maxBytes int
	bytes    int // the sizes of items and of the batch being published
	notify   chan struct{}
	// budget is queue_memory, shared with the other targets' queues:
	// bytes are charged to it too (lock order: mu, then the budget's).
	budget *memBudget
}

func newQueue(max, maxBytes int, budget *memBudget) *queue {
	return &queue{max: max, maxBytes: maxBytes, budget: budget, notify: make(chan struct{}, 1)}
}

// pushResult says whether push took an item, or which bound refused it.
type pushResult int

const (
	pushed     pushResult = iota
	queueFull             // queue_size or queue_bytes
	memoryFull            // queue_memory (see memBudget)
)

// push adds it unless the queue is full, by count or by bytes (an empty
// queue takes one item however large), or the targets' queues together
// hold queue_memory (see memBudget.take); it never blocks.
func (q *queue) push(it item) pushResult {
	q.mu.Lock()
	if len(q.items) >= q.max || len(q.items) > 0 && q.bytes+it.size > q.maxBytes {
		q.mu.Unlock()
		return queueFull
	}
	if !q.budget.take(int64(q.bytes), int64(it.size)) {
		q.mu.Unlock()
		return memoryFull
	}
	q.items = append(q.items, it)
	q.bytes += it.size
	q.mu.Unlock()
	select {
	case q.notify <- struct{}{}:
	default:
	}
	return pushed
}

// release gives back the bytes of items taken and now published (or
// given up): until then they count against the byte bound, so it bounds
// the batch being published too.
func (q *queue) release(n int) {
	if n == 0 {
		return
	}
	q.mu.Lock()
	q.bytes -= n
	q.budget.give(int64(n))
	q.mu.Unlock()
}

// take moves up to maxBatch items into dst, waiting for one; false when
// ctx is done, or when stop is closed and the queue is empty. Their bytes
// stay counted until release.
func (q *queue) take(ctx context.Context, stop <-chan struct{}, dst []item) ([]item, bool) {
	for {
		q.mu.Lock()
		if n := len(q.items); n > 0 {
			if n <= maxBatch {
				dst = append(dst[:0], q.items...)
				clear(q.items)
				q.items, q.spare = q.spare[:0], q.items[:0]
				if cap(q.spare) > 4*maxBatch {
					q.spare = nil // let a past burst's memory go
				}
			} else {
				dst = append(dst[:0], q.items[:maxBatch]...)
				rest := copy(q.items, q.items[maxBatch:])
				clear(q.items[rest:])
				q.items = q.items[:rest]
			}
			q.mu.Unlock()
			return dst, true
		}
		q.mu.Unlock()
		select {
		case <-stop:
			return dst, false
		default:
		}
		select {
		case <-ctx.Done():
			return dst, false
		case <-stop:
		case <-q.notify:
		}
	}
}

// state is how many items the queue holds, and their bytes with those of
// the batch being published.
func (q *queue) state() (n, bytes int) {
	q.mu.Lock()
	defer q.mu.Unlock()
	return len(q.items), q.bytes
}

// discard empties the queue and returns how many items it held.
func (q *queue) discard() int {
	q.mu.Lock()
	defer q.mu.Unlock()
	n := len(q.items)
	clear(q.items)
	q.items = q.items[:0]
	q.budget.give(int64(q.bytes))
	q.bytes = 0
	return n
}

// recordKey is the key of the target's records: its device's name
// (WithDeviceName), else the target's name. The bytes of the last name
// given are kept, so a batch costs no allocation while it stays.
func (t *target) recordKey() []byte {
	if t.c.deviceName == nil {
		return t.key
	}
	name := t.c.deviceName(t.cfg.Name)
	if name == "" {
		return t.key
	}
	if string(t.named) != name {
		t.named = []byte(name)
	}
	return t.named
}

// publishLoop drains the queue into the broker, in batches, until ctx
// ends, or streamDone is closed and the queue is empty. It returns the
// records of the last batch the broker did not take before ctx ended,
// and the broker's error; what it leaves in the queue is run's to count.
func (t *target) publishLoop(ctx context.Context, streamDone <-chan struct{}) (unsent int, _ error) {
	batch := make([]item, 0, maxBatch)
	var recs []broker.Record
	var keys []string
	held := 0 // the queue bytes of the batch being published
	defer func() { t.queue.release(held) }()
	for {
		t.queue.release(held)
		held = 0
		// One buffer per batch holds every record's value: the broker
		// copies values into its log before Produce returns.
		var buf []byte
		var ok bool
		if batch, ok = t.queue.take(ctx, streamDone, batch); !ok {
			return 0, nil
		}
		for _, it := range batch {
			held += it.size
		}
		recs = recs[:0]
		key := t.recordKey()
		for _, it := range batch {
			var ms []telemetry.Metric
			if it.status != nil {
				ms = []telemetry.Metric{t.statusMetric(it)}
			} else {
				var skipped noValue
				if ms, skipped = flatten(t.cfg.Name, it.n, it.at); skipped.n > 0 {
					t.noValue(skipped, it.n)
				}
			}
			for _, m := range ms {
				start := len(buf)
				var err error
				buf, keys, err = m.AppendJSON(buf, keys)
				if err != nil {
					buf = buf[:start]
					t.dropEncode.Inc()
					t.c.log.Warn("gnmi encode failed", slog.String("target", t.cfg.Name), slog.String("measurement", m.Measurement), slog.Any("err", err))
					continue
				}
				recs = append(recs, broker.Record{Timestamp: m.ReceivedAt, Key: key, Value: buf[start:len(buf):len(buf)], Headers: headers})
			}
		}
		clear(batch) // do not pin notifications until the next batch
		if len(recs) == 0 {
			continue
		}
		// Retried with back-off while the broker fails (a full disk),
		// until ctx ends; a record the broker refuses for good (over
		// its size limit) is dropped alone, not the whole batch.
		res, err := t.pub.Publish(ctx, recs)
		t.published.Add(float64(res.Published))
		// Published: hold none of the batch's values (the buffers
		// they were encoded into) until the next batch, and not the
		// slots of a past burst's batch (a large snapshot) either.
		clear(recs)
		if cap(recs) > maxKeptRecords {
			recs = nil
		}
		if err != nil {
			// Stopped (weir's shutdown grace, or a removed target's
			// drain time, is up) with records the broker did not
			// take: OnDrop counted them (shutdown).
			return res.Unsent, err
		}
	}
}

// noValue counts the updates of n that gave nothing and logs them, once
// per throttle.Every: a target sending a value kind weir does not know
// (newer gNMI) would otherwise lose them without a trace.
func (t *target) noValue(skipped noValue, n *gpb.Notification) {
	t.dropValue.Add(float64(skipped.n))
	missed, due := t.noValueLog.Due(time.Now())
	if !due {
		return
	}
	p := pathKey(join(elems(n.GetPrefix()), elems(skipped.first.GetPath())), n.GetPrefix().GetOrigin())
	why := "no value"
	if v := skipped.first.GetVal(); v != nil {
		why = "a value of a kind weir does not know (a newer gNMI?)"
		if blob, ok := jsonBlob(v); ok && jsonTooDeep(blob) {
			why = fmt.Sprintf("JSON nested deeper than %d levels, which no YANG model does: %s", maxJSONDepth, strconv.Quote(string(blob[:min(len(blob), 64)])))
		} else if ok {
			why = "JSON with no leaf: " + strconv.Quote(string(blob[:min(len(blob), 64)]))
		} else if v.GetValue() != nil {
			why = fmt.Sprintf("a value weir cannot read (%T)", v.GetValue())
		}
	}
	t.c.log.Warn("gnmi updates with no value weir can read; dropped", slog.String("target", t.cfg.Name),
		slog.String("path", p), slog.String("value", why), slog.Int("notifications", missed))
}

// memberKey is what tells a reload whether a target changed: its config
// and its TLS files' contents.
type memberKey struct {
	cfg   configs.GNMITarget
	files []fileStamp
}

// fileStamp is a version of a file: a hash of its contents (times and
// sizes would miss a renewed certificate copied with its old time, or of
// the same size).
type fileStamp struct {
	path string
	sum  [sha256.Size]byte
}

// stampFiles stamps the named files ("" and unreadable ones are skipped:
// reading them for the credentials is what reports the error).
func stampFiles(paths ...string) []fileStamp {
	var out []fileStamp
	for _, p := range paths {
		if p == "" {
			continue
		}
		if b, err := os.ReadFile(p); err == nil {
			out = append(out, fileStamp{p, sha256.Sum256(b)})
		}
	}
	return out
}
