package enrich

import (
	"hash/maphash"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/weirnet/weir/broker"
	"github.com/weirnet/weir/internal/throttle"
	"github.com/weirnet/weir/telemetry"
)

// Event detection defaults.
const (
	DefaultDedupWindow   = 30 * time.Second
	DefaultFlapThreshold = 5
	DefaultFlapWindow    = 10 * time.Minute
)

// detector de-duplicates events and raises flapping ones. A device's
// records all land in one partition, which one worker owns, so one
// worker's detector sees every change of the objects it reports on.
type detector struct {
	mu sync.Mutex // workers of one process share a detector
	// gate holds the sharing workers' live records until all are warm
	// (nil: no waiting; see EventRules.HoldUntilWarm).
	gate      *warmGate
	dedup     time.Duration
	threshold int
	window    time.Duration
	// last is the last time an event was passed on. The keys of last and
	// changes, and flapState.last, hold strings of their own: events come
	// from records decoded in place, whose bytes the broker reuses after
	// the batch (telemetry.DecodeLogLayoutShared). Values are pointers so
	// that a known key is not written again.
	last    map[eventKey]*lastEvent
	changes map[objectKey]*flapState
	// states is, per object and pair of opposite types (interface_down
	// and interface_up are one pair), the state it was last reported in:
	// see sameState.
	states   map[objectKey]*objectState
	flapping map[objectKey]*flapState // the flapping ones among changes
	settled  time.Time                // when settle last ran
	// read is, per input partition, the offset past the last record
	// whose events were observed or remembered (remember marks a record
	// read even when it gave none): a partition warmed up again (taken
	// back, or by another worker of the process) is not counted twice.
	read map[broker.TopicPartition]readPos
	// leftOut is, per input partition, the events of the records read
	// last that were left out: see noteLeftOut.
	leftOut map[broker.TopicPartition]*leftOutLog
	seed    maphash.Seed // of leftOutKey
	// waits are, per input partition, the origins of the events its
	// records left out repeats of that were not delivered then; owners,
	// the worker (outputs) that delivers each partition; waiting, the
	// owners each waiting worker waits for; deliveries is closed at the
	// next delivery, for them (see origins.go).
	waits      map[broker.TopicPartition][]origin
	owners     map[broker.TopicPartition]any
	waiting    map[any][]any
	deliveries chan struct{}
	originWarn throttle.Throttle // of the waits that timed out
	cycleWarn  throttle.Throttle // of the takeovers that found nothing to move
	// handed are the records whose events a cycle's takeOver moved to
	// another worker's batch, until their own is delivered
	// (settleHanded): enriched
	// again (their transaction aborted, and another worker of the
	// process took the partition), their events are left out.
	handed map[origin]struct{}
	// leftFrom is, per input partition, every origin of the events its
	// records left out repeats of (waits keeps the last of each
	// partition): those a takeOver moves.
	leftFrom map[broker.TopicPartition][]origin
	tookOver int // events moved so, for tests
	// originWaitFor is originWait, but where tests lower it (0: originWait).
	originWaitFor time.Duration
	// names are the interfaces SNMP polls name by ifIndex, for the
	// traps of the same devices.
	names *interfaceNames
	// vendors are the devices whose lines name OSPF neighbors by
	// address, for their traps.
	vendors *lineVendors
	// topics are the input topics' names, kept once (keepPartition).
	topics map[string]string
	// logTopics are the input topics of device logs (syslog), whose
	// device_rebooted events carry no boot time (see rebootKey).
	logTopics []string
	// clocks are, per worker, how far its reading of the log got (see
	// reportClock): settle forgets and clears by the slowest one, and by
	// the warm-ups in progress (warmHolds, per partition).
	clocks    map[any]workerClock
	warmHolds map[broker.TopicPartition]warmHold
	// The peaks of last, changes and states, for settle to rebuild them
	// once most is forgotten.
	lastPeak, changesPeak, statesPeak shrinkable
	// maxObjects bounds the objects the detector keeps state for; past
	// it, events of objects it does not know are passed on as they come
	// (not de-duplicated, no flapping) and counted in untracked. Syslog
	// over UDP names its devices: a sender inventing host names would
	// otherwise grow the state by a kilobyte a name for flap.window.
	maxObjects int
	untracked  prometheus.Counter // nil: not counted
	// targets are the config's SNMP targets (nil: none known), whose
	// longest poll interval stateHold keeps states for: a poll reports
	// a change up to an interval after the other paths.
	targets atomic.Pointer[SNMPTargets]
	// inv is the inventory the workers sharing the detector name devices
	// by (nil: none); seenIdx the version of it the detector last
	// followed, and renamed the renames it found since, by new name (see
	// followInventory).
	inv     atomic.Pointer[Inventory]
	gnmi    atomic.Pointer[GNMITargets] // the gNMI targets, for their renames
	seenIdx *inventoryIndex
	renamed map[string]*renameNote
	// maxRenamed bounds renamed (maxRenames; tests lower it).
	maxRenamed int
	// renamesPath keeps seenIdx's file and the renames not yet said
	// across restarts ("": not kept; see EventRules.KeepRenames).
	// renamesGen counts their changes (under mu), renamesSaved is the
	// change the file holds, written under renamesSaving, which orders
	// the writes of the workers' saves (see saveRenames). A failing
	// write is tried again at renamesRetry.
	renamesPath              string
	renamesGen, renamesSaved atomic.Uint64
	renamesSaving            sync.Mutex
	renamesFailing           bool
	renamesRetry             time.Time
	logger                   *slog.Logger
	// renamesReplace writes the file (nil: wholefile.Replace); tests
	// hold a write with it.
	renamesReplace func(path string, data []byte) error
	// rebuiltCauses are the records whose changes started the flappings a
	// warm-up rebuilt, each with how many of those have not settled (one
	// poll may start two interfaces' flappings): judge looks a record up
	// in changes only while there are any (see rebuiltCause).
	rebuiltCauses map[origin]int
	// adjacencies are the OSPF neighbors with adjacencies lines reported
	// down (see adjacencyHolds).
	adjacencies map[adjacencyKey]*adjacenciesDown
	// ospfSpelt are, per OSPF neighbor a warm-up's ospfNbrStateChange
	// named (its device, one spelling, its pair of types as states keys
	// it), its other spelling: router ID to address and back, for
	// adoptPublished (see noteOSPFSpellings).
	ospfSpelt map[objectKey]string
	// reports counts the state reports sameState took: a poller's row
	// asks pollContradicts again only once another report came since
	// its last look (most polls, none did).
	reports atomic.Uint64
}

// maxDetectorObjects is maxObjects: a million objects (a gigabyte) within
// flap.window is past any network's changes.
const maxDetectorObjects = 1 << 20

// countUntracked sets the counter of events passed on untracked.
func (d *detector) countUntracked(c prometheus.Counter) {
	d.mu.Lock()
	d.untracked = c
	d.mu.Unlock()
}

// tracked reports whether the detector keeps state for an event of typ
// about device's object id: any, below maxObjects; past it, only the
// objects it knows already. d.mu is held.
func (d *detector) tracked(device, id, typ string) bool {
	if len(d.states) < d.maxObjects && len(d.last) < 2*d.maxObjects {
		return true
	}
	if opp := opposite(typ); opp != "" {
		_, ok := d.states[objectKey{device, id, min(typ, opp)}]
		return ok
	}
	_, ok := d.last[eventKey{device, id, typ}]
	if !ok && typ == typeRebooted {
		// A restart known from a log line only (see rebootKey).
		_, ok = d.last[eventKey{device, loggedReboot, typ}]
	}
	return ok
}

// workerClock is where a worker's reading of the log got to, partition by
// partition: a poll need not hold every partition the worker reads (a
// full one may hold one partition's records alone), and one far ahead of
// another must not move the clock past the one behind.
type workerClock map[broker.TopicPartition]partitionClock

// partitionClock is the append time of the last record a worker read of a
// partition (log), when it was behind (more than caughtUpLag before the
// wall clock), noted at wall time seen.
type partitionClock struct {
	log, seen time.Time
	behind    bool
}

// warmHold is a warm-up in progress: it rebuilds state from since on, which
// settle must not forget meanwhile (see remember). seen is when it was
// last noted, on the wall clock; remembered counts the records since.
// Once the warm-up has ended, since is where the live records begin, and
// the hold lasts until its worker, owner, polls again (see endWarmup).
type warmHold struct {
	since, seen time.Time
	remembered  int
	ended       bool
	owner       any
}

// clockStale is how long a worker's clock counts without a report: one
// that stopped (its partitions gone to another) no longer holds settle
// back. Workers report at every poll, at least once a second.
const clockStale = 10 * time.Second

// caughtUpLag is how far behind the wall clock a batch's records may be
// appended and the worker still count as reading what comes in.
const caughtUpLag = 5 * time.Second

type eventKey struct{ device, object, typ string }

// lastEvent is the last time of an event passed on, and the record it
// came from (see origin).
type lastEvent struct {
	at   time.Time
	from origin
}

type objectKey struct{ device, object, family string }

// objectState is the state an object was last reported in: typ, one of
// its pair's two types, most recently at at. Reports of one instant (a
// millisecond of the log's clock) are ordered by the log only within one
// input partition; across partitions they are the same changes seen by
// several paths. So the instant's changes are kept as one sequence of n
// alternating types ending in typ (the first, when the object was in a
// state before the instant, is that state), and each partition that
// reported in the instant has its position in it: a partition's next
// report of the other type moves it one on, and is a change only past the
// sequence's end (see sameState).
type objectState struct {
	typ string
	at  time.Time
	n   int32
	// rebuilt says a warm-up's reading of the past made the state (see
	// adoptPublished); a live change makes it false.
	rebuilt bool
	// said is the record whose event said the object went into typ.
	said origin
	path instantPath   // the first partition that reported at at
	more []instantPath // any others
}

// instantPath is an input partition that reported an object in its
// state's instant, and where in the instant's changes its last report is.
type instantPath struct {
	from broker.TopicPartition
	pos  int32
}

// typeAt is the type of the instant's change at position i.
func (st *objectState) typeAt(i int32) string {
	if (st.n-1-i)%2 == 0 {
		return st.typ
	}
	return opposite(st.typ)
}

// pathOf is the position of partition from in the instant, or nil.
func (st *objectState) pathOf(from broker.TopicPartition) *instantPath {
	if st.path.from == from {
		return &st.path
	}
	for i := range st.more {
		if st.more[i].from == from {
			return &st.more[i]
		}
	}
	return nil
}

// begin starts st's instant at with report typ by from: the object's
// changes in it are typ alone, or the state held before it and typ.
func (d *detector) begin(st *objectState, typ string, at time.Time, from broker.TopicPartition, held bool) {
	st.n = 1
	if held && st.typ != typ {
		st.n = 2
	}
	st.typ, st.at, st.more = typ, at, st.more[:0]
	if st.path.from != from {
		st.path.from = d.keepPartition(from)
	}
	st.path.pos = st.n - 1
}

type flapState struct {
	key      objectKey   // its key in changes, with strings of its own
	times    []time.Time // state changes within the window, in order
	types    []string    // the event type of each of times
	flapping bool
	// flapCause is the record whose change started the flapping: its
	// redo raises the flapping event again (see observeInto).
	flapCause telemetry.Cause
	last      telemetry.Event // the latest change, for the cleared event (see keep)
	// since is when the object started flapping; rebuilt, that it did so
	// in a warm-up's reading of the past, its flapping event published
	// before this process: its cleared event may be too (see settleClears).
	since   time.Time
	rebuilt bool
	// causeKept: flapCause is counted in the detector's rebuiltCauses
	// until the flapping settles.
	causeKept bool
}

// keep makes ev the latest change, with the object's own strings and no
// message (the cleared event has its own): ev's may be the record's.
func (st *flapState) keep(ev telemetry.Event) {
	object := st.key.object
	if ev.Object != object {
		// Spelt another way than the key (see objectID): the cleared
		// event names it as the last change did.
		if st.last.Object == ev.Object {
			object = st.last.Object
		} else {
			object = strings.Clone(ev.Object)
		}
	}
	ev.Device, ev.Object, ev.ObjectID, ev.Message = st.key.device, object, st.key.object, ""
	st.last = ev
}

// add records a change at t, keeping times in order, and forgets those
// before the window that ends at the newest, and all but the newest keep:
// past the threshold an object is flapping, and what settle needs is the
// newest change; so a storm of changes (or a device clock going back and
// forth) costs neither memory nor time. A change to the type of the one
// before it in time is none (a down reported again, read by a warm-up
// after later changes): add reports whether it recorded t. One to the
// type of the one after it is recorded, and the two are one change (see
// changes).
func (st *flapState) add(t time.Time, typ string, window time.Duration, keep int) bool {
	n := len(st.times)
	if n > 0 && !t.Before(st.times[n-1]) && st.types[n-1] == typ {
		return false
	}
	if n == keep && !t.Before(st.times[n-1]) && !st.times[1].Before(t.Add(-window)) && st.changes() == n {
		// Full, and t the newest, within the window of all but the
		// oldest: shift in place rather than reslice and grow.
		copy(st.times, st.times[1:])
		copy(st.types, st.types[1:])
		st.times[n-1], st.types[n-1] = t, typ
		return true
	}
	i := n
	for i > 0 && st.times[i-1].After(t) {
		i--
	}
	if i > 0 && st.types[i-1] == typ {
		return false
	}
	st.times, st.types = slices.Insert(st.times, i, t), slices.Insert(st.types, i, typ)
	st.prune(st.times[len(st.times)-1].Add(-window))
	for st.changes() > keep || len(st.times) > 2*keep {
		st.times, st.types = st.times[1:], st.types[1:]
	}
	return true
}

// changes is how many changes st holds: its times, two in a row of one
// type counted once. A warm-up reads one input partition after another:
// a path's report that came later than another's of the same change (a
// poll, up to twice its interval after the syslog line: past the
// de-duplication window) may be read first, and the other's, read after
// it, is recorded before it. Live, the later report was the state held,
// no change; counted, a link's changes by a syslog line and a poll each
// were twice as many after a restart, and a flapping nobody had raised
// was cleared.
func (st *flapState) changes() int {
	n := len(st.types)
	for i := 1; i < len(st.types); i++ {
		if st.types[i] == st.types[i-1] {
			n--
		}
	}
	return n
}

// prune forgets the changes before cutoff.
func (st *flapState) prune(cutoff time.Time) {
	i := 0
	for i < len(st.times) && st.times[i].Before(cutoff) {
		i++
	}
	st.times, st.types = st.times[i:], st.types[i:]
}

// nextIs reports whether the change recorded next after t is of type typ,
// within d of t: the same change as one at t, reported later by another
// path. (The one before t is add's to judge.) Any change of typ within d
// is not enough: down, up, down 10 s apart are three changes.
func (st *flapState) nextIs(typ string, t time.Time, d time.Duration) bool {
	for i, at := range st.times {
		if at.After(t) {
			return st.types[i] == typ && at.Sub(t) <= d
		}
	}
	return false
}

func newDetector(dedup time.Duration, threshold int, window time.Duration) *detector {
	return &detector{dedup: dedup, threshold: threshold, window: window,
		last: map[eventKey]*lastEvent{}, changes: map[objectKey]*flapState{}, flapping: map[objectKey]*flapState{},
		states: map[objectKey]*objectState{},
		read:   map[broker.TopicPartition]readPos{}, names: newInterfaceNames(), vendors: newLineVendors(), topics: map[string]string{},
		clocks: map[any]workerClock{}, warmHolds: map[broker.TopicPartition]warmHold{}, maxObjects: maxDetectorObjects, maxRenamed: maxRenames,
		leftOut: map[broker.TopicPartition]*leftOutLog{}, seed: maphash.MakeSeed()}
}

// endWarmup ends worker w's warm-up of tp, whose live records begin at
// liveAt (see holdForWarmup). Until a poll of w holds tp's records again
// (reportClock), or for clockStale, the hold stays at liveAt: the clock w
// reported at the poll before the warm-up may have gone stale meanwhile (a
// warm-up of more than clockStale), and the records of that poll are
// still to be judged by what the warm-up rebuilt. An empty poll does not
// end it: on a Kafka cluster, one comes while a rebalance aborts the
// batch, which is polled again.
func (d *detector) endWarmup(w any, tp broker.TopicPartition, liveAt time.Time) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if time.Since(liveAt) <= caughtUpLag {
		delete(d.warmHolds, tp) // live records as they come: nothing to hold
		return
	}
	d.warmHolds[d.keepPartition(tp)] = warmHold{since: liveAt, seen: time.Now(), ended: true, owner: w}
}

// warmupEnder is endWarmup for worker w, as its warmer calls it.
func (d *detector) warmupEnder(w any) func(broker.TopicPartition, time.Time) {
	return func(tp broker.TopicPartition, liveAt time.Time) { d.endWarmup(w, tp, liveAt) }
}

// reportClock notes how far worker w's reading of the log got with the
// batch recs it polled at wall time now: per partition of the batch, the
// append time of its last record in it when that is more than caughtUpLag
// old (behind), else none (reading what comes in); a batch of no records
// means every partition is read to its end. A partition the batch does not
// hold keeps what it had: a full poll may hold the records of a partition
// ahead alone. Event state is stamped with append times (detectAt); settle
// must forget it on the same clock, or a worker catching up an hour's
// backlog would find its flapping windows and de-duplication forgotten as
// it reads them.
func (d *detector) reportClock(w any, recs []broker.Record, now time.Time) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.followInventory()
	c := d.clocks[w]
	if c == nil {
		c = workerClock{}
		d.clocks[w] = c
	}
	if len(recs) == 0 {
		// Read to the end. Not the end of a warm-up's hold, though: on a
		// Kafka cluster an empty poll also comes while a rebalance aborts
		// the batch (see endWarmup).
		for tp, pc := range c {
			pc.behind, pc.seen = false, now
			c[tp] = pc
		}
		return
	}
	for i := range recs {
		// A partition's last record in the batch is how far it got: a
		// batch holds several partitions' records, each in its order.
		if i+1 < len(recs) && recs[i+1].Partition == recs[i].Partition && recs[i+1].Topic == recs[i].Topic {
			continue
		}
		r := &recs[i]
		tp := d.keepPartition(broker.TopicPartition{Topic: r.Topic, Partition: r.Partition})
		ts := r.Timestamp
		c[tp] = partitionClock{log: ts, seen: now, behind: !ts.IsZero() && now.Sub(ts) > caughtUpLag}
	}
	// The warm-ups w ended: a partition this poll holds records of has
	// its clock again, which takes over from the hold.
	for tp, h := range d.warmHolds {
		if pc, ok := c[tp]; ok && h.ended && h.owner == w && pc.seen.Equal(now) {
			delete(d.warmHolds, tp)
		}
	}
}

// logNow is the log time every worker has read up to, at wall time now:
// now, held back by a partition a worker reads behind, and by a warm-up in
// progress. A partition or warm-up not noted for clockStale (its worker
// stopped, or it was taken away) no longer holds it. d.mu is held.
func (d *detector) logNow(now time.Time) time.Time {
	at := now
	stale := func(seen time.Time) bool {
		return now.Sub(seen) > clockStale || seen.After(now.Add(clockStale))
	}
	for w, c := range d.clocks {
		for tp, pc := range c {
			switch {
			case stale(pc.seen):
				delete(c, tp)
			case pc.behind && pc.log.Before(at):
				at = pc.log
			}
		}
		if len(c) == 0 {
			delete(d.clocks, w)
		}
	}
	for tp, h := range d.warmHolds {
		switch {
		case stale(h.seen):
			delete(d.warmHolds, tp)
		case h.since.Before(at):
			at = h.since
		}
	}
	return at
}

// holdForWarmup notes that a warm-up of tp is rebuilding state from since
// on: settle, which another worker of the process may run meanwhile on a
// clock that reads live records, must not forget it as the warm-up sets it
// (a repeat would be taken for a change published, and what follows it for
// its repeat). Called for each record remembered; the wall clock is read
// every 4,096. The hold moves to the live records' start with the end of
// the warm-up (endWarmup), and ends with its worker's next poll of the
// partition's records, or clockStale after it was last noted. d.mu is
// held.
func (d *detector) holdForWarmup(tp broker.TopicPartition, since time.Time) {
	h, ok := d.warmHolds[tp]
	if ok && !h.ended && h.since.Equal(since) && h.remembered%4096 != 0 {
		h.remembered++
		d.warmHolds[tp] = h
		return
	}
	d.warmHolds[d.keepPartition(tp)] = warmHold{since: since, seen: time.Now(), remembered: 1}
}

// detectAt is the time event detection uses for an event from input
// record r: when the record entered the log, on weir's clock, the clock
// settle runs on. The event's own time is the device's (an RFC 3164
// timestamp has no zone; a device clock may be off by hours), so windows
// measured on it would clear or merge changes at random. A record without
// a timestamp falls back to the event's time.
func detectAt(r *broker.Record, eventTime time.Time) time.Time {
	if r.Timestamp.IsZero() {
		return eventTime
	}
	return r.Timestamp
}

// typeRebooted is the event of a device restart, from a coldStart or
// warmStart trap and from a poll whose sysUpTime went back.
const typeRebooted = "device_rebooted"

// typeUnreachableCleared ends a device_unreachable that no
// device_reachable will: its target was taken out of the config.
const typeUnreachableCleared = "device_unreachable_cleared"

// endReachability forgets what the detector holds of an object's
// reachability up to at, when typeUnreachableCleared ends it: polled
// again, a target still unreachable is news, not the state it was last
// reported in (nor a repeat within the de-duplication window). d.mu is
// held.
func (d *detector) endReachability(device, id string, at time.Time) {
	d.forgetState(device, id, "device_reachable", "device_unreachable", at)
}

// forgetObject forgets what the detector holds of the state of device's
// object (family "interface" or "bgp_peer") reported up to at, when a gNMI
// delete removed the object (a port-channel or a BGP neighbor taken out
// of the config): made again, its first state is a baseline, not a change
// from the events it raised before its delete, which firstMayChange
// would otherwise take for another path's report. What a path reported
// after at (syslog, of the object made again) stays.
func (d *detector) forgetObject(device, family, object string, at time.Time) {
	up, down := stateType(family, true), stateType(family, false)
	d.mu.Lock()
	defer d.mu.Unlock()
	d.forgetState(device, telemetry.ObjectID(up, object), up, down, at)
}

// forgetState forgets the state of object id of device, whose events are
// of types up and down, and the last of each, as reported up to at. d.mu
// is held.
func (d *detector) forgetState(device, id, up, down string, at time.Time) {
	k := objectKey{device, id, min(up, down)}
	if st := d.states[k]; st != nil && !st.at.After(at) {
		delete(d.states, k)
	}
	for _, typ := range [...]string{up, down} {
		k := eventKey{device, id, typ}
		if t, ok := d.last[k]; ok && !t.at.After(at) {
			delete(d.last, k)
		}
	}
}

// typeConfigChanged is the event of a configuration change. Some paths
// name no user (ciscoConfigManEvent does not, %SYS-5-CONFIG_I of the same
// change does): see unnamedRepeat.
const typeConfigChanged = "config_changed"

// anyObject stands for the object in the key under which last keeps the
// time of a device's latest configuration change naming its user.
const anyObject = "\x00any"

// unnamedRepeat reports whether ev is a configuration change naming no
// user within the de-duplication window of one of the device's naming
// one: the same change by a path that does not say who made it. One
// naming its user is never left out for one naming none, as two users'
// changes within the window are two changes. d.mu is held.
func (d *detector) unnamedRepeat(ev telemetry.Event, at time.Time) (bool, origin) {
	if ev.Type != typeConfigChanged || ev.Object != "" || d.dedup <= 0 {
		return false, origin{}
	}
	t, ok := d.last[eventKey{ev.Device, anyObject, ev.Type}]
	if !ok || at.Sub(t.at).Abs() > d.dedup {
		return false, origin{}
	}
	return true, t.from
}

// noteNamed keeps the time of ev, when it is a configuration change naming
// its user, for unnamedRepeat. d.mu is held.
func (d *detector) noteNamed(ev telemetry.Event, at time.Time, from origin) {
	if ev.Type != typeConfigChanged || ev.Object == "" {
		return
	}
	k := eventKey{ev.Device, anyObject, ev.Type}
	if t := d.last[k]; t == nil || at.After(t.at) {
		d.setLast(k, t, at, from)
	}
}

// bootTime is when a device whose sysUpTime was uptime (hundredths) at at
// started: the time of its device_rebooted events. The trap comes at the
// restart, the poll up to an interval later (past the de-duplication
// window with a 60 s interval); their boot times agree, so the detector
// compares those (rebootAt) and the restart is one event.
func bootTime(at time.Time, uptime uint32) time.Time {
	if at.IsZero() {
		return at // a record without its time (any Kafka client may write one): none
	}
	return at.Add(-ticks(uptime))
}

// rebootLogDelay bounds how long after its boot a device logs that it
// restarted: IOS's %SYS-5-RESTART comes once the image is up, 20 s to a
// few minutes after the start its sysUpTime counts from. A restart logged
// that soon after a boot time another path gave is that restart.
const rebootLogDelay = 5 * time.Minute

// rebootHold is how long the detector keeps the time of a device's
// device_rebooted (its boot time, or a logged restart's time): as long as
// it keeps states (a poll may report the restart up to two intervals
// after its boot), and at least rebootLogDelay, for the line of a restart
// a trap told. A flap window shorter than that (with no SNMP target
// polled slower) must not make the line a second restart.
func (d *detector) rebootHold() time.Duration {
	return max(d.stateHold(), rebootLogDelay)
}

// loggedReboot is the object under which last keeps the time of a
// device's device_rebooted from its logs (see rebootKey).
const loggedReboot = "\x00logged"

// logsFrom notes that topic holds device logs (syslog): a device_rebooted
// of its records is timed by the record (see rebootKey).
func (d *detector) logsFrom(topic string) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if !slices.Contains(d.logTopics, topic) {
		d.logTopics = append(d.logTopics, topic)
	}
}

// rebootKey is the key and time under which the detector keeps ev, a
// device_rebooted event of object id judged at at, and whether it is the
// same restart as one of another kind kept before. A trap's or poll's is
// kept by its boot time (rebootAt) under its own key; a log line's, which
// tells no boot time, by at (its record's time) under loggedReboot. One of
// each is one restart when the line came from the de-duplication window
// before to rebootLogDelay after the boot; same is then the other's. d.mu
// is held.
func (d *detector) rebootKey(ev *telemetry.Event, id string, at time.Time) (k eventKey, kat time.Time, same *lastEvent) {
	booted, logged := eventKey{ev.Device, id, ev.Type}, eventKey{ev.Device, loggedReboot, ev.Type}
	sameRestart := func(boot, log time.Time) bool {
		after := log.Sub(boot)
		return d.dedup > 0 && after >= -d.dedup && after <= rebootLogDelay
	}
	if slices.Contains(d.logTopics, ev.Cause.Topic) {
		if t, ok := d.last[booted]; ok && sameRestart(t.at, at) {
			same = t
		}
		return logged, at, same
	}
	at = d.rebootAt(ev, at)
	if t, ok := d.last[logged]; ok && sameRestart(at, t.at) {
		same = t
	}
	return booted, at, same
}

// rebootAt is the time the detector compares a device_rebooted event by:
// its boot time, when it has one within the flap window (or the
// de-duplication window, if longer) before now; else now.
func (d *detector) rebootAt(ev *telemetry.Event, now time.Time) time.Time {
	if ev.Type != typeRebooted || ev.Time.IsZero() || ev.Time.After(now) || now.Sub(ev.Time) > d.stateHold() {
		return now
	}
	return ev.Time
}

// family is what flaps: interfaces and BGP sessions.
func family(typ string) string {
	switch {
	case strings.HasPrefix(typ, "interface_"):
		return "interface"
	case strings.HasPrefix(typ, "bgp_peer_"):
		return "bgp_peer"
	}
	return ""
}

// objectless reports whether ev is a change of an object's state that
// names no object: a linkDown trap without its interface varbinds, a BGP
// notification without the peer's address. Two of them may be two
// objects, so the detector passes each on and keeps no state of them: a
// repeat left out or a flapping raised would be a guess.
func objectless(ev telemetry.Event) bool {
	if ev.Object != "" {
		return false
	}
	return family(ev.Type) != "" || strings.HasPrefix(ev.Type, "ospf_neighbor_")
}

// observe takes the one event of record r (nil: none; its cause is
// then the record) and returns the events to publish: the event itself
// unless the same event was published within the dedup window, plus a
// <family>_flapping event when the object has changed state more than the
// threshold within the window (once, until it settles).
func (d *detector) observe(ev telemetry.Event, now time.Time) []telemetry.Event {
	return d.observeInto(ev, now, d.beginRecord(ev.Cause, now), nil)
}

// beginRecord notes that the events of the record at c, appended to the
// log at ts, follow, and reports whether the detector read that record
// before: a redo. Called once per record, before its events.
//
// A record read before is enriched again: its transaction was aborted (a
// rebalance may give it to another worker of the process, which shares
// this detector but not the replay memo), or a crash came before its
// commit. Its events go out again, as they may never have been committed
// (on the embedded log, the src_offset skip drops what was), and its
// changes are not counted twice. A record behind the position read but
// appended after the last one read is no redo: the topic was deleted and
// made again (or a Kafka log truncated), and offsets start over.
func (d *detector) beginRecord(c telemetry.Cause, ts time.Time) bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	redo := d.readBefore(c, ts)
	d.noteRead(c, ts, false)
	return redo
}

// observeInto is observe appending to out, scratch space the caller
// reuses (the syslog worker observes an event for about every other
// record), for an event of a record beginRecord said is a redo or not.
func (d *detector) observeInto(ev telemetry.Event, now time.Time, redo bool, out []telemetry.Event) []telemetry.Event {
	return d.observeLinkInto(ev, adjacency{}, now, redo, out)
}

// observeLinkInto is observeInto for an event of a line that may name the
// OSPF adjacency it is about, adj (see adjacencyHolds).
func (d *detector) observeLinkInto(ev telemetry.Event, adj adjacency, now time.Time, redo bool, out []telemetry.Event) []telemetry.Event {
	d.mu.Lock()
	defer d.mu.Unlock()
	id := objectID(ev)
	if ev.Object != "" {
		ev.ObjectID = id // every path's events of the object share it
	}
	// The inventory the event's device was named by may be newer than
	// the one the batch's poll followed (a reload meanwhile).
	d.followInventory()
	if len(d.renamed) > 0 {
		out = d.sayRenamed(&ev, id, redo, out)
	}
	if redo {
		// Observed the first time: the detector's state has it, and
		// taking it again would set an older time or state over newer
		// ones (a down redone after its up would make a down 5 s later
		// a repeat). It goes out again as it went then: with the
		// flapping event it raised, or not at all if it was left out;
		// it is not counted twice.
		if d.leftOutBefore(ev, id) || d.wasHandedOver(ev.Cause) {
			return out
		}
		out = append(out, ev)
		if fam := family(ev.Type); fam != "" && d.threshold > 0 {
			if st := d.changes[objectKey{ev.Device, id, fam}]; st != nil && st.flapping && st.flapCause == ev.Cause {
				out = append(out, d.flappingEvent(ev, st, fam))
			}
		}
		return out
	}
	n := len(out)
	out = d.judge(ev, id, adj, now, out)
	if len(out) == n {
		d.noteLeftOut(ev, id)
	}
	return out
}

// judge is observeInto for an event read the first time.
func (d *detector) judge(ev telemetry.Event, id string, adj adjacency, now time.Time, out []telemetry.Event) []telemetry.Event {
	if objectless(ev) {
		return append(out, ev) // whose repeat or change it is, nothing says
	}
	if !d.tracked(ev.Device, id, ev.Type) {
		if d.untracked != nil {
			d.untracked.Inc()
		}
		return append(out, ev)
	}
	if d.adjacencyHolds(ev, id, adj, now) {
		// Another OSPF adjacency to the neighbor is down: left out as
		// a repeat is, after the event that said the neighbor's state.
		if st := d.stateOf(ev.Device, id, ev.Type); st != nil {
			d.dependOn(ev.Cause, st.said)
		}
		return out
	}
	same, newest, st := d.sameState(ev.Device, id, ev.Type, now, causePartition(ev.Cause))
	if fam := family(ev.Type); (same || !newest) && fam != "" && len(d.rebuiltCauses) > 0 && d.rebuiltCause(ev.Cause) {
		if fst := d.changes[objectKey{ev.Device, id, fam}]; fst != nil && fst.flapping && fst.rebuilt && fst.flapCause == ev.Cause {
			// The record whose change, published before a stop and
			// not committed, a warm-up remembered (adoptUncommitted),
			// starting the flapping: judged again (its report walked
			// in its instant, above), it goes out as a redo does, with
			// its flapping event. The log may have appended its change
			// and not the flapping event after it (a kill between two
			// of a call's batches); the outputs' skip drops what the
			// log has.
			return append(out, ev, d.flappingEvent(ev, fst, fam))
		}
	}
	if same {
		d.dependOn(ev.Cause, st.said)
		return out // no change: the state the object is in, reported again
	}
	if !newest {
		// Older than the state held (a worker behind the others took a
		// poll or trap of before the syslog line that changed it back):
		// a report of the past, not a change. Published, it would be the
		// object's last event, and say the opposite of its state.
		return out
	}
	d.markRebuilt(ev.Device, id, ev.Type, false)
	if ev.Type == typeUnreachableCleared {
		d.endReachability(ev.Device, id, now)
	}
	k := eventKey{ev.Device, id, ev.Type}
	if ev.Type == typeRebooted {
		var same *lastEvent
		if k, now, same = d.rebootKey(&ev, id, now); same != nil {
			d.dependOn(ev.Cause, same.from)
			return out // the restart another kind of path told (a log line, a boot time)
		}
	}
	t, ok := d.last[k]
	if ok && d.dedup > 0 && (st == nil && now.Sub(t.at).Abs() <= d.dedup ||
		now.Sub(t.at) <= d.dedup && !now.Before(t.at)) {
		// The same restart, by its boot time (or log time), from another
		// path; the same change, reported again (another path, or a
		// retry). An event of no state (a restart, a login, a
		// configuration change) judged after one appended later within
		// the window (a trap worker behind the syslog one) is that one
		// too, as the warm-up takes it: no state says it is the past.
		d.dependOn(ev.Cause, t.from)
		if st != nil {
			st.said = t.from
		}
		// A user's change left out still names the user of the
		// changes naming none that follow it (its trap).
		d.noteNamed(ev, now, t.from)
		return out
	}
	if repeat, from := d.unnamedRepeat(ev, now); repeat {
		d.dependOn(ev.Cause, from)
		return out
	}
	var from origin
	if st != nil {
		from = d.originOf(ev.Cause, st.path.from)
		st.said = from
	} else {
		from = d.originOf(ev.Cause, broker.TopicPartition{})
	}
	if !ok || now.After(t.at) {
		d.setLast(k, t, now, from)
		d.forgetOpposite(ev.Device, id, ev.Type, now, newest)
	}
	d.noteNamed(ev, now, from)
	out = append(out, ev)
	fam := family(ev.Type)
	if fam == "" || d.threshold <= 0 {
		return out
	}
	fst := d.flapStateOf(ev.Device, id, fam)
	starts := d.count(fst, ev.Type, now)
	fst.keep(ev)
	if starts {
		fst.flapCause = ev.Cause
		out = append(out, d.flappingEvent(ev, fst, fam))
	}
	return out
}

// firstMayChange reports whether the event a path's first sample of an
// object would raise were it a change (a poller's first poll of an
// interface, a gNMI subscription's first update of a BGP session), of type
// typ at now, is one: a first sample is a start, no change of its own,
// unless another path reported the object in the other state within
// stateHold (syslog said the session went down; the subscription added
// since sees it established). Then it is that change, judged by
// observeInto as any: without it, the other path's event would stay the
// object's last and say the opposite of its state. It is also when this
// sample made the state (the same type at now): a record enriched again,
// which observeInto passes on again if it is a redo.
func (d *detector) firstMayChange(device, typ, object string, now time.Time) bool {
	stTyp, at, ok := d.reportedState(device, typ, object)
	switch {
	case !ok:
		return false
	case stTyp == typ:
		return at.Equal(now)
	}
	return now.After(at) && now.Sub(at) <= d.stateHold()
}

// pollContradicts reports whether a poll's sample of an object that did
// not change on its own path (the poller saw up before and sees up now), of
// type typ at now, is a change another path's report missed: the object's
// state is the other type, reported more than the de-duplication window
// before now (a linkDown trap, the link back before the next poll, its
// linkUp trap lost; without this the down stays its last event for good).
// A report within the window may follow a poll taken before the change or
// an agent's cached status. It is also when this sample made the state (a
// record enriched again), as in firstMayChange. settled is false while
// the answer may change with time alone (a report within the window):
// the next poll asks again, even with no report since.
func (d *detector) pollContradicts(device, typ, object string, now time.Time) (contradicts, settled bool) {
	if d.dedup <= 0 {
		return false, true
	}
	stTyp, at, ok := d.reportedState(device, typ, object)
	switch {
	case !ok:
		return false, true
	case stTyp == typ:
		return at.Equal(now), true
	case now.Sub(at) > d.dedup:
		return true, true
	}
	return false, false
}

// pollAnswered reports whether ev, the change a live poll's sample
// contradicting another path's report would raise (see pollContradicts),
// was raised before a restart: a warm-up's sample of the same status, at
// prevAt, already contradicted that report, so the process that took the
// sample live published ev then (the warm-up, which judges no
// contradiction, as other paths' warm-ups may not have given their reports
// yet, did not keep it). It is then remembered as of prevAt, as a warm-up
// remembers what was published, so the object's state is the poll's and
// the live poll raises nothing.
func (d *detector) pollAnswered(ev telemetry.Event, prevAt time.Time) bool {
	contradicts, _ := d.pollContradicts(ev.Device, ev.Type, ev.Object, prevAt)
	if !contradicts {
		return false
	}
	ev.Time = prevAt
	d.rememberLate(ev, prevAt, time.Time{})
	return true
}

// markRebuilt notes whether a warm-up made the state of device's object
// id that a report of typ just made. d.mu is held.
func (d *detector) markRebuilt(device, id, typ string, rebuilt bool) {
	if st := d.stateOf(device, id, typ); st != nil {
		st.rebuilt = rebuilt
	}
}

// stateOf is the state device's object id was last reported in by events
// of typ's pair (see sameState); nil when none is kept, or typ has no
// opposite. d.mu is held.
func (d *detector) stateOf(device, id, typ string) *objectState {
	opp := opposite(typ)
	if opp == "" {
		return nil
	}
	return d.states[objectKey{device, id, min(typ, opp)}]
}

// reportedState is the state object was last reported in, for a sample of
// event type typ: its type (typ or its opposite) and when; ok is false
// when none is kept (or typ has no opposite, or there is no object).
func (d *detector) reportedState(device, typ, object string) (stTyp string, at time.Time, ok bool) {
	if object == "" || opposite(typ) == "" {
		return "", time.Time{}, false
	}
	id := telemetry.ObjectID(typ, object)
	d.mu.Lock()
	defer d.mu.Unlock()
	st := d.stateOf(device, id, typ)
	if st == nil {
		return "", time.Time{}, false
	}
	return st.typ, st.at, true
}

// stateType is the event type of family's up or down. The families the
// metrics worker reads are spelt out: every first sample and change of a
// row asks, and family+"_up" would allocate each time.
func stateType(family string, up bool) string {
	switch {
	case family == "interface" && up:
		return "interface_up"
	case family == "interface":
		return "interface_down"
	case family == "bgp_peer" && up:
		return "bgp_peer_up"
	case family == "bgp_peer":
		return "bgp_peer_down"
	case up:
		return family + "_up"
	}
	return family + "_down"
}

// flappingEvent is the <family>_flapping event of change ev, with its
// type's severity, not the change's (a down's error, an up's notice).
func (d *detector) flappingEvent(ev telemetry.Event, st *flapState, fam string) telemetry.Event {
	ev.Type, ev.Count = fam+"_flapping", st.changes()
	ev.Severity = typeSeverity(ev.Type)
	ev.Message = "state changed " + itoa(ev.Count) + " times within " + d.window.String()
	return ev
}

// remember takes the events of record r that a warm-up read again: ones
// published before, by this process before a restart or by the
// partition's previous owner. It rebuilds the de-duplication and flapping
// state observe built then, and returns nothing: a flapping event it finds
// was published then too, and the cleared one follows from settle as
// usual.
//
// since is the start of the flap window before the first record the
// worker enriches live: changes before it are left out of the flap state
// (a flapping that ended before it was cleared then). The same change can
// come to remember twice, from a partition warmed up again or as a syslog
// line and a trap, and settle forgets de-duplication times by the clock
// while the warm-up reads the past: so a record of a partition position
// already read is left out, and so is a change of a type the object
// changed to within the de-duplication window. Other workers may be
// warming up or passing on live events meanwhile, so change times are
// kept in order and the last time of an event never goes back.
// It reports whether r was new to the detector (not read before).
func (d *detector) remember(r *broker.Record, evs []telemetry.Event, since time.Time) bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	if !d.rememberRecord(r, since) {
		return false
	}
	for _, ev := range evs {
		d.rememberOne(ev, adjacency{}, detectAt(r, ev.Time), since)
	}
	return true
}

// rememberLine is remember for the one event of a syslog line, which may
// name the OSPF adjacency it is about (adj, see adjacencyHolds).
func (d *detector) rememberLine(r *broker.Record, ev telemetry.Event, adj adjacency, since time.Time) bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	if !d.rememberRecord(r, since) {
		return false
	}
	d.rememberOne(ev, adj, detectAt(r, ev.Time), since)
	return true
}

// rememberRecord marks r read by a warm-up whose window starts at since,
// and reports whether it was new to the detector. d.mu is held.
func (d *detector) rememberRecord(r *broker.Record, since time.Time) bool {
	c := telemetry.Cause{Topic: r.Topic, Partition: r.Partition, Offset: r.Offset}
	d.holdForWarmup(causePartition(c), since)
	if d.readBefore(c, r.Timestamp) {
		return false
	}
	d.noteRead(c, r.Timestamp, true)
	return true
}

// rememberLate is remember for one event of a record already marked read
// (a warm-up held it back; see TrapWorker.held), at detection time at.
func (d *detector) rememberLate(ev telemetry.Event, at, since time.Time) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.rememberOne(ev, adjacency{}, at, since)
}

// rememberOne is remember for one event, of a line naming OSPF adjacency
// adj or not (the zero adjacency).
func (d *detector) rememberOne(ev telemetry.Event, adj adjacency, at, since time.Time) {
	if objectless(ev) {
		return // observe kept no state of it either
	}
	id := objectID(ev)
	if !d.tracked(ev.Device, id, ev.Type) {
		// Past maxObjects, as observe: the warm-up reads back every
		// object of the window, invented host names included. Not
		// counted in untracked: nothing is passed on here (observe
		// counts the object's next live event).
		return
	}
	if d.adjacencyHolds(ev, id, adj, at) {
		return // as observe: no change of the neighbor's state
	}
	if ev.Type == typeUnreachableCleared {
		d.endReachability(ev.Device, id, at)
	}
	k := eventKey{ev.Device, id, ev.Type}
	if ev.Type == typeRebooted {
		var same *lastEvent
		if k, at, same = d.rebootKey(&ev, id, at); same != nil {
			return
		}
	}
	t, known := d.last[k]
	if known && d.dedup > 0 && at.Sub(t.at).Abs() <= d.dedup {
		// The same change as one passed on (or remembered); a user's
		// still names the user of the changes naming none after it.
		d.noteNamed(ev, at, origin{})
		return
	}
	if repeat, _ := d.unnamedRepeat(ev, at); repeat {
		return
	}
	same, newest, st := d.sameState(ev.Device, id, ev.Type, at, causePartition(ev.Cause))
	if same {
		return
	}
	if newest {
		d.markRebuilt(ev.Device, id, ev.Type, true)
		if st != nil {
			st.said = origin{} // a change in the log: none to wait for
		}
	}
	// A change older than the object's state (the warm-up reads the past
	// after live changes) is no repeat to guard against: the change back
	// came after it. A restart before since is kept all the same: its
	// poll or log line may come rebootHold after its boot, past the
	// flap window.
	if newest && (!at.Before(since) || ev.Type == typeRebooted) && (!known || at.After(t.at)) {
		d.setLast(k, t, at, origin{})
		d.forgetOpposite(ev.Device, id, ev.Type, at, newest)
	}
	d.noteNamed(ev, at, origin{})
	fam := family(ev.Type)
	if fam == "" || d.threshold <= 0 || at.Before(since) {
		return
	}
	fst := d.flapStateOf(ev.Device, id, fam)
	if d.dedup > 0 && fst.nextIs(ev.Type, at, d.dedup) {
		return // the same change, counted where another path reported it a little later
	}
	if d.count(fst, ev.Type, at) {
		fst.rebuilt, fst.flapCause = true, ev.Cause
		if ev.Cause.Topic != "" {
			d.keepRebuiltCause(fst)
		}
	}
	if fst.times[len(fst.times)-1].Equal(at) {
		fst.keep(ev)
	}
}

// keepRebuiltCause counts st's flapCause in rebuiltCauses until st
// settles (releaseRebuiltCause). The key's topic is the detector's own:
// an assignment stores the key it is given. d.mu is held.
func (d *detector) keepRebuiltCause(st *flapState) {
	if d.rebuiltCauses == nil {
		d.rebuiltCauses = map[origin]int{}
	}
	d.rebuiltCauses[origin{d.keepPartition(causePartition(st.flapCause)), st.flapCause.Offset}]++
	st.causeKept = true
}

// releaseRebuiltCause undoes st's keepRebuiltCause, if any: another
// flapping the same record started may not have settled, so the record
// stays while its count does. d.mu is held.
func (d *detector) releaseRebuiltCause(st *flapState) {
	if !st.causeKept {
		return
	}
	st.causeKept = false
	o := origin{causePartition(st.flapCause), st.flapCause.Offset}
	if n := d.rebuiltCauses[o]; n > 1 {
		d.rebuiltCauses[o] = n - 1
	} else {
		delete(d.rebuiltCauses, o)
	}
}

// rebuiltCause reports whether the record at c started a flapping a
// warm-up rebuilt that has not settled. d.mu is held.
func (d *detector) rebuiltCause(c telemetry.Cause) bool {
	_, ok := d.rebuiltCauses[origin{causePartition(c), c.Offset}]
	return ok
}

// count records a change of st's object to typ at at, and reports whether
// the object starts flapping with it.
func (d *detector) count(st *flapState, typ string, at time.Time) bool {
	if !st.add(at, typ, d.window, d.threshold+1) || st.flapping || st.changes() <= d.threshold {
		return false
	}
	st.flapping, st.since, st.rebuilt = true, at, false
	d.flapping[st.key] = st
	return true
}

// forgetOpposite forgets when the opposite of typ (interface_up for
// interface_down) for the object (device, id as objectID gives it),
// passed on before at, was last passed on: a change back within the
// de-duplication window is a new change, not a repeat (down, up, down
// within 30 s must end down). So is one in the same instant when the log
// orders it after the opposite (sameState's newest: the same three from
// one partition in one millisecond). One passed on after at (a warm-up
// reads older events after live ones) stays.
func (d *detector) forgetOpposite(device, id, typ string, at time.Time, newest bool) {
	if o := opposite(typ); o != "" {
		k := eventKey{device, id, o}
		if t, ok := d.last[k]; ok && (t.at.Before(at) || newest && t.at.Equal(at)) {
			delete(d.last, k)
		}
	}
}

// opposites are the event types that undo each other, spelt out so
// that opposite does not build a string per event.
var opposites = map[string]string{
	"interface_down": "interface_up", "interface_up": "interface_down",
	"bgp_peer_down": "bgp_peer_up", "bgp_peer_up": "bgp_peer_down",
	"ospf_neighbor_down": "ospf_neighbor_up", "ospf_neighbor_up": "ospf_neighbor_down",
	"device_unreachable": "device_reachable", "device_reachable": "device_unreachable",
}

// typeSeverity is the severity of an event of type typ that no syslog
// line gave one (a trap's, a poll's, a gNMI update's, and weir's own
// flapping and cleared events), as a syslog severity name: so that a
// sink's severities filter, and an alert on severity, take events of
// every path. Downs and device_unreachable are
// errors (IOS logs %LINK-3-UPDOWN), flapping, device_rebooted and
// login_failed warnings (IOS logs %SEC_LOGIN-4-LOGIN_FAILED),
// login_succeeded informational, the rest (ups, reachable,
// cleared, config_changed) notices. A flapping event and its cleared one
// have their type's whatever the path (see flappingEvent).
func typeSeverity(typ string) string {
	switch {
	case strings.HasSuffix(typ, "_flapping"), typ == typeRebooted, typ == "login_failed":
		return "warning"
	case strings.HasSuffix(typ, "_down"), typ == "device_unreachable":
		return "error"
	case typ == "login_succeeded":
		return "informational"
	}
	return "notice"
}

// opposite is the event type that undoes typ, or "".
func opposite(typ string) string {
	if o, ok := opposites[typ]; ok {
		return o
	}
	switch {
	case strings.HasSuffix(typ, "_down"):
		return strings.TrimSuffix(typ, "_down") + "_up"
	case strings.HasSuffix(typ, "_up"):
		return strings.TrimSuffix(typ, "_up") + "_down"
	case typ == "device_unreachable":
		return "device_reachable"
	case typ == "device_reachable":
		return "device_unreachable"
	}
	return ""
}

// stateHold is how long an object's reported state is kept after its
// last report: the flap window, or the de-duplication window if longer,
// or twice the longest SNMP poll interval if longer still. The first poll
// after a change (a link down, a restart's sysUpTime going back) may come
// up to an interval after the syslog line, trap or gNMI update that
// reported it, and later when a poll is missed: with polls every 5
// minutes and a flap window of 2, its report is the same change still,
// not a second one.
func (d *detector) stateHold() time.Duration {
	return max(d.window, d.dedup, 2*d.targets.Load().maxInterval())
}

// sameState reports whether an event of type typ at at, read from input
// partition from, for the object (device, id as objectID gives it),
// reports the state the object was last reported in within stateHold: a
// second interface_down with no interface_up between, such as a poll that
// sees 45 s after the syslog line the link down (past the de-duplication
// window), or a BGP peer that stays down and sends bgpBackwardTransition
// at each attempt to connect. That is no change: it is neither passed on
// nor counted towards flapping, and it keeps the state held. In the
// instant of the state, a report is no change either when another path
// reported that change already: from's reports follow one another in the
// instant's changes (see objectState), and only one past their end is
// new (down, up, down from one partition in one millisecond are three
// changes, whatever another path reported in it; the same bounce by
// syslog and by a trap is one; a warm-up's linkDown in the instant of a
// live up is the down before it). Otherwise the event becomes the
// object's state if it is the latest report (a warm-up reads older events
// after newer ones). newest says whether it did, and whether ties of its
// instant are behind it (see forgetOpposite); a report that is not newest
// is one of the past. Types without an opposite are no state: each report
// is new (as is every report without de-duplication).
func (d *detector) sameState(device, id, typ string, at time.Time, from broker.TopicPartition) (same, newest bool, st *objectState) {
	opp := opposite(typ)
	if opp == "" || d.dedup <= 0 {
		return false, true, nil
	}
	d.reports.Add(1)
	k := objectKey{device, id, min(typ, opp)}
	st = d.states[k]
	if st == nil {
		k.device, k.object = strings.Clone(device), strings.Clone(id)
		st = &objectState{}
		d.begin(st, typ, at, from, false)
		d.states[k] = st
		return false, true, st
	}
	// An event more than the de-duplication window older than the
	// state (a warm-up reading another partition's past) is judged by
	// the flap history instead (flapState.add).
	since := at.Sub(st.at)
	same = st.typ == typ && since <= d.stateHold() && since >= -d.dedup
	switch {
	case at.After(st.at):
		d.begin(st, typ, at, from, since <= d.stateHold())
		return same, true, st
	case !at.Equal(st.at):
		return same, false, st
	}
	// In the instant of the state: the log orders from's reports, and
	// other partitions' are the same changes seen by other paths.
	p := st.pathOf(from)
	if p == nil {
		// from's first report in the instant: the first change of its
		// type (or the state before the instant) that another path
		// reported, if any.
		var pos int32 = -1
		switch {
		case st.typeAt(0) == typ:
			pos = 0
		case st.n > 1:
			pos = 1
		}
		if pos >= 0 {
			st.more = append(st.more, instantPath{d.keepPartition(from), pos})
			return true, false, st
		}
		st.more = append(st.more, instantPath{d.keepPartition(from), 0})
		p = &st.more[len(st.more)-1]
	}
	switch {
	case st.typeAt(p.pos) == typ:
		return true, false, st // from reports it again
	case p.pos+1 < st.n:
		p.pos++ // another path reported this change first
		return true, false, st
	}
	st.n++
	st.typ, p.pos = typ, st.n-1
	return false, true, st
}

// causePartition is the input partition of the record at c.
func causePartition(c telemetry.Cause) broker.TopicPartition {
	return broker.TopicPartition{Topic: c.Topic, Partition: c.Partition}
}

// keepPartition is p with a topic name of the detector's own (p's may be
// a record's), one copy per topic however many objects it names.
func (d *detector) keepPartition(p broker.TopicPartition) broker.TopicPartition {
	t, ok := d.topics[p.Topic]
	if !ok {
		t = strings.Clone(p.Topic)
		d.topics[t] = t
	}
	p.Topic = t
	return p
}

// setLast records at as the last time of k, of an event from, whose entry
// is t (nil when k is new: then the key's strings are copied).
func (d *detector) setLast(k eventKey, t *lastEvent, at time.Time, from origin) {
	if t != nil {
		t.at, t.from = at, from
		return
	}
	k.device, k.object = strings.Clone(k.device), strings.Clone(k.object)
	d.last[k] = &lastEvent{at, from}
}

// flapStateOf returns the flap state of an object (device, id as objectID
// gives it) of family fam, made (with a key of its own) if it is new.
func (d *detector) flapStateOf(device, id, fam string) *flapState {
	ok := objectKey{device, id, fam}
	if st := d.changes[ok]; st != nil {
		return st
	}
	ok.device, ok.object = strings.Clone(ok.device), strings.Clone(ok.object)
	st := &flapState{key: ok}
	d.changes[ok] = st
	return st
}

// readPos is where reading an input partition got to: the position past
// the last record read, and when that record was appended.
type readPos struct {
	next int64
	at   time.Time
	// delivered is the offset below which the partition's records are
	// delivered (see origins.go): those read before it by a warm-up, or
	// whose outputs their worker published (committed, on Kafka).
	delivered int64
}

// noteRead and readBefore keep d.read: the position past the input
// record that caused an event (none for a cleared event), appended at ts.
func (d *detector) noteRead(c telemetry.Cause, ts time.Time, warm bool) {
	if c.Topic == "" || c.Offset < 0 {
		return
	}
	tp := causePartition(c)
	pos, ok := d.read[tp]
	switch {
	case !ok:
		pos = readPos{c.Offset + 1, ts, c.Offset}
	case c.Offset >= pos.next:
		// at is the latest append time read: records of a partition
		// need not come in time order (several devices' polls).
		if ts.After(pos.at) {
			pos.at = ts
		}
		pos.next = c.Offset + 1
	case ts.After(pos.at):
		pos = readPos{c.Offset + 1, ts, c.Offset} // offsets started over
		d.forgetLeftOut(tp)
	default:
		return
	}
	if warm {
		pos.delivered = pos.next // a warm-up reads what was delivered
	}
	d.read[tp] = pos
}

func (d *detector) readBefore(c telemetry.Cause, ts time.Time) bool {
	pos, ok := d.read[causePartition(c)]
	return c.Topic != "" && ok && c.Offset < pos.next && !ts.After(pos.at)
}

// settleClears returns a <family>_flapping_cleared event for each
// flapping object that has settled: it changed at most half the threshold
// times within the last window (after a burst, mostly its last changes). Half, not the threshold: an
// object that keeps changing a little slower than it did is cleared once,
// not cleared and raised again at each change around the threshold; one
// that keeps changing a few times a window is cleared rather than flapping
// for ever. The events of objects whose flapping a warm-up rebuilt come
// apart, in rebuilt: their cleared event may have been published before
// (see Worker.unpublishedClears).
//
// settleClears also forgets quiet objects. The workers sharing the
// detector each call it about once a second; it does its work at most
// once a second, and visits a bounded share of the quiet objects each time
// (map iteration starts at random, so every entry comes up), so that many
// objects never stall the workers.
func (d *detector) settleClears(now time.Time) (out []telemetry.Event, rebuilt []rebuiltClear) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if now.Sub(d.settled) < time.Second && !now.Before(d.settled) {
		return nil, nil
	}
	d.settled = now
	d.forgetRenames(now)
	// Windows are measured on the log's clock (detectAt): with a worker
	// reading behind, nothing newer than where it got to is forgotten.
	now = d.logNow(now)
	d.lastPeak.note(len(d.last))
	d.changesPeak.note(len(d.changes))
	d.statesPeak.note(len(d.states))
	defer func() {
		d.last = shrunk(d.last, &d.lastPeak)
		d.changes = shrunk(d.changes, &d.changesPeak)
		d.states = shrunk(d.states, &d.statesPeak)
	}()
	for k, st := range d.flapping {
		st.prune(now.Add(-d.window))
		n := st.changes()
		if n > d.threshold/2 {
			continue
		}
		c := st.last
		c.Type, c.Count, c.Time = k.family+"_flapping_cleared", 0, now
		c.Severity = typeSeverity(c.Type) // not the last change's
		c.Message = "stable for " + d.window.String()
		if n > 0 {
			times := "once"
			if n > 1 {
				times = itoa(n) + " times"
			}
			c.Message = "changed " + times + " within " + d.window.String() + ", at most half the flapping threshold"
		}
		c.Cause = telemetry.Cause{}
		if st.rebuilt {
			rebuilt = append(rebuilt, rebuiltClear{c, st.since})
		} else {
			out = append(out, c)
		}
		delete(d.flapping, k)
		d.releaseRebuiltCause(st)
		if n == 0 {
			delete(d.changes, k)
		} else {
			st.flapping = false // counted on: more than the threshold raises it again
		}
	}
	budget := settleBudget(len(d.changes))
	for k, st := range d.changes {
		if budget--; budget < 0 {
			break
		}
		if st.flapping {
			continue
		}
		if st.prune(now.Add(-d.window)); len(st.times) == 0 {
			delete(d.changes, k)
		}
	}
	budget = settleBudget(len(d.last))
	for k, t := range d.last {
		if budget--; budget < 0 {
			break
		}
		// A restart's time is its boot time, which its poll may come
		// up to an interval after, and its log line up to
		// rebootLogDelay: kept as long as states are, and that long.
		if now.Sub(t.at) > d.dedup && (k.typ != typeRebooted || now.Sub(t.at) > d.rebootHold()) {
			delete(d.last, k)
		}
	}
	budget = settleBudget(len(d.states))
	for k, st := range d.states {
		if budget--; budget < 0 {
			break
		}
		if now.Sub(st.at) > d.stateHold() {
			delete(d.states, k)
		}
	}
	return out, rebuilt
}

// rebuiltFlapping reports whether a flapping object that a warm-up rebuilt
// has not settled yet.
func (d *detector) rebuiltFlapping() bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	for _, st := range d.flapping {
		if st.rebuilt {
			return true
		}
	}
	return false
}

// rebuiltClear is the cleared event of an object whose flapping since
// since a warm-up rebuilt.
type rebuiltClear struct {
	ev    telemetry.Event
	since time.Time
}

// settleBudget is how many of n entries one settle visits: all of a small
// map, a sixteenth of a large one (each entry about every 16 seconds).
func settleBudget(n int) int { return max(4096, n/16) }

func itoa(n int) string {
	if n == 0 {
		return "0"
	}
	var b [20]byte
	i := len(b)
	for n > 0 {
		i--
		b[i] = byte('0' + n%10)
		n /= 10
	}
	return string(b[i:])
}

// EventRules is an event de-duplication and flap detector that workers of
// one process share, so the same change seen as a syslog line, a trap and
// an SNMP status change is one event.
type EventRules struct{ d *detector }

// NewEventRules builds shared event rules; see WithEventRules.
func NewEventRules(dedup time.Duration, threshold int, window time.Duration) *EventRules {
	return &EventRules{d: newDetector(dedup, threshold, window)}
}

// HoldUntilWarm makes the workers that share r, workers of them in all (as
// many as will run), hold back their live records after a start until
// every one has warmed up the partitions it was first given, so that what
// one path reported before the start counts for the others (a syslog line
// repeating a polled change, a poll repeating a trap's). Call it before
// they run; a worker that stops before it is warm lets the others go on.
func (r *EventRules) HoldUntilWarm(workers int) {
	r.d.gate = newWarmGate(workers, defaultGateWait)
}

// objectID is what identifies ev's object for de-duplication and flap
// counting (telemetry.ObjectID): events keep their own spelling in
// Object, and carry this one as ObjectID.
func objectID(ev telemetry.Event) string { return telemetry.ObjectID(ev.Type, ev.Object) }

// vrfSep joins a BGP session's neighbor and its VRF in an event's object.
const vrfSep = telemetry.VRFSep

// sessionObject names a BGP session: its neighbor's address, and the VRF
// unless it is the default one (whose sessions every path reports without
// one: traps of BGP4-MIB, most syslog lines). One PE's sessions to the
// same address in two VRFs (customers whose addressing overlaps) are two
// objects: "10.255.0.1 vrf CUST-A".
func sessionObject(neighbor, vrf string) string {
	if vrf == "" || lookupLower(defaultVRFs, vrf) != "" {
		return neighbor
	}
	return neighbor + vrfSep + vrf
}

// defaultVRFs are the names vendors give the default VRF, lower-cased
// (looked up with lookupLower, which lowers a name without allocating).
var defaultVRFs = map[string]string{"default": "y", "global": "y", "master": "y", "base": "y", "default-vrf": "y", "public": "y", "_public_": "y"}
