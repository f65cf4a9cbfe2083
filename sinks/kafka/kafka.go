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
	"slices"
	"strings"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/weirnet/weir/broker"
	"github.com/weirnet/weir/configs"
	"github.com/weirnet/weir/internal/kafkadial"
	"github.com/weirnet/weir/internal/kafkalimits"
	"github.com/weirnet/weir/internal/kafkasec"
	"github.com/weirnet/weir/internal/tlsconf"
	"github.com/weirnet/weir/sinks"
)

// DefaultTimeout bounds delivering one batch; past it the batch fails as
// retryable and the sink backs off (visible in weir_sink_retries_total)
// instead of blocking silently inside the client.
const DefaultTimeout = 30 * time.Second

// Sink produces to the external cluster.
type Sink struct {
	client  *kgo.Client
	admin   *kadm.Client
	opts    []kgo.Opt          // the client's, for its replacement (renew)
	taken   *kafkalimits.Taken // the current client's: one closing still reads its own
	prefix  string
	timeout time.Duration
	brokers string // the seed brokers, to name the cluster in errors
	recs    []*kgo.Record
	// The batch limits: the sink's, or a mirror topic's
	// max.message.bytes if lower, learned at the topic's first batch.
	limits *kafkalimits.Limits
	topics []string        // Write's scratch: the batch's topics not learned yet
	dial   kafkadial.Watch // why a batch that times out waits
	// item maps each record of the Write to the index of its item.
	item map[*kgo.Record]int
	// acked holds the records the cluster acknowledged in a Write that
	// failed: the sinks send the batch (or its rest, after a rejected
	// record) again, and these are skipped rather than mirrored twice.
	// Emptied when a Write succeeds or gets none of them.
	acked map[position]struct{}
}

// position names a record of weir's: where it is, and its time, so that a
// topic deleted and made again is not taken for the one acknowledged.
type position struct {
	topic     string
	partition int32
	offset    int64
	time      time.Time
}

func positionOf(r *broker.Record) position {
	return position{topic: r.Topic, partition: r.Partition, offset: r.Offset, time: r.Timestamp}
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
		// A cluster that takes a produce request and never answers (a
		// broker stuck on its disk) must fail the batch at the timeout,
		// and a stopping weir must not wait for it: by default the
		// idempotent producer waits for the answer however long it
		// takes. The sink is at least once: a batch failed this way is
		// written again, and may land twice.
		kgo.AllowIdempotentProduceCancellation(),
	}
	// The sink's batch limit where a mirror topic allows more.
	maxBatch := int32(cfg.MaxBatchBytes)
	if maxBatch <= 0 {
		maxBatch = configs.DefaultKafkaMaxBatchBytes
	}
	s := &Sink{prefix: cfg.TopicPrefix, timeout: timeout, brokers: strings.Join(cfg.Brokers, ","), limits: kafkalimits.New(maxBatch),
		item: map[*kgo.Record]int{}, acked: map[position]struct{}{}}
	opts = append(opts, kgo.WithHooks(&s.dial))
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
	var tc *tlsconf.Client
	if cfg.TLS.Enabled || !cfg.TLS.Client().IsZero() {
		c := cfg.TLS.Client()
		tc = &c
	}
	var sc *configs.SASL
	if cfg.SASL.Mechanism != "" {
		sc = &cfg.SASL
	}
	sec, err := kafkasec.Options(tc, sc)
	if err != nil {
		return nil, fmt.Errorf("kafka sink %s: %w", cfg.Name, err)
	}
	opts = append(opts, sec...)
	s.opts = opts
	if err := s.newClient(); err != nil {
		return nil, fmt.Errorf("kafka sink %s: %w", cfg.Name, err)
	}
	return s, nil
}

// newClient makes the sink's client, whose batch limits are s.limits',
// with a Taken of its own: the client it replaces, closing on its own
// goroutine (unanswered), still reads the one it was made with, which
// reset in place was a data race.
func (s *Sink) newClient() error {
	taken := new(kafkalimits.Taken)
	cl, err := kgo.NewClient(append(s.opts, kgo.ProducerBatchMaxBytesFn(s.limits.BatchFn(taken)))...)
	if err != nil {
		return err
	}
	s.client, s.admin, s.taken = cl, kadm.NewClient(cl), taken
	return nil
}

// renew replaces the client when batches were refused for their size
// because a mirror topic's max.message.bytes went down under the limit
// the client took (see kafkalimits): the failed records are sent again
// with the new client. Write has every record answered, so the old client
// holds none.
func (s *Sink) renew(ctx context.Context, results kgo.ProduceResults) ([]*kgo.Record, bool) {
	stale := false
	s.topics = s.topics[:0]
	for _, res := range results {
		if res.Err == nil || !kafkalimits.TooLarge(res.Err) || slices.Contains(s.topics, res.Record.Topic) {
			continue
		}
		s.topics = append(s.topics, res.Record.Topic)
		s.limits.Relearn(ctx, s.admin, res.Record.Topic)
		stale = stale || s.limits.Stale(s.taken, res.Record.Topic)
	}
	if !stale {
		return nil, false
	}
	old := s.client
	if err := s.newClient(); err != nil {
		return nil, false
	}
	old.Close()
	var failed []*kgo.Record
	for _, res := range results {
		if res.Err != nil {
			r := res.Record
			again := &kgo.Record{Topic: r.Topic, Key: r.Key, Value: r.Value, Timestamp: r.Timestamp, Headers: r.Headers}
			s.item[again] = s.item[r]
			failed = append(failed, again)
		}
	}
	return failed, true
}

// learnLimits learns the limits of the batch's topics not learned yet,
// before franz-go first produces to them (see kafkalimits): without the
// topic's lower limit the cluster refuses batches whole, and the sink
// sends every batch again record by record to find the one it refuses.
func (s *Sink) learnLimits(ctx context.Context) {
	s.topics = s.topics[:0]
	for _, r := range s.recs {
		if !s.limits.Known(r.Topic) && !slices.Contains(s.topics, r.Topic) {
			s.topics = append(s.topics, r.Topic)
		}
	}
	s.limits.Learn(ctx, s.admin, s.topics...)
}

// RawRecords: records are mirrored as they are, never decoded.
func (s *Sink) RawRecords() bool { return true }

// Write produces the batch and waits for every acknowledgement. Records
// the cluster refuses for good are answered with a *sinks.PartialError
// naming the first (the others were mirrored and are not sent again),
// which the sinks dead-letter before calling Write with the rest.
func (s *Sink) Write(ctx context.Context, items []sinks.Item) error {
	s.recs = s.recs[:0]
	clear(s.item)
	skipped := 0
	for i := range items {
		r := &items[i].Record
		if _, ok := s.acked[positionOf(r)]; ok {
			skipped++
			continue
		}
		kr := &kgo.Record{Topic: s.prefix + r.Topic, Key: r.Key, Value: r.Value, Timestamp: r.Timestamp}
		for _, h := range r.Headers {
			kr.Headers = append(kr.Headers, kgo.RecordHeader{Key: h.Key, Value: h.Value})
		}
		s.recs = append(s.recs, kr)
		s.item[kr] = i
	}
	if skipped == 0 {
		clear(s.acked) // another batch: none of them comes again
	}
	if len(s.recs) == 0 {
		clear(s.acked)
		return nil
	}
	// The batch's time starts now, whatever its records' timestamps; the
	// client fails records on the deadline, also while a request for
	// them is unanswered (AllowIdempotentProduceCancellation).
	ctx, cancel := context.WithTimeout(ctx, s.timeout)
	defer cancel()
	if err := s.producerID(ctx); err != nil {
		return err
	}
	s.learnLimits(ctx)
	results, answered := s.produceSync(ctx, s.recs)
	if answered {
		s.note(items, results)
		if failed, ok := s.renew(ctx, results); ok {
			results, answered = s.produceSync(ctx, failed)
			if answered {
				s.note(items, results)
			}
		}
	}
	if !answered {
		return s.unanswered(ctx)
	}
	// The failure of the first item that failed: a retryable one before
	// any refusal, as the batch is sent again whole (less what was
	// acknowledged) and the refusal comes again.
	first, rejected := -1, -1
	var retry, reject error
	for _, res := range results {
		if res.Err == nil {
			continue
		}
		i := s.item[res.Record]
		if permanent(res.Err) {
			if rejected < 0 || i < rejected {
				rejected, reject = i, res.Err
			}
			continue
		}
		if first < 0 || i < first {
			first, retry = i, res.Err
		}
	}
	if retry != nil {
		if errors.Is(retry, context.DeadlineExceeded) && ctx.Err() != nil {
			if dial := s.dial.Err(); dial != nil {
				return &sinks.RetryableError{Err: fmt.Errorf("kafka sink: batch not acknowledged within %s: cannot connect to %w", s.timeout, dial)}
			}
			return &sinks.RetryableError{Err: fmt.Errorf("kafka sink: batch not acknowledged by %s within %s: %w", s.brokers, s.timeout, retry)}
		}
		retry = hint(retry)
		// Named: UNKNOWN_TOPIC_OR_PARTITION alone does not say which
		// topic (prefix included) the operator has to create.
		// Counted under the Kafka error where there is one; else the
		// sinks work one out (refused, tls, ...).
		return &sinks.RetryableError{Err: fmt.Errorf("kafka sink: topic %s%s: %w", s.prefix, items[first].Record.Topic, retry),
			Reason: kafkaReason(retry)}
	}
	if reject != nil {
		// Every item before it was acknowledged, now or before.
		return &sinks.PartialError{Done: rejected, Err: &sinks.RejectedError{Reason: reason(reject),
			Err: fmt.Errorf("kafka sink: topic %s%s: %w", s.prefix, items[rejected].Record.Topic, reject)}}
	}
	clear(s.acked)
	return nil
}

// producerID has the client load the idempotent producer's id before the
// batch is produced, and fails the batch at once if the cluster refuses it
// for good (CLUSTER_AUTHORIZATION_FAILED: the user lacks IDEMPOTENT_WRITE).
// Left to franz-go's first produce, the refusal failed the records the
// client had buffered, but not a record of a topic new to the client:
// franz-go buffers it in its partition before storing the topic's
// partitions, and fails what the stored partitions hold, so a refusal
// in between (the metadata update's goroutine delayed, on a loaded host)
// left the record waiting, and the batch failed after the timeout as "not
// acknowledged". The client keeps such a refusal for good, failing every
// batch with it without asking the cluster again, so it is replaced: the
// next batch asks again, and goes through once the permission is granted.
// Anything else (no answer yet, a retryable error, a stop) is left to the
// produce, which says why it waits.
func (s *Sink) producerID(ctx context.Context) error {
	_, _, err := s.client.ProducerID(ctx)
	var ke *kerr.Error
	if err == nil || !errors.As(err, &ke) || ke.Retriable {
		return nil
	}
	old := s.client
	if nerr := s.newClient(); nerr == nil {
		old.Close()
	}
	return &sinks.RetryableError{Err: fmt.Errorf("kafka sink: producer id refused by %s: %w", s.brokers, hint(err)),
		Reason: kafkaReason(err)}
}

// hint adds to a refused InitProducerID, the idempotent producer's first
// request, which permission is missing: the bare error does not say.
func hint(err error) error {
	if !errors.Is(err, kerr.ClusterAuthorizationFailed) {
		return err
	}
	return fmt.Errorf("%w (the idempotent producer needs IDEMPOTENT_WRITE on the cluster, or from Kafka 3.0 WRITE on a topic; on weir's own listener, a user that is not read_only)", err)
}

// note adds the records the cluster acknowledged to s.acked.
func (s *Sink) note(items []sinks.Item, results kgo.ProduceResults) {
	for _, res := range results {
		if res.Err == nil {
			s.acked[positionOf(&items[s.item[res.Record]].Record)] = struct{}{}
		}
	}
}

// produceSync is ProduceSync ending with ctx: franz-go looks at a buffered
// record's context only when something happens to its partition (with the
// cluster's brokers refusing connections, a failed metadata update, at
// most every 5 s and after that update's own retries), so ProduceSync
// alone returned seconds past the batch's timeout and past a stop.
// answered is false when ctx ended first: the records are still in the
// client (see unanswered).
func (s *Sink) produceSync(ctx context.Context, recs []*kgo.Record) (results kgo.ProduceResults, answered bool) {
	cl := s.client
	done := make(chan kgo.ProduceResults, 1)
	go func() { done <- cl.ProduceSync(ctx, recs...) }()
	select {
	case results = <-done:
		return results, true
	case <-ctx.Done():
		select {
		case results = <-done:
			return results, true
		default:
			return nil, false
		}
	}
}

// unanswered ends a Write whose context ended before franz-go answered for
// its records: the client, which still holds them, is replaced and closed
// (failing them), so the batch sent again is not queued behind them, and
// failed with them, and no record of it is sent after the retry. The
// records' memory is the sink's copy, not reused (sinks copy each poll),
// and s.recs is left to the closing client.
func (s *Sink) unanswered(ctx context.Context) error {
	old := s.client
	s.recs = nil
	if err := s.newClient(); err != nil {
		s.client = old // keeps the records; franz-go fails them in time
	} else {
		go old.Close()
	}
	if errors.Is(ctx.Err(), context.DeadlineExceeded) {
		if dial := s.dial.Err(); dial != nil {
			return &sinks.RetryableError{Err: fmt.Errorf("kafka sink: batch not acknowledged within %s: cannot connect to %w", s.timeout, dial)}
		}
		// Connected, never answered (a broker stuck on its disk):
		// which cluster is all the log can say.
		return &sinks.RetryableError{Err: fmt.Errorf("kafka sink: batch not acknowledged by %s within %s", s.brokers, s.timeout),
			Reason: "timeout"}
	}
	return &sinks.RetryableError{Err: fmt.Errorf("kafka sink: batch not acknowledged: %w", context.Cause(ctx))}
}

// permanent errors: the cluster will refuse the same record again. A
// record's time out of the range the cluster takes
// (message.timestamp.difference.max.ms, or before/after.max.ms) stays
// out of it: it is mirrored with its own time, which only gets older.
func permanent(err error) bool {
	return kafkalimits.TooLarge(err) || errors.Is(err, kerr.InvalidRecord) || errors.Is(err, kerr.CorruptMessage) ||
		errors.Is(err, kerr.InvalidTopicException) || errors.Is(err, kerr.InvalidTimestamp)
}

// reason is the dead-letter reason of a refused record: the Kafka error,
// else "kafka".
func reason(err error) string {
	if r := kafkaReason(err); r != "" {
		return r
	}
	return "kafka"
}

// kafkaReason is "kafka_" and the name of the Kafka error in err (a
// bounded set, for a metric's label), or empty without one.
func kafkaReason(err error) string {
	var ke *kerr.Error
	if errors.As(err, &ke) {
		return "kafka_" + ke.Message
	}
	return ""
}

// Close flushes nothing (Write waits for every record) and closes the
// client.
func (s *Sink) Close() error {
	s.client.Close()
	return nil
}
