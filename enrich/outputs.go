package enrich

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strconv"
	"time"

	"github.com/weirnet/weir/broker"
)

// outputs publishes a worker's derived records exactly once. The output
// topics get the input topic's partition count, and what comes from input
// partition P goes to output partition P. Every output record carries its
// input position in the src_offset header ("raw.syslog:1234"). A worker
// that takes over input partition P reads the last src_offset of its input
// in each output partition P and, while it reprocesses from the committed
// offset, skips what is already published: a crash between publishing and
// committing neither loses nor duplicates derived records. If an output
// topic exists with another partition count, delivery falls back to at
// least once, keyed by device, and the log says so.
type outputs struct {
	b      broker.Broker
	input  string
	logger *slog.Logger
	m      *workerMetrics

	aligned bool
	pending []string // output topics to align once the input exists
	// tails holds, per output topic and partition, the last input offset
	// already published there (-1 none; missing: not read yet).
	tails map[string]map[int32]int64
	owned map[int32]bool
}

// outRecord is an output record with the input position it comes from.
type outRecord struct {
	rec  broker.Record
	part int32 // input partition; -1 for records no input caused
	src  int64
}

// headerSrcOffset carries an output record's input topic and offset.
const headerSrcOffset = "src_offset"

// tailWindow is how many of an output partition's last records a takeover
// reads to find where its input got to.
const tailWindow = 4096

func newOutputs(b broker.Broker, input string, logger *slog.Logger, m *workerMetrics) *outputs {
	return &outputs{b: b, input: input, logger: logger, m: m}
}

// srcOffset parses a src_offset header of this outputs' input.
func (o *outputs) srcOffset(v []byte) (int64, bool) {
	i := bytes.LastIndexByte(v, ':')
	if i < 0 || string(v[:i]) != o.input {
		return 0, false
	}
	n, err := strconv.ParseInt(string(v[i+1:]), 10, 64)
	return n, err == nil
}

// alignTopics makes the output topics mirror the input topic's partition
// count, creating what is missing; with a mismatch the worker runs at
// least once.
func (o *outputs) align(ctx context.Context, topics ...string) error {
	o.tails, o.owned = map[string]map[int32]int64{}, map[int32]bool{}
	o.pending = nil
	infos, err := o.b.DescribeTopics(ctx, o.input)
	if errors.Is(err, broker.ErrUnknownTopic) {
		// No input yet: align once it exists (its first records), so
		// weir does not create the topic a user may create with their
		// own partition count.
		o.pending = topics
		return nil
	}
	if err != nil {
		return fmt.Errorf("enrich: describe %s: %w", o.input, err)
	}
	n := int32(len(infos[0].Partitions))
	o.aligned = true
	for _, t := range topics {
		m, err := o.partitions(ctx, t, n)
		if err != nil {
			return err
		}
		if m != n {
			o.aligned = false
			o.logger.Warn("enrich: output topic has another partition count than the input; delivery is at least once",
				slog.String("topic", t), slog.Int("partitions", int(m)), slog.String("input", o.input), slog.Int("input_partitions", int(n)))
		}
		o.tails[t] = map[int32]int64{}
	}
	return nil
}

// partitions returns a topic's partition count, creating it with n
// partitions (0: the broker's default) if it does not exist.
func (o *outputs) partitions(ctx context.Context, topic string, n int32) (int32, error) {
	for range 2 {
		infos, err := o.b.DescribeTopics(ctx, topic)
		if err == nil {
			return int32(len(infos[0].Partitions)), nil
		}
		if !errors.Is(err, broker.ErrUnknownTopic) {
			return 0, fmt.Errorf("enrich: describe %s: %w", topic, err)
		}
		if err := o.b.CreateTopic(ctx, topic, broker.TopicConfig{Partitions: n}); err != nil && !errors.Is(err, broker.ErrTopicExists) {
			return 0, fmt.Errorf("enrich: create %s: %w", topic, err)
		}
	}
	return 0, fmt.Errorf("enrich: topic %s vanished", topic)
}

// trackOwnership forgets the output tails of input partitions this worker
// did not own at its last poll: another worker may have written since.
func (o *outputs) track(assigned []broker.TopicPartition) {
	now := make(map[int32]bool, len(assigned))
	for _, tp := range assigned {
		now[tp.Partition] = true
		if !o.owned[tp.Partition] {
			for _, t := range o.tails {
				delete(t, tp.Partition)
			}
		}
	}
	o.owned = now
}

// tail returns the last input offset published to output partition part
// of topic, reading it from the log's last records when unknown.
func (o *outputs) tail(ctx context.Context, topic string, part int32) (int64, error) {
	if t, ok := o.tails[topic][part]; ok {
		return t, nil
	}
	infos, err := o.b.DescribeTopics(ctx, topic)
	if err != nil {
		return 0, err
	}
	pi := infos[0].Partitions[part]
	last := int64(-1)
	// The last records carry the answer. Other inputs' records and
	// cleared events (no input) may trail them: look back far enough to
	// pass what other writers add in one batch.
	from := max(pi.HighWatermark-tailWindow, pi.LogStartOffset)
	var res broker.FetchResult
	for off := from; off < pi.HighWatermark; {
		if err := o.b.Fetch(ctx, topic, part, off, broker.FetchOptions{}, &res); err != nil {
			return 0, err
		}
		if len(res.Records) == 0 {
			break
		}
		for _, r := range res.Records {
			for _, h := range r.Headers {
				if h.Key == headerSrcOffset {
					if v, ok := o.srcOffset(h.Value); ok && v > last {
						last = v
					}
				}
			}
			off = r.Offset + 1
		}
	}
	o.tails[topic][part] = last
	return last, nil
}

// publish writes outs to topic: to the input's partition, skipping what
// that output partition already has (exactly once), or by key when the
// topics are not aligned. It retries until the broker takes them (a full
// disk stalls enrichment rather than losing records) or ctx ends.
func (o *outputs) publish(ctx context.Context, topic string, outs []outRecord) error {
	if len(outs) == 0 {
		return nil
	}
	if o.pending != nil {
		if err := o.align(ctx, o.pending...); err != nil {
			return err
		}
	}
	if !o.aligned {
		recs := make([]broker.Record, len(outs))
		for i := range outs {
			recs[i] = outs[i].rec
		}
		return o.produce(ctx, topic, -1, recs)
	}
	byPart := map[int32][]broker.Record{}
	var order []int32
	for _, out := range outs {
		part := out.part
		if part < 0 {
			n, err := o.partitions(ctx, topic, 0)
			if err != nil {
				return err
			}
			part = broker.PartitionForKey(out.rec.Key, n)
		} else {
			t, err := o.tail(ctx, topic, part)
			if err != nil {
				return err
			}
			if out.src <= t {
				continue // published before a crash or a hand-over
			}
			val := strconv.AppendInt(append([]byte(o.input), ':'), out.src, 10)
			out.rec.Headers = append(out.rec.Headers[:len(out.rec.Headers):len(out.rec.Headers)],
				broker.Header{Key: headerSrcOffset, Value: val})
		}
		if _, ok := byPart[part]; !ok {
			order = append(order, part)
		}
		byPart[part] = append(byPart[part], out.rec)
	}
	for _, part := range order {
		if err := o.produce(ctx, topic, part, byPart[part]); err != nil {
			return err
		}
	}
	for _, out := range outs {
		if out.part >= 0 && out.src > o.tails[topic][out.part] {
			o.tails[topic][out.part] = out.src
		}
	}
	return nil
}

func (o *outputs) produce(ctx context.Context, topic string, part int32, recs []broker.Record) error {
	backoff := 10 * time.Millisecond
	for {
		var err error
		if part < 0 {
			err = o.b.Produce(ctx, topic, recs)
		} else {
			err = o.b.ProducePartition(ctx, topic, part, recs)
		}
		if err == nil {
			o.m.out.WithLabelValues(topic).Add(float64(len(recs)))
			return nil
		}
		o.logger.Error("enrich: publishing failed, retrying", slog.String("topic", topic), slog.Any("error", err))
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(backoff):
		}
		backoff = min(2*backoff, 5*time.Second)
	}
}

// joinGroup joins the enrich group, waiting while Kafka clients hold the
// group name on the embedded log (a crashed client until its session
// expires) instead of stopping weir. A nil consumer and nil error mean ctx
// ended.
func joinGroup(ctx context.Context, b broker.Broker, topics []string, opts []broker.ConsumerOption, logger *slog.Logger) (broker.Consumer, error) {
	for {
		c, err := b.Consume(ctx, Group, topics, opts...)
		if err == nil {
			return c, nil
		}
		if ctx.Err() != nil {
			return nil, nil
		}
		if !errors.Is(err, broker.ErrGroupInUse) {
			return nil, fmt.Errorf("enrich: join group: %w", err)
		}
		logger.Error("enrich: group is used by a Kafka client; retrying", slog.Any("error", err))
		select {
		case <-ctx.Done():
			return nil, nil
		case <-time.After(5 * time.Second):
		}
	}
}

// poll returns the next records, or none once wait has passed (0: wait
// for records). A failing poll is logged and retried after a second: a
// broken batch or a storage error must not stop enrichment for good. ok is
// false once ctx ends or the consumer is closed.
func poll(ctx context.Context, c broker.Consumer, wait time.Duration, logger *slog.Logger) ([]broker.Record, bool) {
	for {
		pctx, cancel := ctx, context.CancelFunc(func() {})
		if wait > 0 {
			pctx, cancel = context.WithTimeout(ctx, wait)
		}
		recs, err := c.Poll(pctx)
		cancel()
		switch {
		case err == nil:
			return recs, true
		case ctx.Err() != nil || errors.Is(err, broker.ErrClosed):
			return nil, false
		case wait > 0 && errors.Is(err, context.DeadlineExceeded):
			return nil, true
		}
		logger.Error("enrich: poll failed, retrying", slog.Any("error", err))
		select {
		case <-ctx.Done():
			return nil, false
		case <-time.After(time.Second):
		}
	}
}
