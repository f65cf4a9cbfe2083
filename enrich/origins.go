package enrich

import (
	"cmp"
	"context"
	"log/slog"
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
		}
		delete(d.waiting, who)
	}()
	var timer *time.Timer
	for {
		var on []any
		for _, tp := range parts {
			for _, o := range d.waits[tp] {
				if !d.undelivered(o) || containsPartition(parts, o.tp) {
					continue
				}
				// A partition no worker here owns was taken by another
				// process, which enriches its records again, not knowing
				// this batch's: nothing to wait for. An owner waiting for
				// this batch is a cycle.
				owner := d.owners[o.tp]
				if owner == nil || d.waitsFor(owner, who) {
					continue
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
