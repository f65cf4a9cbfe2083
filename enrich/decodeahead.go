package enrich

import "github.com/weirnet/weir/broker"

// decodeAheadBytes is the unit a decodeAhead hands over: small enough
// that the worker waits little for the first one of a poll, large enough
// (about a hundred syslog records) that handing over costs nothing next to
// decoding.
const decodeAheadBytes = 32 << 10

// decodeAheadRecords bounds a unit's records, so that a unit fits its
// block of slots: 32 KiB of the corpus mix is about 90 records, of the
// shortest lines (37 bytes) about 900.
const decodeAheadRecords = 128

// decodeAheadUnits is how many units the decoding goroutines may have
// decoded that the worker has not begun: with the unit the worker is in
// and those being decoded, the slots are decodeAheadUnits+2 blocks of
// decodeAheadRecords for one goroutine (1,024 slots, about 1 MiB with
// their maps, at most 4 MiB more of unescaped strings: maxKeptUnescaped)
// and 9 blocks for two (see decodeAhead.ends), whatever the
// poll's count of records. 192 KiB ahead is more than one goroutine, the
// slower of it and the worker's, gets.
const decodeAheadUnits = 6

// decodeAhead decodes and classifies a poll's syslog records on a
// goroutine of its own, while the worker's goroutine detects events in,
// encodes and hands to the publisher the records before them. Decoding and
// classifying are half of a record's time and need nothing the detector
// keeps: on two cores, end to end, a worker enriched 271,000-295,000
// records a second against 215,000-219,000 without (see the README's
// Performance section). The records are decoded in order into slots of
// their own, a block of slots per unit, the blocks reused round; the
// worker takes them in the same order with next.
//
// Unlike halves of a chunk enriched side by side (tried before, no gain),
// the two goroutines work on different units of a poll, the worker
// waiting for a unit only when decoding it is not done yet (at a poll's
// first, and wherever decoding is the slower), the other when it is
// decodeAheadUnits ahead, and while the worker publishes, commits and
// polls: syslogPollBytes keeps that a small part of a poll.
//
// A poll of a single unit's bytes is decoded by the worker itself, as
// before: at low rates a second goroutine would add a hand-over to each
// record's time from receive to event and save nothing.
//
// A warm-up, whose work is nearly all decoding, decodes on two goroutines
// (goroutines: 2), unit u on goroutine u modulo two: 1.5 times as fast
// as on one (BenchmarkWarmupPartition). A worker's polls gain nothing
// from a second (the worker's goroutine bounds them then) and keep one.
type decodeAhead struct {
	// goroutines decode the units, unit u on goroutine u modulo their
	// count; 0 is 1. Set before the first start.
	goroutines int
	// slots are blocks of decodeAheadRecords: unit u of a poll is
	// decoded into block u modulo their count (blocks).
	slots  []decodedSyslog
	blocks int
	// ends[g] receives where each unit of goroutine g ends, as it
	// finishes it. Their capacity, decodeAheadUnits shared between them,
	// is how far ahead the goroutines may go: a unit past it waits to be
	// handed over until the worker takes the goroutine's next, done with
	// the block it reuses. Goroutine g begins unit u once its send of
	// unit u-N (of N goroutines) is taken, so once the worker has taken
	// unit u-(k+1)N (k the capacity) and is done with those before it:
	// the units decoded or in use are within (k+1)N+1 of each other, the
	// count of blocks (8 for one goroutine, 9 for two).
	ends []chan int
	// unit is the unit of the slot next gives, first its first record;
	// taken is that slot's record and decoded where the unit ends.
	unit, first, taken, decoded int
	unitEnds                    []int // scratch: the poll's unit ends
}

// start begins decoding recs with decode, or returns false, leaving recs
// to the worker, when they make a single unit's bytes. After a start that
// returned true the worker calls next once per record of recs, in order,
// before the records or the slots are reused: the decoding goroutine has
// ended when the last one returns.
func (a *decodeAhead) start(recs []broker.Record, decode func(*broker.Record, *decodedSyslog)) bool {
	a.unitEnds = a.unitEnds[:0]
	total := 0 // of the records before the last: a poll under a unit's bytes is one unit
	for i, size, n := 0, 0, 0; i < len(recs); i++ {
		if i < len(recs)-1 {
			total += len(recs[i].Value)
		}
		size += len(recs[i].Value)
		n++
		if size >= decodeAheadBytes || n == decodeAheadRecords || i == len(recs)-1 {
			a.unitEnds = append(a.unitEnds, i+1)
			size, n = 0, 0
		}
	}
	if total < decodeAheadBytes {
		return false
	}
	if a.slots == nil {
		n := max(a.goroutines, 1)
		k := decodeAheadUnits / n
		a.blocks = (k+1)*n + 1
		a.slots = make([]decodedSyslog, a.blocks*decodeAheadRecords)
		a.ends = make([]chan int, n)
		for g := range a.ends {
			a.ends[g] = make(chan int, k)
		}
	}
	a.unit, a.first, a.taken, a.decoded = -1, 0, 0, 0
	for g := range min(len(a.ends), len(a.unitEnds)) {
		// unitEnds's length is read once: a next start rewrites it once
		// the worker took the last unit, when a goroutine may still be
		// between its last send and its return.
		go func(slots []decodedSyslog, blocks int, unitEnds []int, ends chan<- int, stride int) {
			for u := g; u < len(unitEnds); u += stride {
				from, end := 0, unitEnds[u]
				if u > 0 {
					from = unitEnds[u-1]
				}
				block := slots[u%blocks*decodeAheadRecords:]
				for i := from; i < end; i++ {
					decode(&recs[i], &block[i-from])
				}
				ends <- end
			}
		}(a.slots, a.blocks, a.unitEnds, a.ends[g], len(a.ends))
	}
	return true
}

// next is the decoding of the poll's next record, waiting for its unit.
func (a *decodeAhead) next() *decodedSyslog {
	if a.taken == a.decoded {
		a.unit, a.first = a.unit+1, a.decoded
		a.decoded = <-a.ends[a.unit%len(a.ends)]
	}
	block := a.unit % a.blocks
	d := &a.slots[block*decodeAheadRecords+a.taken-a.first]
	a.taken++
	return d
}
