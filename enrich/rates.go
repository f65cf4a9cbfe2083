package enrich

import (
	"encoding/binary"
	"math"
	"slices"
	"time"

	"github.com/weirnet/weir/telemetry"
)

// appendRowID appends to b what tells one row of counters from every
// other: its device, its measurement and its own tags (sorted, as decoded;
// before inventory tags are added), each length-prefixed. Two BGP peers
// or two storage rows of one device are two rows.
func appendRowID(b []byte, device, measurement string, tags []telemetry.Tag) []byte {
	str := func(s string) {
		b = binary.AppendUvarint(b, uint64(len(s)))
		b = append(b, s...)
	}
	str(device)
	str(measurement)
	for _, t := range tags {
		if t.Key == "ifAlias" {
			// An interface's description: editing it changes no counter,
			// and must not start its rates again.
			continue
		}
		str(t.Key)
		str(t.Value)
	}
	return b
}

// rowCounters are the last samples of one row's counters, in the order the
// row's records list them, so a record's counters are found in place.
type rowCounters struct {
	counters []counterSample
	// byField indexes counters by field in a row of indexCounters or
	// more (nil until a lookup misses the place tried first; nil again
	// when counters are deleted): a row's first record, its counters all
	// new, or one listing them in another order, would otherwise scan the
	// row for each, quadratic in a Kafka client's record of 100,000
	// counters (a minute of the worker's time, its partitions stalled).
	byField map[string]int
	seen    int64 // weir's clock (Unix seconds) when the row last arrived, for forget
	// named and namedDevice are the interface name and device last put
	// in the detector's interfaceNames for this row (an SNMP interface,
	// or a gNMI one with its ifindex), as its entry nameEntry, which is as
	// the row left it while it is in the table (owner not 0) and its
	// sets are still nameSets. nameID is the row's owner id.
	named, namedDevice string
	namedIndex         string // the ifIndex it was put under
	nameEntry          *interfaceName
	nameID, nameSets   uint64
	// disc is the row's last discontinuity time, from the sample of
	// discAt (Unix nanoseconds; 0: none yet); cleared is the time of
	// the last sample that told it moved (0: none). See discontinued.
	disc            float64
	discAt, cleared int64
	discRun         uint8 // samples in a row it moved at, up to maxDiscontinuityRun+1
	// speed is the interface's speed (Mbit/s) at the row's last record,
	// 0 unknown: see spanSpeed.
	speed float64
	// lastAt is the latest time (Unix nanoseconds) of the row's records,
	// for restamp.
	lastAt int64
}

// restamp is the time a record of the row stamped at, received at
// received, is published with: at, but for a record without sysUpTime
// stamped at the row's latest time again and received after it. That is a
// gNMI notification stamped when its values last changed (the gNMI
// specification; Arista EOS's default), a counter standing still sampled
// again, whose rate of 0 is over the time since: published at at, it
// would take the place of the rate before it at that time in InfluxDB,
// which keeps one point a series and time (the last written).
func (rc *rowCounters) restamp(at, received time.Time, uptime uint32) time.Time {
	if rc == nil {
		return at
	}
	t := at.UnixNano()
	switch {
	case t > rc.lastAt:
		rc.lastAt = t
	case t == rc.lastAt && uptime == 0 && received.After(at):
		return received
	}
	return at
}

// spanSpeed is the most the row's interface could carry a second (Mbit/s)
// over the interval to a record whose speed is speed: the higher of its
// speeds at either end. A busy port that went down in the interval reads
// at the poll after as the 10 Mbit/s a down auto-negotiating port
// reports, which the octets it carried before are not to be measured
// against (2500% utilisation). The record's speed is the row's last from
// then on. A nil row's is speed.
func (rc *rowCounters) spanSpeed(speed float64) float64 {
	if rc == nil {
		return speed
	}
	span := max(speed, rc.speed)
	rc.speed = max(speed, 0)
	return span
}

// names reports whether the detector's interfaceNames hold what the row
// names (device's interface index is name) as the row left it, so it
// need not be told again: the hot path, no lock. Told again when the name
// is new to the row, or the table changed the entry since (another row of
// the ifIndex set another name, it was dropped, or the table started
// again).
func (rc *rowCounters) names(device, index, name string) bool {
	e := rc.nameEntry
	return e != nil && rc.named == name && rc.namedDevice == device && rc.namedIndex == index &&
		e.owner.Load() != 0 && e.sets.Load() == rc.nameSets
}

// maxDiscontinuityRun is how many polls in a row a row's
// ifCounterDiscontinuityTime may move at and be believed: counters are not
// cleared poll after poll, and an agent that reports its sysUpTime there
// would otherwise leave the row without a rate for good. It is believed
// again once it stands still. (OpenConfig's last-clear, which a target
// may send only when it moves, is always believed.)
const maxDiscontinuityRun = 3

// discontinued records the row's discontinuity time d (discontinuityTime:
// IF-MIB's ifCounterDiscontinuityTime, the sysUpTime at which any of the
// interface's counters last had a discontinuity, a `clear counters` or the
// interface made again; OpenConfig's last-clear) in the sample of time at.
// When it moved since the row's last, the agent says its counters started
// again in between: from a counter last sampled before at, observe gives
// no rate, whatever its value did, whether it is in this sample or comes
// in a later one (a gNMI target sends the leaves that changed, last-clear
// and the counters in notifications of their own, or some of them). An
// older sample (a replay, out of order) changes nothing; unless the last
// is stamped ahead of weir's clock and this one is not, which becomes the
// base instead, as observe's counters do: else a device clock that jumped
// forward and was set back would hide every move until real time passed
// that stamp. epoch: d is a time (OpenConfig's last-clear, ns since the
// epoch, on the clock that stamps the counters): the row's first is when
// the counters started again, and holds for those sampled before it.
// A target sending the leaves that changed sends last-clear once at the
// start of its subscription, and then when cleared: a worker that took
// the row since (a restart of weir, a rebalance), whose warm-up window
// held only counters, first sees last-clear at the clear.
func (rc *rowCounters) discontinued(d float64, epoch bool, at time.Time) {
	t := at.UnixNano()
	if rc.discAt != 0 && t <= rc.discAt {
		if !stampedAhead(time.Unix(0, rc.discAt), rc.seen) || stampedAhead(at, rc.seen) {
			return
		}
		// A move seen ahead is not to outlast the counters' own
		// samples ahead, which this one's replace.
		rc.cleared = min(rc.cleared, t)
	}
	switch {
	case rc.discAt != 0 && d != rc.disc:
		if rc.discRun <= maxDiscontinuityRun && !epoch {
			rc.discRun++ // SNMP's, in every poll; gNMI may send last-clear only when it moves
		}
		if rc.discRun <= maxDiscontinuityRun {
			rc.cleared = t
		}
	case rc.discAt != 0:
		rc.discRun = 0
	case rc.discAt == 0 && epoch && d <= float64(t):
		// min: d as a float is off by up to 128 ns, and a counter
		// sampled with it is sampled after the clear.
		rc.cleared = max(rc.cleared, min(int64(d), t))
	}
	rc.disc, rc.discAt = d, t
}

// counterSample is the last value seen of one counter series.
type counterSample struct {
	field  string
	value  uint64
	at     time.Time
	uptime uint32 // sysUpTime (hundredths of a second) at the sample; 0 unknown
	// upLag is how long before the sample (hundredths of a second) its
	// uptime was read: 0 for its own; else a sample without one kept
	// the last read (see observe).
	upLag uint32
	// steady is the rate of the last interval the counter went up in,
	// without a wrap (0: none since its first sample or a reset), which
	// a far wrap's must not be much over (see observe).
	steady float32
	// jumped: the value is a jump forward by half the range or more,
	// taken as a reset (see observe); a fall back from it is one too.
	jumped bool
}

// rates turns counter samples into per-second rates. A series is a row
// and a field; samples come from one worker, in order per device since a
// device's records are in one partition.
//
//   - The first sample of a series gives no rate.
//   - A sample not newer than the last (a replay, or out of order) is
//     ignored and gives no rate; unless the last is stamped ahead of
//     weir's clock (stampedAhead) and it is not, when it becomes the
//     base instead. One without sysUpTime (gNMI) of the same time and
//     value is the counter standing still, sampled again with the time
//     it last changed: a rate of 0.
//   - sysUpTime going back means the device restarted: a counter that went
//     back started again, so no rate (not a huge spike) and the sample
//     becomes the base; one that did not (an agent restarted alone, its
//     host's counters on) gives its delta, which is at most its value.
//   - A decrease without a restart is a wrap when it fits the counter's
//     width: a last value that fits in 32 bits and a 32-bit wrap that is
//     less than half the range is a 32-bit counter wrapping; likewise for
//     64 bits. A 32-bit wrap of half the range or more, with sysUpTime on
//     both samples to rule out a restart, is one only if it carries at
//     most farWrapGrowth times the counter's steady rate before, and the
//     link could carry it (the caller tells: wrapFar). Anything else is a
//     reset: no rate.
//   - A move forward by 2^63 or more is a reset too (no counter counts
//     that much in an interval: -1 written unsigned, a "no value" of
//     2^64-1), and so is the next move back from it, or from a first
//     sample of 2^64-1, which would read as a wrap at 2^64 of the whole
//     counter.
//   - A counter last sampled before its row's ifCounterDiscontinuityTime
//     (or last-clear) was seen to move (discontinued) gives no rate: its
//     counters started again since, by the agent's word.
//   - Missed polls just make the interval longer; the rate is still right.
//
// Rows are kept by row (appendRowID), not by series, so a record of many
// counters costs one map lookup.
type rates struct {
	rows     map[string]*rowCounters
	rowsPeak shrinkable
	// idBytes is the length of the rows' IDs, bounded by maxIDBytes: an
	// ID holds every tag of its row, and a gNMI path of thousands of keys
	// (or of keys kilobytes long) is as long as its target makes it.
	idBytes, maxIDBytes int
	// byPath indexes the rows that have a path tag (gNMI's) by device
	// and path, to their IDs, so that a delete of a container
	// (deletedContainer) looks at the paths of its device, not at every
	// row of every device.
	byPath map[string]map[string][]string
	// now is weir's clock, set once per batch (setNow): rows are forgotten
	// by when they arrived, not by their own time, which is the device's
	// for gNMI and may be hours off.
	now int64
}

func newRates() *rates {
	return &rates{rows: map[string]*rowCounters{}, byPath: map[string]map[string][]string{}, maxIDBytes: maxRowIDBytes}
}

// maxRowIDBytes bounds the length of a worker's rows' IDs together, as
// maxMetricsObjects bounds their number: a row's ID (its device,
// measurement and tags) is a few hundred bytes, so a million real rows
// stay below it; a million of 20 KB, which a gNMI target keying its paths
// with thousands of keys makes, held 20 GB.
const maxRowIDBytes = 512 << 20

// setNow sets the arrival time stamped on the rows that follow.
func (r *rates) setNow(t time.Time) { r.now = t.Unix() }

// row returns the counters of the row id names (appendRowID), marking it
// seen now; nil for a row it does not have when it has max rows.
func (r *rates) row(id []byte, max int) *rowCounters {
	rc := r.rows[string(id)] // no copy of id to look it up
	if rc == nil {
		if len(r.rows) >= max || r.idBytes+len(id) > r.maxIDBytes {
			return nil
		}
		rc = &rowCounters{}
		key := string(id)
		r.rows[key] = rc
		r.idBytes += len(key)
		r.index(key, true)
	}
	rc.seen = r.now
	return rc
}

// observe records a sample of the row's counter field and returns the rate
// since the previous one. i is where the field was last time (its place
// among the row's counters), tried first. wide: the counter is known to be
// 64 bits wide (telemetry.Metric.Counters64), so going back below 2^32 is
// a reset, not a 32-bit wrap. secs is the time since the previous sample
// that the rate is over; wrapped: the rate is across a 32-bit wrap, which
// may be a reset instead (the caller tells by the link's speed, and must
// for wrapFar). carries is how many a second the link can carry of a
// 32-bit counter's units (0: not known, or no matter): an interval over
// which it could carry 2^32 may hide a wrap, and its rate, which the
// caller gives none, is no steady rate.
func (rc *rowCounters) observe(i int, field string, value uint64, at time.Time, uptime uint32, wide bool, carries float64) (rate, secs float64, ok bool, wrapped wrap) {
	var g sampleGap
	return rc.observeGap(&g, i, field, value, at, uptime, wide, carries)
}

// sampleGap is what observe works out from the times and sysUpTimes of a
// sample and of its counter's last one alone, kept for the next counter:
// the counters of a record were last sampled together, and working it out
// again for each was a tenth of a row's enrichment.
type sampleGap struct {
	valid                         bool
	at, prevAt                    time.Time
	uptime, prevUptime, prevUpLag uint32
	elapsed, since                time.Duration // at.Sub(prevAt); and since prev's sysUpTime was read
	secs                          float64
	// With sysUpTime on both samples: otherAgent, restarted and
	// lagging of them.
	other, restarted, lagging bool
}

// of returns g for a sample at at with uptime after prev, worked out
// again unless g is of those already.
func (g *sampleGap) of(at time.Time, uptime uint32, prev *counterSample) *sampleGap {
	// == rather than Equal: the same instants at the least.
	if g.valid && g.at == at && g.prevAt == prev.at && g.uptime == uptime && g.prevUptime == prev.uptime && g.prevUpLag == prev.upLag {
		return g
	}
	*g = sampleGap{valid: true, at: at, prevAt: prev.at, uptime: uptime, prevUptime: prev.uptime, prevUpLag: prev.upLag}
	g.elapsed = at.Sub(prev.at)
	g.since = g.elapsed + ticks(prev.upLag)
	g.secs = g.elapsed.Seconds()
	if uptime != 0 && prev.uptime != 0 {
		g.other = otherAgent(prev.uptime, uptime, at.Add(-g.since), at)
		g.restarted = restarted(prev.uptime, uptime, g.since)
		g.lagging = lagging(prev.uptime, uptime, g.since)
	}
	return g
}

// indexCounters is the size of a row from which find looks its counters
// up in rowCounters.byField rather than scanning them.
const indexCounters = 64

// find returns where field's sample is in rc.counters, or -1.
func (rc *rowCounters) find(field string) int {
	if len(rc.counters) < indexCounters {
		for j := range rc.counters {
			if rc.counters[j].field == field {
				return j
			}
		}
		return -1
	}
	if rc.byField == nil {
		rc.byField = make(map[string]int, len(rc.counters))
		for j := range rc.counters {
			rc.byField[rc.counters[j].field] = j
		}
	}
	if j, ok := rc.byField[field]; ok {
		return j
	}
	return -1
}

// observeGap is observe, with g kept from the counter before.
func (rc *rowCounters) observeGap(g *sampleGap, i int, field string, value uint64, at time.Time, uptime uint32, wide bool, carries float64) (rate, secs float64, ok bool, wrapped wrap) {
	if i >= len(rc.counters) || rc.counters[i].field != field {
		if i = rc.find(field); i < 0 {
			rc.counters = append(rc.counters, counterSample{field: field, value: value, at: at, uptime: uptime})
			if rc.byField != nil {
				rc.byField[field] = len(rc.counters) - 1
			}
			return 0, 0, false, noWrap
		}
	}
	s := &rc.counters[i]
	if at.Equal(s.at) && value == s.value && uptime == 0 && s.uptime == 0 {
		// Sampled again, stamped when it last changed (a gNMI
		// notification's time is when its values changed, not when it
		// was sent): the counter stands still. A poll (with sysUpTime)
		// stamped the same is a replay, ignored below.
		return 0, 0, true, noWrap
	}
	if !at.After(s.at) {
		if stampedAhead(s.at, rc.seen) && !stampedAhead(at, rc.seen) {
			// The last sample's time is ahead of weir's clock and this
			// one's is not (a device clock that jumped forward and was
			// set back): this one is the base from now on, or no sample
			// would give a rate until real time passed that stamp. From
			// a clock that stays ahead, an older sample is one out of
			// order, ignored as any is.
			s.value, s.at, s.uptime, s.upLag = value, at, uptime, 0
		}
		return 0, 0, false, noWrap
	}
	prev := *s
	gap := g.of(at, uptime, &prev)
	s.value, s.at, s.uptime, s.upLag, s.jumped = value, at, uptime, 0, false
	if uptime == 0 && prev.uptime != 0 {
		// A sample without sysUpTime (an agent that left it out of a
		// poll) tells nothing of a restart: the last one read stays the
		// counter's, with how long before this sample it was read, so
		// the next sample with one is compared with it. Else a reboot
		// after such a poll read as a 32-bit wrap, a spike, in the
		// record that raised device_rebooted (which compares with the
		// last good one too).
		if lag := int64(prev.upLag) + int64(gap.elapsed/(10*time.Millisecond)); lag < 1<<31 {
			s.uptime, s.upLag = prev.uptime, uint32(lag)
		}
	}
	if rc.cleared != 0 && prev.at.UnixNano() < rc.cleared {
		// The agent said its counters started again since prev.
		s.steady = 0
		return 0, 0, false, noWrap
	}
	if gap.other {
		// Another agent answers (an HA pair's floating address, a
		// target moved to another address): its counters are another
		// device's, and their difference with the last is no traffic,
		// whichever way it went (66 GB/s on a 10G port).
		s.steady = 0
		return 0, 0, false, noWrap
	}
	if gap.restarted && value < prev.value {
		// The counters started again. One that went on did not (an
		// agent restarted alone): its delta is its traffic.
		s.steady = 0
		return 0, 0, false, noWrap
	}
	var delta uint64
	switch {
	case value-prev.value >= 1<<63 && value > prev.value:
		// Forward by half the range or more: no counter counts 9.2
		// EB in one interval (a producer writing -1 unsigned, an
		// agent's 2^64-1 for no value). A reset, as a move back by
		// as much is; and so is its fall back to the counter's
		// value, which would read as a wrap at 2^64.
		s.steady, s.jumped = 0, true
		return 0, 0, false, noWrap
	case value >= prev.value:
		delta = value - prev.value
	case prev.jumped, prev.value == math.MaxUint64:
		// Back from a jump taken as a reset, or from an agent's "no
		// value" that was the first sample: no link's speed may be
		// known to refuse it as a wrap of the whole counter.
		s.steady = 0
		return 0, 0, false, noWrap
	case gap.lagging:
		// The counter went back, and sysUpTime moved on by less than
		// the time since: a restart in a gap longer than the uptime
		// before it, not a wrap (a spike of 2^32 over the gap).
		s.steady = 0
		return 0, 0, false, noWrap
	case !wide && prev.value <= math.MaxUint32 && uint32(value-prev.value) < 1<<31 && value <= math.MaxUint32:
		delta = uint64(uint32(value - prev.value)) // 32-bit wrap
		wrapped = wrapNear
	case !wide && prev.value <= math.MaxUint32 && value <= math.MaxUint32 && uptime != 0 && prev.uptime != 0:
		// A 32-bit counter back by less than half its range: a wrap of
		// 2^31 octets or more (a 1 Gbit/s link over 57% full, polled
		// every 30 s), or a reset with sysUpTime on, which looks like a
		// wrap of up to 2^32. A busy link's wrap carries about what its
		// intervals before did; a reset's, whatever the counter held:
		// more than farWrapGrowth times the steady rate is a reset. The
		// link's speed is the caller's to check.
		delta = uint64(uint32(value - prev.value))
		wrapped = wrapFar
	case value-prev.value < 1<<63:
		// A 64-bit wrap: as a 32-bit one, a reset if the link could
		// not carry it (from an agent's 2^64-1 for no value to the
		// counter's real value, a wrap of the whole counter).
		delta = value - prev.value
		wrapped = wrapNear
	default:
		s.steady = 0
		return 0, 0, false, noWrap // a reset without a sysUpTime to show it
	}
	secs = gap.secs
	rate = float64(delta) / secs
	switch {
	case wrapped == noWrap && value >= prev.value && carries*secs >= 1<<32:
		// Perhaps more than it moved (a wrap unseen): the steady rate
		// before stands.
	case wrapped == noWrap && value >= prev.value:
		s.steady = float32(rate)
	case wrapped == wrapFar && rate > farWrapGrowth*float64(prev.steady):
		s.steady = 0
		return 0, 0, false, noWrap
	}
	return rate, secs, true, wrapped
}

// farWrapGrowth is how many times the steady rate before it a wrap of
// 2^31 or more may carry: traffic that doubles between two polls is a
// burst; a reset's "wrap" from a counter that moved a tenth of that is
// a spike.
const farWrapGrowth = 2

// wrap is whether a rate is across a counter's wrap, and how far.
type wrap uint8

const (
	noWrap   wrap = iota
	wrapNear      // a 32-bit wrap of less than 2^31, or a 64-bit one: a reset only if the link could not carry it
	wrapFar       // a 32-bit wrap of 2^31 or more: a wrap only of octets the link could carry
)

// aheadSlack is how far ahead of weir's clock a sample's time may be and
// still be believed when a later sample is older: device clocks drift.
const aheadSlack = time.Minute

// stampedAhead reports whether a sample's time at is ahead of weir's clock
// now (Unix seconds, as rates.now; 0 unknown) by more than aheadSlack.
func stampedAhead(at time.Time, now int64) bool {
	return now != 0 && at.Unix() > now+int64(aheadSlack/time.Second)
}

// restarted reports whether a device whose sysUpTime was prev and is cur,
// elapsed later by the samples' times, restarted in between. sysUpTime
// counts hundredths of a second in 32 bits and wraps after 497 days: it
// goes back then too, but moves on (modulo 2^32) by about the time
// elapsed. Going back any other way is a restart (from 300 days up to 5 s
// is no wrap, though it goes back by more than 2^31). The slack allows for
// polls that take a while. A sysUpTime that moves on too slowly, or not
// at all, says nothing: some agents (recordings, caching proxies) keep it
// still, and every poll of them would be a restart.
func restarted(prev, cur uint32, elapsed time.Duration) bool {
	if elapsed <= 0 || cur >= prev {
		return false // an older sample (out of order), the same one, or on
	}
	moved, slack := uptimeMoved(prev, cur), uptimeSlack(elapsed)
	return moved < elapsed-slack || moved > elapsed+slack
}

// otherAgent reports whether the agent whose sysUpTime is cur at at is
// another than the one whose sysUpTime was prev at prevAt: sysUpTime moved
// on by more than the time elapsed (less the slack restarted allows; back
// reads as far on, modulo 2^32), to a boot before prevAt, when the agent
// that answered then was up: nothing restarted, another agent answers.
// One moving on too slowly, or not at all, is no other agent (see
// restarted).
func otherAgent(prev, cur uint32, prevAt, at time.Time) bool {
	elapsed := at.Sub(prevAt)
	if elapsed <= 0 {
		return false
	}
	return uptimeMoved(prev, cur) > elapsed+uptimeSlack(elapsed) && upBefore(prevAt, at, cur)
}

// upBefore reports whether an agent whose sysUpTime at at is uptime
// booted before prev (less the slack restarted allows): it was up at a
// poll at prev, so a sysUpTime that went back since is no restart of it.
func upBefore(prev, at time.Time, uptime uint32) bool {
	if at.IsZero() || prev.IsZero() {
		return false
	}
	return bootTime(at, uptime).Before(prev.Add(-uptimeSlack(at.Sub(prev))))
}

// uptimeMoved is how far sysUpTime moved from prev to cur, modulo 2^32
// hundredths of a second.
func uptimeMoved(prev, cur uint32) time.Duration { return ticks(cur - prev) }

// ticks is a TimeTicks value (sysUpTime: hundredths of a second) as a
// duration.
func ticks(t uint32) time.Duration { return time.Duration(t) * 10 * time.Millisecond }

// uptimeSlack is how far sysUpTime may lag or lead the time elapsed
// between two polls and still be on time: polls take a while.
func uptimeSlack(elapsed time.Duration) time.Duration { return elapsed/10 + time.Minute }

// lagging reports whether sysUpTime moved on from prev to cur by less than
// elapsed (less the slack restarted allows): on its own no restart (some
// agents keep sysUpTime still), but with a counter going back, one.
func lagging(prev, cur uint32, elapsed time.Duration) bool {
	return cur >= prev && uptimeMoved(prev, cur) < elapsed-uptimeSlack(elapsed)
}

// index adds the row id to byPath, or removes it, if it has a path tag.
func (r *rates) index(id string, add bool) {
	device, path := rowIDPath(id)
	if path == "" {
		return
	}
	paths := r.byPath[device]
	if add {
		if paths == nil {
			paths = map[string][]string{}
			r.byPath[device] = paths
		}
		paths[path] = append(paths[path], id)
		return
	}
	ids := slices.DeleteFunc(paths[path], func(x string) bool { return x == id })
	switch {
	case len(ids) > 0:
		paths[path] = ids
	case len(paths) > 1:
		delete(paths, path)
	default:
		delete(r.byPath, device)
	}
}

// rowIDPath is the device of a row's ID (appendRowID) and its path tag,
// "" for none; without allocating, as every new row asks.
func rowIDPath(id string) (device, path string) {
	r := rowIDReader(id)
	device, ok := r.next()
	if _, ok2 := r.next(); !ok || !ok2 { // the measurement
		return "", ""
	}
	for r != "" {
		k, ok1 := r.next()
		v, ok2 := r.next()
		if !ok1 || !ok2 {
			return "", ""
		}
		if k == "path" {
			return device, v
		}
	}
	return device, ""
}

// rowIDReader reads a row's ID (appendRowID) a string at a time.
type rowIDReader string

// next returns the next string; false at the end or on a damaged ID.
func (r *rowIDReader) next() (string, bool) {
	s := string(*r)
	var n uint64
	k := 0
	for i := 0; ; i++ {
		if i == len(s) || i == binary.MaxVarintLen64 {
			return "", false
		}
		n |= uint64(s[i]&0x7f) << (7 * i)
		if s[i] < 0x80 {
			k = i + 1
			break
		}
	}
	if uint64(len(s)-k) < n {
		return "", false
	}
	*r = rowIDReader(s[k+int(n):])
	return s[k : k+int(n)], true
}

// forget drops rows no record arrived for since cutoff (weir's clock), so
// memory follows the live devices; gone is told of each.
func (r *rates) forget(cutoff time.Time, gone func(*rowCounters)) {
	c := cutoff.Unix()
	r.rowsPeak.note(len(r.rows))
	for k, rc := range r.rows {
		if rc.seen < c {
			if gone != nil {
				gone(rc)
			}
			delete(r.rows, k)
			r.idBytes -= len(k)
			r.index(k, false)
		}
	}
	r.rows = shrunk(r.rows, &r.rowsPeak)
}
