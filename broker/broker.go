// Package broker defines the contract every part of weir uses to publish and
// consume records: the Broker interface, Record, the Kafka-compatible key
// partitioner and topic configuration.
//
// Two backends implement Broker: the embedded log (broker/embedded), which is
// the default, and an Apache Kafka cluster. Collectors, enrichment and sinks
// only ever see this package, so the same pipeline runs on either.
package broker

import (
	"context"
	"errors"
	"time"
)

// Header is a record header: a key and an opaque value.
type Header struct {
	Key   string
	Value []byte
}

// Record is one message on a topic.
//
// Records returned by Fetch and Consumer.Poll point into buffers owned by the
// broker: Key, Value and header values are valid until the next call on the
// same Consumer or FetchResult. Copy what must outlive that.
type Record struct {
	Topic     string
	Partition int32
	Offset    int64
	// Timestamp is the record's create time; a zero Timestamp is set to the
	// time of Produce.
	Timestamp time.Time
	Key       []byte
	Value     []byte
	Headers   []Header
}

// TopicPartition names one partition of a topic.
type TopicPartition struct {
	Topic     string
	Partition int32
}

// MinSegmentBytes and MaxSegmentBytes bound TopicConfig.SegmentBytes
// where a user sets it (weir.yaml, a Kafka client's topic configs): below
// 64 KiB a segment holds a batch or two, each a file pair of its own;
// past 2 GiB positions overflow a segment index's 32-bit entries.
const (
	MinSegmentBytes = 64 << 10
	MaxSegmentBytes = 1<<31 - 1
)

// TopicConfig is the per-topic configuration. Zero fields take the broker's
// defaults.
type TopicConfig struct {
	Partitions int32
	// RetentionTime deletes segments whose newest record is older; negative
	// keeps data forever.
	RetentionTime time.Duration
	// RetentionBytes bounds each partition's size; negative is unbounded.
	RetentionBytes int64
	// SegmentBytes rolls the active segment when it would grow past this.
	SegmentBytes int64
	// SegmentAge rolls the active segment when its first record is older.
	SegmentAge time.Duration
}

// TopicInfo describes a topic and its partitions.
type TopicInfo struct {
	Name       string
	ID         [16]byte
	Config     TopicConfig
	Partitions []PartitionInfo
}

// PartitionInfo describes one partition's log.
type PartitionInfo struct {
	Partition      int32
	LogStartOffset int64
	// HighWatermark is the offset the next record will get.
	HighWatermark int64
	Bytes         int64
	Segments      int
}

// FetchOptions bounds a Fetch.
type FetchOptions struct {
	// MaxBytes caps the bytes of batches read (on the embedded log, a
	// compressed batch's records decompressed); at least one batch is
	// returned even if it is larger. Zero means 1 MiB.
	MaxBytes int
	// MaxWait is how long to wait for data when none is available at the
	// offset. Zero returns at once.
	MaxWait time.Duration
}

// FetchResult holds the records of one Fetch. Reuse it across calls to avoid
// allocations; its records are valid until it is reused.
type FetchResult struct {
	Records        []Record
	HighWatermark  int64
	LogStartOffset int64

	// Buffers owned by the backend, reused across fetches.
	Scratch any
}

// ConsumerOption configures a group consumer.
type ConsumerOption func(*ConsumerConfig)

// ConsumerConfig is what ConsumerOptions set; backends read it.
type ConsumerConfig struct {
	// ResetToLatest starts partitions without a committed offset at the
	// end instead of the beginning.
	ResetToLatest bool
	// MaxPollBytes bounds the batch bytes one Poll reads; on the
	// embedded log a compressed batch counts its records decompressed.
	MaxPollBytes int
	// MemberID names the member in group descriptions.
	MemberID string
	// SessionTimeout is how long the group waits for a member that
	// stopped heartbeating (a killed process) before giving its
	// partitions to the others: Kafka's session.timeout.ms. Zero keeps
	// the backend's default. The embedded log's in-process members
	// cannot go silent (they leave when closed) and ignore it.
	SessionTimeout time.Duration
	// Transactional asks for a TxnConsumer (see WithTransactions).
	Transactional bool
}

// WithResetToLatest makes a consumer start partitions that have no committed
// offset at the log end instead of the log start (the default, so that a new
// group sees everything retained). That start is committed when the
// partition is assigned, so the group starts at the end once: a restart
// before anything came to a partition goes on from there, not from a later
// end, skipping what came meanwhile.
func WithResetToLatest() ConsumerOption {
	return func(c *ConsumerConfig) { c.ResetToLatest = true }
}

// WithMaxPollBytes bounds how many bytes of batches one Poll reads.
func WithMaxPollBytes(n int) ConsumerOption {
	return func(c *ConsumerConfig) { c.MaxPollBytes = n }
}

// WithMemberID names the member (shown by group descriptions).
func WithMemberID(id string) ConsumerOption {
	return func(c *ConsumerConfig) { c.MemberID = id }
}

// WithSessionTimeout sets how long the group waits for a silent member
// before rebalancing its partitions (see ConsumerConfig.SessionTimeout).
func WithSessionTimeout(d time.Duration) ConsumerOption {
	return func(c *ConsumerConfig) { c.SessionTimeout = d }
}

// WithTransactions asks for a consumer that also implements TxnConsumer, so
// that what it produces and the commit of what it polled are applied in one
// transaction. A backend that cannot (the embedded log) ignores it: check
// the returned Consumer with a type assertion.
func WithTransactions() ConsumerOption {
	return func(c *ConsumerConfig) { c.Transactional = true }
}

// Broker is the log every part of weir publishes to and consumes from.
type Broker interface {
	// Produce appends records to topic, each to the partition its key
	// hashes to (Kafka's murmur2, as the Java client and franz-go do);
	// records without a key go to one partition per call, rotating. The
	// topic is created with the default config if it does not exist. On
	// success every record's Partition and Offset are set. On failure a
	// call may have appended some records (those of the partitions
	// written before a full disk, say): those have their Offset set and
	// the others Offset -1, so a caller retries only the others rather
	// than append the first ones twice. Produce keeps no reference to
	// recs' keys, values or headers once it returns, whatever it
	// returns (a backend that may still send them copies them first):
	// the caller may reuse their buffers at once.
	Produce(ctx context.Context, topic string, recs []Record) error
	// ProducePartition appends records to one explicit partition; on
	// failure, Offset tells as for Produce, and it keeps no reference to
	// recs' bytes either.
	ProducePartition(ctx context.Context, topic string, partition int32, recs []Record) error
	// Fetch reads records of one partition from offset on, waiting up to
	// opts.MaxWait for data. Reading past the high watermark waits; an
	// offset before the log start returns ErrOffsetOutOfRange.
	Fetch(ctx context.Context, topic string, partition int32, offset int64, opts FetchOptions, into *FetchResult) error
	// Consume joins the consumer group and returns a member that shares
	// the partitions of topics with the group's other members.
	Consume(ctx context.Context, group string, topics []string, opts ...ConsumerOption) (Consumer, error)
	// CreateTopic creates a topic; ErrTopicExists if it exists.
	CreateTopic(ctx context.Context, name string, cfg TopicConfig) error
	// DeleteTopic deletes a topic and its data.
	DeleteTopic(ctx context.Context, name string) error
	// DescribeTopics describes the named topics, or all topics if none
	// are named. A named topic that does not exist fails the whole call
	// with ErrUnknownTopic.
	DescribeTopics(ctx context.Context, names ...string) ([]TopicInfo, error)
	// Close flushes and releases everything.
	Close() error
}

// Consumer is one member of a consumer group.
type Consumer interface {
	// Poll returns the next records from the member's partitions,
	// blocking until some are available or ctx is done. The records are
	// valid until the next Poll.
	Poll(ctx context.Context) ([]Record, error)
	// Commit stores, for each partition the member owns, the position
	// after the last record Poll returned. Progress on partitions taken
	// away by a rebalance is not committed, so their records are
	// delivered again to the new owner (at least once).
	Commit(ctx context.Context) error
	// Assigned lists the partitions the member owns now.
	Assigned() []TopicPartition
	// Close leaves the group. It does not commit.
	Close() error
}

// Txn produces records inside a transaction (see TxnConsumer). Its methods
// are Broker's, except that the records become visible to consumers (which
// read committed records only) when, and only if, the transaction commits.
type Txn interface {
	Produce(ctx context.Context, topic string, recs []Record) error
	ProducePartition(ctx context.Context, topic string, partition int32, recs []Record) error
}

// OffsetCommitter is a Consumer that can also commit positions short of
// the last record Poll returned: a consumer that handles one poll in
// several steps (a sink delivering it in batches) commits after each, so
// a crash replays one step, not the whole poll. Both backends implement
// it.
type OffsetCommitter interface {
	// CommitOffsets stores, for each partition in offsets the member
	// owns, that offset (the next record to read) as committed, when it
	// is past the committed one; partitions a rebalance took are left
	// alone.
	CommitOffsets(ctx context.Context, offsets map[TopicPartition]int64) error
}

// Positioner is a Consumer that tells where it will go on reading a
// partition it owns: a worker that rebuilds its state from the records
// before that position (a warm-up) can do so before any new record comes.
// Both backends implement it.
type Positioner interface {
	// Position returns the offset of the next record Poll will return
	// from tp, and whether the member owns tp and knows it (a member just
	// given a partition may not know it yet, nor where a group without a
	// commit starts). Call it between Polls, from the polling goroutine.
	// A backend that asks its cluster gives up when ctx ends.
	Position(ctx context.Context, tp TopicPartition) (int64, bool)
}

// TxnConsumer is a Consumer that commits what it polled together with what
// it produced: consume, transform and produce exactly once. Consume returns
// one when asked WithTransactions and the backend can (the Kafka cluster
// backend, with Kafka transactions); the embedded log does not implement it.
type TxnConsumer interface {
	Consumer
	// Transact begins a transaction and runs fn, which produces through
	// tx. If fn returns nil, the transaction commits: the records fn
	// produced and, for each partition the member owns, the position
	// after the last record Poll returned are applied atomically.
	// Otherwise, or if a rebalance took partitions from the member since
	// the last transaction ended, or the commit fails, it aborts: the
	// records are discarded, nothing is committed, and the member is
	// rewound to its committed positions, so the next Poll returns the
	// records again (or, for partitions it lost, their new owner does).
	//
	// committed reports whether the transaction committed. fn's own
	// error is returned as is; any other error means the consumer may be
	// unusable (its producer failed, or was fenced by a newer member
	// with the same transactional id): close it and join again.
	// Transact must not run concurrently with Poll or Commit; Commit is
	// a Transact that produces nothing.
	Transact(ctx context.Context, fn func(tx Txn) error) (committed bool, err error)
}

// Errors shared by the backends.
var (
	ErrUnknownTopic     = errors.New("unknown topic")
	ErrUnknownPartition = errors.New("unknown partition")
	ErrTopicExists      = errors.New("topic already exists")
	ErrInvalidTopic     = errors.New("invalid topic name")
	ErrOffsetOutOfRange = errors.New("offset out of range")
	ErrClosed           = errors.New("broker closed")
	ErrRecordTooLarge   = errors.New("record too large")
	// ErrInvalidRecord: a batch the broker's policy refuses though it
	// parses (too many records in one batch, too many headers on one
	// record); Kafka's INVALID_RECORD.
	ErrInvalidRecord     = errors.New("invalid record")
	ErrInvalidPartitions = errors.New("invalid partition count")
	// ErrCorruptBatch: a batch failed its CRC or does not parse.
	ErrCorruptBatch = errors.New("corrupt record batch")
	// ErrOutOfOrderSequence: an idempotent producer skipped a sequence.
	ErrOutOfOrderSequence = errors.New("out of order sequence number")
	// ErrInvalidProducerEpoch: a batch from a fenced producer epoch.
	ErrInvalidProducerEpoch = errors.New("invalid producer epoch")
	// ErrGroupInUse: a consumer group has members of another kind (on the
	// embedded log, in-process members and Kafka clients cannot share a
	// group); retry later.
	ErrGroupInUse = errors.New("consumer group has members of the other kind (in-process or Kafka client)")
	// ErrStorage: the log could not write or read its files (disk full,
	// I/O error). Data acknowledged before is not affected.
	ErrStorage = errors.New("storage error")
	// ErrInvalidConfig: a topic config value out of its range, or a
	// config the broker does not have.
	ErrInvalidConfig = errors.New("invalid config")
	// ErrConfigPolicy: a config change the broker's own configuration
	// does not allow (on the embedded log, a topic config weir.yaml sets
	// for the topic, which would win over the change).
	ErrConfigPolicy = errors.New("config change not allowed")
	// ErrPartitionLimit: a topic whose partitions would take the broker
	// past the partitions it may hold (on the embedded log, a bound from
	// its open-file limit); deleting topics makes room.
	ErrPartitionLimit = errors.New("partition limit reached")
)

// TopicConfigFields is a set of TopicConfig's config fields (Partitions is
// not a config: a topic keeps the count it was created with).
type TopicConfigFields uint8

// The config fields of TopicConfig, one bit each (Kafka's retention.ms,
// retention.bytes, segment.bytes and segment.ms), and all four.
const (
	RetentionTimeField TopicConfigFields = 1 << iota
	RetentionBytesField
	SegmentBytesField
	SegmentAgeField

	AllTopicConfigFields = RetentionTimeField | RetentionBytesField | SegmentBytesField | SegmentAgeField
)

// Has reports whether f holds every field of g.
func (f TopicConfigFields) Has(g TopicConfigFields) bool { return f&g == g }

// SetFields are the config fields cfg sets (its non-zero ones).
func (cfg TopicConfig) SetFields() TopicConfigFields {
	var f TopicConfigFields
	if cfg.RetentionTime != 0 {
		f |= RetentionTimeField
	}
	if cfg.RetentionBytes != 0 {
		f |= RetentionBytesField
	}
	if cfg.SegmentBytes != 0 {
		f |= SegmentBytesField
	}
	if cfg.SegmentAge != 0 {
		f |= SegmentAgeField
	}
	return f
}

// TopicConfigChange is a change to the configs a topic sets itself (as a
// Kafka client's AlterConfigs or IncrementalAlterConfigs asks for one).
type TopicConfigChange struct {
	// Set holds the values to set: its non-zero config fields, with
	// TopicConfig's meanings (a negative retention: for ever, or no
	// bound). Partitions must be zero.
	Set TopicConfig
	// Delete are the fields to remove: they follow the broker's
	// defaults again. A field may not be both set and deleted.
	Delete TopicConfigFields
	// Replace removes every field Set does not set (Kafka's legacy
	// AlterConfigs replaces a topic's whole set of configs).
	Replace bool
}

// SizeChecker is a Broker that tells before a record is produced to topic
// whether it would refuse it for its size (ErrRecordTooLarge), with the
// same error. A producer whose input the log has already accepted
// (enrichment) leaves such a record out and counts it, rather than
// stalling on it.
type SizeChecker interface {
	// CheckSize takes a record's parts, not the record: a pointer to a
	// caller's loop variable would move it to the heap at every record.
	CheckSize(topic string, key, value []byte, headers []Header) error
}

// Refused reports whether Produce failed because the broker refuses the
// records themselves (too large, a bad topic name, a corrupt batch), so
// sending them again cannot succeed; other errors (a full disk, a cluster
// away) may pass.
func Refused(err error) bool {
	return errors.Is(err, ErrRecordTooLarge) || errors.Is(err, ErrInvalidTopic) ||
		errors.Is(err, ErrCorruptBatch) || errors.Is(err, ErrInvalidPartitions) || errors.Is(err, ErrInvalidRecord)
}

// ValidTopicName reports whether name is a legal Kafka topic name: 1 to 249
// characters of ASCII letters, digits, '.', '_' and '-', and not "." or "..".
func ValidTopicName(name string) bool {
	if name == "" || len(name) > 249 || name == "." || name == ".." {
		return false
	}
	for i := 0; i < len(name); i++ {
		c := name[i]
		switch {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9', c == '.', c == '_', c == '-':
		default:
			return false
		}
	}
	return true
}
