// Package embedded is weir's built-in log broker: topics of partitions of
// append-only segment files holding Kafka RecordBatch v2 batches, with sparse
// offset and time indexes, retention by time and size, a configurable flush
// policy, crash recovery that truncates a torn tail, and consumer groups with
// committed offsets. In-process producers and consumers call it directly;
// the Kafka listener (broker/kafkawire) serves it to any Kafka client.
//
// Data directory layout:
//
//	.lock                        flock held while open
//	.clean_shutdown              present only between a clean Close and the next Open
//	meta/topics/NAME.json        topic id, partition count, config
//	meta/producer-ids            next idempotent producer id block
//	meta/offsets.log             consumer group commits (append-only, compacted)
//	NAME-P/000…BASE.log          segments, with .index and .timeindex beside them
//	NAME-P/producers.snapshot    idempotent producer state, at each roll and clean close
package embedded

import (
	"cmp"
	"context"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/weirnet/weir/broker"
	"github.com/weirnet/weir/broker/recordbatch"
	"github.com/weirnet/weir/internal/dirlock"
	"github.com/weirnet/weir/internal/throttle"
)

// Broker is the embedded log. It implements broker.Broker and the Kafka
// listener's kafkawire.Log.
type Broker struct {
	opts options
	lock *dirlock.Lock

	// adminMu serialises the topic changes (create, delete, alter
	// configs), which write and sync files; mu guards the topic map and
	// is held only to read or swap entries, so that produces and fetches
	// of every topic, which take it for reading, never wait on a sync.
	// Order: adminMu, then mu.
	adminMu sync.Mutex
	mu      sync.RWMutex
	topics  map[string]*topic

	offsets *offsetStore
	groups  *coordinator     // in-process consumers
	wire    *wireCoordinator // Kafka clients of the listener
	kinds   *groupKinds      // keeps the two out of each other's groups
	pids    *producerIDs

	// maxPartitions bounds all topics' partitions together, each holding
	// open files; maxPartitionsWhy says where it comes from, for the
	// error. refusedCreates counts the creations it refused.
	maxPartitions    int
	maxPartitionsWhy string
	refusedCreates   atomic.Int64

	scratch  sync.Pool // *produceScratch
	checkers sync.Pool // *recordbatch.Decoder for AppendBatches
	// decompressing bounds the appends that check a compressed batch at
	// once: one per CPU, since decompressing is CPU work. Most hold a
	// record at a time, but raw snappy and wide zstd frames are checked
	// whole (up to 256 MiB): concurrent bombs over a listener's thousands
	// of connections added up to GBs.
	decompressing chan struct{}
	rr            atomic.Uint32

	stop    context.CancelFunc
	bg      sync.WaitGroup
	closed  atomic.Bool
	closeMu sync.Mutex
}

var (
	_ broker.Broker          = (*Broker)(nil)
	_ broker.Positioner      = (*consumer)(nil)
	_ broker.OffsetCommitter = (*consumer)(nil)
)

// Open opens (creating if needed) the log in dir. It takes an exclusive lock
// on the directory: a second process opening the same directory fails.
func Open(dir string, opts ...Option) (*Broker, error) {
	o := defaultOptions(dir)
	for _, opt := range opts {
		opt(&o)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("data dir %s: %w", dir, err)
	}
	lock, err := dirlock.Take(dir)
	if err != nil {
		return nil, err
	}
	b := &Broker{opts: o, lock: lock, topics: make(map[string]*topic)}
	b.maxPartitions, b.maxPartitionsWhy = o.maxPartitions, "broker.max_partitions"
	if o.maxPartitions <= 0 {
		b.maxPartitions, b.maxPartitionsWhy = descriptorPartitions()
	}
	b.scratch.New = func() any { return new(produceScratch) }
	b.checkers.New = func() any { return new(recordbatch.Decoder) }
	b.decompressing = make(chan struct{}, runtime.GOMAXPROCS(0))
	if err := b.load(); err != nil {
		b.closeFailedOpen()
		lock.Release()
		return nil, err
	}
	ctx, cancel := context.WithCancel(context.Background())
	b.stop = cancel
	if !o.flushAlways && o.flushInterval > 0 {
		b.bg.Go(func() { b.flushLoop(ctx) })
	}
	if o.retentionCheck > 0 {
		b.bg.Go(func() { b.retentionLoop(ctx) })
	}
	return b, nil
}

// closeFailedOpen closes what a failed load opened, writing nothing: the
// open may have failed for want of descriptors, and a close's flush that
// fails so removes index files that are sound. The next open, unclean,
// recovers what this one did.
func (b *Broker) closeFailedOpen() {
	for _, t := range b.topics {
		for _, p := range t.partitions {
			p.closeFiles()
		}
	}
	if b.offsets != nil {
		b.offsets.f.Close()
	}
}

func (b *Broker) load() error {
	cleanMarker := filepath.Join(b.opts.dataDir, ".clean_shutdown")
	_, err := os.Stat(cleanMarker)
	clean := err == nil
	if clean {
		// From here on a crash is an unclean shutdown again.
		if err := os.Remove(cleanMarker); err != nil {
			return fmt.Errorf("%w: %w", broker.ErrStorage, err)
		}
		if err := syncDir(b.opts.dataDir); err != nil {
			return err
		}
	}
	start := time.Now()
	metas, err := readTopicMetas(b.opts.dataDir)
	if err != nil {
		return err
	}
	// Open partitions in parallel: recovery after a crash is I/O and CRC
	// bound per partition.
	type result struct {
		t   *topic
		err error
	}
	results := make([]result, len(metas))
	var wg sync.WaitGroup
	sem := make(chan struct{}, 8)
	for i, m := range metas {
		wg.Go(func() {
			sem <- struct{}{}
			defer func() { <-sem }()
			t, err := b.openTopic(m, clean)
			results[i] = result{t, err}
		})
	}
	wg.Wait()
	for _, r := range results {
		if r.t != nil {
			b.topics[r.t.name] = r.t
		}
		if r.err != nil {
			return r.err
		}
	}
	b.removeDeleted()
	b.warnOrphans()
	if b.offsets, err = openOffsetStore(b.opts.dataDir, b.opts.flushAlways, b.opts.nowFunc, b.opts.logger); err != nil {
		return err
	}
	if b.pids, err = openProducerIDs(b.opts.dataDir, b.highestProducerID(), b.opts.logger); err != nil {
		return err
	}
	b.kinds = newGroupKinds()
	b.groups = newCoordinator(b)
	b.wire = newWireCoordinator(b, b.kinds)
	attrs := []any{slog.String("dir", b.opts.dataDir), slog.Bool("clean", clean)}
	if !clean && len(metas) == 0 {
		attrs[1] = slog.Bool("new", true) // nothing to recover: not an unclean stop
	}
	parts := b.partitionCount()
	b.opts.logger.Info("log opened", append(attrs, slog.Int("topics", len(b.topics)), slog.Int("partitions", parts),
		slog.Int("max_partitions", b.maxPartitions), slog.Duration("took", time.Since(start)))...)
	if parts > b.maxPartitions {
		// Opened all the same (their data is there), but no topic is
		// created until some are deleted.
		b.opts.logger.Warn("the topics have more partitions than the broker's bound: creating topics is refused",
			slog.Int("partitions", parts), slog.Int("max_partitions", b.maxPartitions), slog.String("bound", b.maxPartitionsWhy))
	}
	return nil
}

// highestProducerID is the highest idempotent producer id any partition's
// state remembers (0: none); used at open, before the broker is shared.
func (b *Broker) highestProducerID() int64 {
	var highest int64
	for _, t := range b.topics {
		for _, p := range t.partitions {
			for id := range p.producers {
				highest = max(highest, id)
			}
		}
	}
	return highest
}

func (b *Broker) openTopic(m topicMeta, clean bool) (*topic, error) {
	// The ID must survive restarts: Kafka clients take a topic whose ID
	// changed for one deleted and re-created (franz-go then fails it for
	// good with UNKNOWN_TOPIC_ID).
	var id [16]byte
	if raw, err := hex.DecodeString(m.ID); err == nil && len(raw) == len(id) {
		copy(id[:], raw)
	} else {
		id = newTopicID()
		m.ID = fmt.Sprintf("%x", id)
		if err := writeTopicMeta(b.opts.dataDir, m); err != nil {
			b.opts.logger.Warn("storing a new topic ID", slog.String("topic", m.Name), slog.Any("error", err))
		}
	}
	t := &topic{name: m.Name, id: id, stats: new(topicStats)}
	if over, ok := b.opts.topics[m.Name]; ok && over.Partitions > 0 && over.Partitions != m.Partitions {
		// The count is fixed at creation; said, so that a count raised
		// in the config is not believed applied.
		b.opts.logger.Warn("the config's partition count for an existing topic is not applied: a topic keeps the count it was created with; delete and re-create it to change it",
			slog.String("topic", m.Name), slog.Int("configured", int(over.Partitions)), slog.Int("partitions", int(m.Partitions)))
	}
	t.own, t.meta = b.ownConfig(m.Name, m.config()), m
	cfg := mergeConfig(t.own, b.opts.defaults)
	t.cfg.Store(&cfg)
	for p := int32(0); p < m.Partitions; p++ {
		if dir := partitionDir(b.opts.dataDir, m.Name, p); !exists(dir) {
			b.opts.logger.Warn("a partition's directory is missing: the partition starts again empty, at offset 0; its records are gone",
				slog.String("partition", fmt.Sprintf("%s-%d", m.Name, p)), slog.String("dir", dir))
		}
		part, err := openPartition(t, p, &b.opts, clean)
		if err != nil {
			for _, q := range t.partitions {
				q.closeFiles()
			}
			return nil, fmt.Errorf("topic %s: %w", m.Name, err)
		}
		t.partitions = append(t.partitions, part)
	}
	return t, nil
}

// ownConfig is the config a topic sets itself: its per-topic settings
// (WithTopicConfig) over the config it was created with (stored). Its zero
// fields follow the defaults.
func (b *Broker) ownConfig(name string, stored broker.TopicConfig) broker.TopicConfig {
	cfg := stored
	if over, ok := b.opts.topics[name]; ok {
		p := cfg.Partitions
		cfg = mergeConfig(over, cfg)
		if p != 0 {
			cfg.Partitions = p // the partition count is fixed at creation
		}
	}
	return cfg
}

// TopicConfigLayers tells where a topic's config values come from, for
// the Kafka listener's DescribeConfigs to report their source as Kafka
// does: own holds what the topic set itself (the configs it was created
// with or AlterTopicConfig gave it, under its WithTopicConfig settings),
// brokerWide what WithTopicDefaults sets for every topic where it differs
// from the built-in default, and builtin the built-in defaults. A zero field is not
// set at that level; the value in effect (DescribeTopics) is the first one
// set of own, brokerWide and builtin. Partitions is the topic's count in
// own and the default count in the others.
//
// A broker-wide value equal to the built-in default counts as the default:
// weir's config fills its defaults in before reading weir.yaml, so the two
// cannot be told apart.
func (b *Broker) TopicConfigLayers(name string) (own, brokerWide, builtin broker.TopicConfig, err error) {
	b.mu.RLock()
	t, ok := b.topics[name]
	if ok {
		own = t.own // AlterTopicConfig swaps it under b.mu
	}
	b.mu.RUnlock()
	if !ok {
		return own, brokerWide, builtin, fmt.Errorf("%w: %s", broker.ErrUnknownTopic, name)
	}
	builtin = defaultOptions("").defaults
	brokerWide = b.opts.defaults
	if brokerWide.Partitions == builtin.Partitions {
		brokerWide.Partitions = 0
	}
	if brokerWide.RetentionTime == builtin.RetentionTime {
		brokerWide.RetentionTime = 0
	}
	if brokerWide.RetentionBytes == builtin.RetentionBytes {
		brokerWide.RetentionBytes = 0
	}
	if brokerWide.SegmentBytes == builtin.SegmentBytes {
		brokerWide.SegmentBytes = 0
	}
	if brokerWide.SegmentAge == builtin.SegmentAge {
		brokerWide.SegmentAge = 0
	}
	return own, brokerWide, builtin, nil
}

// removeDeleted finishes topic deletions a crash interrupted.
func (b *Broker) removeDeleted() {
	entries, _ := os.ReadDir(b.opts.dataDir)
	for _, e := range entries {
		if e.IsDir() && filepath.Ext(e.Name()) == ".deleted" {
			os.RemoveAll(filepath.Join(b.opts.dataDir, e.Name()))
		}
	}
}

// warnOrphans logs the directories of the data directory that look like
// partitions of no topic: their topic's meta/topics file is gone (or a
// crash came in the middle of a deletion). Nothing reads them, and
// creating a topic of that name removes them.
func (b *Broker) warnOrphans() {
	entries, _ := os.ReadDir(b.opts.dataDir)
	for _, e := range entries {
		name := e.Name()
		i := strings.LastIndexByte(name, '-')
		if !e.IsDir() || i <= 0 || filepath.Ext(name) == ".deleted" {
			continue
		}
		p, err := strconv.ParseInt(name[i+1:], 10, 32)
		if err != nil || p < 0 {
			continue
		}
		if t := b.topics[name[:i]]; t != nil && int(p) < len(t.partitions) {
			continue
		}
		b.opts.logger.Warn("a directory of the data directory is a partition of no topic (no meta/topics file names it): not read, and removed if a topic of that name is created",
			slog.String("dir", filepath.Join(b.opts.dataDir, name)), slog.String("topic", name[:i]))
	}
}

func exists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}

// Close flushes every partition, writes the clean-shutdown marker and
// releases the directory lock.
func (b *Broker) Close() error {
	b.closeMu.Lock()
	defer b.closeMu.Unlock()
	if b.closed.Swap(true) {
		return nil
	}
	b.stop()
	b.bg.Wait()
	b.groups.close()
	b.wire.close()
	first := b.closeTopics()
	if err := b.offsets.close(); err != nil && first == nil {
		first = err
	}
	if first == nil {
		if err := writeFileAtomic(filepath.Join(b.opts.dataDir, ".clean_shutdown"), nil); err != nil {
			first = err
		}
	}
	b.lock.Release()
	return first
}

func (b *Broker) closeTopics() error {
	b.adminMu.Lock() // a topic change in progress finishes first
	defer b.adminMu.Unlock()
	b.mu.Lock()
	defer b.mu.Unlock()
	var (
		wg    sync.WaitGroup
		mu    sync.Mutex
		first error
		slots = make(chan struct{}, closeParallelism)
	)
	for _, t := range b.topics {
		for _, p := range t.partitions {
			slots <- struct{}{}
			wg.Go(func() {
				defer func() { <-slots }()
				if err := p.close(); err != nil {
					mu.Lock()
					first = cmp.Or(first, err)
					mu.Unlock()
				}
			})
		}
	}
	wg.Wait()
	return first
}

// closeParallelism is how many partitions a stop closes at once: each
// syncs its files, and the file system commits syncs made together in
// one go (1,000 partitions took 5 s one by one).
const closeParallelism = 16

func (b *Broker) flushLoop(ctx context.Context) {
	tick := time.NewTicker(b.opts.flushInterval)
	defer tick.Stop()
	failures := flushFailures{logger: b.opts.logger}
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
		b.forEachPartition(func(p *partition) {
			if err := p.flush(); err != nil || !failures.failing.Empty() {
				failures.report(p.name(), err) // named only when there is something to log or forget
			}
		})
		failures.report("group offsets", b.offsets.flush())
	}
}

// flushFailures logs flushes that fail, and when they work again.
type flushFailures struct {
	logger *slog.Logger
	// A failure that lasts (a full disk, no file descriptors) repeats at
	// every tick: logged once per throttle.Every, per partition.
	failing throttle.Set
}

// report logs what's flush error, or that it flushed again after failing.
func (f *flushFailures) report(what string, err error) {
	if err == nil {
		if f.failing.Forget(what) {
			f.logger.Info("flush works again", slog.String("partition", what))
		}
		return
	}
	if n, ok := f.failing.Due(what, time.Now()); ok {
		f.logger.Error("flush failed", slog.String("partition", what), slog.Any("error", err), slog.Int("times", n))
	}
}

func (b *Broker) retentionLoop(ctx context.Context) {
	tick := time.NewTicker(b.opts.retentionCheck)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
		b.ApplyRetention()
	}
}

// ApplyRetention deletes expired segments, and the offsets of groups
// unused past the offsets retention, now; it also runs periodically.
func (b *Broker) ApplyRetention() {
	now := b.opts.nowFunc()
	b.expireOffsets(now)
	// One line a pass, not one a partition: with small segments every
	// partition deletes one each minute, and the log was mostly this.
	segments, partitions := 0, 0
	var topics []string
	b.forEachPartition(func(p *partition) {
		n, err := p.applyRetention(now)
		if err != nil {
			b.opts.logger.Error("retention", slog.String("partition", p.name()), slog.Any("error", err))
		}
		if n > 0 {
			segments += n
			partitions++
			if !slices.Contains(topics, p.topic.name) {
				topics = append(topics, p.topic.name)
			}
		}
	})
	if segments > 0 {
		slices.Sort(topics)
		b.opts.logger.Info("retention deleted segments", slog.Int("segments", segments),
			slog.Int("partitions", partitions), slog.String("topics", strings.Join(topics, ",")))
	}
}

func (b *Broker) forEachPartition(fn func(*partition)) {
	b.mu.RLock()
	var parts []*partition
	for _, t := range b.topics {
		parts = append(parts, t.partitions...)
	}
	b.mu.RUnlock()
	for _, p := range parts {
		fn(p)
	}
}

// topic returns the named topic, creating it with the defaults if create is
// set and auto-creation is on.
func (b *Broker) topic(ctx context.Context, name string, create bool) (*topic, error) {
	if b.closed.Load() {
		return nil, broker.ErrClosed
	}
	b.mu.RLock()
	t := b.topics[name]
	b.mu.RUnlock()
	if t != nil {
		return t, nil
	}
	if !create || !b.opts.autoCreate {
		return nil, fmt.Errorf("%w: %s", broker.ErrUnknownTopic, name)
	}
	err := b.CreateTopic(ctx, name, broker.TopicConfig{})
	if err != nil && !errors.Is(err, broker.ErrTopicExists) {
		return nil, err
	}
	b.mu.RLock()
	t = b.topics[name]
	b.mu.RUnlock()
	if t == nil {
		return nil, fmt.Errorf("%w: %s", broker.ErrUnknownTopic, name)
	}
	return t, nil
}

func (b *Broker) partition(ctx context.Context, topicName string, id int32, create bool) (*partition, error) {
	t, err := b.topic(ctx, topicName, create)
	if err != nil {
		return nil, err
	}
	if id < 0 || int(id) >= len(t.partitions) {
		return nil, fmt.Errorf("%w: %s/%d", broker.ErrUnknownPartition, topicName, id)
	}
	return t.partitions[id], nil
}

// maxTopicPartitions bounds a topic's partitions: each has its own
// directory and open files, and a typo should not make a million of them.
const maxTopicPartitions = 10000

// CreateTopic creates a topic; zero config fields take the defaults.
func (b *Broker) CreateTopic(ctx context.Context, name string, cfg broker.TopicConfig) error {
	return b.createTopicLeaving(name, cfg, 0)
}

// CreateClientTopic is CreateTopic for a Kafka client (CreateTopics, or
// Metadata's auto-creation): it leaves part of the partition bound
// (clientReserve) to weir's own topics. Those are created when first
// written to, and a client creating topics up to the bound would
// otherwise stop weir's collectors from publishing.
func (b *Broker) CreateClientTopic(ctx context.Context, name string, cfg broker.TopicConfig) error {
	return b.createTopicLeaving(name, cfg, b.clientReserve())
}

// clientReserve is the part of the partition bound Kafka clients may not
// take: a twentieth, at least 256 (weir's own topics are about ten, of 6
// partitions by default), at most half.
func (b *Broker) clientReserve() int {
	return min(max(256, b.maxPartitions/20), b.maxPartitions/2)
}

// ValidateCreateTopic reports what CreateTopic would, without creating
// (kafkawire.TopicCreateValidator: CreateTopics' validate_only).
func (b *Broker) ValidateCreateTopic(ctx context.Context, name string, cfg broker.TopicConfig) error {
	return b.validateCreate(name, cfg, 0)
}

// ValidateCreateClientTopic is ValidateCreateTopic for CreateClientTopic.
func (b *Broker) ValidateCreateClientTopic(ctx context.Context, name string, cfg broker.TopicConfig) error {
	return b.validateCreate(name, cfg, b.clientReserve())
}

func (b *Broker) validateCreate(name string, cfg broker.TopicConfig, leave int) error {
	if err := checkCreate(name, cfg); err != nil {
		return err
	}
	b.adminMu.Lock()
	defer b.adminMu.Unlock()
	if err := b.nameFree(name); err != nil {
		return err
	}
	return b.checkBound(name, b.storedPartitions(name, cfg), leave)
}

// nameFree reports why a topic cannot be created under name now: the
// broker is closed or the topic exists. b.adminMu must be held: only
// topic changes, which hold it, add to the map, so the name stays free
// until the caller adds its topic.
func (b *Broker) nameFree(name string) error {
	if b.closed.Load() {
		return broker.ErrClosed
	}
	b.mu.RLock()
	_, ok := b.topics[name]
	b.mu.RUnlock()
	if ok {
		return fmt.Errorf("%w: %s", broker.ErrTopicExists, name)
	}
	return nil
}

func checkCreate(name string, cfg broker.TopicConfig) error {
	if !broker.ValidTopicName(name) {
		return fmt.Errorf("%w: %q", broker.ErrInvalidTopic, name)
	}
	if cfg.Partitions < 0 || cfg.Partitions > maxTopicPartitions {
		return fmt.Errorf("%w: %d (1 to %d)", broker.ErrInvalidPartitions, cfg.Partitions, maxTopicPartitions)
	}
	return nil
}

// storedPartitions is the partitions a topic created with cfg gets.
func (b *Broker) storedPartitions(name string, cfg broker.TopicConfig) int32 {
	n := cfg.Partitions
	if over, ok := b.opts.topics[name]; ok && n == 0 {
		n = over.Partitions
	}
	if n == 0 {
		n = b.opts.defaults.Partitions
	}
	return n
}

// checkBound refuses a topic of n partitions that would leave fewer than
// leave free under the bound. Past the bound, the descriptors the rest of
// weir needs would go to partitions.
func (b *Broker) checkBound(name string, n int32, leave int) error {
	held := b.partitionCount()
	if held+int(n) <= b.maxPartitions-leave {
		return nil
	}
	if leave > 0 {
		return fmt.Errorf("%w: topic %s: its %d partitions would make %d in all, more than the %d Kafka clients may make: the broker's %d less %d kept for weir's own topics (%s)",
			broker.ErrPartitionLimit, name, n, held+int(n), b.maxPartitions-leave, b.maxPartitions, leave, b.maxPartitionsWhy)
	}
	return fmt.Errorf("%w: topic %s: its %d partitions would make %d in all, more than the broker's %d (%s)",
		broker.ErrPartitionLimit, name, n, held+int(n), b.maxPartitions, b.maxPartitionsWhy)
}

func (b *Broker) createTopicLeaving(name string, cfg broker.TopicConfig, leave int) error {
	if err := checkCreate(name, cfg); err != nil {
		return err
	}
	if err := b.createTopic(name, cfg, leave); err != nil {
		return err
	}
	// Outside b.mu: the coordinator takes b.mu itself.
	if b.groups != nil {
		b.groups.topicsChanged()
	}
	return nil
}

// createTopic creates a topic if its partitions leave at least leave
// partitions free under the bound.
func (b *Broker) createTopic(name string, cfg broker.TopicConfig, leave int) error {
	b.adminMu.Lock()
	defer b.adminMu.Unlock()
	if err := b.nameFree(name); err != nil {
		return err
	}
	stored := cfg
	stored.Partitions = b.storedPartitions(name, cfg)
	// Refused before any file is made.
	if err := b.checkBound(name, stored.Partitions, leave); err != nil {
		b.refusedCreates.Add(1)
		return err
	}
	id := newTopicID()
	t := &topic{name: name, id: id, stats: new(topicStats)}
	t.own = b.ownConfig(name, stored)
	eff := mergeConfig(t.own, b.opts.defaults)
	t.cfg.Store(&eff)
	for p := int32(0); p < stored.Partitions; p++ {
		// A leftover directory of a deleted topic must not come back.
		dir := partitionDir(b.opts.dataDir, name, p)
		if exists(dir) {
			b.opts.logger.Warn("removing the directory of a partition of no topic, left from before", slog.String("dir", dir))
		}
		if err := os.RemoveAll(dir); err != nil {
			abandonPartitions(t, &b.opts)
			return fmt.Errorf("%w: %w", broker.ErrStorage, err)
		}
		part, err := openPartition(t, p, &b.opts, true)
		if err != nil {
			abandonPartitions(t, &b.opts)
			return fmt.Errorf("create topic %s: %w", name, err)
		}
		t.partitions = append(t.partitions, part)
	}
	// The partitions' directory entries are durable before the topic
	// is: else a power loss could keep the topic and lose a partition
	// acknowledged writes went to.
	if err := b.syncAdmin(adminSyncDataDir, b.opts.dataDir); err != nil {
		abandonPartitions(t, &b.opts)
		return fmt.Errorf("create topic %s: %w", name, err)
	}
	t.meta = metaFromConfig(name, id, stored)
	if err := b.writeTopicMeta(t.meta); err != nil {
		// Renamed into place but not synced: without its partitions the
		// topic must not come back at the next start.
		os.Remove(filepath.Join(metaDir(b.opts.dataDir), name+".json"))
		abandonPartitions(t, &b.opts)
		return fmt.Errorf("create topic %s: %w", name, err)
	}
	// A new topic has no commits. Any under its name are a deleted
	// topic's that its deletion could not write off (a crash, a full
	// disk until the stop, a commit that raced the deletion); kept, a
	// group would read from them.
	b.offsets.deleteTopic(name)
	b.mu.Lock()
	b.topics[name] = t
	b.mu.Unlock()
	b.opts.logger.Info("topic created", slog.String("topic", name), slog.Int("partitions", int(stored.Partitions)))
	return nil
}

// partitionCount is the partitions of all topics.
func (b *Broker) partitionCount() int {
	b.mu.RLock()
	defer b.mu.RUnlock()
	n := 0
	for _, t := range b.topics {
		n += len(t.partitions)
	}
	return n
}

// The durable steps of topic changes, which call them holding adminMu and
// not mu (see options.adminStep).
const (
	adminWriteMeta   = "write meta"
	adminSyncMetaDir = "sync meta dir"
	adminSyncDataDir = "sync data dir"
	// adminRemoveData is no durable step: a deleted topic's data removed,
	// a ".deleted" directory at a time, after adminMu is released.
	adminRemoveData = "remove data"
)

// writeTopicMeta writes a topic's meta file durably.
func (b *Broker) writeTopicMeta(m topicMeta) error {
	if h := b.opts.adminStep; h != nil {
		h(adminWriteMeta)
	}
	return writeTopicMeta(b.opts.dataDir, m)
}

// syncAdmin syncs dir, the step of a topic change.
func (b *Broker) syncAdmin(step, dir string) error {
	if h := b.opts.adminStep; h != nil {
		h(step)
	}
	return syncDir(dir)
}

// abandonPartitions closes and removes the partitions of a topic whose
// creation failed (a full disk, no descriptor left), so that none is left
// behind.
func abandonPartitions(t *topic, opts *options) {
	// All closed before any is removed: out of descriptors, closing one
	// partition frees one, and removing a directory takes two.
	for _, q := range t.partitions {
		q.closeFiles()
	}
	// With the one being opened when it failed, if it made its directory.
	for p := range int32(len(t.partitions)) + 1 {
		dir := partitionDir(opts.dataDir, t.name, p)
		if err := os.RemoveAll(dir); err != nil {
			opts.logger.Warn("removing a partition directory of a topic whose creation failed", slog.String("dir", dir), slog.Any("error", err))
		}
	}
}

// DeleteTopic deletes a topic and its data.
func (b *Broker) DeleteTopic(ctx context.Context, name string) error {
	tombs, err := b.deleteTopic(name)
	if err != nil {
		return err
	}
	// Outside adminMu: removing a large topic's files takes a while, and
	// other topic changes (a producer's auto-creation) need not wait.
	// The names are this topic's alone (its ID), so a topic of the same
	// name made meanwhile keeps its own directories.
	for _, tomb := range tombs {
		if h := b.opts.adminStep; h != nil {
			h(adminRemoveData)
		}
		os.RemoveAll(tomb)
	}
	b.groups.topicsChanged()
	b.opts.logger.Info("topic deleted", slog.String("topic", name))
	return nil
}

// deleteTopic removes the topic named name and moves its partition
// directories aside, returning their new names, for the caller to remove.
func (b *Broker) deleteTopic(name string) (tombs []string, err error) {
	b.adminMu.Lock()
	defer b.adminMu.Unlock()
	if b.closed.Load() {
		return nil, broker.ErrClosed
	}
	b.mu.RLock()
	t, ok := b.topics[name]
	b.mu.RUnlock()
	if !ok {
		return nil, fmt.Errorf("%w: %s", broker.ErrUnknownTopic, name)
	}
	// Remove the metadata first: once it is gone the topic is gone, and a
	// crash before the data is removed leaves only ".deleted" leftovers.
	if err := os.Remove(filepath.Join(metaDir(b.opts.dataDir), name+".json")); err != nil {
		return nil, fmt.Errorf("%w: delete topic %s: %w", broker.ErrStorage, name, err)
	}
	// Make the removal durable before the delete is acknowledged: after a
	// power loss the topic must not come back. The file is gone already,
	// so a failed sync is logged, not returned.
	if err := b.syncAdmin(adminSyncMetaDir, metaDir(b.opts.dataDir)); err != nil {
		b.opts.logger.Warn("topic deleted, but its removal may not survive a power loss", slog.String("topic", name), slog.Any("error", err))
	}
	b.mu.Lock()
	delete(b.topics, name)
	b.mu.Unlock()
	// Move the partition directories out of the way before adminMu is
	// released: a topic of the same name created (or auto-created by a
	// producer) right after must not have its fresh directories renamed
	// and removed by this deletion. Closing without a flush is quick: the
	// data is going; appends already past the topic lookup finish first.
	tombs = make([]string, 0, len(t.partitions))
	for _, p := range t.partitions {
		p.wake() // long-polls on the topic return now, not at their deadline
		p.closeDeleted()
		tomb := fmt.Sprintf("%s.%x.deleted", p.dir, t.id[:4])
		if err := os.Rename(p.dir, tomb); err == nil {
			tombs = append(tombs, tomb)
		}
	}
	// The renames durable, a power loss leaves ".deleted" directories,
	// which the next start removes, rather than partition directories of
	// no topic, which it only warns of.
	if len(tombs) > 0 {
		if err := b.syncAdmin(adminSyncDataDir, b.opts.dataDir); err != nil {
			b.opts.logger.Warn("topic deleted, but after a power loss its data may stay as directories of no topic", slog.String("topic", name), slog.Any("error", err))
		}
	}
	// Its groups' offsets go too, before a topic of the same name can
	// take commits.
	b.offsets.deleteTopic(name)
	return tombs, nil
}

// DescribeTopics describes the named topics, or all, sorted by name.
func (b *Broker) DescribeTopics(ctx context.Context, names ...string) ([]broker.TopicInfo, error) {
	b.mu.RLock()
	var ts []*topic
	if len(names) == 0 {
		for _, t := range b.topics {
			ts = append(ts, t)
		}
	} else {
		for _, n := range names {
			t, ok := b.topics[n]
			if !ok {
				b.mu.RUnlock()
				return nil, fmt.Errorf("%w: %s", broker.ErrUnknownTopic, n)
			}
			ts = append(ts, t)
		}
	}
	b.mu.RUnlock()
	sort.Slice(ts, func(i, j int) bool { return ts[i].name < ts[j].name })
	out := make([]broker.TopicInfo, 0, len(ts))
	for _, t := range ts {
		info := broker.TopicInfo{Name: t.name, ID: t.id, Config: t.config()}
		for _, p := range t.partitions {
			info.Partitions = append(info.Partitions, p.info())
		}
		out = append(out, info)
	}
	return out, nil
}

// AutoCreateTopics reports whether missing topics are created on use.
func (b *Broker) AutoCreateTopics() bool { return b.opts.autoCreate }

// produceScratch holds the per-call buffers of Produce and ProducePartition,
// pooled per broker.
type produceScratch struct {
	parts []int32 // each record's partition
	sizes []int32 // each record's encoded size bound (recordbatch.RecordSize)
	// order lists the records' indices grouped by partition, in call
	// order within each; partition p's are order[starts[p]:starts[p+1]].
	order  []int32
	starts []int32
	enc    recordbatch.Encoder
	comp   recordbatch.Compressor
}

// maxBatchBytes splits large produce calls into batches of this size, so a
// consumer's fetch (and a Kafka client's) never meets a giant batch.
const maxBatchBytes = 1 << 20

// Produce appends records partitioned by key; see broker.Broker.
func (b *Broker) Produce(ctx context.Context, topicName string, recs []broker.Record) error {
	if len(recs) == 0 {
		return nil
	}
	t, err := b.topic(ctx, topicName, true)
	if err != nil {
		unappended(recs) // new records' Offset is 0, which says appended
		return err
	}
	n := int32(len(t.partitions))
	sc := b.scratch.Get().(*produceScratch)
	defer b.scratch.Put(sc)
	sticky := int32(b.rr.Add(1) % uint32(n))
	sc.parts, sc.sizes = sc.parts[:0], sc.sizes[:0]
	sc.starts = slices.Grow(sc.starts[:0], int(n)+1)[:n+1]
	clear(sc.starts)
	for i := range recs {
		recs[i].Offset = -1 // set as each batch is appended: a failure tells what was
		// Refuse an oversized record before anything is appended, so a
		// refused call changes nothing and is safe to split and retry.
		size, err := b.checkSize(&recs[i])
		if err != nil {
			unappended(recs[i+1:])
			return err
		}
		p := sticky
		if recs[i].Key != nil {
			p = broker.PartitionForKey(recs[i].Key, n)
		}
		sc.parts = append(sc.parts, p)
		sc.sizes = append(sc.sizes, int32(size))
		sc.starts[p+1]++
	}
	// Group the indices by partition (a counting sort), so that each
	// partition's encoding visits its own records only.
	for p := int32(0); p < n; p++ {
		sc.starts[p+1] += sc.starts[p]
	}
	sc.order = slices.Grow(sc.order[:0], len(recs))[:len(recs)]
	next := sc.starts[:n] // advanced in place, then restored below
	for i, p := range sc.parts {
		sc.order[next[p]] = int32(i)
		next[p]++
	}
	// next[p] now is where partition p's records end: the start of p+1.
	copy(sc.starts[1:], next)
	sc.starts[0] = 0
	now := b.opts.nowFunc()
	for p := int32(0); p < n; p++ {
		if idx := sc.order[sc.starts[p]:sc.starts[p+1]]; len(idx) > 0 {
			if err := b.produceTo(t.partitions[p], recs, idx, sc, p, now); err != nil {
				return err
			}
		}
	}
	return nil
}

// unappended marks recs as not appended by a failed call (Offset -1).
func unappended(recs []broker.Record) {
	for i := range recs {
		recs[i].Offset = -1
	}
}

// ProducePartition appends records to one partition.
func (b *Broker) ProducePartition(ctx context.Context, topicName string, partition int32, recs []broker.Record) error {
	if len(recs) == 0 {
		return nil
	}
	p, err := b.partition(ctx, topicName, partition, true)
	if err != nil {
		unappended(recs)
		return err
	}
	sc := b.scratch.Get().(*produceScratch)
	defer b.scratch.Put(sc)
	sc.sizes, sc.order = sc.sizes[:0], sc.order[:0]
	for i := range recs {
		recs[i].Offset = -1
		size, err := b.checkSize(&recs[i])
		if err != nil {
			unappended(recs[i+1:])
			return err
		}
		sc.sizes = append(sc.sizes, int32(size))
		sc.order = append(sc.order, int32(i))
	}
	return b.produceTo(p, recs, sc.order, sc, partition, b.opts.nowFunc())
}

// produceTo encodes the records recs[idx...] into batches for partition id
// and appends them, setting each appended record's partition and offset.
func (b *Broker) produceTo(p *partition, recs []broker.Record, idx []int32, sc *produceScratch, id int32, now time.Time) error {
	nowMs := now.UnixMilli()
	first := 0 // position in idx of the current batch's first record
	sc.enc.Reset(-1, -1, -1)
	flush := func(upTo int) error {
		if sc.enc.Count() == 0 {
			return nil
		}
		batch, err := sc.comp.Compress(sc.enc.Finish(0), b.opts.compression)
		if err != nil {
			return fmt.Errorf("compress a batch: %w", err)
		}
		base, err := p.appendBatches(batch, now)
		if err != nil {
			return err
		}
		for j, i := range idx[first:upTo] {
			recs[i].Partition, recs[i].Offset = id, base+int64(j)
		}
		sc.enc.Reset(-1, -1, -1)
		return nil
	}
	for k, i := range idx {
		r := &recs[i]
		if sc.enc.Count() > 0 && sc.enc.Len()+int(sc.sizes[i]) > maxBatchBytes {
			if err := flush(k); err != nil {
				return err
			}
		}
		if sc.enc.Count() == 0 {
			first = k
		}
		ts := nowMs
		if !r.Timestamp.IsZero() {
			ts = r.Timestamp.UnixMilli()
		}
		sc.enc.Append(r.Key, r.Value, r.Headers, ts)
	}
	return flush(len(idx))
}

// checkSize returns the encoded size bound of a record, refusing one that
// would not fit in a batch.
func (b *Broker) checkSize(r *broker.Record) (int, error) {
	return b.checkSizeOf(r.Key, r.Value, r.Headers)
}

func (b *Broker) checkSizeOf(key, value []byte, headers []broker.Header) (int, error) {
	size := recordbatch.RecordSize(key, value, headers)
	if size+recordbatch.HeaderSize > b.opts.maxMessageBytes {
		return 0, fmt.Errorf("%w: %d bytes in a batch of its own exceeds max_message_bytes %d",
			broker.ErrRecordTooLarge, size+recordbatch.HeaderSize, b.opts.maxMessageBytes)
	}
	return size, nil
}

// MaxMessageBytes is the largest record batch the broker takes
// (max_message_bytes), for the wire listener to report.
func (b *Broker) MaxMessageBytes() int { return b.opts.maxMessageBytes }

// DefaultMaxMessageBytes is the built-in MaxMessageBytes
// (DefaultMaxMessageBytes), for the wire listener to tell a configured limit
// from the default.
func (b *Broker) DefaultMaxMessageBytes() int { return DefaultMaxMessageBytes }

// CheckSize implements broker.SizeChecker; max_message_bytes is the same
// for every topic.
func (b *Broker) CheckSize(_ string, key, value []byte, headers []broker.Header) error {
	_, err := b.checkSizeOf(key, value, headers)
	return err
}

// AppendBatches appends producer batches received over the wire.
func (b *Broker) AppendBatches(ctx context.Context, topicName string, partition int32, batches []byte) (int64, error) {
	p, err := b.partition(ctx, topicName, partition, false)
	if err != nil {
		return -1, err
	}
	// Validate all before appending any, so a bad request appends nothing.
	if len(batches) == 0 {
		return -1, fmt.Errorf("%w: empty records", broker.ErrCorruptBatch)
	}
	if _, err := recordbatch.Split(batches, func(h *recordbatch.Header, batch []byte) error {
		if h.Size() > b.opts.maxMessageBytes {
			return fmt.Errorf("%w: batch of %d bytes exceeds %d", broker.ErrRecordTooLarge, h.Size(), b.opts.maxMessageBytes)
		}
		if h.NumRecords != h.LastOffsetDelta+1 {
			return fmt.Errorf("%w: %d records but last offset delta %d", broker.ErrCorruptBatch, h.NumRecords, h.LastOffsetDelta)
		}
		if h.IsControl() {
			return nil // transaction markers carry no data records
		}
		if h.Codec() != recordbatch.CodecNone {
			select {
			case b.decompressing <- struct{}{}:
				defer func() { <-b.decompressing }()
			case <-ctx.Done():
				return ctx.Err()
			}
		}
		d := b.checkers.Get().(*recordbatch.Decoder)
		defer b.checkers.Put(d)
		if err := d.Check(h, batch, b.opts.maxMessageBytes); err != nil {
			if refusedByPolicy(err) {
				return err
			}
			return fmt.Errorf("%w: %w", broker.ErrCorruptBatch, err)
		}
		return nil
	}); err != nil {
		if refusedByPolicy(err) {
			return -1, err
		}
		return -1, fmt.Errorf("%w: %w", broker.ErrCorruptBatch, err)
	}
	return p.appendBatches(batches, b.opts.nowFunc())
}

// refusedByPolicy reports whether err refuses a batch that parses, which
// clients must not take for a corrupt one: CORRUPT_MESSAGE is retried.
func refusedByPolicy(err error) bool {
	return errors.Is(err, broker.ErrRecordTooLarge) || errors.Is(err, broker.ErrInvalidRecord)
}

// ReadBatches reads raw batches for the Kafka listener.
func (b *Broker) ReadBatches(dst []byte, topicName string, partition int32, offset int64, maxBytes int) ([]byte, int64, int64, error) {
	p, err := b.partition(context.Background(), topicName, partition, false)
	if err != nil {
		return dst, -1, -1, err
	}
	return p.read(dst, offset, maxBytes)
}

// Subscribe wakes w after every append to the partition.
func (b *Broker) Subscribe(topicName string, partition int32, w chan<- struct{}) (func(), error) {
	p, err := b.partition(context.Background(), topicName, partition, false)
	if err != nil {
		return nil, err
	}
	return p.subscribe(w), nil
}

// ListOffset resolves a timestamp to an offset (see kafkawire.Log).
func (b *Broker) ListOffset(topicName string, partition int32, ts int64) (int64, int64, error) {
	p, err := b.partition(context.Background(), topicName, partition, false)
	if err != nil {
		return -1, -1, err
	}
	return p.listOffset(ts)
}

// InitProducerID hands out a new idempotent producer id.
func (b *Broker) InitProducerID(ctx context.Context) (int64, int16, error) {
	id, err := b.pids.allocate()
	return id, 0, err
}

// fetchScratch is the backend state kept in a broker.FetchResult.
type fetchScratch struct {
	buf []byte
	dec recordbatch.Decoder
}

// Fetch reads records of one partition; see broker.Broker.
func (b *Broker) Fetch(ctx context.Context, topicName string, partition int32, offset int64, opts broker.FetchOptions, into *broker.FetchResult) error {
	p, err := b.partition(ctx, topicName, partition, false)
	if err != nil {
		return err
	}
	sc, _ := into.Scratch.(*fetchScratch)
	if sc == nil {
		sc = new(fetchScratch)
		into.Scratch = sc
	}
	maxBytes := opts.MaxBytes
	if maxBytes <= 0 {
		maxBytes = 1 << 20
	}
	var wake chan struct{}
	var deadline <-chan time.Time
	for {
		sc.dec.Reset()
		// Not into.Records[:0]: that would keep the array Reset let go.
		into.Records = sc.dec.Records()
		var hwm, start int64
		sc.buf, hwm, start, err = p.readUncounted(sc.buf[:0], offset, maxBytes)
		into.HighWatermark, into.LogStartOffset = hwm, start
		if err != nil {
			return err
		}
		if len(sc.buf) > 0 {
			// maxBytes bounds compressed batches by their records
			// decompressed, as Poll's MaxPollBytes does.
			next, used, err := decodeBatches(&sc.dec, topicName, partition, sc.buf, offset, maxBytes)
			if err != nil {
				p.stats.bytesOut.Add(int64(len(sc.buf)))
				return err
			}
			// The batches past the budget are read again by the next
			// Fetch: counted then.
			p.stats.bytesOut.Add(int64(used))
			into.Records = sc.dec.Records()
			p.stats.recordsOut.Add(int64(len(into.Records)))
			if len(into.Records) > 0 {
				return nil
			}
			offset = next // only transaction markers: skip them
			continue
		}
		if opts.MaxWait <= 0 {
			return nil
		}
		if wake == nil {
			wake = make(chan struct{}, 1)
			unsub := p.subscribe(wake)
			defer unsub()
			t := time.NewTimer(opts.MaxWait)
			defer t.Stop()
			deadline = t.C
			continue // re-check after subscribing: no lost wake-up
		}
		select {
		case <-wake:
		case <-deadline:
			return nil
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// decodeBudget bounds the decompressed bytes one Fetch or Poll holds: past
// it, decoding stops at a batch boundary and the rest is read next time.
const decodeBudget = 64 << 20

// maxDecodeRecords bounds the records one Fetch or Poll returns, about 30 MB
// of them: a compressed batch of 300 KB can hold 30 million. Past it,
// decoding stops within the batch, and the next read decodes it again from
// the record after.
const maxDecodeRecords = 1 << 18

// maxDecodeHeaders bounds the headers of the records one Fetch or Poll
// returns, about 20 MB of them, as maxDecodeRecords bounds records: a
// gzip batch of 250 KB can hold a hundred million empty headers, 40 bytes
// each decoded, in records under max_message_bytes.
const maxDecodeHeaders = 1 << 19

// decodeBatches decodes the records at or after minOffset and returns the
// offset to continue from: after the last record decoded, or at the first
// batch left for the next call once d holds budget decompressed bytes
// (decodeBudget at most) or its bounds of records or headers (readFull).
// used is the bytes of buf up to the end of the last batch decoded (in
// part or whole); the batches after it are read again by the next call.
func decodeBatches(d *recordbatch.Decoder, topicName string, partition int32, buf []byte, minOffset int64, budget int) (next int64, used int, _ error) {
	next = minOffset
	decoded := 0
	_, err := recordbatch.Split(buf, func(h *recordbatch.Header, batch []byte) error {
		if decoded > 0 && readFull(d, budget) {
			return errBudget
		}
		room := maxDecodeRecords - len(d.Records())
		headerRoom := maxDecodeHeaders - d.HeaderCount()
		after, err := d.DecodeUpTo(topicName, partition, h, batch, minOffset, room, headerRoom)
		if err != nil {
			return err
		}
		decoded++
		used += len(batch)
		next = max(next, after)
		if after <= h.LastOffset() {
			return errBudget
		}
		return nil
	})
	if err != nil && !errors.Is(err, errBudget) {
		return next, used, fmt.Errorf("%w: %s/%d: %w", broker.ErrCorruptBatch, topicName, partition, err)
	}
	return next, used, nil
}

var errBudget = errors.New("decode budget reached")

// readFull reports whether d holds what one Fetch or Poll may, budget
// bytes decompressed (decodeBudget at most): past it, a read decodes no
// more batches, and a Poll takes no more partitions.
func readFull(d *recordbatch.Decoder, budget int) bool {
	return d.Decompressed() > min(budget, decodeBudget) || len(d.Records()) >= maxDecodeRecords || d.HeaderCount() >= maxDecodeHeaders
}

// LogDir returns the absolute path of the data directory (what
// DescribeLogDirs reports to Kafka clients).
func (b *Broker) LogDir() string {
	if abs, err := filepath.Abs(b.opts.dataDir); err == nil {
		return abs
	}
	return b.opts.dataDir
}

// Topics lists the topic names, sorted.
func (b *Broker) Topics() []string {
	b.mu.RLock()
	defer b.mu.RUnlock()
	names := make([]string, 0, len(b.topics))
	for n := range b.topics {
		names = append(names, n)
	}
	slices.Sort(names)
	return names
}

// expireOffsets deletes the committed offsets of each group that has had
// no member and no commit for the offsets retention, as Kafka's
// offsets.retention.minutes does: a group a client used once (kcat -G, a
// test) would otherwise be listed, and report a growing lag, for ever.
// A group with members, in-process or Kafka clients, is kept however long
// it has not committed.
func (b *Broker) expireOffsets(now time.Time) {
	r := b.opts.offsetsRetention
	if r <= 0 {
		return
	}
	for _, g := range b.offsets.unusedSince(now.Add(-r)) {
		switch code := b.wire.deleteGroup(g); code {
		case 0:
			b.opts.logger.Info("group offsets expired: no member and no commit within the offsets retention",
				slog.String("group", g), slog.Duration("retention", r))
		case kerr.NonEmptyGroup.Code, kerr.GroupIDNotFound.Code:
		default:
			b.opts.logger.Error("group offsets not expired", slog.String("group", g), slog.Any("error", kerr.ErrorForCode(code)))
		}
	}
}
