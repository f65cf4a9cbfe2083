package kafkawire

import (
	"context"
	"crypto/rand"
	"fmt"
	"slices"
	"sort"
	"sync"

	"github.com/weirnet/weir/broker"
	"github.com/weirnet/weir/broker/recordbatch"
)

// fakeLog is an in-memory Log: every partition is a byte slice of batches
// with offsets assigned on append, enough to exercise the listener with
// real clients.
type fakeLog struct {
	mu         sync.Mutex
	topics     map[string]*fakeTopic
	autoCreate bool
	// defaultPartitions is what a topic created with Partitions 0 gets.
	defaultPartitions int32
	nextProducerID    int64
	// appendHook, if set, runs after every successful append (outside
	// the lock).
	appendHook func(topic string, partition int32)
}

type fakeTopic struct {
	info  broker.TopicInfo
	parts []*fakePartition
}

type fakePartition struct {
	bytes     int64
	batches   []fakeBatch
	hwm       int64
	logStart  int64
	subs      map[int]chan<- struct{}
	nextSub   int
	producers map[int64]*fakeProducer
}

// fakeBatch is one stored batch, in its own slice so that appends never
// copy earlier data.
type fakeBatch struct {
	base, last int64
	maxTS      int64
	data       []byte
}

type fakeProducer struct {
	epoch             int16
	firstSeq, lastSeq int32
	base              int64
}

func newFakeLog() *fakeLog {
	return &fakeLog{topics: make(map[string]*fakeTopic), defaultPartitions: 3}
}

func (l *fakeLog) partition(topic string, partition int32) (*fakePartition, error) {
	t, ok := l.topics[topic]
	if !ok {
		return nil, fmt.Errorf("topic %q: %w", topic, broker.ErrUnknownTopic)
	}
	if partition < 0 || int(partition) >= len(t.parts) {
		return nil, fmt.Errorf("%s/%d: %w", topic, partition, broker.ErrUnknownPartition)
	}
	return t.parts[partition], nil
}

func (l *fakeLog) DescribeTopics(ctx context.Context, names ...string) ([]broker.TopicInfo, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if len(names) == 0 {
		for name := range l.topics {
			names = append(names, name)
		}
		sort.Strings(names)
	}
	infos := make([]broker.TopicInfo, 0, len(names))
	for _, name := range names {
		t, ok := l.topics[name]
		if !ok {
			// The strict reading of the contract: one unknown name
			// fails the call. The listener copes with either.
			return nil, fmt.Errorf("topic %q: %w", name, broker.ErrUnknownTopic)
		}
		info := t.info
		info.Partitions = make([]broker.PartitionInfo, len(t.parts))
		for i, p := range t.parts {
			info.Partitions[i] = broker.PartitionInfo{
				Partition: int32(i), LogStartOffset: p.logStart, HighWatermark: p.hwm,
				Bytes: p.bytes, Segments: 1,
			}
		}
		infos = append(infos, info)
	}
	return infos, nil
}

func (l *fakeLog) CreateTopic(ctx context.Context, name string, cfg broker.TopicConfig) error {
	if !broker.ValidTopicName(name) {
		return broker.ErrInvalidTopic
	}
	if cfg.Partitions < 0 || cfg.Partitions > 10000 {
		// As the embedded log refuses: the fuzzer's 808 million
		// partitions ran the test out of memory.
		return broker.ErrInvalidPartitions
	}
	if cfg.Partitions == 0 {
		cfg.Partitions = l.defaultPartitions
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if _, ok := l.topics[name]; ok {
		return broker.ErrTopicExists
	}
	t := &fakeTopic{info: broker.TopicInfo{Name: name, Config: cfg}}
	rand.Read(t.info.ID[:])
	for range cfg.Partitions {
		t.parts = append(t.parts, &fakePartition{subs: make(map[int]chan<- struct{}), producers: make(map[int64]*fakeProducer)})
	}
	l.topics[name] = t
	return nil
}

func (l *fakeLog) DeleteTopic(ctx context.Context, name string) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	t, ok := l.topics[name]
	if !ok {
		return broker.ErrUnknownTopic
	}
	delete(l.topics, name)
	for _, p := range t.parts {
		p.wakeAll()
	}
	return nil
}

func (l *fakeLog) AutoCreateTopics() bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.autoCreate
}

func (l *fakeLog) AppendBatches(ctx context.Context, topic string, partition int32, batches []byte) (int64, error) {
	var hdrs []recordbatch.Header
	if _, err := recordbatch.Split(batches, func(h *recordbatch.Header, _ []byte) error {
		hdrs = append(hdrs, *h)
		return nil
	}); err != nil {
		return -1, fmt.Errorf("%w: %v", broker.ErrCorruptBatch, err)
	}
	if len(hdrs) == 0 {
		return -1, broker.ErrCorruptBatch
	}
	l.mu.Lock()
	p, err := l.partition(topic, partition)
	if err != nil {
		l.mu.Unlock()
		return -1, err
	}
	// Minimal idempotence: per producer, the last batch of the current
	// epoch; a resend of it is a duplicate, a gap is out of order.
	first := hdrs[0]
	if first.ProducerID >= 0 {
		if pr, ok := p.producers[first.ProducerID]; ok {
			switch {
			case first.ProducerEpoch < pr.epoch:
				l.mu.Unlock()
				return -1, broker.ErrInvalidProducerEpoch
			case first.ProducerEpoch == pr.epoch && first.BaseSequence == pr.firstSeq:
				l.mu.Unlock()
				return pr.base, nil
			case first.ProducerEpoch == pr.epoch && first.BaseSequence != pr.lastSeq+1:
				l.mu.Unlock()
				return -1, broker.ErrOutOfOrderSequence
			}
		}
	}
	base := p.hwm
	pos := 0
	for _, h := range hdrs {
		data := append([]byte(nil), batches[pos:pos+h.Size()]...)
		recordbatch.SetBaseOffset(data, p.hwm)
		p.batches = append(p.batches, fakeBatch{
			base: p.hwm, last: p.hwm + int64(h.LastOffsetDelta),
			maxTS: h.MaxTimestamp, data: data,
		})
		p.bytes += int64(len(data))
		if h.ProducerID >= 0 {
			p.producers[h.ProducerID] = &fakeProducer{
				epoch: h.ProducerEpoch, firstSeq: h.BaseSequence,
				lastSeq: h.BaseSequence + h.LastOffsetDelta, base: p.hwm,
			}
		}
		p.hwm += int64(h.LastOffsetDelta) + 1
		pos += h.Size()
	}
	p.wakeAll()
	hook := l.appendHook
	l.mu.Unlock()
	if hook != nil {
		hook(topic, partition)
	}
	return base, nil
}

func (p *fakePartition) wakeAll() {
	for _, ch := range p.subs {
		select {
		case ch <- struct{}{}:
		default:
		}
	}
}

func (l *fakeLog) ReadBatches(dst []byte, topic string, partition int32, offset int64, maxBytes int) ([]byte, int64, int64, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	p, err := l.partition(topic, partition)
	if err != nil {
		return dst, -1, -1, err
	}
	if offset < p.logStart || offset > p.hwm {
		return dst, p.hwm, p.logStart, broker.ErrOffsetOutOfRange
	}
	if offset == p.hwm {
		return dst, p.hwm, p.logStart, nil
	}
	i := sort.Search(len(p.batches), func(i int) bool { return p.batches[i].last >= offset })
	dst = append(dst, p.batches[i].data...)
	n := len(p.batches[i].data)
	for _, b := range p.batches[i+1:] {
		if n+len(b.data) > maxBytes {
			break
		}
		dst = append(dst, b.data...)
		n += len(b.data)
	}
	return dst, p.hwm, p.logStart, nil
}

func (l *fakeLog) Subscribe(topic string, partition int32, wake chan<- struct{}) (func(), error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	p, err := l.partition(topic, partition)
	if err != nil {
		return nil, err
	}
	id := p.nextSub
	p.nextSub++
	p.subs[id] = wake
	return func() {
		l.mu.Lock()
		delete(p.subs, id)
		l.mu.Unlock()
	}, nil
}

func (l *fakeLog) ListOffset(topic string, partition int32, timestamp int64) (int64, int64, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	p, err := l.partition(topic, partition)
	if err != nil {
		return -1, -1, err
	}
	switch timestamp {
	case -1:
		return p.hwm, -1, nil
	case -2:
		return p.logStart, -1, nil
	}
	var dec recordbatch.Decoder
	best, bestTS := int64(-1), int64(-1)
	for _, b := range p.batches {
		if timestamp != -3 && b.maxTS < timestamp {
			continue
		}
		batch := b.data
		h, err := recordbatch.Validate(batch)
		if err != nil {
			return -1, -1, err
		}
		dec.Reset()
		if err := dec.Decode(topic, partition, &h, batch, 0); err != nil {
			return -1, -1, err
		}
		for _, r := range dec.Records() {
			ts := r.Timestamp.UnixMilli()
			if timestamp == -3 {
				if ts > bestTS {
					best, bestTS = r.Offset, ts
				}
			} else if ts >= timestamp {
				return r.Offset, ts, nil
			}
		}
	}
	return best, bestTS, nil
}

func (l *fakeLog) InitProducerID(ctx context.Context) (int64, int16, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.nextProducerID++
	return l.nextProducerID, 0, nil
}

// hwm is a test helper: the high watermark of a partition.
func (l *fakeLog) hwm(topic string, partition int32) int64 {
	l.mu.Lock()
	defer l.mu.Unlock()
	p, err := l.partition(topic, partition)
	if err != nil {
		return -1
	}
	return p.hwm
}

// topicNames lists the topics, sorted.
func (l *fakeLog) topicNames() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	var names []string
	for n := range l.topics {
		names = append(names, n)
	}
	slices.Sort(names)
	return names
}
