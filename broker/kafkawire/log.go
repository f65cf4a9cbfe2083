package kafkawire

import (
	"context"

	"github.com/weirnet/weir/broker"
)

// Log is what the listener needs from the log it serves. The embedded broker
// (broker/embedded) implements it; tests use a fake.
//
// Errors are the broker package's sentinel errors (possibly wrapped), which
// the listener maps to Kafka error codes: ErrUnknownTopic and
// ErrUnknownPartition to UNKNOWN_TOPIC_OR_PARTITION, ErrOffsetOutOfRange to
// OFFSET_OUT_OF_RANGE, ErrCorruptBatch to CORRUPT_MESSAGE, ErrRecordTooLarge
// to MESSAGE_TOO_LARGE, ErrInvalidRecord to INVALID_RECORD, ErrOutOfOrderSequence to OUT_OF_ORDER_SEQUENCE_NUMBER,
// ErrInvalidProducerEpoch to INVALID_PRODUCER_EPOCH, ErrTopicExists to
// TOPIC_ALREADY_EXISTS, ErrInvalidTopic to INVALID_TOPIC_EXCEPTION,
// ErrInvalidPartitions to INVALID_PARTITIONS, ErrStorage to
// KAFKA_STORAGE_ERROR, ErrInvalidConfig to INVALID_CONFIG, ErrConfigPolicy
// and ErrPartitionLimit to POLICY_VIOLATION, anything else to
// UNKNOWN_SERVER_ERROR.
type Log interface {
	// DescribeTopics describes the named topics, or all if none are named.
	// A named topic that does not exist fails the call with ErrUnknownTopic.
	DescribeTopics(ctx context.Context, names ...string) ([]broker.TopicInfo, error)
	// CreateTopic creates a topic; zero config fields take defaults.
	CreateTopic(ctx context.Context, name string, cfg broker.TopicConfig) error
	// DeleteTopic deletes a topic and its data.
	DeleteTopic(ctx context.Context, name string) error
	// AutoCreateTopics reports whether topics are created on first use
	// (Kafka's auto.create.topics.enable).
	AutoCreateTopics() bool

	// AppendBatches appends one or more RecordBatch v2 batches (as a
	// producer sent them: any base offset, possibly compressed) to a
	// partition. It validates every batch's CRC, assigns offsets, checks
	// idempotent producers' sequences, and returns the offset given to the
	// first record. A retried duplicate of an idempotent batch returns the
	// offset it got the first time and appends nothing. The batches are
	// copied; the caller may reuse the slice.
	AppendBatches(ctx context.Context, topic string, partition int32, batches []byte) (baseOffset int64, err error)

	// ReadBatches appends to dst the raw batches of a partition starting
	// with the batch that holds offset, up to maxBytes (but at least one
	// whole batch if there is one), and returns the extended slice with the
	// partition's high watermark and log start offset. At the high
	// watermark it returns no bytes and no error; below the log start or
	// past the high watermark it returns ErrOffsetOutOfRange.
	ReadBatches(dst []byte, topic string, partition int32, offset int64, maxBytes int) (out []byte, highWatermark, logStartOffset int64, err error)

	// Subscribe arranges a non-blocking send on wake after every append to
	// the partition, until the returned function is called. Long-polling
	// fetches use it to sleep without burning CPU.
	Subscribe(topic string, partition int32, wake chan<- struct{}) (unsubscribe func(), err error)

	// ListOffset returns the offset for a timestamp: -1 the high
	// watermark (latest), -2 the log start (earliest), -3 the offset of
	// the record with the largest timestamp; otherwise the first offset
	// whose timestamp is >= the given one (and its timestamp), or -1 if
	// there is none.
	ListOffset(topic string, partition int32, timestamp int64) (offset, ts int64, err error)

	// InitProducerID allocates a producer id for an idempotent producer.
	// The id is never handed out again, also across restarts.
	InitProducerID(ctx context.Context) (id int64, epoch int16, err error)
}

// MessageLimiter is a Log that refuses batches above a size, as Kafka's
// message.max.bytes: DescribeConfigs reports it (max.message.bytes of
// every topic, message.max.bytes of the broker), so that a client that
// asks (weir produce) fills its batches within it rather than have them
// refused whole.
type MessageLimiter interface {
	MaxMessageBytes() int
}

// TopicCreateValidator is a Log that refuses some creations for reasons
// DescribeTopics does not show (the embedded broker's bound on all
// partitions). CreateTopics with validate_only asks it what creating
// would say, as Kafka runs its create-topic policy on validation too;
// without it, validation reports only a topic that exists.
type TopicCreateValidator interface {
	// ValidateCreateTopic returns the error CreateTopic would, creating
	// nothing.
	ValidateCreateTopic(ctx context.Context, name string, cfg broker.TopicConfig) error
}

// ConfigSourcer is a Log that tells where a topic's config values come
// from, so that DescribeConfigs reports each one's source as Kafka does
// (admin tools such as kafka-configs, kafka-ui or Terraform take a value
// whose source is DYNAMIC_TOPIC_CONFIG for one the topic overrides):
// DYNAMIC_TOPIC_CONFIG for what the topic set itself, STATIC_BROKER_CONFIG
// for the broker's settings for every topic, DEFAULT_CONFIG for built-in
// defaults. Without it every topic config is reported as the topic's own.
type ConfigSourcer interface {
	// TopicConfigLayers returns a topic's configs by where they come
	// from: what the topic set itself (at creation, say), what the
	// broker's settings give every topic, and the built-in defaults. A
	// zero field is not set at that level; the value in effect is the
	// first one set. Partitions is not a config and is not used. A topic
	// that does not exist fails with ErrUnknownTopic.
	TopicConfigLayers(topic string) (own, brokerWide, builtin broker.TopicConfig, err error)
	// DefaultMaxMessageBytes is the built-in limit of a MessageLimiter: a
	// MaxMessageBytes that differs from it is reported as the broker's
	// setting.
	DefaultMaxMessageBytes() int
}

// ConfigPinner is a ConfigAlterer some of whose topics have configs its
// own configuration fixes (weir.yaml's broker.topics), which a client
// cannot change: DescribeConfigs reports them read-only.
type ConfigPinner interface {
	// PinnedTopicConfigs returns the fields fixed for topic.
	PinnedTopicConfigs(topic string) broker.TopicConfigFields
}

// ConfigAlterer is a Log whose topics' configs Kafka clients may change
// (AlterConfigs, IncrementalAlterConfigs: kafka-configs --alter, kadm's
// AlterTopicConfigs, Terraform). Without it neither is offered.
type ConfigAlterer interface {
	// AlterTopicConfig changes the configs a topic sets itself (those
	// DescribeConfigs reports as DYNAMIC_TOPIC_CONFIG); with validateOnly
	// it only checks the change. A value out of range fails with
	// ErrInvalidConfig, a change the Log's own configuration does not
	// allow with ErrConfigPolicy, a topic that does not exist with
	// ErrUnknownTopic; a failed change changes nothing.
	AlterTopicConfig(ctx context.Context, topic string, change broker.TopicConfigChange, validateOnly bool) error
}
