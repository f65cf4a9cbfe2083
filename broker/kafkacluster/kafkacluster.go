// Package kafkacluster implements broker.Broker on an Apache Kafka cluster
// with franz-go, so the same collectors, enrichment and sinks run on Kafka
// when one machine is not enough. Keys are partitioned with Kafka's
// murmur2, like the embedded log, so topics have the same layout on both.
//
// Consumers read committed records only (read_committed), and a consumer
// asked broker.WithTransactions is a broker.TxnConsumer: it produces and
// commits its offsets in Kafka transactions (franz-go's
// GroupTransactSession), which is how enrichment is exactly once here.
package kafkacluster

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"math"
	"os"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kbin"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/weirnet/weir/broker"
	"github.com/weirnet/weir/internal/kafkadial"
	"github.com/weirnet/weir/internal/kafkalimits"
)

// Broker is a Kafka cluster behind the broker.Broker interface.
type Broker struct {
	seeds    []string
	opts     []kgo.Opt
	producer *renewable  // idempotent, acks=all, murmur2 keys
	manual   *renewable  // for explicit partitions, and Fetch's requests
	adminCl  *kgo.Client // without topic auto-creation: describing a topic never creates it
	admin    *kadm.Client
	defaults broker.TopicConfig
	topics   map[string]broker.TopicConfig // WithTopics; read only
	// Topics this process has made sure exist (created with defaults
	// and rf, or found there) before producing to them: true, or the
	// error of a creation the cluster's ACLs refused.
	ensured sync.Map
	// copyBufs holds the buffers of ownedRecords' copies (*[]byte) that
	// franz-go is done with, for the next calls: a call whose records
	// the cluster took or refused gives its buffer back, one that ended
	// with its ctx first leaves it to franz-go (and the garbage
	// collector).
	copyBufs sync.Pool
	// The producers' batch limits: theirs (kgo's default or
	// WithClientOpts'), or a topic's max.message.bytes if lower, learned
	// with ensured and when a topic is described by name.
	limits *kafkalimits.Limits

	rf       int16
	instance string // names the process in transactional ids
	// static: instance was given (WithInstance), so it names the process
	// across restarts too, and transactional members are static (see
	// consumeTxn).
	static bool
	logger *slog.Logger

	// Fetch's: where partitions are led, from metadata (asked again
	// when a fetch finds it out of date), and its decompressor.
	leadersMu sync.Mutex
	leaders   map[broker.TopicPartition]partitionLeader
	dec       kgo.Decompressor

	// The consumer groups members of this process joined, for their lag
	// (Collector).
	groupsMu sync.Mutex
	groups   map[string]bool

	dials kafkadial.Watch // why a produce waits (WaitCause)
}

var (
	_ broker.Broker          = (*Broker)(nil)
	_ broker.SizeChecker     = (*Broker)(nil)
	_ broker.Positioner      = (*consumer)(nil)
	_ broker.OffsetCommitter = (*consumer)(nil)
)

// Option configures the backend.
type Option func(*Broker)

// WithTopicDefaults sets partitions (and retention) for topics weir creates.
func WithTopicDefaults(cfg broker.TopicConfig) Option { return func(b *Broker) { b.defaults = cfg } }

// WithTopics gives topics their own config (the config file's
// broker.topics): a topic of these that does not exist yet is created
// with its config when first produced to, also when it could not be
// created at start (the cluster not reachable then).
func WithTopics(topics map[string]broker.TopicConfig) Option {
	return func(b *Broker) { b.topics = maps.Clone(topics) }
}

// WithReplicationFactor sets the replication factor of topics weir creates
// (-1: the cluster's default).
func WithReplicationFactor(rf int16) Option { return func(b *Broker) { b.rf = rf } }

// WithClientOpts adds franz-go options (TLS with kgo.DialTLSConfig, SASL
// with kgo.SASL, client id...).
func WithClientOpts(opts ...kgo.Opt) Option {
	return func(b *Broker) { b.opts = append(b.opts, opts...) }
}

// WithInstance names this process in the transactional ids of its
// transactional consumers; it must differ between the processes sharing
// the cluster. The default is the host name and the process id. A name
// that survives a restart (in a container, whose host name and pid 1 do,
// it is the default) lets the restarted process abort the transactions its
// predecessor left open at once, instead of the cluster doing so after the
// transaction timeout.
//
// Its transactional members are also static group members (KIP-345), with
// their transactional id as group.instance.id: a process killed and
// started again takes its predecessor's partitions back at its first join,
// all at once, rather than one rebalance after another as the dead
// members' sessions expire meanwhile. (Enrichment warms up the partitions
// its workers are given before judging live records; given some of them
// seconds later, a worker judged a partition's syslog lines before the
// trap worker had read back the traps of the same links, and their events
// were published twice.) A member that closes leaves the group by its
// instance id, so a stop hands its partitions over at once, as before.
func WithInstance(name string) Option {
	return func(b *Broker) { b.instance, b.static = name, name != "" }
}

// WithLogger is where the backend reports what it works around (a topic's
// size limit lowered under its batches); none by default.
func WithLogger(l *slog.Logger) Option { return func(b *Broker) { b.logger = l } }

// New connects to the cluster at seeds.
func New(seeds []string, opts ...Option) (*Broker, error) {
	b := &Broker{seeds: seeds, rf: -1, defaults: broker.TopicConfig{Partitions: 6},
		dec: kgo.DefaultDecompressor(), leaders: map[broker.TopicPartition]partitionLeader{},
		logger: slog.New(slog.DiscardHandler)}
	for _, o := range opts {
		o(b)
	}
	if b.instance == "" {
		host, _ := os.Hostname()
		b.instance = fmt.Sprintf("%s-%d", host, os.Getpid())
	}
	base := append([]kgo.Opt{kgo.SeedBrokers(seeds...), kgo.ClientID("weir"), kgo.WithHooks(&b.dials)}, b.opts...)
	var err error
	if b.adminCl, err = kgo.NewClient(base...); err != nil {
		return nil, fmt.Errorf("kafka: %w", err)
	}
	b.admin = kadm.NewClient(b.adminCl)
	batchMax, _ := b.adminCl.OptValue(kgo.ProducerBatchMaxBytes).(int32)
	b.limits = kafkalimits.New(batchMax)
	// The sticky key partitioner hashes keys with Kafka's murmur2 (the
	// Java client's layout; franz-go's default partitioner is not) and
	// sticks records without a key to a partition per batch.
	//
	// A produce ends with its context, also while a request for its
	// records is unanswered (a broker stuck on its disk): by default the
	// idempotent producer waits for the answer however long it takes,
	// which would hold a collector's publish and weir's stop past every
	// deadline. What is failed so may have been written: Produce's
	// callers retry what is unsent, at least once.
	//
	// Neither producer lets the cluster auto-create topics: ensureTopic
	// creates them with weir's settings. With auto-creation on, the
	// producer's metadata request after a topic weir writes was deleted
	// made it again with the cluster's defaults before weir could.
	if b.producer, err = newRenewable(b.limits, append(base, kgo.ProducerLinger(time.Millisecond),
		kgo.AllowIdempotentProduceCancellation(),
		kgo.RecordPartitioner(kgo.StickyKeyPartitioner(nil)))); err != nil {
		b.adminCl.Close()
		return nil, fmt.Errorf("kafka: %w", err)
	}
	if b.manual, err = newRenewable(b.limits, append(base, kgo.RecordPartitioner(kgo.ManualPartitioner()),
		kgo.AllowIdempotentProduceCancellation())); err != nil {
		b.adminCl.Close()
		b.producer.close()
		return nil, fmt.Errorf("kafka: %w", err)
	}
	return b, nil
}

func toKgo(topic string, r *broker.Record) *kgo.Record {
	kr := &kgo.Record{Topic: topic, Key: r.Key, Value: r.Value, Timestamp: r.Timestamp, Partition: r.Partition}
	for _, h := range r.Headers {
		kr.Headers = append(kr.Headers, kgo.RecordHeader{Key: h.Key, Value: h.Value})
	}
	return kr
}

// maxPooledCopy is the largest copy buffer kept for reuse.
const maxPooledCopy = 1 << 20

// ownedRecords is toKgo for records franz-go may keep after Produce
// returns: their keys, values and headers' values are copied, so the
// caller may reuse its memory (the syslog collector reads the next
// datagrams into it). The copies share one buffer, from copyBufs, which
// the caller gives back with releaseCopy once franz-go has called back
// for every record; the kgo.Records share one array. A nil key or value
// stays nil (Kafka's null), an empty one empty.
func (b *Broker) ownedRecords(topic string, recs []broker.Record) ([]*kgo.Record, *[]byte) {
	size, nh := 0, 0
	for i := range recs {
		size += len(recs[i].Key) + len(recs[i].Value)
		for _, h := range recs[i].Headers {
			size += len(h.Value)
		}
		nh += len(recs[i].Headers)
	}
	pooled, _ := b.copyBufs.Get().(*[]byte)
	if pooled == nil || cap(*pooled) < size {
		buf := make([]byte, 0, max(size, 4<<10))
		pooled = &buf
	}
	buf := (*pooled)[:size]
	clone := func(b []byte) []byte {
		if b == nil {
			return nil
		}
		n := copy(buf, b)
		c := buf[:n:n]
		buf = buf[n:]
		return c
	}
	krs := make([]*kgo.Record, len(recs))
	all := make([]kgo.Record, len(recs))
	var hs []kgo.RecordHeader
	if nh > 0 {
		hs = make([]kgo.RecordHeader, nh)
	}
	for i := range recs {
		r, kr := &recs[i], &all[i]
		kr.Topic, kr.Timestamp, kr.Partition = topic, r.Timestamp, r.Partition
		kr.Key, kr.Value = clone(r.Key), clone(r.Value)
		if n := len(r.Headers); n > 0 {
			kr.Headers, hs = hs[:n:n], hs[n:]
			for j, h := range r.Headers {
				kr.Headers[j] = kgo.RecordHeader{Key: h.Key, Value: clone(h.Value)}
			}
		}
		krs[i] = kr
	}
	return krs, pooled
}

// releaseCopy gives back the buffer of ownedRecords' copies.
func (b *Broker) releaseCopy(buf *[]byte) {
	if buf != nil && cap(*buf) <= maxPooledCopy {
		b.copyBufs.Put(buf)
	}
}

func fromKgo(kr *kgo.Record) broker.Record {
	r := broker.Record{Topic: kr.Topic, Partition: kr.Partition, Offset: kr.Offset, Timestamp: kr.Timestamp, Key: kr.Key, Value: kr.Value}
	for _, h := range kr.Headers {
		r.Headers = append(r.Headers, broker.Header{Key: h.Key, Value: h.Value})
	}
	return r
}

// checkSize refuses a record over topic's batch limit (b.limits), which
// franz-go would fail on its own, or the cluster.
func (b *Broker) checkSize(topic string, r *broker.Record) error {
	if n, limit := batchBytes(r), b.limits.Batch(topic); n > int(limit) {
		return fmt.Errorf("%w: %d bytes in a batch, over the limit of %d for %s", broker.ErrRecordTooLarge, n, limit, topic)
	}
	return nil
}

// CheckSize implements broker.SizeChecker: the producers' limit, or the
// topic's max.message.bytes if lower (known once the topic has been
// described by name or produced to: enrichment's align describes its
// outputs before it checks a record for them).
func (b *Broker) CheckSize(topic string, key, value []byte, headers []broker.Header) error {
	return b.checkSize(topic, &broker.Record{Key: key, Value: value, Headers: headers})
}

// produce produces recs with cl. It returns when ctx ends, also while the
// records wait in cl (see ownedRecords): a transaction's too, whose client
// never cancels records it has sent and would wait for a cluster that does
// not answer however long it hangs.
func (b *Broker) produce(ctx context.Context, cl *kgo.Client, topic string, recs []broker.Record, partition int32) error {
	// franz-go fails a record over its batch limit on its own and
	// produces the call's others; refusing the whole call instead keeps
	// broker.Produce's promise (a refused call appends nothing), so a
	// caller that sends a refused batch again record by record does not
	// write the others twice.
	for i := range recs {
		recs[i].Offset = -1 // until the cluster takes it
	}
	if err := b.ensureTopic(ctx, topic); err != nil {
		return err
	}
	for i := range recs {
		if err := b.checkSize(topic, &recs[i]); err != nil {
			return fmt.Errorf("kafka: produce %s: record %d of the call: %w", topic, i, err)
		}
	}
	// A ctx that never ends is waited out: nothing to copy.
	own := ctx.Done() != nil
	var krs []*kgo.Record
	var copies *[]byte // franz-go's until it has called back for every record
	if own {
		krs, copies = b.ownedRecords(topic, recs)
	} else {
		krs = make([]*kgo.Record, len(recs))
		for i := range recs {
			krs[i] = toKgo(topic, &recs[i])
		}
	}
	for _, kr := range krs {
		// -1: by key (the partitioners of the producer and of
		// transactions read it so).
		kr.Partition = partition
	}
	var res kgo.ProduceResults
	if !own {
		res = cl.ProduceSync(ctx, krs...)
	} else {
		// franz-go looks at a buffered record's context only when
		// something happens to its partition: with the cluster's
		// brokers down, when a metadata update fails, at most every
		// MetadataMinAge (5 s) and after the update's own retries,
		// and never while the record sits behind one of another call
		// whose context lives on. So the call ends with ctx itself;
		// the records, copies, stay with franz-go, which sends them
		// or fails them later (a batch led by a record whose context
		// ended is failed before it is sent).
		done := make(chan kgo.ProduceResults, 1)
		go func() { done <- cl.ProduceSync(ctx, krs...) }()
		select {
		case res = <-done:
		case <-ctx.Done():
			select {
			case res = <-done:
			default:
				return fmt.Errorf("kafka: produce %s: %w before the cluster took the records (they may still be written)", topic, context.Cause(ctx))
			}
		}
		b.releaseCopy(copies)
	}
	if err := res.FirstErr(); err != nil {
		// Tell the records the cluster took from the others (see
		// broker.Broker.Produce), so a retry sends only those.
		failed := make(map[*kgo.Record]bool, len(res))
		for _, r := range res {
			if r.Err != nil {
				failed[r.Record] = true
			}
		}
		for i, kr := range krs {
			if !failed[kr] {
				recs[i].Partition, recs[i].Offset = kr.Partition, kr.Offset
			}
		}
		if kafkalimits.TooLarge(err) {
			// The records passed checkSize: the topic's limit may
			// have gone down since it was learned.
			b.limits.Relearn(ctx, b.admin, topic)
		}
		if errors.Is(err, kerr.UnknownTopicOrPartition) || errors.Is(err, kerr.UnknownTopicID) {
			// Deleted since it was ensured (an admin's `weir topics
			// delete`): the next produce makes it again, as the
			// embedded log does, rather than fail for as long as
			// weir runs on a cluster that does not auto-create; the
			// client forgets the old topic's ID, which the new one
			// does not have.
			why, _ := b.ensured.LoadAndDelete(topic)
			cl.PurgeTopicsFromClient(topic)
			if cerr, ok := why.(error); ok {
				return fmt.Errorf("kafka: produce %s: the topic does not exist and weir is not permitted to create it, the cluster's admins do (%w): %w", topic, cerr, mapErr(err))
			}
		}
		return fmt.Errorf("kafka: produce %s: %w", topic, mapErr(err))
	}
	// Results come in completion order; the records themselves, which
	// franz-go fills in, are in ours.
	for i, kr := range krs {
		recs[i].Partition, recs[i].Offset = kr.Partition, kr.Offset
	}
	return nil
}

// produceRenewing produces with r's client. Batches the cluster refuses
// for their size, of records that each fit, mean the topic's
// max.message.bytes went down under the batch limit the client took
// (limitedClient): the client is replaced, and the records the cluster
// did not take are sent again with the new one. So are those of a call
// that took the client just before another call replaced it, and found
// it closed.
func (b *Broker) produceRenewing(ctx context.Context, r *renewable, topic string, recs []broker.Record, partition int32) error {
	lc := r.client()
	err := b.produce(ctx, lc.Client, topic, recs, partition)
	for try := 0; err != nil && try < 3; try++ {
		var ok bool
		switch {
		case kafkalimits.TooLarge(err):
			lc, ok = r.renew(lc, topic, b.logger)
		case errors.Is(err, kgo.ErrClientClosed):
			lc, ok = r.replaced(lc)
		}
		if !ok {
			break
		}
		var left []broker.Record
		var at []int
		for i := range recs {
			if recs[i].Offset < 0 {
				left, at = append(left, recs[i]), append(at, i)
			}
		}
		err = b.produce(ctx, lc.Client, topic, left, partition)
		for j, i := range at {
			recs[i].Partition, recs[i].Offset = left[j].Partition, left[j].Offset
		}
	}
	return err
}

// ProduceMayWait: Produce waits for a cluster that is away, as long as its
// ctx lasts (publish.Waiter), rather than fail.
func (b *Broker) ProduceMayWait() bool { return true }

// WaitCause is why a produce may be waiting: the last failure to connect
// to one of the cluster's brokers that no connection to it has followed
// (the dial's or TLS handshake's error, or SASL's), or nil.
func (b *Broker) WaitCause() error { return b.dials.Err() }

// Produce appends records partitioned by key (murmur2).
func (b *Broker) Produce(ctx context.Context, topic string, recs []broker.Record) error {
	if len(recs) == 0 {
		return nil
	}
	return b.produceRenewing(ctx, b.producer, topic, recs, -1)
}

// ProducePartition appends records to one partition.
func (b *Broker) ProducePartition(ctx context.Context, topic string, partition int32, recs []broker.Record) error {
	if len(recs) == 0 {
		return nil
	}
	return b.produceRenewing(ctx, b.manual, topic, recs, partition)
}

// Fetch reads committed records of one partition from offset (records of
// open or aborted transactions are skipped, as Consume does). It sends
// fetch requests to the partition's leader on the backend's own client,
// so reading a partition back a batch at a time (the enrichment warm-up)
// costs about a request per call. Fetches to one broker share a
// connection: one waiting for data (MaxWait) holds up the others to that
// broker.
func (b *Broker) Fetch(ctx context.Context, topic string, partition int32, offset int64, opts broker.FetchOptions, into *broker.FetchResult) error {
	into.Records = into.Records[:0]
	maxBytes := opts.MaxBytes
	if maxBytes <= 0 {
		maxBytes = 1 << 20
	}
	maxBytes = min(maxBytes, math.MaxInt32)
	deadline := time.Now().Add(opts.MaxWait)
	for from := offset; ; {
		fp, next, err := b.fetch(ctx, topic, partition, from, int32(maxBytes), time.Until(deadline))
		if err == nil && from > fp.HighWatermark {
			err = kerr.OffsetOutOfRange // past the high watermark, not yet past the log's end
		}
		switch {
		case errors.Is(err, kerr.OffsetOutOfRange):
			return b.outOfRange(ctx, topic, partition, from, into)
		case errors.Is(err, broker.ErrUnknownPartition):
			return err
		case err != nil:
			return fmt.Errorf("kafka: fetch %s/%d: %w", topic, partition, mapErr(err))
		}
		into.HighWatermark, into.LogStartOffset = fp.HighWatermark, fp.LogStartOffset
		for _, kr := range fp.Records {
			into.Records = append(into.Records, fromKgo(kr))
		}
		if len(into.Records) > 0 || next <= from || next >= fp.LastStableOffset && time.Until(deadline) <= 0 {
			return nil
		}
		// Only records of aborted transactions, or transaction
		// markers: go on after them, as a consumer does. Below the
		// last stable offset committed records follow, so they are
		// read whatever MaxWait.
		from = next
	}
}

// batchBytes is the size of a record batch holding r alone, as franz-go
// measures it against its batch limit (recBatch.tryBuffer): an empty
// batch, then the record with its length prefix and its timestamp and
// offset deltas 0. franz-go counts the empty batch as 65 bytes until it
// knows the produce version and 62 after; 65 here refuses at most 3 bytes
// more than it would, and never lets it fail a record alone.
func batchBytes(r *broker.Record) int {
	const emptyBatch = 65
	n := 1 + kbin.VarlongLen(0) + kbin.VarintLen(0) + // attributes, deltas
		kbin.VarintLen(int32(len(r.Key))) + len(r.Key) +
		kbin.VarintLen(int32(len(r.Value))) + len(r.Value) +
		kbin.VarintLen(int32(len(r.Headers)))
	for _, h := range r.Headers {
		n += kbin.VarintLen(int32(len(h.Key))) + len(h.Key) + kbin.VarintLen(int32(len(h.Value))) + len(h.Value)
	}
	return emptyBatch + kbin.VarintLen(int32(n)) + n
}

// fetchRetries is how many times fetch asks again where a partition is
// after its leader moved or went away, fetchBackoff how long it waits
// before the second and later times.
const (
	fetchRetries = 3
	fetchBackoff = 100 * time.Millisecond
)

// fetch sends one read-committed fetch request for topic/partition from
// offset to the partition's leader, waiting up to wait for data. It
// returns the partition's answer, with the records of committed and
// non-transactional batches, and the offset after the batches it holds.
func (b *Broker) fetch(ctx context.Context, topic string, partition int32, offset int64, maxBytes int32, wait time.Duration) (kgo.FetchPartition, int64, error) {
	var err error
	for try := 0; try <= fetchRetries; try++ {
		if try > 1 {
			select {
			case <-time.After(fetchBackoff):
			case <-ctx.Done():
				return kgo.FetchPartition{}, 0, ctx.Err()
			}
		}
		var l partitionLeader
		if l, err = b.leader(ctx, topic, partition, try > 0); err != nil {
			if errors.Is(err, kerr.LeaderNotAvailable) {
				continue // an election: ask again
			}
			return kgo.FetchPartition{}, 0, err
		}
		req := kmsg.NewPtrFetchRequest()
		req.IsolationLevel = 1 // read committed
		req.MaxWaitMillis = int32(min(max(wait, 0).Milliseconds(), math.MaxInt32))
		req.MinBytes = 1
		// The partition's limit bounds the answer; the request's is
		// none, as kfake (unlike Kafka) leaves out the aborted
		// transactions of a partition that the request's limit cuts
		// short.
		req.MaxBytes = math.MaxInt32
		rt := kmsg.NewFetchRequestTopic()
		rt.Topic, rt.TopicID = topic, l.topicID
		rp := kmsg.NewFetchRequestTopicPartition()
		rp.Partition, rp.FetchOffset, rp.PartitionMaxBytes, rp.CurrentLeaderEpoch = partition, offset, maxBytes, l.epoch
		rt.Partitions = append(rt.Partitions, rp)
		req.Topics = append(req.Topics, rt)
		var kreq kmsg.Request = req
		if l.topicID == ([16]byte{}) {
			kreq = fetchByName{req} // no topic ID: v12 at most, as kgo's own fetches (#295)
		}
		var kresp kmsg.Response
		if kresp, err = b.manual.client().Broker(int(l.id)).Request(ctx, kreq); err != nil {
			if ctx.Err() != nil {
				return kgo.FetchPartition{}, 0, err
			}
			continue // the leader went away, or is not known: ask again
		}
		resp := kresp.(*kmsg.FetchResponse)
		if err = kerr.ErrorForCode(resp.ErrorCode); err != nil {
			return kgo.FetchPartition{}, 0, err
		}
		// Topics are named by id from v13 on: the answer is for one
		// partition in any case.
		var got *kmsg.FetchResponseTopicPartition
		for i := range resp.Topics {
			for j := range resp.Topics[i].Partitions {
				if p := &resp.Topics[i].Partitions[j]; p.Partition == partition {
					got = p
				}
			}
		}
		if got == nil {
			return kgo.FetchPartition{}, 0, errors.New("no answer for the partition")
		}
		fp, next := kgo.ProcessFetchPartition(kgo.ProcessFetchPartitionOpts{
			Offset: offset, IsolationLevel: kgo.ReadCommitted(), Topic: topic, Partition: partition,
		}, got, b.dec, nil)
		if err = fp.Err; staleLeader(err) {
			continue
		}
		return fp, next, err
	}
	if errors.Is(err, kerr.UnknownTopicOrPartition) || errors.Is(err, kerr.UnknownTopicID) {
		// The metadata knew the partition, its leader did not.
		return kgo.FetchPartition{}, 0, fmt.Errorf("%w: %s/%d: %w", broker.ErrUnknownPartition, topic, partition, err)
	}
	return kgo.FetchPartition{}, 0, err
}

// staleLeader reports whether a fetch failed because the client's idea of
// where the partition is was out of date.
func staleLeader(err error) bool {
	for _, e := range []error{kerr.NotLeaderForPartition, kerr.FencedLeaderEpoch, kerr.UnknownLeaderEpoch,
		kerr.LeaderNotAvailable, kerr.ReplicaNotAvailable, kerr.UnknownTopicOrPartition,
		kerr.UnknownTopicID, kerr.InconsistentTopicID} {
		if errors.Is(err, e) {
			return true
		}
	}
	return false
}

// partitionLeader is where Fetch sends a partition's requests.
type partitionLeader struct {
	id      int32    // the broker's
	topicID [16]byte // fetch v13+ names topics by id
	// epoch is the leader's epoch (-1 unknown). Sent with the fetch, it
	// makes a broker that has stopped leading answer FENCED_LEADER_EPOCH:
	// since fetch v11 a follower answers a consumer's fetch too, from its
	// own, perhaps lagging, high watermark, so a stale leader would go
	// unnoticed.
	epoch int32
}

// leader returns where topic/partition is led: from what the last
// metadata said unless refresh, else (or if unknown) from the cluster.
func (b *Broker) leader(ctx context.Context, topic string, partition int32, refresh bool) (partitionLeader, error) {
	tp := broker.TopicPartition{Topic: topic, Partition: partition}
	if !refresh {
		b.leadersMu.Lock()
		l, ok := b.leaders[tp]
		b.leadersMu.Unlock()
		if ok {
			return l, nil
		}
	}
	// A plain metadata request: unlike the clients' own (which kadm
	// uses), it never creates the topic.
	req := kmsg.NewPtrMetadataRequest()
	rt := kmsg.NewMetadataRequestTopic()
	rt.Topic = kmsg.StringPtr(topic)
	req.Topics = append(req.Topics, rt)
	resp, err := req.RequestWith(ctx, b.manual.client())
	if err != nil {
		return partitionLeader{}, err
	}
	b.leadersMu.Lock()
	defer b.leadersMu.Unlock()
	for tp := range b.leaders {
		if tp.Topic == topic {
			delete(b.leaders, tp)
		}
	}
	for _, t := range resp.Topics {
		if t.Topic == nil || *t.Topic != topic || t.ErrorCode != 0 {
			continue
		}
		for _, p := range t.Partitions {
			if p.Leader >= 0 {
				b.leaders[broker.TopicPartition{Topic: topic, Partition: p.Partition}] = partitionLeader{id: p.Leader, topicID: t.TopicID, epoch: p.LeaderEpoch}
			} else if p.Partition == partition {
				return partitionLeader{}, kerr.LeaderNotAvailable
			}
		}
	}
	l, ok := b.leaders[tp]
	if !ok {
		return partitionLeader{}, fmt.Errorf("%w: %s/%d", broker.ErrUnknownPartition, topic, partition)
	}
	return l, nil
}

// outOfRange is Fetch's error for an offset out of the partition, with
// its bounds, which a fetch answer out of range does not carry.
func (b *Broker) outOfRange(ctx context.Context, topic string, partition int32, offset int64, into *broker.FetchResult) error {
	starts, err := b.admin.ListStartOffsets(ctx, topic)
	if err != nil {
		return fmt.Errorf("%w: %s/%d offset %d (start offsets: %w)", broker.ErrOffsetOutOfRange, topic, partition, offset, err)
	}
	ends, err := b.admin.ListEndOffsets(ctx, topic)
	if err != nil {
		return fmt.Errorf("%w: %s/%d offset %d (end offsets: %w)", broker.ErrOffsetOutOfRange, topic, partition, offset, err)
	}
	start, _ := starts.Lookup(topic, partition)
	end, _ := ends.Lookup(topic, partition)
	into.HighWatermark, into.LogStartOffset = end.Offset, start.Offset
	return fmt.Errorf("%w: %s/%d offset %d not in [%d, %d]", broker.ErrOffsetOutOfRange, topic, partition, offset, start.Offset, end.Offset)
}

// CreateTopic creates a topic; zero config fields take the defaults.
func (b *Broker) CreateTopic(ctx context.Context, name string, cfg broker.TopicConfig) error {
	if cfg.Partitions == 0 {
		cfg.Partitions = b.defaults.Partitions
	}
	configs := map[string]*string{}
	set := func(k string, v int64) {
		if v != 0 {
			s := fmt.Sprint(v)
			configs[k] = &s
		}
	}
	if cfg.RetentionTime < 0 {
		cfg.RetentionTime = -time.Millisecond // for ever: Kafka's -1
	}
	set("retention.ms", cfg.RetentionTime.Milliseconds())
	set("retention.bytes", cfg.RetentionBytes)
	set("segment.bytes", cfg.SegmentBytes)
	set("segment.ms", cfg.SegmentAge.Milliseconds())
	resp, err := b.admin.CreateTopic(ctx, cfg.Partitions, b.rf, configs, name)
	if err == nil {
		err = resp.Err
	}
	// The admin client caches metadata, an unknown topic's too: the
	// next DescribeTopics must see the topic just created.
	b.adminCl.PurgeTopicsFromClient(name)
	if err != nil {
		return fmt.Errorf("kafka: create %s: %w", name, mapErr(err))
	}
	return nil
}

// DeleteTopic deletes a topic.
func (b *Broker) DeleteTopic(ctx context.Context, name string) error {
	resp, err := b.admin.DeleteTopic(ctx, name)
	if err == nil {
		err = resp.Err
	}
	if err != nil {
		return fmt.Errorf("kafka: delete %s: %w", name, mapErr(err))
	}
	return nil
}

// DescribeTopics describes the named topics, or all. It learns the named
// ones' max.message.bytes too, for CheckSize: enrichment describes its
// output topics before it checks a record's size for them.
func (b *Broker) DescribeTopics(ctx context.Context, names ...string) ([]broker.TopicInfo, error) {
	details, err := b.admin.ListTopics(ctx, names...)
	if err != nil {
		return nil, fmt.Errorf("kafka: list topics: %w", err)
	}
	for _, n := range names {
		if d, ok := details[n]; !ok || d.Err != nil {
			return nil, fmt.Errorf("%w: %s", broker.ErrUnknownTopic, n)
		}
	}
	if len(names) > 0 {
		b.limits.Learn(ctx, b.admin, names...)
	}
	starts, err := b.admin.ListStartOffsets(ctx, details.Names()...)
	if err != nil {
		return nil, err
	}
	ends, err := b.admin.ListEndOffsets(ctx, details.Names()...)
	if err != nil {
		return nil, err
	}
	sorted := details.Names()
	slices.Sort(sorted)
	var out []broker.TopicInfo
	for _, n := range sorted {
		d := details[n]
		if d.IsInternal {
			continue
		}
		info := broker.TopicInfo{Name: n, ID: d.ID}
		for _, p := range d.Partitions.Sorted() {
			s, _ := starts.Lookup(n, p.Partition)
			e, _ := ends.Lookup(n, p.Partition)
			info.Partitions = append(info.Partitions, broker.PartitionInfo{Partition: p.Partition, LogStartOffset: s.Offset, HighWatermark: e.Offset})
		}
		info.Config.Partitions = int32(len(info.Partitions))
		out = append(out, info)
	}
	return out, nil
}

// Close closes the clients, together: each may give its last push of
// client metrics (KIP-714) up to 1 s, which a cluster that is down never
// takes, and weir's stop waits for Close.
func (b *Broker) Close() error {
	var wg sync.WaitGroup
	wg.Go(b.producer.close)
	wg.Go(b.manual.close)
	wg.Go(b.adminCl.Close)
	wg.Wait()
	return nil
}

// ensureTopic creates topic with weir's defaults (partitions, replication
// factor) the first time this process produces to it, unless it exists.
// Left to the producer, a cluster that auto-creates topics would create
// it with its own num.partitions and default.replication.factor (1 and 1
// on a stock Kafka), and one that does not would refuse the records. A
// creation the cluster refuses for good (no CREATE permission, a policy,
// topics managed elsewhere) leaves it to the cluster's admins. One that
// fails for a reason that passes (the cluster not reachable yet, a
// timeout, a controller moving) fails the produce, which its caller
// retries: producing anyway would have the cluster auto-create the topic
// with its defaults, for good.
func (b *Broker) ensureTopic(ctx context.Context, topic string) error {
	if _, ok := b.ensured.Load(topic); ok {
		return nil
	}
	err := b.CreateTopic(ctx, topic, b.topics[topic])
	if err != nil && (ctx.Err() != nil || !refusedForGood(err) || badSettings(err)) {
		return fmt.Errorf("kafka: produce %s: %w", topic, err)
	}
	if errors.Is(err, broker.ErrTopicExists) {
		// Someone else's topic: its configs, asked once, give its size
		// limit and whether it is compacted.
		if rcs, err := b.admin.DescribeTopicConfigs(ctx, topic); err == nil {
			b.limits.Note(rcs)
			b.warnCompacted(topic, rcs)
		}
	}
	b.limits.Learn(ctx, b.admin, topic)
	var why any = true
	if NotPermitted(err) {
		why = err // why a produce may find it missing
	}
	b.ensured.Store(topic, why)
	return nil
}

// warnCompacted logs topic, one weir writes that someone else made, if
// its configs rcs say it is compacted (cleanup.policy compact): the cluster
// would keep only the last record of each key, a device's, and drop the
// rest before a reader that lags behind has read them.
func (b *Broker) warnCompacted(topic string, rcs kadm.ResourceConfigs) {
	for _, rc := range rcs {
		for _, c := range rc.Configs {
			if c.Key == "cleanup.policy" && c.Value != nil && strings.Contains(*c.Value, "compact") {
				b.logger.Warn("kafka: a topic weir writes is compacted: the cluster keeps only the last record of each device and drops the others; set its cleanup.policy to delete",
					slog.String("topic", topic), slog.String("cleanup.policy", *c.Value))
			}
		}
	}
}

// Unreachable reports whether err (of CreateTopic) is one that passes: the
// cluster not reachable, refusing weir's SASL credentials, a timeout, a
// controller moving. The topic's
// creation can wait for its first use (see WithTopics).
func Unreachable(err error) bool { return !refusedForGood(err) }

// NotPermitted reports whether err (of CreateTopic) is the cluster's ACLs
// refusing weir's user the creation (no CREATE on the topic or the
// cluster): its admins create the topics, which ensureTopic leaves to
// them.
func NotPermitted(err error) bool {
	return errors.Is(err, kerr.TopicAuthorizationFailed) || errors.Is(err, kerr.ClusterAuthorizationFailed)
}

// badSettings reports whether the cluster refused weir's own topic
// settings (broker.kafka.replication_factor above its brokers, a partition
// count or config it does not take): weir's config to fix, not the
// cluster managing topics, so the records must not go to a topic the
// cluster would auto-create, for good, with its defaults.
func badSettings(err error) bool {
	return errors.Is(err, kerr.InvalidReplicationFactor) || errors.Is(err, kerr.InvalidPartitions) ||
		errors.Is(err, kerr.InvalidConfig) || errors.Is(err, kerr.InvalidReplicaAssignment)
}

// refusedForGood reports whether err is the cluster's answer that will
// not change on a retry (a Kafka error that is not retriable): not a
// connection failure or a timeout. SASL's errors are not retriable in
// Kafka's terms, but they refuse the connection, not the request: the
// cluster's admins create the user or fix its password without weir
// restarting, and the next connection authenticates.
func refusedForGood(err error) bool {
	var ke *kerr.Error
	if errors.Is(err, kerr.SaslAuthenticationFailed) || errors.Is(err, kerr.UnsupportedSaslMechanism) || errors.Is(err, kerr.IllegalSaslState) {
		return false
	}
	return errors.As(err, &ke) && !ke.Retriable
}

// Consume joins a Kafka consumer group. The member reads committed
// records only, about MaxPollBytes a poll (see consumer.poll). Asked
// broker.WithTransactions, it is a broker.TxnConsumer (see txnConsumer).
func (b *Broker) Consume(ctx context.Context, group string, topics []string, opts ...broker.ConsumerOption) (broker.Consumer, error) {
	cfg := broker.ConsumerConfig{MaxPollBytes: 1 << 20}
	for _, o := range opts {
		o(&cfg)
	}
	c := &consumer{maxPollBytes: cfg.MaxPollBytes, group: group, logger: b.logger, resetToLatest: cfg.ResetToLatest}
	// The client's context, canceled by Close when the cluster does not
	// answer (see leave).
	cctx, ccancel := context.WithCancel(context.Background())
	c.cancel = ccancel
	reset := kgo.NewOffset().AtStart()
	if cfg.ResetToLatest {
		reset = kgo.NewOffset().AtEnd()
	}
	kopts := []kgo.Opt{kgo.SeedBrokers(b.seeds...)}
	if n := cfg.MaxPollBytes; n > 0 {
		// A broker answers a fetch with about n bytes of batches per
		// partition (at least one batch, so a larger one does not
		// stall the member); Poll takes about n of what the client
		// holds. The whole answer's limit (FetchMaxBytes, which n may
		// not pass) stays at kgo's 50 MiB: kfake, which the tests run
		// on, leaves out the aborted transactions of a partition that
		// limit cuts short, so their records would reach this
		// read-committed member. Fetch sizes given by WithClientOpts,
		// after these, take precedence.
		kopts = append(kopts, kgo.FetchMaxPartitionBytes(int32(min(n, 50<<20))))
	}
	kopts = append(kopts, b.opts...)
	kopts = append(kopts, kgo.WithContext(cctx),
		kgo.ConsumerGroup(group), kgo.ConsumeTopics(topics...), kgo.ConsumeResetOffset(reset),
		kgo.DisableAutoCommit(), kgo.FetchMaxWait(500*time.Millisecond),
		// Records of transactions (enrichment's outputs) once committed,
		// never those of aborted ones. Records produced without a
		// transaction (the collectors') are not held back.
		kgo.FetchIsolationLevel(kgo.ReadCommitted()),
		// With the cooperative balancer (franz-go's default) a rebalance
		// hands out only what changes: the callbacks carry the partitions
		// added or revoked, not the whole assignment.
		kgo.OnPartitionsAssigned(func(ctx context.Context, cl *kgo.Client, m map[string][]int32) {
			if cfg.ResetToLatest {
				b.pinEnds(ctx, cl, group, m)
			}
			c.updateAssigned(m, true)
			c.noteAssigned()
		}),
		kgo.OnPartitionsLost(func(_ context.Context, _ *kgo.Client, _ map[string][]int32) { c.clearAssigned() }),
	)
	if cfg.MemberID != "" {
		kopts = append(kopts, kgo.ClientID(cfg.MemberID))
	}
	st := cfg.SessionTimeout
	if st > 0 {
		// Heartbeat several times per session, so one late heartbeat on
		// a loaded machine does not cost the membership, and bound a
		// rebalance by the session too: a member that died while a
		// rebalance began is dropped after it, not after a minute.
		kopts = append(kopts, kgo.SessionTimeout(st),
			kgo.HeartbeatInterval(min(max(st/6, 100*time.Millisecond), 3*time.Second)),
			kgo.RebalanceTimeout(min(st, 60*time.Second)))
	}
	if cfg.Transactional {
		tc, err := b.consumeTxn(group, cfg.MemberID, st, c, kopts)
		if err != nil {
			ccancel()
			return nil, err
		}
		b.joinGroup(group, cfg.ResetToLatest)
		return tc, nil
	}
	// Partitions given away keep their committed offsets: what was polled
	// and not committed may not be handled yet (a sink between batches),
	// so its next owner gets it again (at least once, as Consumer says),
	// rather than never.
	kopts = append(kopts, kgo.OnPartitionsRevoked(func(_ context.Context, _ *kgo.Client, m map[string][]int32) {
		c.updateAssigned(m, false)
	}))
	cl, err := kgo.NewClient(kopts...)
	if err != nil {
		ccancel()
		return nil, fmt.Errorf("kafka: join %s: %w", group, err)
	}
	c.cl = cl
	b.joinGroup(group, cfg.ResetToLatest)
	return c, nil
}

// pinEnds commits the log end of the partitions in m that group has no
// offset for (broker.WithResetToLatest: the group starts at the end once).
// franz-go calls OnPartitionsAssigned before it fetches the group's offsets,
// so the member starts at what was committed here. A failure leaves the
// partitions to franz-go's reset to the end, as before.
func (b *Broker) pinEnds(ctx context.Context, cl *kgo.Client, group string, m map[string][]int32) {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	committed, err := b.admin.FetchOffsets(ctx, group)
	if err != nil {
		return
	}
	// The end a read-committed member resets to: the last stable
	// offset, before the records of transactions still open (an
	// enrichment worker's), which are polled once committed. The high
	// watermark would be past them, and they would never be.
	ends, err := b.admin.ListCommittedOffsets(ctx, slices.Collect(maps.Keys(m))...)
	if err != nil {
		return
	}
	pins := map[string]map[int32]kgo.EpochOffset{}
	for t, ps := range m {
		for _, p := range ps {
			if o, ok := committed.Lookup(t, p); ok && o.Err == nil && o.At >= 0 {
				continue
			}
			if e, ok := ends.Lookup(t, p); ok && e.Err == nil {
				if pins[t] == nil {
					pins[t] = map[int32]kgo.EpochOffset{}
				}
				pins[t][p] = kgo.EpochOffset{Epoch: -1, Offset: e.Offset}
			}
		}
	}
	if len(pins) == 0 {
		return
	}
	cl.CommitOffsetsSync(ctx, pins, func(_ *kgo.Client, _ *kmsg.OffsetCommitRequest, resp *kmsg.OffsetCommitResponse, err error) {
		if err == nil {
			err = firstCommitError(resp)
		}
		if err != nil {
			b.logger.Warn("kafka: the start at the log end not committed; the next member starts those partitions at the end then",
				slog.String("group", group), slog.Any("error", err))
		}
	})
}

func firstCommitError(resp *kmsg.OffsetCommitResponse) error {
	for _, t := range resp.Topics {
		for _, p := range t.Partitions {
			if err := kerr.ErrorForCode(p.ErrorCode); err != nil {
				return fmt.Errorf("%s[%d]: %w", t.Topic, p.Partition, err)
			}
		}
	}
	return nil
}

type consumer struct {
	cl           *kgo.Client
	group        string
	logger       *slog.Logger
	maxPollBytes int // 0: no bound
	recs         []broker.Record
	mu           sync.Mutex
	assigned     []broker.TopicPartition
	// firstAssigned is when the group first gave the member its
	// partitions (maybe none); zero before. With mu.
	firstAssigned time.Time
	cancel        context.CancelFunc // the client's context
	instanceID    string             // a static member's group.instance.id; "" for a dynamic one
	// resetToLatest: a partition without a commit is read from its end.
	resetToLatest bool
	// starts is what startOf last learned of each topic, with startsMu;
	// a change of assignment forgets it, and counts in startsGen.
	startsMu  sync.Mutex
	starts    map[string]topicStarts
	startsGen uint64
}

// topicStarts is where the member's reading of a topic's partitions
// starts, as the cluster said at a time.
type topicStarts struct {
	at      time.Time
	offsets map[int32]int64 // nil: the cluster did not answer
}

// startsFresh is how long startOf uses an answer again, a failure too: a
// warm-up asks for every partition not yet known in one round, and a
// cluster that does not answer then costs the round one timeout, not one
// per partition.
const startsFresh = time.Second

// updateAssigned adds (or removes) the partitions in m to (or from) the
// member's assignment.
func (c *consumer) updateAssigned(m map[string][]int32, add bool) {
	c.forgetStarts()
	c.mu.Lock()
	defer c.mu.Unlock()
	for t, ps := range m {
		for _, p := range ps {
			tp := broker.TopicPartition{Topic: t, Partition: p}
			i := slices.Index(c.assigned, tp)
			switch {
			case add && i < 0:
				c.assigned = append(c.assigned, tp)
			case !add && i >= 0:
				c.assigned = slices.Delete(c.assigned, i, i+1)
			}
		}
	}
}

// noteAssigned notes the member's first assignment: franz-go calls
// OnPartitionsAssigned at the end of each rebalance, also with nothing new
// (or nothing at all) to give.
func (c *consumer) noteAssigned() {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.firstAssigned.IsZero() {
		c.firstAssigned = time.Now()
	}
}

// FirstAssigned tells when the group first gave the member its partitions,
// maybe none: enrichment's warm gate waits for that before it counts a
// worker given none as warm.
func (c *consumer) FirstAssigned() (time.Time, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.firstAssigned, !c.firstAssigned.IsZero()
}

func (c *consumer) clearAssigned() {
	c.forgetStarts()
	c.mu.Lock()
	defer c.mu.Unlock()
	c.assigned = nil
}

func (c *consumer) Poll(ctx context.Context) ([]broker.Record, error) {
	for {
		f := c.poll(ctx)
		if f.IsClientClosed() {
			return nil, broker.ErrClosed
		}
		c.readdGone(f)
		// Records first: the client counts them as polled (a commit
		// goes past them) even when ctx ended as they came, so dropping
		// them here would lose them.
		c.recs = c.recs[:0]
		f.EachRecord(func(kr *kgo.Record) { c.recs = append(c.recs, fromKgo(kr)) })
		if len(c.recs) > 0 {
			return c.recs, nil
		}
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		var ferr error
		f.EachError(func(t string, p int32, err error) {
			switch {
			case ferr != nil || errors.Is(err, context.Canceled):
			case t != "" && errors.Is(err, kerr.UnknownTopicID):
				ferr = fmt.Errorf("kafka: fetch %s/%d: the topic was deleted; reading it again once it exists: %w", t, p, mapErr(err))
			case t == "":
				// Not a partition's: the client's (the group
				// session's, with the cluster away).
				ferr = fmt.Errorf("kafka: poll: %w", mapErr(err))
			default:
				ferr = fmt.Errorf("kafka: fetch %s/%d: %w", t, p, mapErr(err))
			}
		})
		if ferr != nil {
			return nil, ferr
		}
	}
}

// readdGone purges and adds back the topics whose fetches in f failed
// with UNKNOWN_TOPIC_ID: deleted, and perhaps made again. franz-go keeps a
// topic's first ID and fails every fetch of a new one until the topic is
// purged and added again (its README, "Topic recreation"); it returns
// the error only once it persists, not in the moment after a creation
// when a leader does not know the topic yet. The group rebalances, and
// the member reads the new topic from the group's commit (else the reset
// offset). Done whether or not f has records: those of other topics
// would otherwise hide the error for ever.
func (c *consumer) readdGone(f kgo.Fetches) {
	var gone []string
	f.EachError(func(t string, _ int32, err error) {
		if t != "" && errors.Is(err, kerr.UnknownTopicID) && !slices.Contains(gone, t) {
			gone = append(gone, t)
		}
	})
	if len(gone) == 0 {
		return
	}
	c.logger.Warn("kafka: a topic this group reads was deleted; reading it again once it exists",
		slog.String("group", c.group), slog.Any("topics", gone))
	c.cl.PurgeTopicsFromClient(gone...)
	c.cl.AddConsumeTopics(gone...)
}

// poll returns about maxPollBytes of the records the client fetched. The
// client holds an answer from each broker that had data, so taking all
// (PollFetches) would return up to that many times maxPollBytes: poll
// waits for a record, then takes as many more as fit at the average size
// of what is buffered. Sizes are kgo's measure of records (keys, values
// and headers): about the batch bytes of uncompressed batches, more than
// those of compressed ones, so that a poll is about as much work either
// way. What is left stays in the client, not counted as polled, for the
// next Poll.
func (c *consumer) poll(ctx context.Context) kgo.Fetches {
	if c.maxPollBytes <= 0 {
		return c.cl.PollFetches(ctx)
	}
	f := c.cl.PollRecords(ctx, 1)
	room := int64(c.maxPollBytes)
	f.EachRecord(func(r *kgo.Record) { room -= recordSize(r) })
	recs, bytes := c.cl.BufferedFetchRecords(), c.cl.BufferedFetchBytes()
	if room <= 0 || recs <= 0 || ctx.Err() != nil {
		return f
	}
	n := 0 // all
	if bytes > room {
		if n = int(room * recs / bytes); n == 0 {
			return f
		}
	}
	// A nil context takes what is buffered without waiting, as
	// PollRecords documents; a cancelled one would add an error fetch.
	//lint:ignore SA1012 franz-go's documented way to poll without waiting
	return append(f, c.cl.PollRecords(nil, n)...)
}

// recordSize is a record's size as kgo counts its buffered bytes.
func recordSize(r *kgo.Record) int64 {
	n := len(r.Key) + len(r.Value)
	for _, h := range r.Headers {
		n += len(h.Key) + len(h.Value)
	}
	return int64(n)
}

func (c *consumer) Commit(ctx context.Context) error {
	if err := c.cl.CommitUncommittedOffsets(ctx); err != nil {
		return fmt.Errorf("kafka: commit: %w", err)
	}
	return nil
}

// CommitOffsets implements broker.OffsetCommitter.
func (c *consumer) CommitOffsets(ctx context.Context, offsets map[broker.TopicPartition]int64) error {
	owned := map[broker.TopicPartition]bool{}
	for _, tp := range c.Assigned() {
		owned[tp] = true
	}
	uncommitted := c.cl.UncommittedOffsets() // what was polled and not committed, per partition
	committed := c.cl.CommittedOffsets()
	commit := map[string]map[int32]kgo.EpochOffset{}
	for tp, off := range offsets {
		head, ok := uncommitted[tp.Topic][tp.Partition]
		if !owned[tp] || !ok || off > head.Offset {
			continue // not ours, or past what Poll returned
		}
		if done, ok := committed[tp.Topic][tp.Partition]; ok && off <= done.Offset {
			continue // never backwards
		}
		if commit[tp.Topic] == nil {
			commit[tp.Topic] = map[int32]kgo.EpochOffset{}
		}
		commit[tp.Topic][tp.Partition] = kgo.EpochOffset{Epoch: head.Epoch, Offset: off}
	}
	if len(commit) == 0 {
		return nil
	}
	var cerr error
	c.cl.CommitOffsetsSync(ctx, commit, func(_ *kgo.Client, _ *kmsg.OffsetCommitRequest, resp *kmsg.OffsetCommitResponse, err error) {
		if err != nil {
			cerr = err
			return
		}
		for _, t := range resp.Topics {
			for _, p := range t.Partitions {
				if err := kerr.ErrorForCode(p.ErrorCode); err != nil && cerr == nil {
					cerr = fmt.Errorf("%s/%d: %w", t.Topic, p.Partition, err)
				}
			}
		}
	})
	if cerr != nil {
		return fmt.Errorf("kafka: commit: %w", cerr)
	}
	return nil
}

// Position implements broker.Positioner: after the last record Poll
// returned from tp, else the group's commit, which the client fetched when
// it was given tp, else where the cluster says reading starts (startOf).
func (c *consumer) Position(ctx context.Context, tp broker.TopicPartition) (int64, bool) {
	if !slices.Contains(c.Assigned(), tp) {
		return 0, false
	}
	if head, ok := c.cl.UncommittedOffsets()[tp.Topic][tp.Partition]; ok {
		return head.Offset, true
	}
	if done, ok := c.cl.CommittedOffsets()[tp.Topic][tp.Partition]; ok {
		return done.Offset, true
	}
	return c.startOf(ctx, tp)
}

// startOf asks the cluster where the member's reading of tp starts, for a
// partition franz-go was given and has not fetched yet (it learns a
// partition without a commit only once it is polled): the group's
// committed offset, else the log's start (its end for a group reset to
// the latest). Enrichment's warm gate waits for every partition's
// position before it counts a worker as warm. One answer serves the
// whole topic for startsFresh.
func (c *consumer) startOf(ctx context.Context, tp broker.TopicPartition) (int64, bool) {
	c.startsMu.Lock()
	ts, ok := c.starts[tp.Topic]
	gen := c.startsGen
	c.startsMu.Unlock()
	if !ok || time.Since(ts.at) >= startsFresh {
		// Not under startsMu: a rebalance's forgetStarts does not wait
		// for the cluster's answer.
		ts = topicStarts{offsets: c.askStarts(ctx, tp.Topic)}
		ts.at = time.Now() // after the asking: a timeout is a whole startsFresh's
		c.startsMu.Lock()
		if gen == c.startsGen { // else asked before the assignment changed: not kept
			if c.starts == nil {
				c.starts = map[string]topicStarts{}
			}
			c.starts[tp.Topic] = ts
		}
		c.startsMu.Unlock()
	}
	off, ok := ts.offsets[tp.Partition]
	return off, ok
}

// askStarts is where the reading of each of topic's partitions starts:
// nil if the cluster did not say within 5 s, or before ctx ended.
func (c *consumer) askStarts(ctx context.Context, topic string) map[int32]int64 {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	adm := kadm.NewClient(c.cl)
	committed, err := adm.FetchOffsets(ctx, c.group)
	if err != nil {
		return nil
	}
	list := adm.ListStartOffsets
	if c.resetToLatest {
		list = adm.ListEndOffsets
	}
	listed, err := list(ctx, topic)
	if err != nil {
		return nil
	}
	offsets := map[int32]int64{}
	listed.Each(func(l kadm.ListedOffset) {
		if l.Topic == topic && l.Err == nil {
			offsets[l.Partition] = l.Offset
		}
	})
	committed.Each(func(o kadm.OffsetResponse) {
		if o.Topic == topic && o.Err == nil && o.At >= 0 {
			offsets[o.Partition] = o.At
		}
	})
	return offsets
}

// forgetStarts drops what startOf learned: after a change of assignment
// a partition's committed offset may be its last owner's newer one.
func (c *consumer) forgetStarts() {
	c.startsMu.Lock()
	defer c.startsMu.Unlock()
	clear(c.starts)
	c.startsGen++
}

func (c *consumer) Assigned() []broker.TopicPartition {
	c.mu.Lock()
	defer c.mu.Unlock()
	return slices.Clone(c.assigned)
}

func (c *consumer) Close() error {
	c.leave(true)
	c.cl.Close()
	c.cancel()
	return nil
}

// leaveTimeout bounds the LeaveGroup of a closing consumer.
const leaveTimeout = 5 * time.Second

// leave leaves the group, for leaveTimeout at most: a cluster that takes
// the request and never answers (a stopped broker) would hold the close
// that leaves otherwise, and weir's stop, for franz-go's request and
// retry timeouts. The cluster drops a member that did not leave after its
// session timeout, as one that died. A leave that did not end, or one not
// tried (try false: the cluster has just not answered for endGrace),
// cancels the client's context: the client's Close waits for the group's
// JoinGroup or SyncGroup in flight (which franz-go sends with the
// client's context), as long as the cluster takes to answer, which a
// hung one never does.
func (c *consumer) leave(try bool) {
	if !try {
		c.logger.Warn("kafka: not leaving the consumer group, as the cluster did not answer; it drops the member after its session timeout",
			slog.String("group", c.group))
		c.cancel()
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), leaveTimeout)
	err := c.cl.LeaveGroupContext(ctx)
	if err == nil && c.instanceID != "" {
		// franz-go does not leave for a static member (its restart is
		// to take its partitions back); a stop hands them over now.
		err = c.leaveStatic(ctx)
	}
	cancel()
	if err != nil {
		c.logger.Warn("kafka: leaving the consumer group failed; the cluster drops the member after its session timeout",
			slog.String("group", c.group), slog.Any("error", err))
		c.cancel()
	}
}

// leaveStatic sends the LeaveGroup of a static member, by its instance id.
func (c *consumer) leaveStatic(ctx context.Context) error {
	req := kmsg.NewPtrLeaveGroupRequest()
	req.Group = c.group
	m := kmsg.NewLeaveGroupRequestMember()
	m.InstanceID = &c.instanceID
	req.Members = append(req.Members, m)
	resp, err := req.RequestWith(ctx, c.cl)
	if err != nil {
		return err
	}
	if err := kerr.ErrorForCode(resp.ErrorCode); err != nil {
		return err
	}
	for _, m := range resp.Members {
		if err := kerr.ErrorForCode(m.ErrorCode); err != nil && !errors.Is(err, kerr.UnknownMemberID) {
			return err // unknown: the group dropped it already
		}
	}
	return nil
}

// mapErr maps Kafka errors to the broker package's, so callers handle both
// backends alike.
func mapErr(err error) error {
	switch {
	case errors.Is(err, kerr.UnknownTopicOrPartition), errors.Is(err, kerr.UnknownTopicID):
		// UnknownTopicID: a topic deleted (and perhaps made again)
		// since the client learned its ID.
		return fmt.Errorf("%w: %w", broker.ErrUnknownTopic, err)
	case errors.Is(err, kerr.TopicAlreadyExists):
		return fmt.Errorf("%w: %w", broker.ErrTopicExists, err)
	case errors.Is(err, kerr.InvalidTopicException):
		return fmt.Errorf("%w: %w", broker.ErrInvalidTopic, err)
	case kafkalimits.TooLarge(err):
		return fmt.Errorf("%w: %w", broker.ErrRecordTooLarge, err)
	case errors.Is(err, kerr.OffsetOutOfRange):
		return fmt.Errorf("%w: %w", broker.ErrOffsetOutOfRange, err)
	case errors.Is(err, kerr.KafkaStorageError):
		return fmt.Errorf("%w: %w", broker.ErrStorage, err)
	}
	return err
}

// fetchByName is a fetch request sent at v12 at most, naming its topic.
type fetchByName struct{ *kmsg.FetchRequest }

func (fetchByName) MaxVersion() int16 { return 12 }
func (f fetchByName) Timeout() int32  { return f.MaxWaitMillis }
