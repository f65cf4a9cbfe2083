package enrich

import (
	"context"
	"sync"

	"github.com/weirnet/weir/broker"
)

// publishChunkBytes is how many bytes of input records a worker enriches
// before it hands their outputs to the publisher: small enough that most
// of a poll's publishing overlaps its enrichment, large enough that a
// produce call carries a hundred or more of the usual records (syslog
// lines, metric rows) rather than a few.
const publishChunkBytes = 128 << 10

// nextChunk is how many records at the start of recs make the next chunk
// to enrich and hand over: publishChunkBytes of values, and at least one.
func nextChunk(recs []broker.Record) int {
	n, size := 0, 0
	for n < len(recs) && (n == 0 || size < publishChunkBytes) {
		size += len(recs[n].Value)
		n++
	}
	return n
}

// eachChunk calls enrich with the chunks of recs in turn (see nextChunk);
// enrich enriches one and hands its outputs to the publisher (flush).
func eachChunk(recs []broker.Record, enrich func(chunk []broker.Record)) {
	for len(recs) > 0 {
		n := nextChunk(recs)
		enrich(recs[:n])
		recs = recs[n:]
	}
}

// publisher publishes a syslog or metrics worker's outputs on a goroutine
// of its own, in the order handed to it, while the worker enriches the
// next chunk of the poll: on the embedded log, writing the outputs to the
// log is a fifth to a third of a record's time, and the worker's
// goroutine is what bounds a worker. End to end on an idle 2-core
// machine, syslog gained about 15% from it, and IF-MIB rows (2.6 KB of
// outputs each) about 10%; narrow rows and a loaded machine, whose other
// core is busy anyway, gain little. Only without transactions: there
// publishing is exactly once by the src_offset skip (see outputs),
// whatever the outputs' grouping into produce calls.
//
// The worker waits for everything it handed over before it commits and
// polls again, so a partition given away at the next poll has all its
// outputs in the log when its new owner reads their tails.
type publisher struct {
	jobs chan outBatch
	wg   sync.WaitGroup // outstanding jobs
	// handed counts, per batch of flush's arguments, the outputs of the
	// current poll already handed over (see flush): by position, not by
	// topic, which two batches could share. Only the worker's goroutine
	// uses it.
	handed []int
	// failed is set when ctx ended during a publish; the jobs after it
	// are dropped, as deliver's in-line publishing stops there too.
	failed bool
	done   chan struct{}
}

// startPublisher starts o's publisher, when o publishes without
// transactions, until the returned stop, which waits for it to end.
func (o *outputs) startPublisher(ctx context.Context) (stop func()) {
	if o.txn {
		return func() {}
	}
	p := &publisher{jobs: make(chan outBatch, 64), done: make(chan struct{})}
	o.pub = p
	go func() {
		defer close(p.done)
		for b := range p.jobs {
			if !p.failed && !o.publishRetrying(ctx, b) {
				p.failed = true // ctx ended: drop the rest
			}
			p.wg.Done()
		}
	}()
	return func() {
		close(p.jobs)
		<-p.done
		o.pub = nil
	}
}

// flush hands the publisher the outputs of batches it does not have yet:
// each batch is the poll's outputs so far for its topic, given in the
// same place in every call, of which the first handed[i] were handed over
// before. Without a publisher it does nothing (deliver publishes them).
func (o *outputs) flush(batches ...outBatch) {
	p := o.pub
	if p == nil {
		return
	}
	for len(p.handed) < len(batches) {
		p.handed = append(p.handed, 0)
	}
	for i, b := range batches {
		if n := p.handed[i]; n < len(b.outs) {
			p.wg.Add(1)
			p.jobs <- outBatch{b.topic, b.outs[n:]}
			p.handed[i] = len(b.outs)
		}
	}
}

// published waits for all that flush handed over, and starts the next
// poll's count. It returns false if ctx ended before all was published.
func (o *outputs) published() bool {
	p := o.pub
	p.wg.Wait()
	clear(p.handed)
	return !p.failed
}
