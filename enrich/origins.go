package enrich

import (
	"cmp"
	"context"
	"log/slog"
	"slices"
	"time"

	"github.com/weirnet/weir/broker"
	"github.com/weirnet/weir/telemetry"
)

// A change two paths report (a syslog line and a trap, a poll and a gNMI
// update) is one event: the first report's, the others left out as its
// repeats. Their input records are in different partitions, which
// different workers deliver (publish their outputs, commit their input
// positions) each at its own pace. Were the repeat's batch committed
// before the first report's event was published, a crash between the two
// would lose the change: after the restart the warm-up reads the repeat
// back, committed, and the first report, enriched again, is its repeat.
// So a batch that left out another partition's event commits only once
// that event is published (on a Kafka cluster, committed): the detector
// notes, per input partition, which records it judged and which of them
// their worker delivered, and a worker waits for its batch's origins
// before its commit (awaitOrigins). Records a warm-up read are delivered.
// On the embedded log two more rules complete it: a takeover skips only
// the records whose outputs are there (outputs.exact), and the warm-up
// remembers the events published of records not committed
// (detector.adoptUncommitted); see enrich/README.md, Exactly once.

// origin is the input record whose published event a state or a last
// time stands for; a zero origin, none to wait for (a warm-up's, whose
// events are in the log).
type origin struct {
	tp     broker.TopicPartition
	offset int64
}

// originWait bounds how long a batch waits for the events it left out
// repeats of: a worker stalled publishing (a full disk) or a partition
// taken by another process must not stop the others' commits for good.
const originWait = 5 * time.Second

// originOf is the origin of an event caused by c; known is a partition
// whose topic name the detector keeps, used when it is c's. d.mu is held.
func (d *detector) originOf(c telemetry.Cause, known broker.TopicPartition) origin {
	if c.Topic == "" || c.Offset < 0 {
		return origin{}
	}
	tp := causePartition(c)
	if tp != known {
		tp = d.keepPartition(tp)
	} else {
		tp = known
	}
	return origin{tp, c.Offset}
}

// dependOn notes that the event of the record at c was left out as a
// repeat of from's: c's batch must not commit before from's event is
// delivered, when from is another partition's record its worker judged
// and has not delivered yet. d.mu is held.
func (d *detector) dependOn(c telemetry.Cause, from origin) {
	if from.tp.Topic == "" || c.Topic == "" {
		return
	}
	tp := causePartition(c)
	if tp == from.tp || !d.undelivered(from) {
		return // one partition's records are delivered in order
	}
	// Each origin, for a cycle's takeOver; the waits keep the last of
	// each partition.
	if d.leftFrom == nil {
		d.leftFrom = map[broker.TopicPartition][]origin{}
	}
	if l := d.leftFrom[tp]; len(l) == 0 || l[len(l)-1] != from {
		d.leftFrom[tp] = append(l, from)
	}
	deps := d.waits[tp]
	for i := range deps {
		if deps[i].tp == from.tp {
			deps[i].offset = max(deps[i].offset, from.offset)
			return
		}
	}
	if d.waits == nil {
		d.waits = map[broker.TopicPartition][]origin{}
	}
	if deps == nil {
		tp = d.keepPartition(tp)
	}
	d.waits[tp] = append(deps, from)
}

// undelivered reports whether o is a record judged and not yet delivered.
// d.mu is held.
func (d *detector) undelivered(o origin) bool {
	pos, ok := d.read[o.tp]
	return ok && o.offset >= pos.delivered && o.offset < pos.next
}

// own notes that who (a worker's outputs) owns the input partitions
// assigned: the worker that delivers their records. A partition it had
// and lost is no longer its to deliver; its records judged and not
// delivered are enriched again by their new owner: another worker of the
// process, which delivers them, or another process, which judges them
// afresh (see awaitOrigins). The batches waiting look again: one may wait
// for a partition no worker here owns now.
func (d *detector) own(who any, assigned []broker.TopicPartition) {
	d.mu.Lock()
	defer d.mu.Unlock()
	lost := false
	for tp, w := range d.owners {
		if w == who && !containsPartition(assigned, tp) {
			delete(d.owners, tp)
			delete(d.waits, tp)
			delete(d.leftFrom, tp)
			lost = true
		}
	}
	if lost {
		d.wake()
	}
	if d.owners == nil {
		d.owners = map[broker.TopicPartition]any{}
	}
	for _, tp := range assigned {
		if d.owners[tp] != who {
			d.owners[d.keepPartition(tp)] = who
		}
	}
}

// delivered notes that every record of the input partitions parts judged
// so far has been delivered, and wakes the batches waiting for them.
func (d *detector) delivered(parts []broker.TopicPartition) {
	d.mu.Lock()
	defer d.mu.Unlock()
	for _, tp := range parts {
		if pos, ok := d.read[tp]; ok && pos.delivered != pos.next {
			pos.delivered = pos.next
			d.read[tp] = pos
		}
	}
	d.wake()
}

// settleHanded forgets the records of the worker's input topic handed
// over (see takeOver) that its commit delivered: those of each partition
// up to the last offset its batch polled. Not delivered's "all judged so
// far": the worker that polls again the records of an aborted batch need
// not get them in one poll, and a record handed over, enriched again
// after such a poll's commit, must still leave its events out.
func (d *detector) settleHanded(topic string, polled []inPos) {
	d.mu.Lock()
	defer d.mu.Unlock()
	for o := range d.handed {
		for _, p := range polled {
			if o.tp.Topic == topic && o.tp.Partition == p.part && o.offset <= p.off {
				delete(d.handed, o)
			}
		}
	}
}

// wake wakes the batches waiting in awaitOrigins, to look again. d.mu is
// held.
func (d *detector) wake() {
	if d.deliveries != nil {
		close(d.deliveries)
		d.deliveries = nil
	}
}

// awaitOrigins waits until the events the records of the batch's input
// partitions (parts) left out repeats of are delivered, for at most originWait, and reports false if
// ctx ended first. who is the waiting worker's outputs: a batch whose
// origin's worker waits, directly or through others, for who's (on a Kafka
// cluster, where delivering is committing, two batches may each have left
// out the other's change) does not wait for it.
func (d *detector) awaitOrigins(ctx context.Context, who any, parts []broker.TopicPartition) bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	if len(d.waits) == 0 {
		return true
	}
	defer func() {
		for _, tp := range parts {
			delete(d.waits, tp)
			delete(d.leftFrom, tp)
		}
		delete(d.waiting, who)
	}()
	var timer *time.Timer
	for {
		var on []any
	scan:
		for _, tp := range parts {
			for _, o := range d.waits[tp] {
				if !d.undelivered(o) || containsPartition(parts, o.tp) {
					continue
				}
				// A partition no worker here owns was taken by another
				// process, which enriches its records again, not knowing
				// this batch's: nothing to wait for. An owner waiting for
				// this batch is a cycle: this batch takes the events it
				// waits for over (takeOver, which changes the waits: look
				// again) and does not wait.
				owner := d.owners[o.tp]
				if owner == nil {
					continue
				}
				if d.waitsFor(owner, who) {
					d.takeOver(who, owner, o.tp, parts)
					on = on[:0]
					goto scan
				}
				on = append(on, owner)
			}
		}
		if len(on) == 0 {
			return true
		}
		if d.waiting == nil {
			d.waiting = map[any][]any{}
		}
		d.waiting[who] = on
		if d.deliveries == nil {
			d.deliveries = make(chan struct{})
		}
		wake := d.deliveries
		if timer == nil {
			timer = time.NewTimer(cmp.Or(d.originWaitFor, originWait))
			defer timer.Stop()
		}
		d.mu.Unlock()
		select {
		case <-wake:
			d.mu.Lock()
		case <-ctx.Done():
			d.mu.Lock()
			return false
		case <-timer.C:
			d.mu.Lock()
			// Throttled: while a worker is stalled publishing, every
			// batch waiting for it times out.
			if n, due := d.originWarn.Due(time.Now()); due {
				d.log().Warn("enrich: committing a batch before the events it left out repeats of were published; a crash now could lose them",
					slog.Duration("waited", cmp.Or(d.originWaitFor, originWait)), slog.Int("batches", n))
			}
			return true
		}
	}
}

// eventHolder is a worker's outputs as takeOver moves events between
// them.
type eventHolder interface {
	// handOver removes the events of the input records of tp at offs
	// (sorted) from the batch the worker is delivering, waiting in
	// awaitOrigins (or from its replay memo, for a record of an aborted
	// transaction not polled again yet), and returns copies of them and
	// the offsets of the records whose events they are; none if it holds
	// none (or delivers without transactions, where no batch waits before
	// it is published).
	handOver(tp broker.TopicPartition, offs []int64) ([]outRecord, []int64)
	// takeEvents adds events handed over to the batch the worker is
	// delivering, as outputs no input record of its own caused.
	takeEvents(evs []outRecord)
}

// takeOver breaks a cycle of waits on a Kafka cluster, where a batch is
// delivered by its transaction's commit: two workers' batches (or more,
// around a ring) each left out a repeat of a change whose event the other
// holds, so neither may commit first, and the first to commit regardless
// could lose a change to a crash before the other's commit (its repeat
// committed, the change's event not: after the restart the repeat is read
// back, and the change, enriched again, is its repeat). Both batches are
// waiting, their outputs not yet produced, so who, the batch that finds the
// cycle, takes the events it waits for (those of owner's records of
// partition tp that the records of its partitions parts left out repeats
// of; not the others, whose records would then be committed before their
// events, and judged again after a crash, without the repeat to say their
// change was published) into its own transaction: what it left out and
// what it repeats then commit together, and owner, which waits for who,
// commits after. d.mu is held; owner is blocked in awaitOrigins.
func (d *detector) takeOver(who, owner any, tp broker.TopicPartition, parts []broker.TopicPartition) {
	// Whatever it moves, who does not wait for tp's records: they wait
	// for who.
	defer func() {
		ofTP := func(o origin) bool { return o.tp == tp }
		for _, p := range parts {
			if w, ok := d.waits[p]; ok {
				d.waits[p] = slices.DeleteFunc(w, ofTP)
			}
			if l, ok := d.leftFrom[p]; ok {
				d.leftFrom[p] = slices.DeleteFunc(l, ofTP)
			}
		}
	}()
	from, ok := owner.(eventHolder)
	to, ok2 := who.(eventHolder)
	if !ok || !ok2 {
		return
	}
	var offs []int64
	for _, p := range parts {
		for _, o := range d.leftFrom[p] {
			if o.tp == tp && d.undelivered(o) {
				offs = append(offs, o.offset)
			}
		}
	}
	if len(offs) == 0 {
		return
	}
	slices.Sort(offs)
	offs = slices.Compact(offs)
	evs, offs := from.handOver(tp, offs)
	if len(evs) == 0 {
		// Neither in the batch the other delivers nor in its replay
		// memo: not expected. who commits first, as before takeovers,
		// and a crash before the other commits could lose them.
		if n, due := d.cycleWarn.Due(time.Now()); due {
			d.log().Warn("enrich: a cycle of waits found none of the events it repeats to take over; committing before them",
				slog.String("topic", tp.Topic), slog.Int("partition", int(tp.Partition)), slog.Int("records", len(offs)), slog.Int("times", n))
		}
		return
	}
	to.takeEvents(evs)
	d.tookOver += len(evs)
	if d.handed == nil {
		d.handed = map[origin]struct{}{}
	}
	for _, off := range offs { // only those moved: the others' go as they would
		d.handed[origin{tp, off}] = struct{}{}
	}
}

// wasHandedOver reports whether the events of the record at c went with
// another worker's batch (takeOver). d.mu is held.
func (d *detector) wasHandedOver(c telemetry.Cause) bool {
	if len(d.handed) == 0 || c.Topic == "" {
		return false
	}
	_, ok := d.handed[origin{causePartition(c), c.Offset}]
	return ok
}

// waitsFor reports whether worker a waits, directly or through others,
// for worker b. d.mu is held.
func (d *detector) waitsFor(a, b any) bool {
	seen := map[any]bool{}
	next := []any{a}
	for len(next) > 0 {
		w := next[len(next)-1]
		next = next[:len(next)-1]
		if w == b {
			return true
		}
		if seen[w] {
			continue
		}
		seen[w] = true
		next = append(next, d.waiting[w]...)
	}
	return false
}

func containsPartition(tps []broker.TopicPartition, tp broker.TopicPartition) bool {
	for _, p := range tps {
		if p == tp {
			return true
		}
	}
	return false
}
