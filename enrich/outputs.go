package enrich

import (
	"bytes"
	"context"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strconv"
	"time"

	"github.com/weirnet/weir/broker"
	"github.com/weirnet/weir/internal/throttle"
)

// outputs publishes a worker's derived records exactly once, by one of two
// methods.
//
// With transactions (a broker.TxnConsumer: the Kafka cluster backend), a
// batch's outputs are produced and its input offsets committed in one
// transaction: both or neither. An aborted transaction (a rebalance, a
// failure) leaves the records to be polled again; the replay memo gives
// them the outputs they had, since the worker's state (de-duplication,
// flaps, rates) has already seen them.
//
// Without (the embedded log), the output topics get the input topic's
// partition count, and what comes from input partition P goes to output
// partition P. Every output record carries its input position in the
// src_offset header ("raw.syslog:1234"). A worker that takes over input
// partition P reads the src_offsets of its input in each output partition
// P from its committed offset on and, while it reprocesses from there,
// skips the records whose outputs are there (see exact): a crash between
// publishing and committing neither loses nor duplicates derived records.
// If an output topic exists with another partition count, delivery falls
// back to at least once, keyed by device, and the log says so.
//
// Both route alike (to P when the partition counts match, with src_offset
// set, else by key), so topics have the same layout on either backend.
type outputs struct {
	b      broker.Broker
	sizes  broker.SizeChecker // nil: the broker says only when producing
	input  string
	logger *slog.Logger
	m      *workerMetrics
	txn    bool // the consumer has transactions

	replay replay
	// carry holds the time-caused outputs (no input record) of an
	// aborted transaction, for the next one.
	carry []outBatch

	aligned bool
	pending []string // output topics to align once the input exists
	topics  []string // the output topics, to align again (see publishRetrying)
	// inputID tells this input topic from an earlier one of its name (a
	// topic deleted and made again starts its offsets over): the first
	// bytes of its topic ID, in hex, after the input's name in src_offset
	// ("raw.syslog#1a2b3c4d:1234"); "" when the broker gives no ID.
	inputID string
	// next is, per input partition, the offset after the last record
	// polled: one polled below it again means the partition went back
	// (see track).
	next map[int32]int64
	// tails holds, per output topic and partition, the last input offset
	// already published there (-1 none; missing: not read yet).
	tails map[string]map[int32]int64
	// earlier holds the tails as read from the log, what earlier owners
	// of the partition published, where tails goes on with this
	// worker's own: a record publish skips at or below it is counted
	// already_published.
	earlier map[string]map[int32]int64
	owned   map[int32]bool
	// first is, per input partition, the offset the worker's reading
	// started at (its committed position), and exact, per output topic
	// and partition, which input records from there to the tail have
	// outputs there: a worker before published them and stopped before
	// its commit. Only those are skipped; a record between them that
	// has none had its event left out as a repeat of another partition's
	// change, which may never have been published, and is judged again.
	first map[int32]int64
	exact map[string]map[int32]*publishedSet

	// pub publishes on a goroutine of its own while the worker enriches
	// (see startPublisher); nil: deliver publishes in line.
	pub *publisher
	// origins is the detector whose judging of the worker's records
	// deliver tells, and waits for before a commit (see origins.go); nil:
	// none.
	origins *detector
	// polled are the input partitions of the records polled since the
	// last delivery: those deliver tells origins it delivered, and whose
	// repeats it waits for. Not the consumer's assignment: a rebalance
	// changes that at once, before the worker handing a partition over
	// has published what it polled of it, and before a partition taken
	// away is let go at the commit (the worker that takes it then reads
	// its records again, and leaves out again, without waiting, what was
	// left out).
	polled []broker.TopicPartition
	// events is the events topic; delivering, on a Kafka cluster, the
	// batches deliver has in hand while it waits for their origins:
	// another worker breaking a cycle of waits takes events from them
	// (see detector.takeOver). Set by deliver before awaitOrigins and
	// read by the other worker under the detector's lock.
	events     string
	delivering []outBatch

	// publish's scratch, kept between calls (one publishes at a time).
	runs    []partRun
	kept    []broker.Record
	keptRun []int32
	// And what it produces, without a transaction (see publishScratch):
	// the records, their header lists and their src_offset values.
	produced []broker.Record
	headers  []broker.Header
	srcVals  []byte
}

// partRun is one output partition's share of a publish call: its
// records (n, placed from at), and the last input offset among them (src;
// -1 for none: records no input caused).
type partRun struct {
	part  int32
	n, at int
	src   int64
	gap   []int64 // of the records in the tail's gaps (see outputs.exact)
}

// outRecord is an output record with the input position it comes from.
type outRecord struct {
	rec  broker.Record
	part int32 // input partition; -1 for records no input caused
	src  int64
}

// headerSrcOffset carries an output record's input topic and offset.
const headerSrcOffset = "src_offset"

// tailWindow is how many of an output partition's records a takeover
// reads at a time, from the end back, to find where its input got to;
// tailMax bounds them all. Other inputs share the output partition (raw.snmp
// and raw.gnmi write enriched.metrics, all four events): a fast one may have
// written thousands of records since this input's last.
const (
	tailWindow = 4096
	tailMax    = 1 << 20
)

func newOutputs(b broker.Broker, input string, logger *slog.Logger, m *workerMetrics, txn bool) *outputs {
	sizes, _ := b.(broker.SizeChecker)
	return &outputs{b: b, sizes: sizes, input: input, logger: logger, m: m, txn: txn, replay: replay{on: txn}}
}

// fits says whether the broker takes rec (with its final headers) for its
// size. One it refuses (a syslog line near the size limit grows past it
// when enriched) is left out and logged, and counted by the caller once
// its batch is published: its input is in the log, so producing it again
// would stall the worker on every partition it owns, for ever, also after
// a restart.
func (o *outputs) fits(topic string, rec *broker.Record, part int32, src int64) bool {
	if o.sizes == nil {
		return true
	}
	err := o.sizes.CheckSize(topic, rec.Key, rec.Value, rec.Headers)
	if err == nil {
		return true
	}
	o.logger.Warn("enrich: output record left out: the broker refuses its size", slog.String("topic", topic),
		slog.String("input", o.input), slog.Int("partition", int(part)), slog.Int64("offset", src), slog.Any("error", err))
	return false
}

// sizeFits is fits without its log line, for an output of input record
// src as publish would produce it (with its src_offset header).
func (o *outputs) sizeFits(topic string, rec *broker.Record, src int64) bool {
	if o.sizes == nil {
		return true
	}
	hs := append(slices.Clip(rec.Headers), broker.Header{Key: headerSrcOffset, Value: o.appendSrcOffset(nil, src)})
	return o.sizes.CheckSize(topic, rec.Key, rec.Value, hs) == nil
}

// appendSrcOffset appends the src_offset header value of the outputs of
// input record src: "input:src", or "input#id:src" with the input
// topic's ID.
func (o *outputs) appendSrcOffset(b []byte, src int64) []byte {
	b = append(b, o.input...)
	if o.inputID != "" {
		b = append(append(b, '#'), o.inputID...)
	}
	return strconv.AppendInt(append(b, ':'), src, 10)
}

// srcKind is whose a src_offset header is, as srcHeader reads it.
type srcKind uint8

const (
	srcElse    srcKind = iota // another input's, or not one
	srcThis                   // this input topic's
	srcUnnamed                // this input's name, written before headers named the topic (no "#ID")
	srcOther                  // this input's name, of another topic of that name (deleted since)
)

// srcHeader parses a src_offset header and says whose it is.
func (o *outputs) srcHeader(v []byte) (int64, srcKind) {
	i := bytes.LastIndexByte(v, ':')
	if i < 0 {
		return 0, srcElse
	}
	name, kind := v[:i], srcUnnamed
	if j := bytes.LastIndexByte(name, '#'); j >= 0 {
		kind = srcOther
		if string(name[j+1:]) == o.inputID {
			kind = srcThis
		}
		name = name[:j]
	}
	if string(name) != o.input {
		return 0, srcElse
	}
	n, err := strconv.ParseInt(string(v[i+1:]), 10, 64)
	if err != nil {
		return 0, srcElse
	}
	return n, kind
}

// srcOffset parses a src_offset header of this outputs' input: of this
// input topic, or written before headers named one (no "#ID").
func (o *outputs) srcOffset(v []byte) (int64, bool) {
	n, kind := o.srcHeader(v)
	return n, kind == srcThis || kind == srcUnnamed
}

// align makes the output topics mirror the input topic's partition count,
// creating what is missing; with a mismatch, records go by key, and the
// worker runs at least once unless it has transactions.
func (o *outputs) align(ctx context.Context, topics ...string) error {
	for _, t := range topics {
		// At zero from the start, for alerts on their increase.
		o.m.dropped.WithLabelValues(t, "too_large")
		o.m.publishErrors.WithLabelValues(t)
	}
	o.tails, o.earlier, o.owned = map[string]map[int32]int64{}, map[string]map[int32]int64{}, map[int32]bool{}
	o.pending = nil
	o.topics = topics
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
	o.inputID = topicIDHex(infos[0].ID)
	o.aligned = true
	for _, t := range topics {
		m, err := o.partitions(ctx, t, n)
		if err != nil {
			return err
		}
		if m != n {
			o.aligned = false
		}
		if m != n && !o.txn {
			o.logger.Warn("enrich: output topic has another partition count than the input; delivery is at least once",
				slog.String("topic", t), slog.Int("partitions", int(m)), slog.String("input", o.input), slog.Int("input_partitions", int(n)))
		}
		o.tails[t], o.earlier[t] = map[int32]int64{}, map[int32]int64{}
	}
	return nil
}

// alignRetrying is align, tried again until it succeeds or ctx ends
// (false): a cluster not reachable yet when weir starts is waited for and
// logged, as the shard member and the sinks wait for it, rather than
// stopping weir. Later failures to publish are retried the same way.
func (o *outputs) alignRetrying(ctx context.Context, topics ...string) bool {
	wait := time.Second
	var since time.Time // of the first failure
	for attempts := 1; ; attempts++ {
		err := o.align(ctx, topics...)
		if err == nil {
			if attempts > 1 {
				// The errors above no longer hold: say so.
				o.logger.Info("enrich: started", slog.String("input", o.input), slog.Int("attempts", attempts),
					slog.Duration("failing_for", time.Since(since)))
			}
			return true
		}
		if ctx.Err() != nil {
			return false
		}
		if attempts == 1 {
			since = time.Now()
		}
		o.logger.Error("enrich: cannot start; retrying", slog.Any("error", err), slog.Duration("in", wait))
		select {
		case <-ctx.Done():
			return false
		case <-time.After(wait):
		}
		wait = min(2*wait, 30*time.Second)
	}
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

// topicIDHex is the first four bytes of a topic ID in hex, "" for none.
func topicIDHex(id [16]byte) string {
	if id == [16]byte{} {
		return ""
	}
	return hex.EncodeToString(id[:4])
}

// track forgets the output tails of input partitions this worker did not
// own at its last poll (another worker may have written since), and of
// those whose polled records go back to offsets polled before: a
// rebalance handed them back from the last commit, or the input topic was
// deleted and made again, its offsets starting over, between two polls.
// The next publish reads their tails again. Then, and at a partition's
// first records, it reads the input's topic ID again: the records of this
// poll are of the topic there is now, and their headers name it. (Read
// later, when a tail is, the ID of a topic made again since the poll
// would be written on the records of the one before, and the new topic's
// records below their offsets would be skipped as published.)
func (o *outputs) track(ctx context.Context, assigned []broker.TopicPartition, recs []broker.Record) {
	now := make(map[int32]bool, len(assigned))
	refresh := false
	for _, tp := range assigned {
		now[tp.Partition] = true
		if !o.owned[tp.Partition] {
			o.forgetTails(tp.Partition)
			refresh = true
		}
	}
	o.owned = now
	if o.origins != nil {
		o.origins.own(o, assigned)
	}
	if o.next == nil {
		o.next = map[int32]int64{}
	}
	for i := 0; i < len(recs); { // a partition's records come in a run
		p, j := recs[i].Partition, i+1
		for j < len(recs) && recs[j].Partition == p {
			j++
		}
		if n, ok := o.next[p]; !ok || recs[i].Offset < n {
			o.forgetTails(p)
			refresh = true
		}
		o.startsAt(p, recs[i].Offset)
		o.next[p] = recs[j-1].Offset + 1
		if tp := (broker.TopicPartition{Topic: o.input, Partition: p}); o.origins != nil && !containsPartition(o.polled, tp) {
			o.polled = append(o.polled, tp)
		}
		i = j
	}
	if refresh && o.aligned && !o.txn { // with transactions no tail is read
		if in, err := o.b.DescribeTopics(ctx, o.input); err == nil {
			// (Gone again, it gives no more records; those polled
			// keep the ID they had.)
			o.inputID = topicIDHex(in[0].ID)
		}
	}
}

func (o *outputs) forgetTails(part int32) {
	delete(o.first, part)
	for _, t := range o.exact {
		delete(t, part)
	}
	for _, t := range o.tails {
		delete(t, part)
	}
	for _, t := range o.earlier {
		delete(t, part)
	}
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
	if int(part) >= len(infos[0].Partitions) {
		// Made again with fewer partitions (see publishRetrying).
		return 0, fmt.Errorf("%w: %s/%d", broker.ErrUnknownPartition, topic, part)
	}
	pi := infos[0].Partitions[part]
	last := int64(-1)
	// With the start known, on back past the outputs of the records from
	// there on: see exact. An output of a record before the start does
	// not end the scan by itself: a worker that judged such a record
	// again published its output after others' (see publish). Such an
	// output is stamped when it was published, after the start's record
	// came; so the scan ends at one older than that record (less a
	// clock's step). The outputs stamped with their records' times
	// (enriched records) are in the records' order.
	start, exactly := o.first[part]
	var bound time.Time
	if exactly {
		at, ok := o.inputTime(ctx, part, start)
		if now := time.Now(); at.After(now) {
			at = now // a producer's clock ahead
		}
		bound, exactly = at.Add(-100*time.Millisecond), ok // a clock's step
	}
	passed := false // the scan got to an output of a record before start, before bound
	found := srcSpan{at: -1}
	// see collects this input's src offset v, of the output at offset at
	// stamped ts, into span if it is from start on; else an output older
	// than bound ends the scan.
	see := func(span *srcSpan, v, at int64, ts time.Time) {
		switch {
		case !exactly:
		case v >= start:
			span.add(v, at)
		case ts.Before(bound):
			passed = true
		}
	}
	// This input's records are in input order (but for those judged
	// again, see exact), so its last one carries the answer. Other
	// inputs' records and cleared events (no input) may trail it: read
	// back a window at a time until one of this input's is found (and,
	// for exact, bound is passed), the log starts, or tailMax records
	// were read (then none is taken to be there). Headers without the topic's ID were written
	// before any with one: once the scan has passed one of another topic
	// of the input's name (deleted since), those behind it are of an
	// older topic still, not of this one.
	var res broker.FetchResult
	other := false
	this, unnamed := int64(-1), int64(-1)
	// The window's outputs from start on under headers without the ID:
	// this input's, as unnamed is, unless the window passed one of
	// another topic of its name.
	unnamedFound := srcSpan{at: -1}
	settle := func() {
		switch {
		case this >= 0:
			last = max(last, this)
		case !other && last < 0:
			last = unnamed
		}
		if !other {
			found.merge(&unnamedFound)
		}
		unnamedFound = srcSpan{offs: unnamedFound.offs[:0], at: -1}
	}
scan:
	for end := pi.HighWatermark; (last < 0 || exactly && !passed) && end > pi.LogStartOffset && pi.HighWatermark-end < tailMax; {
		from := max(end-tailWindow, pi.LogStartOffset)
		this, unnamed = -1, -1
		for off := from; off < end; {
			if err := o.b.Fetch(ctx, topic, part, off, broker.FetchOptions{}, &res); err != nil {
				if errors.Is(err, broker.ErrOffsetOutOfRange) {
					break scan // retention deleted what was left to read
				}
				return 0, err
			}
			if len(res.Records) == 0 {
				break
			}
			for _, r := range res.Records {
				if r.Offset >= end {
					break
				}
				for _, h := range r.Headers {
					if h.Key == headerSrcOffset {
						switch v, kind := o.srcHeader(h.Value); kind {
						case srcThis:
							this = max(this, v)
							see(&found, v, r.Offset, r.Timestamp)
						case srcUnnamed:
							unnamed = max(unnamed, v)
							see(&unnamedFound, v, r.Offset, r.Timestamp)
						case srcOther:
							other = true
						}
					}
				}
				off = r.Offset + 1
			}
			if off < end && res.Records[len(res.Records)-1].Offset >= end {
				break
			}
		}
		settle()
		end = from
	}
	if last < 0 {
		settle() // what a window cut short by retention found
	}
	if o.tails[topic] == nil {
		// An align that failed reset them (see publishRetrying).
		o.tails[topic], o.earlier[topic] = map[int32]int64{}, map[int32]int64{}
	}
	o.tails[topic][part], o.earlier[topic][part] = last, last
	if exactly && last >= start {
		if o.exact == nil {
			o.exact = map[string]map[int32]*publishedSet{}
		}
		if o.exact[topic] == nil {
			o.exact[topic] = map[int32]*publishedSet{}
		}
		o.exact[topic][part] = found.set(start)
	}
	return last, nil
}

// srcSpan is the src offsets a tail scan found from its start on, and the
// output offset of the first of their outputs (-1: none).
type srcSpan struct {
	offs []int64
	at   int64
}

// add notes src offset v, of the output at offset at.
func (s *srcSpan) add(v, at int64) {
	s.offs = append(s.offs, v)
	if s.at < 0 || at < s.at {
		s.at = at
	}
}

// merge adds what other found.
func (s *srcSpan) merge(other *srcSpan) {
	if len(other.offs) == 0 {
		return
	}
	s.offs = append(s.offs, other.offs...)
	if s.at < 0 || other.at < s.at {
		s.at = other.at
	}
}

// set is the publishedSet of what s found from offset from on, with how
// many outputs of each record it found.
func (s *srcSpan) set(from int64) *publishedSet {
	slices.Sort(s.offs)
	ps := &publishedSet{from: from, at: s.at, offs: s.offs[:0]}
	for _, v := range s.offs {
		if k := len(ps.offs) - 1; k >= 0 && ps.offs[k] == v {
			ps.n[k]++
			continue
		}
		ps.offs, ps.n = append(ps.offs, v), append(ps.n, 1)
	}
	return ps
}

// inputTime returns the time of the input record at offset off of
// partition part, if it can be read.
func (o *outputs) inputTime(ctx context.Context, part int32, off int64) (time.Time, bool) {
	var res broker.FetchResult
	if err := o.b.Fetch(ctx, o.input, part, off, broker.FetchOptions{MaxBytes: 1}, &res); err != nil {
		return time.Time{}, false
	}
	for _, r := range res.Records {
		if r.Offset >= off {
			return r.Timestamp, !r.Timestamp.IsZero()
		}
	}
	return time.Time{}, false
}

// startsAt notes that the worker's reading of input partition part starts
// at offset from, unless known.
func (o *outputs) startsAt(part int32, from int64) {
	if _, ok := o.first[part]; ok {
		return
	}
	if o.first == nil {
		o.first = map[int32]int64{}
	}
	o.first[part] = from
}

// publishedSet is the input records from offset from on whose outputs an
// output partition holds, in order; at is where the first of them is in
// the output partition. n is, for each, how many of its outputs the log
// held when read (0: all, those this worker published since): a produce
// call the log appended in part (a full disk, or a kill, between two of
// its batches) may hold some of a record's outputs and not the others.
type publishedSet struct {
	from, at int64
	offs     []int64
	n        []int32
}

// holds reports whether src's outputs are there (before from, all are),
// and how many of them: -1 for all (or as far as known).
func (s *publishedSet) holds(src int64) (has bool, held int) {
	if s == nil || src < s.from {
		return true, -1
	}
	i, ok := slices.BinarySearch(s.offs, src)
	if !ok {
		return false, -1
	}
	if s.n[i] == 0 {
		return true, -1
	}
	return true, int(s.n[i])
}

// add notes that src's outputs are there now, all of them.
func (s *publishedSet) add(src int64) {
	i, ok := slices.BinarySearch(s.offs, src)
	if !ok {
		s.offs, s.n = slices.Insert(s.offs, i, src), slices.Insert(s.n, i, 0)
		return
	}
	s.n[i] = 0
}

// publishedPast returns the offset past the last record of input
// partition part whose outputs topic holds, the worker's reading of it
// starting at from, and where in topic's partition part (aligned with
// part) the first of those from from on is; past is -1 when there are
// none, with transactions (the outputs of a transaction not committed
// are not there), or when it cannot tell.
func (o *outputs) publishedPast(ctx context.Context, topic string, part int32, from int64) (past, at int64) {
	if o.txn || !o.aligned || o.tails[topic] == nil {
		return -1, -1
	}
	o.startsAt(part, from)
	t, err := o.tail(ctx, topic, part)
	ex := o.exact[topic][part]
	if err != nil || t < from || ex == nil || ex.from != from || ex.at < 0 {
		return -1, -1
	}
	return t + 1, ex.at
}

// publish writes outs to topic: to the input's partition, or by key when
// the topics are not aligned. Without a transaction (tx nil), it skips
// what that output partition already has (exactly once) and retries until
// the broker takes the records (a full disk stalls enrichment rather than
// losing records) or ctx ends; in one, a failure aborts the transaction.
// It returns how many records it left out for their size (see fits), and
// how many because an earlier owner had published them to the output
// partition (not those an earlier attempt at outs did).
func (o *outputs) publish(ctx context.Context, tx broker.Txn, topic string, outs []outRecord) (left, had int, err error) {
	if len(outs) == 0 {
		return 0, 0, nil
	}
	if o.pending != nil {
		if err := o.align(ctx, o.pending...); err != nil {
			return 0, 0, err
		}
	}
	if !o.aligned {
		recs := make([]broker.Record, 0, len(outs))
		for i := range outs {
			if o.fits(topic, &outs[i].rec, outs[i].part, outs[i].src) {
				recs = append(recs, outs[i].rec)
			}
		}
		if left = len(outs) - len(recs); len(recs) == 0 {
			return left, 0, nil
		}
		return left, 0, o.produce(ctx, tx, topic, -1, recs)
	}
	// The records kept, then laid out by output partition in one array:
	// one allocation a call, not a growing list per partition.
	runs, kept, keptRun := o.runs[:0], o.kept[:0], o.keptRun[:0]
	last := -1 // the run of the record before: one input partition's come together
	runOf := func(part int32) int {
		if last >= 0 && runs[last].part == part {
			return last
		}
		for i := range runs {
			if runs[i].part == part {
				last = i
				return i
			}
		}
		runs = append(runs, partRun{part: part, src: -1})
		last = len(runs) - 1
		return last
	}
	var keyed int32 // the topic's partition count, for records no input caused: looked up once
	// The input record whose outputs the loop is at, and how many of them
	// it saw (a record's outputs come together): where the log holds only
	// the first of them (see publishedSet), the others are published.
	seenAt, seen := inPos{-1, -1}, 0
	// The src_offset headers of the batch, and the records' header lists
	// with them, in one buffer each rather than two per record.
	recs, headers, srcVals := o.publishScratch(len(outs))
	defer func() { o.keepScratch(recs, headers, srcVals) }()
	for i := range outs {
		out := &outs[i]
		rec, part := out.rec, out.part
		r := -1
		if part < 0 {
			if keyed == 0 {
				n, err := o.partitions(ctx, topic, 0)
				if err != nil {
					return 0, 0, err
				}
				keyed = n
			}
			part = broker.PartitionForKey(rec.Key, keyed)
		} else {
			if tx == nil {
				t, err := o.tail(ctx, topic, part)
				if err != nil {
					return 0, 0, err
				}
				if out.src <= t {
					has, held := o.exact[topic][part].holds(out.src)
					if held >= 0 {
						if at := (inPos{part, out.src}); at != seenAt {
							seenAt, seen = at, 0
						}
						if o.sizeFits(topic, &rec, out.src) {
							seen++ // one the log would hold
						}
					}
					if !has {
						// Judged again; once published, a retry of
						// the batch skips it.
						r = runOf(part)
						runs[r].gap = append(runs[r].gap, out.src)
					} else if held >= 0 && seen > held {
						// Past the outputs of the record the log
						// holds: the rest of a partial append.
						r = runOf(part)
						runs[r].gap = append(runs[r].gap, out.src)
					} else {
						if e, ok := o.earlier[topic][part]; ok && out.src <= e {
							had++ // not one a failed attempt of this batch published
						}
						continue // published before a crash or a hand-over
					}
				}
			}
			v := len(srcVals)
			srcVals = o.appendSrcOffset(srcVals, out.src)
			h := len(headers)
			headers = append(append(headers, rec.Headers...), broker.Header{Key: headerSrcOffset, Value: srcVals[v:len(srcVals):len(srcVals)]})
			rec.Headers = headers[h:len(headers):len(headers)]
			// Once its partition is published, its tail is past this
			// input record, whether the record fits or not.
			r = runOf(part)
			runs[r].src = max(runs[r].src, out.src)
		}
		if !o.fits(topic, &rec, out.part, out.src) {
			left++
			continue
		}
		if r < 0 {
			r = runOf(part)
		}
		runs[r].n++
		kept, keptRun = append(kept, rec), append(keptRun, int32(r))
	}
	recs = slices.Grow(recs, len(kept))[:len(kept)]
	at := 0
	for i := range runs {
		runs[i].at, at = at, at+runs[i].n
	}
	for i := range kept {
		r := &runs[keptRun[i]]
		recs[r.at] = kept[i]
		r.at++
	}
	clear(kept) // no values held past the call
	o.runs, o.kept, o.keptRun = runs[:0], kept[:0], keptRun[:0]
	// Produced in the order of each partition's first record kept (a
	// too-large record before it made its run earlier): which partitions
	// a failure partway through leaves published is as it was.
	for _, ri := range keptRun {
		r := &runs[ri]
		n := r.n
		if n == 0 {
			continue // produced already
		}
		r.n = 0
		if err := o.produce(ctx, tx, topic, r.part, recs[r.at-n:r.at:r.at]); err != nil {
			return left, had, err
		}
		// Partition by partition: a retry after a later one failed
		// skips what this one has (see publishRetrying).
		if tx == nil && r.src > o.tails[topic][r.part] {
			o.tails[topic][r.part] = r.src
		}
		for _, src := range r.gap {
			o.exact[topic][r.part].add(src)
		}
	}
	return left, had, nil
}

// publishScratch returns the buffers a publish of n outputs lays out what
// it produces in, empty: without a transaction the last call's, as
// nothing holds a record once its produce returned (it is in the log), so
// a publish allocates nothing once they have grown (they were most of what
// the syslog path allocated: about 330 B a record); in one, new ones, as
// the transaction's producer may keep the records until its commit.
func (o *outputs) publishScratch(n int) ([]broker.Record, []broker.Header, []byte) {
	srcSize := n * o.srcValSize()
	if o.txn {
		return nil, make([]broker.Header, 0, n*3), make([]byte, 0, srcSize)
	}
	return o.produced[:0], slices.Grow(o.headers[:0], n*3), slices.Grow(o.srcVals[:0], srcSize)
}

// keepScratch keeps publish's buffers for the next call, without a
// transaction, holding none of the records' values; not those of a call
// past maxKeptProduced records (a burst's), which would stay as large.
// Each buffer is bounded on its own: the header and src_offset buffers
// are sized for every output given, the records' for those produced (of
// a burst whose outputs are mostly published already, few).
func (o *outputs) keepScratch(recs []broker.Record, headers []broker.Header, srcVals []byte) {
	if o.txn {
		return
	}
	if cap(recs) > maxKeptProduced || cap(headers) > 3*maxKeptProduced || cap(srcVals) > maxKeptProduced*o.srcValSize() {
		o.produced, o.headers, o.srcVals = nil, nil, nil
		return
	}
	clear(recs)
	clear(headers)
	o.produced, o.headers, o.srcVals = recs[:0], headers[:0], srcVals[:0]
}

// srcValSize is about the size of one src_offset header value (see
// appendSrcOffset): the input's name and ID, and an offset.
func (o *outputs) srcValSize() int { return len(o.input) + len(o.inputID) + 22 }

// maxKeptProduced bounds the records whose buffers a publish keeps for
// the next: about 4 MB with their headers. The outputs of a 128 KiB
// chunk of syslog (eachChunk) are about 400 records.
const maxKeptProduced = 1 << 14

func (o *outputs) produce(ctx context.Context, tx broker.Txn, topic string, part int32, recs []broker.Record) error {
	if tx != nil {
		if part < 0 {
			return tx.Produce(ctx, topic, recs)
		}
		return tx.ProducePartition(ctx, topic, part, recs)
	}
	backoff := 10 * time.Millisecond
	var failing publishFailures
	for {
		var err error
		if part < 0 {
			err = o.b.Produce(ctx, topic, recs)
		} else {
			err = o.b.ProducePartition(ctx, topic, part, recs)
		}
		if err == nil {
			o.m.out.WithLabelValues(topic).Add(float64(len(recs)))
			failing.recovered(o.logger, topic)
			return nil
		}
		if part >= 0 && errors.Is(err, broker.ErrUnknownPartition) {
			// Not there again by waiting: publishRetrying aligns anew.
			return err
		}
		// What the failed call appended all the same (a full disk after
		// the first batches, see broker.Broker.Produce) is not sent again.
		left := recs[:0]
		for _, r := range recs {
			if r.Offset < 0 {
				left = append(left, r)
			}
		}
		o.m.out.WithLabelValues(topic).Add(float64(len(recs) - len(left)))
		if recs = left; len(recs) == 0 {
			failing.recovered(o.logger, topic)
			return nil
		}
		o.m.publishErrors.WithLabelValues(topic).Inc()
		failing.failed(o.logger, topic, err)
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(backoff):
		}
		backoff = min(2*backoff, 5*time.Second)
	}
}

// publishFailures is a publish's run of failed attempts: a full disk
// fails every attempt for as long as it lasts, so the first is logged,
// then a line per throttle.Every with the attempts since, and the end of
// the run once (weir_enrich_publish_errors_total counts each attempt).
type publishFailures struct{ run throttle.Run }

func (f *publishFailures) failed(logger *slog.Logger, topic string, err error) {
	if n, due := f.run.Failed(time.Now()); due {
		logger.Error("enrich: publishing failed, retrying", slog.String("topic", topic), slog.Any("error", err), slog.Int("times", n))
	}
}

func (f *publishFailures) recovered(logger *slog.Logger, topic string) {
	if n := f.run.Ended(); n > 0 {
		logger.Info("enrich: publishing works again", slog.String("topic", topic), slog.Int("failures", n))
	}
}

// outBatch is what a batch gives one output topic.
type outBatch struct {
	topic string
	outs  []outRecord
}

// useArenas tells arenas whether their chunks can be reused after each
// deliver: on the embedded log, where a delivered record is in the log
// and nothing else holds it (no replay memo, no carry), see recycle.
func (o *outputs) useArenas(arenas ...*arena) {
	for _, a := range arenas {
		a.reuse = !o.txn
	}
}

// recycle frees the arenas' chunks for reuse after a deliver that
// returned true, where useArenas allowed it.
func (o *outputs) recycle(arenas ...*arena) {
	if o.txn {
		return
	}
	for _, a := range arenas {
		a.recycle()
	}
}

// publishRetrying publishes b without a transaction until it succeeds or
// ctx ends (false). produce retries by itself; what else fails (looking up
// an output partition's tail or partition count) fails before anything of
// b was produced, and publish skips what an output partition already has,
// so trying again is safe.
func (o *outputs) publishRetrying(ctx context.Context, b outBatch) bool {
	backoff := 10 * time.Millisecond
	var failing publishFailures
	for {
		left, had, err := o.publish(ctx, nil, b.topic, b.outs)
		if err == nil {
			failing.recovered(o.logger, b.topic)
			// The attempt that succeeded: a failed one may have
			// stopped before reading every partition's tail.
			if had > 0 {
				o.m.dropped.WithLabelValues(b.topic, "already_published").Add(float64(had))
			}
			o.countLeft(b.topic, left)
			return true
		}
		if ctx.Err() != nil {
			return false
		}
		o.m.publishErrors.WithLabelValues(b.topic).Inc()
		failing.failed(o.logger, b.topic, err)
		if o.aligned && (errors.Is(err, broker.ErrUnknownPartition) || errors.Is(err, broker.ErrUnknownTopic)) {
			// The output topic was deleted (weir topics delete), and
			// perhaps made again by a producer with the broker's
			// default partition count: input partition P has no output
			// partition P any more. Align again: a missing topic is
			// made with the input's count, one of another count is
			// written by key (at least once, logged).
			done := o.tails[b.topic]
			if aerr := o.align(ctx, o.topics...); aerr != nil {
				o.logger.Error("enrich: aligning the output topics again failed", slog.Any("error", aerr))
			} else if !o.aligned {
				// By key from now on, which skips nothing: leave out
				// what the failed attempt's first partitions took.
				b.outs = slices.DeleteFunc(slices.Clone(b.outs), func(out outRecord) bool {
					t, ok := done[out.part]
					return out.part >= 0 && ok && out.src <= t
				})
			}
		}
		select {
		case <-ctx.Done():
			return false
		case <-time.After(backoff):
		}
		backoff = min(2*backoff, 5*time.Second)
	}
}

// countLeft counts the records a published batch of topic left out.
func (o *outputs) countLeft(topic string, n int) {
	if n > 0 {
		o.m.dropped.WithLabelValues(topic, "too_large").Add(float64(n))
	}
}

// deliver publishes a batch's outputs and commits the input position after
// it: in one transaction when the member has them, else publishing (exactly
// once, see outputs) then committing. It returns false once ctx has ended.
func (o *outputs) deliver(ctx context.Context, m *member, batches ...outBatch) bool {
	if m.txn == nil {
		// Publish, then commit: retried until the broker takes them,
		// so a full disk stalls enrichment rather than losing records.
		if o.pub != nil {
			o.flush(batches...)
			if !o.published() {
				return false // ctx ended
			}
		} else {
			for _, b := range batches {
				if !o.publishRetrying(ctx, b) {
					return false // ctx ended
				}
			}
		}
		// Published, the batch's events are there for a restart to read
		// back; its repeats of others' commit once theirs are too.
		if o.origins != nil {
			o.origins.delivered(o.polled)
			if !o.origins.awaitOrigins(ctx, o, o.polled) {
				return false // ctx ended
			}
			o.polled = o.polled[:0]
		}
		if err := m.c.Commit(ctx); err != nil {
			o.logger.Error("enrich: commit failed; the batch will be enriched again", slog.Any("error", err))
		}
		return true
	}
	if o.origins != nil {
		o.delivering = batches
		ok := o.origins.awaitOrigins(ctx, o, o.polled)
		o.delivering = nil
		if !ok {
			return false // ctx ended
		}
	}
	all := append(o.carry, batches...)
	var perr error
	left := make([]int, len(all)) // by batch, of the last attempt
	committed, err := m.txn.Transact(ctx, func(tx broker.Txn) error {
		clear(left)
		for i, b := range all {
			if left[i], _, perr = o.publish(ctx, tx, b.topic, b.outs); perr != nil { // none had in a transaction
				return perr
			}
		}
		return nil
	})
	if committed {
		for i, b := range all {
			if n := len(b.outs) - left[i]; n > 0 {
				o.m.out.WithLabelValues(b.topic).Add(float64(n))
			}
			o.countLeft(b.topic, left[i])
		}
		o.carry = nil
		if o.origins != nil {
			o.origins.delivered(o.polled)
			o.origins.settleHanded(o.input, o.replay.polled)
		}
		o.polled = o.polled[:0]
		o.replay.committed(m.c.Assigned())
		m.failures = 0
		return true
	}
	o.replay.aborted()
	o.polled = o.polled[:0] // polled again, if still the worker's
	if ctx.Err() != nil {
		return false
	}
	// Aborted: the input records will be polled again (by this worker,
	// which replays their outputs, or by their partition's new owner);
	// the outputs no record caused go with the next transaction.
	var carry []outBatch
	for _, b := range all {
		var keep []outRecord
		for _, out := range b.outs {
			if out.part < 0 {
				keep = append(keep, out)
			}
		}
		if len(keep) > 0 {
			carry = append(carry, outBatch{b.topic, keep})
		}
	}
	o.carry = carry
	if perr != nil {
		for _, b := range all {
			o.m.publishErrors.WithLabelValues(b.topic).Inc()
		}
	}
	switch {
	case err == nil:
		o.logger.Info("enrich: transaction aborted by a rebalance; its records will be enriched again")
	case perr != nil && !errors.Is(perr, broker.ErrRecordTooLarge) && !outputGone(perr):
		o.logger.Error("enrich: publishing failed; the batch will be enriched again", slog.Any("error", err))
		select {
		case <-ctx.Done():
			return false
		case <-time.After(time.Second):
		}
	case outputGone(perr):
		// An output topic deleted, perhaps made again with fewer
		// partitions (see publishRetrying): the member's client knew
		// the old topic's ID, and the replayed outputs went to the
		// same partitions, aborting for ever. Align again (by key,
		// the replay memo's outputs are as good), then join again
		// with a new client.
		if aerr := o.align(ctx, o.topics...); aerr != nil {
			o.logger.Error("enrich: aligning the output topics again failed", slog.Any("error", aerr))
		}
		fallthrough
	default:
		// Joined again, the member has a new client. That is the cure
		// for records refused for their size although each passed
		// CheckSize: a Kafka producer keeps the batch limit it took
		// when it first produced to a topic, which the topic's
		// max.message.bytes lowered since is under.
		//
		// Back off when it keeps failing (a missing TransactionalId
		// ACL, say): each rejoin rebalances the whole group.
		m.failures++
		wait := min(time.Second<<min(m.failures-1, 5), 30*time.Second)
		o.logger.Error("enrich: transaction failed; joining the group again", slog.Any("error", err),
			slog.Int("failures_in_a_row", m.failures), slog.Duration("after", wait))
		select {
		case <-ctx.Done():
			return false
		case <-time.After(wait):
		}
		return m.rejoin(ctx)
	}
	return true
}

// outputGone says whether err is of an output topic or partition not
// there (any more).
func outputGone(err error) bool {
	return errors.Is(err, broker.ErrUnknownPartition) || errors.Is(err, broker.ErrUnknownTopic)
}

// handOver is eventHolder's: it takes the events of the input records of
// tp at offs out of the batch deliver has in hand, and out of the replay memo
// (an abort of this worker's transaction must not produce them again).
// A record of a transaction that aborted may not be polled again yet (see
// replay): its events are in the memo alone, and are taken from there.
// The copies it returns have no input record: they go by key with the
// taker's transaction, and with its next one if that aborts (see carry).
// taken are the offsets (of offs) whose events it returns.
func (o *outputs) handOver(tp broker.TopicPartition, offs []int64) (moved []outRecord, taken []int64) {
	if o.delivering == nil || tp.Topic != o.input {
		return nil, nil
	}
	for i := range o.delivering {
		b := &o.delivering[i]
		if b.topic != o.events {
			continue
		}
		kept := b.outs[:0]
		for _, out := range b.outs {
			if _, ok := slices.BinarySearch(offs, out.src); ok && out.part == tp.Partition {
				moved = append(moved, outRecord{copyRecord(&out.rec), -1, -1})
				taken = append(taken, out.src)
				continue
			}
			kept = append(kept, out)
		}
		b.outs = kept
	}
	for _, off := range offs {
		p := inPos{tp.Partition, off}
		if !slices.Contains(taken, off) {
			evs := o.replay.eventsOf(p)
			for i := range evs {
				moved = append(moved, outRecord{copyRecord(&evs[i].rec), -1, -1})
			}
			if len(evs) == 0 {
				continue // nothing of it here: its events go as they would
			}
			taken = append(taken, off)
		}
		o.replay.forgetEvents(p)
	}
	slices.Sort(taken)
	return moved, slices.Compact(taken)
}

// takeEvents is eventHolder's: the events go with the batch deliver has
// in hand, as its carry does.
func (o *outputs) takeEvents(evs []outRecord) {
	o.carry = append(o.carry, outBatch{o.events, evs})
}

// replay remembers the outputs of input records whose transaction has not
// committed yet. When an aborted transaction's records are polled again,
// they get the same outputs instead of going through the worker's state a
// second time: the de-duplication would drop their events as repeats, the
// rate and state tracking would see no change.
//
// The records of an aborted batch need not come back in one poll (the
// fetches of partitions led by different brokers arrive apart, and a
// partition's records may come in smaller pieces), so a commit forgets
// only what it settled: for each input partition of the committed batch,
// the records up to the last one polled (the group's position is past
// them), and the records of partitions the worker no longer owns (their
// new owner enriches them).
type replay struct {
	on           bool
	idx          map[inPos][4]int // main[0:1], events[2:3] of the arenas
	main, events []outRecord
	polled       []inPos // per input partition, the last offset polled since the last transaction
}

type inPos struct {
	part int32
	off  int64
}

// replayMax bounds the memo: past it (transactions aborting again and
// again while new records keep coming), records are not remembered, and
// are enriched again if their transaction aborts.
const replayMax = 1 << 18

// get appends the outputs remembered for r to main and events; ok is false
// if there are none. Every record of a batch goes through get, which notes
// how far the batch goes in each partition.
func (r *replay) get(rec *broker.Record, main, events []outRecord) ([]outRecord, []outRecord, bool) {
	if !r.on {
		return main, events, false
	}
	r.note(rec.Partition, rec.Offset)
	if len(r.idx) == 0 {
		return main, events, false
	}
	i, ok := r.idx[inPos{rec.Partition, rec.Offset}]
	if !ok {
		return main, events, false
	}
	return append(main, r.main[i[0]:i[1]]...), append(events, r.events[i[2]:i[3]]...), true
}

func (r *replay) note(part int32, off int64) {
	for i := range r.polled {
		if r.polled[i].part == part {
			r.polled[i].off = max(r.polled[i].off, off)
			return
		}
	}
	r.polled = append(r.polled, inPos{part, off})
}

// put remembers main and events as rec's outputs.
func (r *replay) put(rec *broker.Record, main, events []outRecord) {
	if !r.on || len(r.idx) >= replayMax {
		return
	}
	if r.idx == nil {
		r.idx = map[inPos][4]int{}
	}
	i := [4]int{len(r.main), 0, len(r.events), 0}
	r.main = append(r.main, main...)
	r.events = append(r.events, events...)
	i[1], i[3] = len(r.main), len(r.events)
	r.idx[inPos{rec.Partition, rec.Offset}] = i
}

// eventsOf returns the events remembered of the record at p.
func (r *replay) eventsOf(p inPos) []outRecord {
	if i, ok := r.idx[p]; ok {
		return r.events[i[2]:i[3]]
	}
	return nil
}

// forgetEvents forgets the events remembered of the record at p (handed
// over to another worker's transaction, see outputs.handOver).
func (r *replay) forgetEvents(p inPos) {
	if i, ok := r.idx[p]; ok {
		i[3] = i[2]
		r.idx[p] = i
	}
}

// aborted: the transaction of the records polled since the last one
// aborted; their outputs stay remembered for when they are polled again.
func (r *replay) aborted() { r.polled = r.polled[:0] }

// committed: the transaction of the records polled since the last one
// committed. It forgets the records it settled (see replay) and keeps the
// rest, for partitions the member still owns (assigned).
func (r *replay) committed(assigned []broker.TopicPartition) {
	defer func() { r.polled = r.polled[:0] }()
	if len(r.idx) == 0 {
		r.reset()
		return
	}
	for p := range r.idx {
		keep := slices.ContainsFunc(assigned, func(tp broker.TopicPartition) bool { return tp.Partition == p.part })
		for _, q := range r.polled {
			if q.part == p.part && p.off <= q.off {
				keep = false
			}
		}
		if !keep {
			delete(r.idx, p)
		}
	}
	if len(r.idx) == 0 {
		r.reset()
		return
	}
	// Compact the arenas around what is left (rare: a partial re-poll).
	main, events := make([]outRecord, 0, len(r.main)), make([]outRecord, 0, len(r.events))
	for p, i := range r.idx {
		j := [4]int{len(main), 0, len(events), 0}
		main = append(main, r.main[i[0]:i[1]]...)
		events = append(events, r.events[i[2]:i[3]]...)
		j[1], j[3] = len(main), len(events)
		r.idx[p] = j
	}
	r.main, r.events = main, events
}

// reset forgets everything.
func (r *replay) reset() {
	clear(r.idx)
	clear(r.main)
	clear(r.events)
	r.main, r.events = r.main[:0], r.events[:0]
}

// member is a worker's membership of the enrich group: its consumer and,
// when the backend has them, the consumer's transactions.
type member struct {
	b      broker.Broker
	topics []string
	opts   []broker.ConsumerOption
	logger *slog.Logger
	c      broker.Consumer
	txn    broker.TxnConsumer // nil on the embedded log
	// failures counts transactions failed in a row, for the back-off.
	failures int
}

// eventPollBytes bounds a poll of the trap worker: at most 256 KiB (a few
// ms of work) keeps the time from receive to event short, since a record
// waits for its whole poll to be enriched and published.
const eventPollBytes = 256 << 10

// syslogPollBytes bounds a poll of the syslog worker: 1 MiB, about 2,800
// records of the corpus mix and 10 ms of work, reached only when records
// wait (at 50,000 lines/s a poll takes the few ms' worth that came since
// the last). Its records are decoded on a second goroutine (decodeAhead),
// which waits while the worker publishes, commits and polls: end to end,
// 256 KiB polls gave 246,000-259,000 records/s against 264,000-268,000 for
// 1 MiB and 269,000-297,000 for 2 MiB, alternated three times.
const syslogPollBytes = 1 << 20

// metricsPollBytes bounds a poll of the metrics worker. Rows come a poll
// cycle apart, so a few more ms before their events matter little, and
// polls of 1 MiB gave 7% more 4-gauge rows a second end to end than
// 256 KiB (fewer commits, and more of each poll's publishing overlapped
// by enrichment).
const metricsPollBytes = 1 << 20

// consumerOptions are a worker's options to join the group: with
// transactions where the backend has them.
func consumerOptions(memberID string, session time.Duration, maxPollBytes int) []broker.ConsumerOption {
	opts := []broker.ConsumerOption{broker.WithTransactions(), broker.WithMaxPollBytes(maxPollBytes)}
	if memberID != "" {
		opts = append(opts, broker.WithMemberID(memberID))
	}
	if session > 0 {
		opts = append(opts, broker.WithSessionTimeout(session))
	}
	return opts
}

// join joins the enrich group. A nil member and nil error mean ctx ended.
func join(ctx context.Context, b broker.Broker, topics []string, opts []broker.ConsumerOption, logger *slog.Logger) (*member, error) {
	m := &member{b: b, topics: topics, opts: opts, logger: logger}
	if err := m.join(ctx); err != nil || m.c == nil {
		return nil, err
	}
	return m, nil
}

func (m *member) join(ctx context.Context) error {
	c, err := joinGroup(ctx, m.b, m.topics, m.opts, m.logger)
	if err != nil || c == nil {
		return err
	}
	m.c = c
	m.txn, _ = c.(broker.TxnConsumer)
	return nil
}

// rejoin replaces a consumer whose transactions failed with a new one,
// retrying until ctx ends; false when it has.
func (m *member) rejoin(ctx context.Context) bool {
	m.c.Close()
	m.c, m.txn = nil, nil
	for {
		err := m.join(ctx)
		if m.c != nil {
			return true
		}
		if ctx.Err() != nil {
			return false
		}
		m.logger.Error("enrich: joining the group again failed; retrying", slog.Any("error", err))
		select {
		case <-ctx.Done():
			return false
		case <-time.After(5 * time.Second):
		}
	}
}

func (m *member) close() {
	if m.c != nil {
		m.c.Close()
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

// pollHealth is one worker's run of failing polls, kept from one poll
// call to the next: the workers poll a second at a time, and a wait that
// ends with nothing between two failures says nothing of the cluster.
type pollHealth = throttle.Run

// poll returns the next records, or none once wait has passed (0: wait
// for records). A failing poll is retried every second: a broken batch or
// a storage error must not stop enrichment for good. It is logged through
// h's throttle (a cluster away for an hour would log every worker's every
// second), and its end once, at the first poll that answers (a wait that
// ends with nothing is not one). ok is false once ctx ends or the consumer
// is closed.
func poll(ctx context.Context, c broker.Consumer, wait time.Duration, logger *slog.Logger, h *pollHealth) ([]broker.Record, bool) {
	for {
		pctx, cancel := ctx, context.CancelFunc(func() {})
		if wait > 0 {
			pctx, cancel = context.WithTimeout(ctx, wait)
		}
		recs, err := c.Poll(pctx)
		cancel()
		switch {
		case err == nil:
			if n := h.Ended(); n > 0 {
				logger.Info("enrich: poll works again", slog.Int("failures", n))
			}
			return recs, true
		case ctx.Err() != nil || errors.Is(err, broker.ErrClosed):
			return nil, false
		case wait > 0 && errors.Is(err, context.DeadlineExceeded):
			return nil, true // nothing within wait
		}
		if n, ok := h.Failed(time.Now()); ok {
			logger.Error("enrich: poll failed, retrying every second", slog.Any("error", err), slog.Int("times", n))
		}
		select {
		case <-ctx.Done():
			return nil, false
		case <-time.After(time.Second):
		}
	}
}
