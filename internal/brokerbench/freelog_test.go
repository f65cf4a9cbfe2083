package brokerbench

import (
	"context"
	"crypto/rand"
	"sort"
	"sync"

	"github.com/weirnet/weir/broker"
	"github.com/weirnet/weir/broker/recordbatch"
)

// freeLog is the cheapest log weir's Kafka listener can serve: batches are
// kept in memory as the producer sent them, with only their base offsets
// rewritten; no CRC check, no decompression, no sequence check, no disk.
// Over the listener it gives the ceiling of the listener figures on this
// machine: the rate the franz-go client reaches when the log costs nothing,
// which no real log (weir's, kfake's) can beat.
type freeLog struct {
	mu     sync.Mutex
	topics map[string]*freeTopic
	pid    int64
}

// freeTopic is a topic: its ID, given at creation and kept (a client
// that sees a topic's ID change takes it for deleted and recreated, and
// fails it with UNKNOWN_TOPIC_ID), and its partitions.
type freeTopic struct {
	id    [16]byte
	parts []*freePartition
}

type freePartition struct {
	batches []freeBatch
	hwm     int64
	subs    map[int]chan<- struct{}
	nextSub int
}

type freeBatch struct {
	last int64
	data []byte
}

func newFreeLog() *freeLog { return &freeLog{topics: map[string]*freeTopic{}} }

func (l *freeLog) part(topic string, partition int32) (*freePartition, error) {
	t, ok := l.topics[topic]
	if !ok {
		return nil, broker.ErrUnknownTopic
	}
	if partition < 0 || int(partition) >= len(t.parts) {
		return nil, broker.ErrUnknownPartition
	}
	return t.parts[partition], nil
}

func (l *freeLog) DescribeTopics(_ context.Context, names ...string) ([]broker.TopicInfo, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if len(names) == 0 {
		for name := range l.topics {
			names = append(names, name)
		}
		sort.Strings(names)
	}
	var infos []broker.TopicInfo
	for _, name := range names {
		t, ok := l.topics[name]
		if !ok {
			return nil, broker.ErrUnknownTopic
		}
		info := broker.TopicInfo{Name: name, ID: t.id, Config: broker.TopicConfig{Partitions: int32(len(t.parts))}}
		for i, p := range t.parts {
			info.Partitions = append(info.Partitions, broker.PartitionInfo{Partition: int32(i), HighWatermark: p.hwm, Segments: 1})
		}
		infos = append(infos, info)
	}
	return infos, nil
}

func (l *freeLog) CreateTopic(_ context.Context, name string, cfg broker.TopicConfig) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if _, ok := l.topics[name]; ok {
		return broker.ErrTopicExists
	}
	n := cfg.Partitions
	if n == 0 {
		n = partitions
	}
	t := &freeTopic{}
	rand.Read(t.id[:])
	for range n {
		t.parts = append(t.parts, &freePartition{subs: map[int]chan<- struct{}{}})
	}
	l.topics[name] = t
	return nil
}

func (l *freeLog) DeleteTopic(_ context.Context, name string) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	delete(l.topics, name)
	return nil
}

func (l *freeLog) AutoCreateTopics() bool { return true }

func (l *freeLog) AppendBatches(_ context.Context, topic string, partition int32, batches []byte) (int64, error) {
	data := append([]byte(nil), batches...) // the caller reuses batches
	l.mu.Lock()
	defer l.mu.Unlock()
	p, err := l.part(topic, partition)
	if err != nil {
		return -1, err
	}
	base := p.hwm
	for pos := 0; pos < len(data); {
		h, err := recordbatch.ParseHeader(data[pos:])
		if err != nil || pos+h.Size() > len(data) {
			return -1, broker.ErrCorruptBatch
		}
		b := data[pos : pos+h.Size()]
		recordbatch.SetBaseOffset(b, p.hwm)
		p.hwm += int64(h.LastOffsetDelta) + 1
		p.batches = append(p.batches, freeBatch{last: p.hwm - 1, data: b})
		pos += h.Size()
	}
	for _, w := range p.subs {
		select {
		case w <- struct{}{}:
		default:
		}
	}
	return base, nil
}

func (l *freeLog) ReadBatches(dst []byte, topic string, partition int32, offset int64, maxBytes int) ([]byte, int64, int64, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	p, err := l.part(topic, partition)
	if err != nil {
		return dst, -1, -1, err
	}
	if offset < 0 || offset > p.hwm {
		return dst, p.hwm, 0, broker.ErrOffsetOutOfRange
	}
	i := sort.Search(len(p.batches), func(i int) bool { return p.batches[i].last >= offset })
	for n := 0; i < len(p.batches) && (n == 0 || n+len(p.batches[i].data) <= maxBytes); i++ {
		dst = append(dst, p.batches[i].data...)
		n += len(p.batches[i].data)
	}
	return dst, p.hwm, 0, nil
}

func (l *freeLog) Subscribe(topic string, partition int32, wake chan<- struct{}) (func(), error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	p, err := l.part(topic, partition)
	if err != nil {
		return nil, err
	}
	id := p.nextSub
	p.nextSub++
	p.subs[id] = wake
	return func() { l.mu.Lock(); delete(p.subs, id); l.mu.Unlock() }, nil
}

func (l *freeLog) ListOffset(topic string, partition int32, timestamp int64) (int64, int64, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	p, err := l.part(topic, partition)
	if err != nil {
		return -1, -1, err
	}
	if timestamp == -2 {
		return 0, -1, nil
	}
	return p.hwm, -1, nil
}

func (l *freeLog) InitProducerID(context.Context) (int64, int16, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.pid++
	return l.pid, 0, nil
}
