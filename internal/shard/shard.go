// Package shard decides which SNMP and gNMI targets this weir process
// collects when several processes of one deployment share them, so each
// target is polled (or subscribed to) by exactly one process.
//
// Membership is a consumer group over a coordination topic (weir.shards,
// 60 partitions by default, created if missing; nothing is ever written to
// it). The group's balancer gives each member some of its partitions, and
// a target belongs to the partition its name hashes to, the way a record
// key does (murmur2 modulo the partition count). The group does the rest:
// a process that joins takes over some partitions, one that stops leaves
// and its partitions move at once, and one that dies stops heartbeating and
// its partitions move after the session timeout.
//
// Owns is a lock-free read of the current assignment, cheap enough to ask
// at every poll; Changed signals when it changes.
//
// While the group cannot be reached (the cluster down, or this process cut
// off from it) the last assignment is kept, so a process neither polls
// every target nor silently stops: the records it polls then wait in its
// producer like any other. Other processes may meanwhile have taken over
// its partitions, so intervals around such an outage can see a target
// polled twice. An assignment that goes empty while the cluster answers
// (more processes than partitions) is given up after Config.Grace.
package shard

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unsafe"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/weirnet/weir/broker"
	"github.com/weirnet/weir/internal/promreg"
	"github.com/weirnet/weir/internal/throttle"
)

// Defaults.
const (
	DefaultTopic          = "weir.shards"
	DefaultGroup          = "weir-collect"
	DefaultPartitions     = 60
	DefaultSessionTimeout = 10 * time.Second
	defaultCheck          = 200 * time.Millisecond
	defaultRefresh        = 30 * time.Second
	probeTimeout          = 3 * time.Second
	defaultRetryWait      = 2 * time.Second
)

// Config is what a Member needs.
type Config struct {
	Broker broker.Broker
	// Group is the consumer group of the processes sharing targets
	// (see GroupName).
	Group string
	// Topic is the coordination topic; default weir.shards.
	Topic string
	// Partitions is the coordination topic's partition count when it has
	// to be created (default 60): the most processes that can share the
	// targets. An existing topic keeps its count, which every process
	// reads at start and every RefreshInterval (see Run).
	Partitions int32
	// SessionTimeout is how long the group waits for a silent member
	// before moving its partitions; 0 keeps the backend's default.
	SessionTimeout time.Duration
	// Grace is how long an assignment that went empty is kept while the
	// cluster answers; default SessionTimeout, else 10s.
	Grace time.Duration
	// MemberID names this process in group descriptions.
	MemberID string
	Logger   *slog.Logger
	// Registerer receives the weir_shard_* metrics (nil: none).
	Registerer prometheus.Registerer
	// CheckInterval is how often the assignment is read; default 200ms.
	CheckInterval time.Duration
	// RefreshInterval is how often the coordination topic's partition
	// count is read again; default 30s.
	RefreshInterval time.Duration
}

// Member is this process's membership: which partitions, hence which
// targets, it owns now.
type Member struct {
	cfg  Config
	log  *slog.Logger
	snap atomic.Pointer[snapshot]
	m    *metrics

	mu      sync.Mutex
	targets map[string][]string // collector -> target names, for the metrics

	// retryWait is the wait before asking an unreachable cluster again
	// (defaultRetryWait; shorter in tests).
	retryWait time.Duration
	// now is the clock of the throttled log lines (time.Now; a fixed one
	// in tests).
	now func() time.Time

	// Owned by Run's goroutine.
	topicLog  throttle.Throttle // "cannot read or create the coordination topic"
	joinLog   throttle.Throttle // "cannot join the group"
	lostSince time.Time
	lastProbe time.Time
	reachable bool // the last probe had an answer
	warned    bool // that it had none was logged
}

// snapshot is one assignment. It is never modified once published;
// changed is closed when a newer one replaces it.
type snapshot struct {
	partitions int32  // of the topic; 0 before the first assignment
	owned      []bool // by partition
	n          int    // partitions owned
	changed    chan struct{}
}

// New prepares a member; Run joins the group.
func New(cfg Config) (*Member, error) {
	if cfg.Broker == nil {
		return nil, errors.New("shard: no broker")
	}
	if cfg.Group == "" {
		return nil, errors.New("shard: no group")
	}
	if cfg.Topic == "" {
		cfg.Topic = DefaultTopic
	}
	if cfg.Partitions <= 0 {
		cfg.Partitions = DefaultPartitions
	}
	if cfg.Grace <= 0 {
		cfg.Grace = cfg.SessionTimeout
		if cfg.Grace <= 0 {
			cfg.Grace = DefaultSessionTimeout
		}
	}
	if cfg.CheckInterval <= 0 {
		cfg.CheckInterval = defaultCheck
	}
	if cfg.RefreshInterval <= 0 {
		cfg.RefreshInterval = defaultRefresh
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	m, err := newMetrics(cfg.Registerer)
	if err != nil {
		return nil, err
	}
	mb := &Member{cfg: cfg, log: cfg.Logger, m: m, targets: map[string][]string{},
		retryWait: defaultRetryWait, now: time.Now}
	mb.snap.Store(&snapshot{changed: make(chan struct{})})
	return mb, nil
}

// Owns reports whether this process collects the target called name now.
// Before the group has assigned anything it owns nothing.
func (mb *Member) Owns(name string) bool {
	s := mb.snap.Load()
	if s.n == 0 {
		return false
	}
	return s.owned[broker.PartitionForKey(unsafe.Slice(unsafe.StringData(name), len(name)), s.partitions)]
}

// Changed returns a channel closed at the next change of the assignment.
// Take it before asking Owns, so no change goes unseen.
func (mb *Member) Changed() <-chan struct{} { return mb.snap.Load().changed }

// Partitions returns the partitions owned now and the topic's count.
func (mb *Member) Partitions() (owned []int32, of int32) {
	s := mb.snap.Load()
	for p, ok := range s.owned {
		if ok {
			owned = append(owned, int32(p))
		}
	}
	return owned, s.partitions
}

// Track names a collector's targets, so weir_shard_owned_targets counts
// how many of them this process owns.
func (mb *Member) Track(collector string, names []string) {
	mb.mu.Lock()
	mb.targets[collector] = slices.Clone(names)
	mb.mu.Unlock()
	mb.countTargets()
}

func (mb *Member) countTargets() map[string]int {
	mb.mu.Lock()
	defer mb.mu.Unlock()
	out := make(map[string]int, len(mb.targets))
	for c, names := range mb.targets {
		n := 0
		for _, name := range names {
			if mb.Owns(name) {
				n++
			}
		}
		out[c] = n
		mb.m.targets.WithLabelValues(c).Set(float64(n))
	}
	return out
}

// Run joins the group and follows its assignment until ctx ends, then
// leaves it. It retries while the cluster cannot be reached.
//
// Every process must map a target to the same partition, so they must
// agree on the topic's partition count: a process that read 60 and one
// that read 90 (an operator added partitions, or deleted the topic and
// another process created it again with another count) would each leave
// some targets to the other, and neither poll them. So the count names
// the group (see groupFor): processes that read different counts are in
// different groups, each covering every target (some polled twice for
// that while, none missed), and a process that finds the count changed
// (read again every RefreshInterval) joins the group of the new count.
func (mb *Member) Run(ctx context.Context) error {
	for {
		parts, err := mb.topic(ctx)
		if err != nil {
			return nil // ctx ended
		}
		if !mb.follow(ctx, parts) {
			return nil
		}
	}
}

// groupFor is the group of the processes that read parts partitions of
// the coordination topic: Config.Group for the default count, with a
// suffix for any other.
func (mb *Member) groupFor(parts int32) string {
	if parts == DefaultPartitions {
		return mb.cfg.Group
	}
	return fmt.Sprintf("%s-p%d", mb.cfg.Group, parts)
}

// follow is a membership of the group of a topic with parts partitions:
// it follows the group's assignment until ctx ends (false) or the topic's
// partition count is no longer parts (true).
func (mb *Member) follow(ctx context.Context, parts int32) bool {
	mb.m.topicPartitions.Set(float64(parts))
	group := mb.groupFor(parts)
	opts := []broker.ConsumerOption{broker.WithResetToLatest()}
	if mb.cfg.SessionTimeout > 0 {
		opts = append(opts, broker.WithSessionTimeout(mb.cfg.SessionTimeout))
	}
	if mb.cfg.MemberID != "" {
		opts = append(opts, broker.WithMemberID(mb.cfg.MemberID))
	}
	var c broker.Consumer
	for c == nil {
		var err error
		if c, err = mb.cfg.Broker.Consume(ctx, group, []string{mb.cfg.Topic}, opts...); err != nil {
			if ctx.Err() != nil {
				return false // stopping: the join ended with it
			}
			if n, due := mb.joinLog.Due(mb.now()); due {
				mb.log.Warn("shard: cannot join the group; retrying", slog.String("group", group), slog.Any("error", err), slog.Int("times", n))
			}
			if !sleep(ctx, mb.retryWait) {
				return false
			}
		}
	}
	mb.log.Info("shard: joining group", slog.String("group", group), slog.String("topic", mb.cfg.Topic),
		slog.Int("partitions", int(parts)), slog.Duration("session_timeout", mb.cfg.SessionTimeout))
	dctx, stopDrain := context.WithCancel(ctx)
	drained := make(chan struct{})
	go func() {
		defer close(drained)
		mb.drain(dctx, c)
	}()
	defer func() {
		c.Close() // leaves the group: the others take our partitions now
		stopDrain()
		<-drained
	}()
	tick := time.NewTicker(mb.cfg.CheckInterval)
	defer tick.Stop()
	lastRefresh := time.Now()
	for {
		mb.check(ctx, c, group, parts)
		if time.Since(lastRefresh) >= mb.cfg.RefreshInterval {
			lastRefresh = time.Now()
			if n := mb.partitionCount(ctx); n > 0 && n != parts {
				mb.log.Warn("shard: the coordination topic's partition count changed; joining the group of the new count",
					slog.String("topic", mb.cfg.Topic), slog.Int("was", int(parts)), slog.Int("now", int(n)))
				return true
			}
		}
		select {
		case <-ctx.Done():
			return false
		case <-tick.C:
		}
	}
}

// partitionCount reads the coordination topic's partition count; 0 when
// the cluster gave no answer or the topic is gone (the group goes on with
// the partitions it knows; the next process to start creates the topic
// again).
func (mb *Member) partitionCount(ctx context.Context) int32 {
	pctx, cancel := context.WithTimeout(ctx, probeTimeout)
	defer cancel()
	infos, err := mb.cfg.Broker.DescribeTopics(pctx, mb.cfg.Topic)
	if err != nil || len(infos) != 1 {
		return 0
	}
	return int32(len(infos[0].Partitions))
}

// topic makes sure the coordination topic exists and returns its
// partition count, retrying until ctx ends.
func (mb *Member) topic(ctx context.Context) (int32, error) {
	for {
		infos, err := mb.cfg.Broker.DescribeTopics(ctx, mb.cfg.Topic)
		if err == nil && len(infos) == 1 && len(infos[0].Partitions) > 0 {
			return int32(len(infos[0].Partitions)), nil
		}
		if err == nil || errors.Is(err, broker.ErrUnknownTopic) {
			err = mb.cfg.Broker.CreateTopic(ctx, mb.cfg.Topic, broker.TopicConfig{Partitions: mb.cfg.Partitions})
			if err == nil || errors.Is(err, broker.ErrTopicExists) {
				if !sleep(ctx, 100*time.Millisecond) { // the cluster's metadata follows
					return 0, ctx.Err()
				}
				continue
			}
		}
		if ctx.Err() != nil {
			return 0, ctx.Err() // stopping: the request ended with it
		}
		// Retried every retryWait for as long as the cluster is down
		// or refuses weir (a wrong password): logged once per
		// throttle.Every, with how many attempts failed.
		if n, due := mb.topicLog.Due(mb.now()); due {
			mb.log.Warn("shard: cannot read or create the coordination topic; retrying", slog.String("topic", mb.cfg.Topic), slog.Any("error", err), slog.Int("times", n))
		}
		if !sleep(ctx, mb.retryWait) {
			return 0, ctx.Err()
		}
	}
}

// drain polls the member's consumer: nothing is written to the topic, but
// anything that is must not pile up in the client, and some backends do
// their group work in Poll.
func (mb *Member) drain(ctx context.Context, c broker.Consumer) {
	for {
		_, err := c.Poll(ctx)
		if ctx.Err() != nil || errors.Is(err, broker.ErrClosed) {
			return
		}
		if err != nil {
			mb.log.Debug("shard: poll", slog.Any("error", err))
			if !sleep(ctx, time.Second) {
				return
			}
		}
	}
}

// check reads the group's assignment and publishes it when it changed.
func (mb *Member) check(ctx context.Context, c broker.Consumer, group string, parts int32) {
	owned := make([]bool, parts)
	n := 0
	for _, tp := range c.Assigned() {
		if tp.Topic == mb.cfg.Topic && tp.Partition >= 0 && tp.Partition < parts && !owned[tp.Partition] {
			owned[tp.Partition] = true
			n++
		}
	}
	cur := mb.snap.Load()
	if n > 0 {
		if !mb.lostSince.IsZero() {
			mb.log.Info("shard: group membership back", slog.String("group", group))
			mb.lostSince = time.Time{}
		}
		mb.m.member.Set(1)
		if cur.partitions != parts || !slices.Equal(cur.owned, owned) {
			mb.publish(group, parts, owned, n, "assigned")
		}
		return
	}
	if cur.n == 0 {
		return // not assigned yet, or already given up
	}
	// The assignment went empty: the membership was lost (the cluster
	// is away, or it dropped us and we are joining again), or the group
	// has more members than partitions. Keep it while the cluster does
	// not answer, and for Grace while it does.
	now := time.Now()
	if mb.lostSince.IsZero() {
		mb.lostSince = now
		mb.reachable, mb.warned, mb.lastProbe = false, false, time.Time{}
		mb.m.member.Set(0)
		mb.log.Warn("shard: the group took this process's partitions or the membership was lost; keeping the last assignment until the group answers",
			slog.String("group", group), slog.Int("partitions", cur.n))
	}
	if now.Sub(mb.lostSince) < mb.cfg.Grace {
		return
	}
	if now.Sub(mb.lastProbe) >= probeTimeout {
		mb.lastProbe = now
		pctx, cancel := context.WithTimeout(ctx, probeTimeout)
		_, err := mb.cfg.Broker.DescribeTopics(pctx, mb.cfg.Topic)
		cancel()
		if ctx.Err() != nil {
			return
		}
		if err != nil && (mb.reachable || !mb.warned) {
			mb.log.Warn("shard: the cluster does not answer; still collecting the last assignment's targets", slog.Any("error", err))
			mb.warned = true
		}
		mb.reachable = err == nil
	}
	if mb.reachable {
		mb.log.Warn("shard: the group assigns this process no partitions; it collects no targets until it does",
			slog.String("group", group))
		mb.publish(group, parts, owned, 0, "given up")
	}
}

func (mb *Member) publish(group string, parts int32, owned []bool, n int, why string) {
	old := mb.snap.Swap(&snapshot{partitions: parts, owned: owned, n: n, changed: make(chan struct{})})
	close(old.changed)
	mb.m.partitions.Set(float64(n))
	mb.m.changes.Inc()
	counts := mb.countTargets()
	var list []string
	for p, ok := range owned {
		if ok {
			list = append(list, strconv.Itoa(p))
		}
	}
	attrs := []any{slog.String("group", group), slog.String("partitions", fmt.Sprintf("%d of %d", n, parts)),
		slog.String("owned", strings.Join(list, ","))}
	for _, c := range slices.Sorted(maps.Keys(counts)) {
		attrs = append(attrs, slog.Int(c+"_targets", counts[c]))
	}
	mb.log.Info("shard: assignment "+why, attrs...)
}

// GroupName is the group of the processes that share exactly these
// targets: prefix and a digest of the sorted names. Processes configured
// with other targets (another site's) land in another group and collect
// their own, instead of owning partitions whose targets they do not have.
func GroupName(prefix string, names []string) string {
	sorted := slices.Clone(names)
	slices.Sort(sorted)
	h := sha256.Sum256([]byte(strings.Join(sorted, "\n")))
	return prefix + "-" + hex.EncodeToString(h[:4])
}

func sleep(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-t.C:
		return true
	}
}

type metrics struct {
	partitions, topicPartitions, member prometheus.Gauge
	targets                             *prometheus.GaugeVec
	changes                             prometheus.Counter
}

func newMetrics(reg prometheus.Registerer) (*metrics, error) {
	m := &metrics{
		partitions: prometheus.NewGauge(prometheus.GaugeOpts{Name: "weir_shard_partitions",
			Help: "Partitions of the coordination topic this process owns: its share of the targets."}),
		topicPartitions: prometheus.NewGauge(prometheus.GaugeOpts{Name: "weir_shard_topic_partitions",
			Help: "Partitions of the coordination topic, shared by the group's processes."}),
		member: prometheus.NewGauge(prometheus.GaugeOpts{Name: "weir_shard_member",
			Help: "1 while the group's assignment is current; 0 before the first one, or while the membership is lost and the last assignment is kept."}),
		targets: prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "weir_shard_owned_targets",
			Help: "Targets this process collects, by collector."}, []string{"collector"}),
		changes: prometheus.NewCounter(prometheus.CounterOpts{Name: "weir_shard_assignment_changes_total",
			Help: "Times this process's share of the targets changed (rebalances that moved its partitions)."}),
	}
	if reg == nil {
		return m, nil
	}
	var err error
	m.partitions = promreg.Register(reg, m.partitions, &err)
	m.topicPartitions = promreg.Register(reg, m.topicPartitions, &err)
	m.member = promreg.Register(reg, m.member, &err)
	m.targets = promreg.Register(reg, m.targets, &err)
	m.changes = promreg.Register(reg, m.changes, &err)
	return m, err
}
