package embedded

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"

	"github.com/weirnet/weir/broker"
	"github.com/weirnet/weir/broker/recordbatch"
)

// coordinator assigns the partitions of a group's topics to its in-process
// members. Assignment is recomputed whenever a member joins or leaves or a
// topic appears, and spreads partitions evenly: each partition goes to the
// subscribed member with the fewest partitions so far.
type coordinator struct {
	b      *Broker
	mu     sync.Mutex
	groups map[string]*group
	nextID atomic.Int64
	// skipped counts, per group, topic and reason, the records a group
	// never read: retention deleted them first ("retention"), or their
	// batch fails its CRC ("corrupt"); kept when the group empties, as
	// Prometheus counters are. skippedTo is, per group and partition,
	// the offset they are counted up to: a second member resetting from
	// the same commit counts nothing again.
	skipped   map[[3]string]int64
	skippedTo map[groupPartition]int64
}

type groupPartition struct {
	group string
	tp    broker.TopicPartition
}

type group struct {
	name       string
	generation int64
	members    []*consumer
	// owners says which member reads each partition now. A partition
	// moved by a rebalance changes owner only when the old member lets
	// go of it (committing what it consumed), so two members never read
	// one partition at once and a rebalance redelivers nothing.
	owners map[broker.TopicPartition]*consumer
}

func newCoordinator(b *Broker) *coordinator {
	return &coordinator{b: b, groups: make(map[string]*group), skipped: map[[3]string]int64{}, skippedTo: map[groupPartition]int64{}}
}

// countSkipped counts the records of tp from from to to (exclusive) that
// group never read, for reason, but those counted already.
func (c *coordinator) countSkipped(group string, tp broker.TopicPartition, from, to int64, reason string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	k := groupPartition{group, tp}
	from = max(from, c.skippedTo[k])
	if to > from {
		c.skipped[[3]string{group, tp.Topic, reason}] += to - from
		c.skippedTo[k] = to
	}
}

// skippedRecords returns a copy of the skipped counts.
func (c *coordinator) skippedRecords() map[[3]string]int64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	return maps.Clone(c.skipped)
}

// GroupMember describes one member of a group.
type GroupMember struct {
	ID       string
	Topics   []string
	Assigned []broker.TopicPartition
	// AtEnd: without a commit the member starts at the log end
	// (broker.WithResetToLatest), not the start.
	AtEnd bool
}

// GroupInfo describes an in-process consumer group.
type GroupInfo struct {
	Name       string
	Generation int64
	Members    []GroupMember
}

func (c *coordinator) join(m *consumer) {
	c.mu.Lock()
	defer c.mu.Unlock()
	g := c.groups[m.group]
	if g == nil {
		g = &group{name: m.group, owners: map[broker.TopicPartition]*consumer{}}
		c.groups[m.group] = g
	}
	g.members = append(g.members, m)
	c.rebalance(g)
}

func (c *coordinator) leave(m *consumer) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.b.kinds.release(m.group, false)
	g := c.groups[m.group]
	if g == nil {
		return
	}
	g.members = slices.DeleteFunc(g.members, func(x *consumer) bool { return x == m })
	for tp, owner := range g.owners {
		if owner == m {
			delete(g.owners, tp)
		}
	}
	if len(g.members) == 0 {
		delete(c.groups, m.group)
		return
	}
	c.rebalance(g)
}

func (c *coordinator) topicsChanged() {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, g := range c.groups {
		c.rebalance(g)
	}
}

func (c *coordinator) rebalance(g *group) {
	g.generation++
	count := make(map[*consumer]int, len(g.members))
	assign := make(map[*consumer][]broker.TopicPartition, len(g.members))
	topics := map[string]bool{}
	for _, m := range g.members {
		for _, t := range m.topics {
			topics[t] = true
		}
	}
	names := make([]string, 0, len(topics))
	for t := range topics {
		names = append(names, t)
	}
	slices.Sort(names)
	for _, name := range names {
		c.b.mu.RLock()
		t := c.b.topics[name]
		c.b.mu.RUnlock()
		if t == nil {
			continue
		}
		for p := range t.partitions {
			var best *consumer
			for _, m := range g.members {
				if slices.Contains(m.topics, name) && (best == nil || count[m] < count[best]) {
					best = m
				}
			}
			count[best]++
			assign[best] = append(assign[best], broker.TopicPartition{Topic: name, Partition: int32(p)})
		}
	}
	for _, m := range g.members {
		m.setAssignment(g.generation, assign[m])
	}
}

// claim makes m the owner of tp if nobody else holds it.
func (c *coordinator) claim(m *consumer, tp broker.TopicPartition) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	g := c.groups[m.group]
	if g == nil {
		return false
	}
	if owner, held := g.owners[tp]; held && owner != m {
		return false
	}
	g.owners[tp] = m
	return true
}

// release gives up m's ownership of tp and wakes the member it is
// assigned to now, which waits for it.
func (c *coordinator) release(m *consumer, tp broker.TopicPartition) {
	c.mu.Lock()
	defer c.mu.Unlock()
	g := c.groups[m.group]
	if g == nil || g.owners[tp] != m {
		return
	}
	delete(g.owners, tp)
	for _, other := range g.members {
		if other != m {
			other.mu.Lock()
			wants := slices.Contains(other.pending, tp)
			other.mu.Unlock()
			if wants {
				other.changed.Store(true)
				other.signal()
			}
		}
	}
}

func (c *coordinator) describe() []GroupInfo {
	c.mu.Lock()
	defer c.mu.Unlock()
	var out []GroupInfo
	for _, g := range c.groups {
		gi := GroupInfo{Name: g.name, Generation: g.generation}
		for _, m := range g.members {
			m.mu.Lock()
			gi.Members = append(gi.Members, GroupMember{ID: m.id, Topics: m.topics, Assigned: slices.Clone(m.pending), AtEnd: m.cfg.ResetToLatest})
			m.mu.Unlock()
		}
		out = append(out, gi)
	}
	slices.SortFunc(out, func(a, b GroupInfo) int {
		switch {
		case a.Name < b.Name:
			return -1
		case a.Name > b.Name:
			return 1
		}
		return 0
	})
	return out
}

func (c *coordinator) close() {
	c.mu.Lock()
	var all []*consumer
	for _, g := range c.groups {
		all = append(all, g.members...)
	}
	c.mu.Unlock()
	for _, m := range all {
		m.closed.Store(true)
		m.signal()
	}
}

// consumer is an in-process group member. Poll and Commit must be called
// from one goroutine; Close may be called from any.
type consumer struct {
	b      *Broker
	group  string
	id     string
	topics []string
	cfg    broker.ConsumerConfig
	wake   chan struct{}
	closed atomic.Bool

	mu      sync.Mutex
	pending []broker.TopicPartition
	// revoked are the partitions an assignment took away since Poll last
	// applied one: handed over, even if a later one gives them back.
	revoked []broker.TopicPartition
	subs    []*subscription // subscriptions not yet ended, for Close
	changed atomic.Bool

	// Owned by the polling goroutine.
	owned []*ownedPartition
	next  int
	buf   []byte
	dec   recordbatch.Decoder
}

type ownedPartition struct {
	tp        broker.TopicPartition
	p         *partition
	pos       int64
	committed int64
	unsub     func()
}

// Consume joins group; see broker.Broker.
func (b *Broker) Consume(ctx context.Context, groupName string, topics []string, opts ...broker.ConsumerOption) (broker.Consumer, error) {
	if b.closed.Load() {
		return nil, broker.ErrClosed
	}
	if groupName == "" || len(topics) == 0 {
		return nil, errors.New("consume: a group and at least one topic are required")
	}
	cfg := broker.ConsumerConfig{MaxPollBytes: 1 << 20}
	for _, o := range opts {
		o(&cfg)
	}
	c := &consumer{
		b:      b,
		group:  groupName,
		topics: slices.Clone(topics),
		cfg:    cfg,
		wake:   make(chan struct{}, 1),
	}
	c.id = cfg.MemberID
	if c.id == "" {
		c.id = groupName + "-" + strconv.FormatInt(b.groups.nextID.Add(1), 10)
	}
	if !b.kinds.acquire(groupName, false) {
		return nil, fmt.Errorf("consume: group %s has Kafka client members: %w", groupName, ErrGroupInUse)
	}
	b.groups.join(c)
	return c, nil
}

// Groups describes the in-process consumer groups.
func (b *Broker) Groups() []GroupInfo { return b.groups.describe() }

// CommittedOffsets lists every group's committed offsets.
func (b *Broker) CommittedOffsets() []GroupOffset { return b.offsets.all() }

// CommitOffsets stores offsets for a group directly (used by tools and the
// Kafka listener's group APIs).
func (b *Broker) CommitOffsets(offs []GroupOffset) error { return b.offsets.commit(offs) }

// Committed returns a group's committed offset for a partition: as a
// client committed it, so possibly negative (-2 and -1 commit "none").
func (b *Broker) Committed(group, topic string, partition int32) (int64, bool) {
	return b.offsets.committed(group, topic, partition)
}

func (c *consumer) setAssignment(gen int64, tps []broker.TopicPartition) {
	c.mu.Lock()
	for _, tp := range c.pending {
		if !slices.Contains(tps, tp) && !slices.Contains(c.revoked, tp) {
			c.revoked = append(c.revoked, tp)
		}
	}
	c.pending = tps
	c.mu.Unlock()
	c.changed.Store(true)
	c.signal()
}

func (c *consumer) signal() {
	select {
	case c.wake <- struct{}{}:
	default:
	}
}

// applyAssignment switches to the latest assignment. A revoked partition
// is handed over at its committed offset, as broker.Consumer says: what
// Poll returned but the member did not commit may not be handled yet (a
// sink between batches), so the new owner gets it again rather than
// never. So is one revoked and given back since the last apply (a member
// joining and leaving at once): the member may have let go of what it
// held of it (a sink's lanes do), and reads it again from its commit. A
// newly assigned partition is taken once its previous owner has let go,
// and starts at the committed offset or the reset position.
func (c *consumer) applyAssignment() {
	c.mu.Lock()
	want := slices.Clone(c.pending)
	revoked := c.revoked
	c.revoked = nil
	c.mu.Unlock()
	kept := c.owned[:0]
	for _, op := range c.owned {
		if slices.Contains(want, op.tp) && !slices.Contains(revoked, op.tp) {
			if cur, err := c.b.partition(context.Background(), op.tp.Topic, op.tp.Partition, false); err == nil && cur == op.p {
				kept = append(kept, op)
				continue
			}
			// The topic was deleted (and maybe created again): this
			// position belongs to the old log; drop it uncommitted.
			op.unsub()
			c.b.groups.release(c, op.tp)
			continue
		}
		op.unsub()
		c.b.groups.release(c, op.tp)
	}
	c.owned = kept
	for _, tp := range want {
		if slices.ContainsFunc(c.owned, func(op *ownedPartition) bool { return op.tp == tp }) {
			continue
		}
		p, err := c.b.partition(context.Background(), tp.Topic, tp.Partition, false)
		if err != nil {
			continue // deleted meanwhile; the next rebalance drops it
		}
		if !c.b.groups.claim(c, tp) {
			continue // the previous owner still has it; release wakes us
		}
		pos, ok := c.b.offsets.committed(c.group, tp.Topic, tp.Partition)
		committed := pos
		// A negative commit (a Kafka client's -2 or -1, KafkaJS's
		// resetOffsets) is no position, as Kafka's consumers take it;
		// the member's next commit replaces it with one.
		if !ok || pos < 0 {
			pos = p.logStart.Load()
			if c.cfg.ResetToLatest {
				pos = p.hwm.Load()
				// Committed at once (see broker.WithResetToLatest): the
				// group starts at this end once, not at a later end
				// after a restart before anything came.
				off := GroupOffset{Group: c.group, Topic: tp.Topic, Partition: tp.Partition, Offset: pos}
				if err := c.b.offsets.commit([]GroupOffset{off}); err != nil {
					c.b.opts.logger.Warn("group: the start at the log end not committed; the next start of the group begins at the end then",
						slog.String("group", c.group), slog.String("topic", tp.Topic), slog.Int("partition", int(tp.Partition)), slog.Any("error", err))
				} else {
					committed = pos
				}
			}
			if !ok {
				committed = pos
			}
		}
		c.owned = append(c.owned, &ownedPartition{tp: tp, p: p, pos: pos, committed: committed, unsub: c.subscribe(p)})
	}
}

func (c *consumer) Poll(ctx context.Context) ([]broker.Record, error) {
	if err := ctx.Err(); err != nil {
		// Stopping: a backlog waits for the next start.
		return nil, err
	}
	for {
		if c.closed.Load() {
			for _, op := range c.owned {
				op.unsub()
			}
			c.owned = nil
			return nil, broker.ErrClosed
		}
		if c.changed.Swap(false) {
			c.applyAssignment()
		}
		c.dec.Reset()
		c.buf = c.buf[:0]
		read := false
		// A partition that cannot be read is read again at the next
		// call; the others go on. Its error is returned when no other
		// partition gave a record.
		var failed error
		n := len(c.owned)
		// Nor past a read's bounds (readFull): decodeBatches decodes
		// a first batch whatever they say, and four partitions' gzip
		// batches of 100 KB decompressed to 384 MB in one Poll. The
		// partitions left are read first the next time (c.next).
		// MaxPollBytes bounds compressed batches by their records'
		// bytes decompressed too: weir's own are snappy, about 7 times
		// smaller, and a poll of 1 MiB of them held 7 MiB of records
		// where the consumer asked for 1.
		for i := 0; i < n && len(c.buf) < c.cfg.MaxPollBytes && !readFull(&c.dec, c.cfg.MaxPollBytes); i++ {
			op := c.owned[(c.next+i)%n]
			before := len(c.buf)
			var err error
			var hwm, start int64
			c.buf, hwm, start, err = op.p.readUncounted(c.buf, op.pos, c.cfg.MaxPollBytes-len(c.buf))
			if errors.Is(err, broker.ErrOffsetOutOfRange) {
				// Retention deleted what we had not read yet, or the
				// committed offset is from a deleted and recreated topic.
				reset := start
				if op.pos > hwm {
					reset = hwm
				}
				c.b.opts.logger.Warn("consumer offset out of range, resetting",
					slog.String("group", c.group), slog.String("topic", op.tp.Topic),
					slog.Int("partition", int(op.tp.Partition)), slog.Int64("from", op.pos), slog.Int64("to", reset))
				if reset > op.pos {
					// Records accepted and never delivered to this
					// group: a drop, counted with its reason.
					c.b.groups.countSkipped(c.group, op.tp, op.pos, reset, "retention")
				}
				op.pos = reset
				continue
			}
			if errors.Is(err, broker.ErrUnknownTopic) {
				// Deleted under us: the rebalance that follows drops it.
				continue
			}
			if err != nil {
				c.buf = c.buf[:before]
				if failed == nil {
					failed = fmt.Errorf("poll %s/%d: %w", op.tp.Topic, op.tp.Partition, err)
				}
				continue
			}
			if len(c.buf) == before {
				continue
			}
			got := len(c.dec.Records())
			next, used, err := decodeBatches(&c.dec, op.tp.Topic, op.tp.Partition, c.buf[before:], op.pos, c.cfg.MaxPollBytes)
			op.p.stats.recordsOut.Add(int64(len(c.dec.Records()) - got))
			if err == nil {
				// The batches past the decode budget are read again
				// by the next Poll: counted (and kept) then.
				c.buf = c.buf[:before+used]
			}
			op.p.stats.bytesOut.Add(int64(len(c.buf) - before))
			if next > op.pos {
				read = true
			}
			op.pos = next
			if err != nil {
				if c.skipDamaged(op, c.buf[before:], hwm, err) {
					read = true
				} else if failed == nil {
					failed = err
				}
			}
		}
		c.next++
		if recs := c.dec.Records(); len(recs) > 0 {
			return recs, nil
		}
		if read {
			continue // only transaction markers, or a damaged batch, were read
		}
		if failed != nil {
			return nil, failed
		}
		select {
		case <-c.wake:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
}

// skipDamaged moves op past the batch at op.pos in buf (read from op.pos)
// that failed to decode (err): its CRC fails, bit rot on disk. Stopping
// there would stop the group's reading of the partition for good, and no
// one could move it on; the batch's records are counted skipped, as
// retention's are, and logged. It reports false, leaving op where it is,
// when the batch's offsets cannot be trusted (they are not those that
// follow op.pos, or the batch after it does not start after them).
func (c *consumer) skipDamaged(op *ownedPartition, buf []byte, hwm int64, err error) bool {
	var bad recordbatch.Header
	found, confirmed := false, false
	for pos := 0; pos+recordbatch.HeaderSize <= len(buf); {
		h, perr := recordbatch.ParseHeader(buf[pos:])
		if perr != nil || h.Size() <= 0 {
			break
		}
		if found {
			// The next batch's offset confirms where the damaged one ends.
			if h.BaseOffset <= bad.BaseOffset {
				return false
			}
			bad.LastOffsetDelta = int32(h.BaseOffset - 1 - bad.BaseOffset)
			confirmed = true
			break
		}
		if h.LastOffset() >= op.pos {
			if h.BaseOffset > op.pos {
				return false
			}
			bad, found = h, true
		}
		pos += h.Size()
	}
	if !found {
		return false
	}
	to := bad.LastOffset() + 1
	if !confirmed {
		// No batch after it in the read (it ends a segment): its own
		// header, which the failing CRC covers, may say it ends past
		// its segment, and a batch ends in its segment.
		to = min(to, op.p.segmentEnd(bad.BaseOffset))
	}
	if to <= op.pos || to > hwm {
		return false
	}
	c.b.opts.logger.Error("a batch of the log cannot be read (bit rot?): skipped, the records after it are read",
		slog.String("group", c.group), slog.String("topic", op.tp.Topic), slog.Int("partition", int(op.tp.Partition)),
		slog.Int64("from", op.pos), slog.Int64("to", to-1), slog.Any("error", err))
	c.b.groups.countSkipped(c.group, op.tp, op.pos, to, "corrupt")
	op.pos = to
	return true
}

func (c *consumer) Commit(ctx context.Context) error {
	if c.changed.Swap(false) {
		c.applyAssignment()
	}
	var offs []GroupOffset
	for _, op := range c.owned {
		if op.pos != op.committed {
			offs = append(offs, GroupOffset{Group: c.group, Topic: op.tp.Topic, Partition: op.tp.Partition, Offset: op.pos})
		}
	}
	if err := c.b.offsets.commit(offs); err != nil {
		return fmt.Errorf("commit group %s: %w", c.group, err)
	}
	for _, op := range c.owned {
		op.committed = op.pos
	}
	return nil
}

// CommitOffsets implements broker.OffsetCommitter: positions up to what
// Poll returned, on partitions the member owns.
func (c *consumer) CommitOffsets(ctx context.Context, offsets map[broker.TopicPartition]int64) error {
	if c.changed.Swap(false) {
		c.applyAssignment()
	}
	var offs []GroupOffset
	var ops []*ownedPartition
	for _, op := range c.owned {
		off, ok := offsets[op.tp]
		if !ok || off <= op.committed || off > op.pos {
			continue
		}
		offs = append(offs, GroupOffset{Group: c.group, Topic: op.tp.Topic, Partition: op.tp.Partition, Offset: off})
		ops = append(ops, op)
	}
	if err := c.b.offsets.commit(offs); err != nil {
		return fmt.Errorf("commit group %s: %w", c.group, err)
	}
	for i, op := range ops {
		op.committed = offs[i].Offset
	}
	return nil
}

// Position implements broker.Positioner.
func (c *consumer) Position(_ context.Context, tp broker.TopicPartition) (int64, bool) {
	for _, op := range c.owned {
		if op.tp == tp {
			return op.pos, true
		}
	}
	return 0, false
}

func (c *consumer) Assigned() []broker.TopicPartition {
	c.mu.Lock()
	defer c.mu.Unlock()
	return slices.Clone(c.pending)
}

// subscription is a consumer's wake registration with one partition.
type subscription struct {
	once  sync.Once
	unsub func()
	ended atomic.Bool
}

func (s *subscription) end() {
	s.once.Do(func() { s.unsub(); s.ended.Store(true) })
}

// subscribe registers the consumer's wake channel with p. The returned
// function unsubscribes once; Close calls what Poll has not. Ended
// subscriptions are dropped here, so rebalances do not pile them up.
func (c *consumer) subscribe(p *partition) func() {
	sub := &subscription{unsub: p.subscribe(c.wake)}
	c.mu.Lock()
	if c.closed.Load() {
		// Close has ended the others already (or will not see this one).
		c.mu.Unlock()
		sub.end()
		return sub.end
	}
	c.subs = slices.DeleteFunc(c.subs, func(s *subscription) bool { return s.ended.Load() })
	c.subs = append(c.subs, sub)
	c.mu.Unlock()
	return sub.end
}

func (c *consumer) Close() error {
	if c.closed.Swap(true) {
		return nil
	}
	c.mu.Lock()
	for _, s := range c.subs {
		s.end()
	}
	c.subs = nil
	c.mu.Unlock()
	c.b.groups.leave(c)
	c.signal()
	return nil
}
