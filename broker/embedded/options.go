package embedded

import (
	"log/slog"
	"time"

	"github.com/weirnet/weir/broker"
	"github.com/weirnet/weir/broker/recordbatch"
)

// Defaults, as in Kafka where Kafka has one.
const (
	DefaultPartitions         = 6
	DefaultRetentionTime      = 7 * 24 * time.Hour
	DefaultRetentionBytes     = 1 << 30
	DefaultSegmentBytes       = 256 << 20
	DefaultSegmentAge         = 7 * 24 * time.Hour
	DefaultIndexInterval      = 4096
	DefaultFlushInterval      = 100 * time.Millisecond
	DefaultRetentionCheck     = time.Minute
	DefaultOffsetsRetention   = 7 * 24 * time.Hour
	DefaultMaxMessageBytes    = 8 << 20
	DefaultOffsetsCompactSize = 16 << 20
)

// Option configures Open.
type Option func(*options)

type options struct {
	dataDir         string
	defaults        broker.TopicConfig
	topics          map[string]broker.TopicConfig
	flushAlways     bool
	flushInterval   time.Duration
	retentionCheck  time.Duration
	indexInterval   int
	maxMessageBytes int
	autoCreate      bool
	maxPartitions   int
	compression     int // a recordbatch codec: see WithCompression
	logger          *slog.Logger
	fsyncObserver   func(time.Duration)
	nowFunc         func() time.Time
	// offsetsRetention: see WithOffsetsRetention.
	offsetsRetention time.Duration
	// adminStep, set by tests, runs at each durable step of a topic
	// change (adminWriteMeta, adminSyncMetaDir, adminSyncDataDir), and
	// before each removal of a deleted topic's data (adminRemoveData),
	// just before it.
	adminStep func(step string)
}

func defaultOptions(dir string) options {
	return options{
		dataDir: dir,
		defaults: broker.TopicConfig{
			Partitions:     DefaultPartitions,
			RetentionTime:  DefaultRetentionTime,
			RetentionBytes: DefaultRetentionBytes,
			SegmentBytes:   DefaultSegmentBytes,
			SegmentAge:     DefaultSegmentAge,
		},
		flushInterval:   DefaultFlushInterval,
		retentionCheck:  DefaultRetentionCheck,
		indexInterval:   DefaultIndexInterval,
		maxMessageBytes: DefaultMaxMessageBytes,
		autoCreate:      true,
		compression:     DefaultCompression,
		logger:          slog.New(slog.DiscardHandler),
		nowFunc:         time.Now,

		offsetsRetention: DefaultOffsetsRetention,
	}
}

// WithOffsetsRetention sets how long a consumer group keeps its committed
// offsets once it has no member and commits nothing (Kafka's
// offsets.retention.minutes, default 7 days); 0 or less keeps them for
// ever. Checked with retention (WithRetentionCheckInterval).
func WithOffsetsRetention(d time.Duration) Option {
	return func(o *options) { o.offsetsRetention = d }
}

// WithTopicDefaults sets the config new topics get; zero fields keep the
// built-in defaults (6 partitions, 7 days, 1 GiB per partition, 256 MiB
// segments rolled after 7 days).
func WithTopicDefaults(cfg broker.TopicConfig) Option {
	return func(o *options) { o.defaults = mergeConfig(cfg, o.defaults) }
}

// WithTopicConfig sets the config of one topic, applied when it is created
// (on first produce or explicitly) and on every open.
func WithTopicConfig(name string, cfg broker.TopicConfig) Option {
	return func(o *options) {
		if o.topics == nil {
			o.topics = make(map[string]broker.TopicConfig)
		}
		o.topics[name] = cfg
	}
}

// DefaultCompression is the codec of weir's own batches: snappy, as
// franz-go's producers (and so weir's Kafka backend) compress by default.
const DefaultCompression = recordbatch.CodecSnappy

// WithCompression sets the codec (recordbatch.CodecNone, CodecSnappy,
// CodecLZ4, CodecZstd or CodecGzip) the batches of Produce and
// ProducePartition are written with; DefaultCompression unless set. A
// batch compression does not shrink is written as it is. Kafka clients'
// batches are kept as they sent them, as Kafka's compression.type
// "producer" keeps them. Enriched records compress about 7 times with
// snappy: the log holds that much more within its retention bytes, and
// writes that much less.
func WithCompression(codec int) Option { return func(o *options) { o.compression = codec } }

// WithFlushAlways fsyncs before acknowledging every append: no acknowledged
// record is lost even on power loss. Concurrent appends to a partition share
// one fsync.
func WithFlushAlways() Option { return func(o *options) { o.flushAlways = true } }

// WithFlushInterval acknowledges appends once they are in the operating
// system's page cache and fsyncs every d (group commit). A process crash
// loses nothing; a power cut loses at most d of data. The default, 100ms.
func WithFlushInterval(d time.Duration) Option {
	return func(o *options) { o.flushAlways, o.flushInterval = false, d }
}

// WithRetentionCheckInterval sets how often retention deletes old segments.
func WithRetentionCheckInterval(d time.Duration) Option {
	return func(o *options) { o.retentionCheck = d }
}

// WithIndexInterval sets the bytes between sparse index entries.
func WithIndexInterval(n int) Option { return func(o *options) { o.indexInterval = n } }

// WithMaxMessageBytes bounds one record batch (Kafka's max.message.bytes).
func WithMaxMessageBytes(n int) Option { return func(o *options) { o.maxMessageBytes = n } }

// WithAutoCreateTopics sets whether producing to (or asking the Kafka
// listener about) a missing topic creates it. On by default.
func WithAutoCreateTopics(on bool) Option { return func(o *options) { o.autoCreate = on } }

// WithMaxPartitions bounds the partitions of all topics together: a topic
// creation that would pass it is refused with broker.ErrPartitionLimit.
// 0 (the default) derives it from the open-file limit (see
// descriptorPartitions).
func WithMaxPartitions(n int) Option { return func(o *options) { o.maxPartitions = n } }

// WithLogger sets the logger for recovery, retention and errors.
func WithLogger(l *slog.Logger) Option { return func(o *options) { o.logger = l } }

// WithFsyncObserver is called with the duration of every fsync, for the
// latency histogram.
func WithFsyncObserver(f func(time.Duration)) Option {
	return func(o *options) { o.fsyncObserver = f }
}

func (o *options) observeFsync(d time.Duration) {
	if o.fsyncObserver != nil {
		o.fsyncObserver(d)
	}
}

// mergeConfig fills zero fields of cfg from def.
func mergeConfig(cfg, def broker.TopicConfig) broker.TopicConfig {
	if cfg.Partitions == 0 {
		cfg.Partitions = def.Partitions
	}
	if cfg.RetentionTime == 0 {
		cfg.RetentionTime = def.RetentionTime
	}
	if cfg.RetentionBytes == 0 {
		cfg.RetentionBytes = def.RetentionBytes
	}
	if cfg.SegmentBytes == 0 {
		cfg.SegmentBytes = def.SegmentBytes
	}
	if cfg.SegmentAge == 0 {
		cfg.SegmentAge = def.SegmentAge
	}
	return cfg
}

// withClock replaces the clock, for retention and roll tests.
func withClock(now func() time.Time) Option { return func(o *options) { o.nowFunc = now } }
