package enrich

import (
	"hash/maphash"
	"slices"

	"github.com/weirnet/weir/broker"
	"github.com/weirnet/weir/telemetry"
)

// maxLeftOut bounds the events left out that a partition's leftOutLog
// keeps (16 bytes each). A record is read again only while it is not
// committed: on the embedded log, at most a poll behind the position read.
// A syslog poll is 1 MiB: about 2,800 records of the corpus mix, and up
// to about 15,000 of the shortest lines that report a change (69 bytes:
// {"v":1,"hostname":"a","message":"Interface e1 changed state to down"}),
// each of which may be a repeat. A metrics poll is 1 MiB too, up to about 4,300 rows of
// an interface's status, each of which may leave out an event in an
// outage traps reported first. On a Kafka cluster, aborts in a row may
// widen it. Past the bound the oldest half is forgotten: read again, their
// repeats would be published. The log grows only as events are left out.
const maxLeftOut = 1 << 15

// leftOutLog is, for one input partition, the events of the records read
// last that the detector left out (repeats, reports of the past), in the
// order of their records' offsets.
type leftOutLog struct {
	offsets []int64
	keys    []uint64 // leftOutKey of each event
}

// noteLeftOut remembers that the detector left out ev, of the record at
// ev.Cause, whose object id is id: read again before its commit, the
// record leaves it out again (see observeInto).
func (d *detector) noteLeftOut(ev telemetry.Event, id string) {
	c := ev.Cause
	if c.Topic == "" || c.Offset < 0 {
		return
	}
	tp := causePartition(c)
	l := d.leftOut[tp]
	if l == nil {
		l = &leftOutLog{}
		d.leftOut[d.keepPartition(tp)] = l
	}
	if len(l.offsets) == maxLeftOut {
		half := maxLeftOut / 2
		l.offsets = l.offsets[:copy(l.offsets, l.offsets[half:])]
		l.keys = l.keys[:copy(l.keys, l.keys[half:])]
	}
	// In offset order. Mostly at the end; two workers of the process
	// reading the partition at once (one handing it over finishes its
	// batch while the other reads on) may note a record's events after
	// a later record's, as beginRecord and observeInto lock apart. That
	// is no start over (noteRead tells one, and forgetLeftOut forgets).
	i := len(l.offsets)
	for i > 0 && l.offsets[i-1] > c.Offset {
		i--
	}
	l.offsets = slices.Insert(l.offsets, i, c.Offset)
	l.keys = slices.Insert(l.keys, i, d.leftOutKey(ev, id))
}

// forgetLeftOut forgets what was left out of partition tp's records: its
// offsets started over (the topic deleted and made again, see noteRead),
// and what was left out is another topic's.
func (d *detector) forgetLeftOut(tp broker.TopicPartition) {
	if l := d.leftOut[tp]; l != nil {
		l.offsets, l.keys = l.offsets[:0], l.keys[:0]
	}
	// So are the records handed over (see takeOver): a new record at
	// such an offset gives its events.
	for o := range d.handed {
		if o.tp == tp {
			delete(d.handed, o)
		}
	}
}

// leftOutBefore reports whether the detector left out ev, of a record
// read again, the first time it read it.
func (d *detector) leftOutBefore(ev telemetry.Event, id string) bool {
	l := d.leftOut[causePartition(ev.Cause)]
	if l == nil {
		return false
	}
	i, found := slices.BinarySearch(l.offsets, ev.Cause.Offset)
	if !found {
		return false
	}
	key := d.leftOutKey(ev, id)
	for ; i < len(l.offsets) && l.offsets[i] == ev.Cause.Offset; i++ {
		if l.keys[i] == key {
			return true
		}
	}
	return false
}

// leftOutKey tells apart the events of one record: one event per type and
// object. Not the device, which a record has one of: an inventory reloaded
// between the readings may name it otherwise.
func (d *detector) leftOutKey(ev telemetry.Event, id string) uint64 {
	// Two string hashes, not a maphash.Hash: this runs for most event
	// lines (repeats are common), and the Hash's setup is most of its cost.
	return maphash.String(d.seed, ev.Type)*0x9e3779b97f4a7c15 ^ maphash.String(d.seed, id)
}
