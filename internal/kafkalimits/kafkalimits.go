// Package kafkalimits keeps, per topic, the batch limit a franz-go producer
// may fill: its own, or the topic's max.message.bytes where the cluster
// sets it lower. With a limit above the topic's, franz-go fills batches the
// cluster refuses whole (MESSAGE_TOO_LARGE), small records and all, and a
// producer that sends them again stalls on them.
//
// franz-go asks Batch when it first produces to a partition
// (kgo.ProducerBatchMaxBytesFn), so a topic's limit is learned before that.
// A limit lowered on the cluster later shows as batches refused for their
// size: Relearn asks again, and only a new client takes the new limit.
package kafkalimits

import (
	"context"
	"errors"
	"strconv"
	"sync"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
)

// Limits are the batch limits of one producer's topics.
type Limits struct {
	max    int32
	topics sync.Map // topic -> int32 (0: answered without a limit)
}

// New is the limits of a producer whose own batch limit is max.
func New(max int32) *Limits { return &Limits{max: max} }

// Batch is the batch limit for topic: the producer's, or the topic's if
// lower; for kgo.ProducerBatchMaxBytesFn.
func (l *Limits) Batch(topic string) int32 {
	limit := l.max
	if v, ok := l.topics.Load(topic); ok && v.(int32) > 0 {
		limit = min(limit, v.(int32))
	}
	return max(limit, 512) // franz-go's least
}

// Taken is what one franz-go client took from Limits: per topic, the
// highest batch limit it was given (see BatchFn).
type Taken struct{ topics sync.Map } // topic -> int32

// BatchFn is Batch for one client's kgo.ProducerBatchMaxBytesFn, noting in
// taken what the client took.
func (l *Limits) BatchFn(taken *Taken) func(string) int32 {
	return func(topic string) int32 {
		n := l.Batch(topic)
		if v, ok := taken.topics.Load(topic); !ok || v.(int32) < n {
			taken.topics.Store(topic, n)
		}
		return n
	}
}

// Stale reports whether the client of taken fills batches for topic over
// the topic's limit now (one lowered since the client first produced to
// it, learned with Relearn). Only a new client takes the new limit.
func (l *Limits) Stale(taken *Taken, topic string) bool {
	v, ok := taken.topics.Load(topic)
	return ok && v.(int32) > l.Batch(topic)
}

// Known reports whether the cluster has answered for topic (with its limit
// or without one), so that asking again would be for nothing.
func (l *Limits) Known(topic string) bool {
	_, ok := l.topics.Load(topic)
	return ok
}

// Learn asks the cluster for the max.message.bytes of the topics not known
// yet. A topic not there yet is asked again next time (someone will make
// it); one whose configs may not be described, or a request that failed,
// keeps the producer's limit until then.
func (l *Limits) Learn(ctx context.Context, admin *kadm.Client, topics ...string) {
	var ask []string
	for _, t := range topics {
		if !l.Known(t) {
			ask = append(ask, t)
		}
	}
	l.ask(ctx, admin, ask)
}

// Relearn asks the cluster for topic's max.message.bytes again, known or
// not: after the cluster refused a batch for its size, the limit may have
// gone down since it was learned. A failed request keeps what was known.
func (l *Limits) Relearn(ctx context.Context, admin *kadm.Client, topic string) {
	l.ask(ctx, admin, []string{topic})
}

func (l *Limits) ask(ctx context.Context, admin *kadm.Client, topics []string) {
	if len(topics) == 0 {
		return
	}
	rcs, err := admin.DescribeTopicConfigs(ctx, topics...)
	if err != nil {
		return
	}
	l.Note(rcs)
}

// Note learns the limits in the answer to a DescribeTopicConfigs made for
// another purpose too, so the topics are not asked twice.
func (l *Limits) Note(rcs kadm.ResourceConfigs) {
	for _, rc := range rcs {
		if rc.Err != nil {
			if !errors.Is(rc.Err, kerr.UnknownTopicOrPartition) && !l.Known(rc.Name) {
				l.topics.Store(rc.Name, int32(0)) // not allowed: the producer's limit
			}
			continue
		}
		l.topics.Store(rc.Name, limitOf(rc.Configs, "max.message.bytes"))
	}
}

// TooLarge reports whether err is the cluster refusing a batch for its
// size (MESSAGE_TOO_LARGE, RECORD_LIST_TOO_LARGE).
func TooLarge(err error) bool {
	return errors.Is(err, kerr.MessageTooLarge) || errors.Is(err, kerr.RecordListTooLarge)
}

// BrokerLimit asks the cluster for its brokers' message.max.bytes, the
// batch limit of topics that set none: false when it cannot be described
// (ACLs, a cluster that does not say).
func BrokerLimit(ctx context.Context, admin *kadm.Client) (int32, bool) {
	brokers, err := admin.ListBrokers(ctx)
	if err != nil || len(brokers) == 0 {
		return 0, false
	}
	rcs, err := admin.DescribeBrokerConfigs(ctx, brokers[0].NodeID)
	if err != nil {
		return 0, false
	}
	for _, rc := range rcs {
		if n := limitOf(rc.Configs, "message.max.bytes"); rc.Err == nil && n > 0 {
			return n, true
		}
	}
	return 0, false
}

// limitOf is the positive byte limit configs give key, or 0.
func limitOf(configs []kadm.Config, key string) int32 {
	for _, c := range configs {
		if c.Key == key && c.Value != nil {
			if n, err := strconv.ParseInt(*c.Value, 10, 32); err == nil && n > 0 {
				return int32(n)
			}
		}
	}
	return 0
}
