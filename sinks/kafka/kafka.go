// Package kafka is the Kafka sink: it mirrors topics to an external Kafka
// cluster with franz-go (idempotent producer, acks=all, TLS and SASL), keys,
// values, headers and timestamps as they are, so an existing Kafka estate
// receives weir's data. Keys pick partitions with murmur2, as in weir, so a
// mirror topic with the same partition count has the same layout.
package kafka

import (
	"context"
	"errors"
	"fmt"
	"net"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/sasl/plain"
	"github.com/twmb/franz-go/pkg/sasl/scram"

	"github.com/weirnet/weir/configs"
	"github.com/weirnet/weir/sinks"
)

// DefaultTimeout bounds delivering one batch; past it the batch fails as
// retryable and the sink backs off (visible in weir_sink_retries_total)
// instead of blocking silently inside the client.
const DefaultTimeout = 30 * time.Second

// maxBatchBytes is the sink's batch limit where a mirror topic allows
// more: Kafka's default max.message.bytes is 12 bytes over it.
const maxBatchBytes = 1 << 20

// Sink produces to the external cluster.
type Sink struct {
	client  *kgo.Client
	admin   *kadm.Client
	prefix  string
	timeout time.Duration
	recs    []*kgo.Record
	// Mirror topics' max.message.bytes (topicLimits, read by franz-go)
	// and the topics asked for it (asked, Write's alone).
	topicLimits sync.Map // string -> int32
	asked       map[string]bool
	dial        dialErrors
}

// dialErrors keeps the last failed connection of the client (a hook), so a
// batch that times out says why: the cluster refusing connections, not
// just "not acknowledged".
type dialErrors struct {
	mu   sync.Mutex
	last error // nil once a connection succeeds
}

// OnBrokerConnect implements kgo.HookBrokerConnect.
func (d *dialErrors) OnBrokerConnect(meta kgo.BrokerMetadata, _ time.Duration, _ net.Conn, err error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if err != nil {
		d.last = fmt.Errorf("%s: %w", net.JoinHostPort(meta.Host, strconv.Itoa(int(meta.Port))), err)
	} else {
		d.last = nil
	}
}

func (d *dialErrors) err() error {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.last
}

// New builds the Kafka sink of cfg. The client connects lazily, so a
// cluster that is down at start is retried like any outage.
func New(cfg configs.Sink, _ sinks.Env) (sinks.Destination, error) {
	timeout := cfg.Timeout.Std()
	if timeout <= 0 {
		timeout = DefaultTimeout
	}
	opts := []kgo.Opt{
		kgo.SeedBrokers(cfg.Brokers...),
		kgo.ClientID("weir-sink-" + cfg.Name),
		kgo.RequiredAcks(kgo.AllISRAcks()),
		// No kgo.RecordDeliveryTimeout: franz-go ages a record from its
		// Timestamp, and a mirrored record keeps its original one, so a
		// record older than the timeout (a backlog, an outage) would fail
		// at once, every time. Write bounds each batch with a context.
		kgo.ProducerLinger(0), // the sink batches already
	}
	s := &Sink{prefix: cfg.TopicPrefix, timeout: timeout, asked: map[string]bool{}}
	opts = append(opts, kgo.ProducerBatchMaxBytesFn(s.batchLimit), kgo.WithHooks(&s.dial))
	switch cfg.Compression {
	case "none":
		opts = append(opts, kgo.ProducerBatchCompression(kgo.NoCompression()))
	case "gzip":
		opts = append(opts, kgo.ProducerBatchCompression(kgo.GzipCompression()))
	case "lz4":
		opts = append(opts, kgo.ProducerBatchCompression(kgo.Lz4Compression()))
	case "zstd":
		opts = append(opts, kgo.ProducerBatchCompression(kgo.ZstdCompression()))
	}
	// Any tls setting turns TLS on, as for broker.kafka: a server_name
	// or insecure_skip_verify alone must not leave the connection (and
	// SASL credentials) in plaintext.
	if cfg.TLS.Enabled || !cfg.TLS.Client().IsZero() {
		tc, err := cfg.TLS.Client().Config()
		if err != nil {
			return nil, fmt.Errorf("kafka sink %s: %w", cfg.Name, err)
		}
		opts = append(opts, kgo.DialTLSConfig(tc))
	}
	switch cfg.SASL.Mechanism {
	case "PLAIN":
		opts = append(opts, kgo.SASL(plain.Auth{User: cfg.SASL.Username, Pass: cfg.SASL.Password}.AsMechanism()))
	case "SCRAM-SHA-256":
		opts = append(opts, kgo.SASL(scram.Auth{User: cfg.SASL.Username, Pass: cfg.SASL.Password}.AsSha256Mechanism()))
	case "SCRAM-SHA-512":
		opts = append(opts, kgo.SASL(scram.Auth{User: cfg.SASL.Username, Pass: cfg.SASL.Password}.AsSha512Mechanism()))
	}
	cl, err := kgo.NewClient(opts...)
	if err != nil {
		return nil, fmt.Errorf("kafka sink %s: %w", cfg.Name, err)
	}
	s.client, s.admin = cl, kadm.NewClient(cl)
	return s, nil
}

// batchLimit is the batch limit for a mirror topic: the sink's, or the
// topic's max.message.bytes if lower. With a limit above the topic's, the
// cluster refuses batches whole (MESSAGE_TOO_LARGE), and the sink would
// send every batch again record by record to find the one it refuses.
// franz-go asks when it first produces to a partition: after Write has
// learned the topic's limit.
func (s *Sink) batchLimit(topic string) int32 {
	limit := int32(maxBatchBytes)
	if v, ok := s.topicLimits.Load(topic); ok {
		limit = min(limit, v.(int32))
	}
	return max(limit, 512) // franz-go's least
}

// learnLimits asks the cluster for the max.message.bytes of the mirror
// topics not asked before. A topic not there yet is asked again next time
// (the sink does not create topics; someone will); one whose configs may
// not be described keeps the sink's limit.
func (s *Sink) learnLimits(ctx context.Context) {
	var topics []string
	for _, r := range s.recs {
		if !s.asked[r.Topic] && !slices.Contains(topics, r.Topic) {
			topics = append(topics, r.Topic)
		}
	}
	if len(topics) == 0 {
		return
	}
	rcs, err := s.admin.DescribeTopicConfigs(ctx, topics...)
	if err != nil {
		return // asked again at the next batch
	}
	for _, rc := range rcs {
		if errors.Is(rc.Err, kerr.UnknownTopicOrPartition) {
			continue
		}
		s.asked[rc.Name] = true
		for _, c := range rc.Configs {
			if c.Key != "max.message.bytes" || c.Value == nil {
				continue
			}
			if n, err := strconv.ParseInt(*c.Value, 10, 32); err == nil && n > 0 {
				s.topicLimits.Store(rc.Name, int32(n))
			}
		}
	}
}

// RawRecords: records are mirrored as they are, never decoded.
func (s *Sink) RawRecords() bool { return true }

// Write produces the batch and waits for every acknowledgement.
func (s *Sink) Write(ctx context.Context, items []sinks.Item) error {
	s.recs = s.recs[:0]
	for i := range items {
		r := &items[i].Record
		kr := &kgo.Record{Topic: s.prefix + r.Topic, Key: r.Key, Value: r.Value, Timestamp: r.Timestamp}
		for _, h := range r.Headers {
			kr.Headers = append(kr.Headers, kgo.RecordHeader{Key: h.Key, Value: h.Value})
		}
		s.recs = append(s.recs, kr)
	}
	// The batch's time starts now, whatever its records' timestamps; the
	// client fails records on the deadline where that is safe for the
	// idempotent producer (not while a request for them is unanswered).
	ctx, cancel := context.WithTimeout(ctx, s.timeout)
	defer cancel()
	s.learnLimits(ctx)
	results := s.client.ProduceSync(ctx, s.recs...)
	for _, res := range results {
		if res.Err == nil {
			continue
		}
		if permanent(res.Err) {
			return &sinks.RejectedError{Reason: reason(res.Err), Err: fmt.Errorf("kafka sink: topic %s: %w", res.Record.Topic, res.Err)}
		}
		if errors.Is(res.Err, context.DeadlineExceeded) && ctx.Err() != nil {
			if dial := s.dial.err(); dial != nil {
				return &sinks.RetryableError{Err: fmt.Errorf("kafka sink: batch not acknowledged within %s: cannot connect to %w", s.timeout, dial)}
			}
			return &sinks.RetryableError{Err: fmt.Errorf("kafka sink: batch not acknowledged within %s: %w", s.timeout, res.Err)}
		}
		return &sinks.RetryableError{Err: fmt.Errorf("kafka sink: %w", res.Err)}
	}
	return nil
}

// permanent errors: the cluster will refuse the same record again.
func permanent(err error) bool {
	return errors.Is(err, kerr.MessageTooLarge) || errors.Is(err, kerr.RecordListTooLarge) ||
		errors.Is(err, kerr.InvalidRecord) || errors.Is(err, kerr.CorruptMessage) ||
		errors.Is(err, kerr.InvalidTopicException)
}

func reason(err error) string {
	var ke *kerr.Error
	if errors.As(err, &ke) {
		return "kafka_" + ke.Message
	}
	return "kafka"
}

// Close flushes nothing (Write waits for every record) and closes the
// client.
func (s *Sink) Close() error {
	s.client.Close()
	return nil
}
