package gnmi

import (
	"log/slog"
	"slices"
	"strings"
	"time"

	gpb "github.com/openconfig/gnmi/proto/gnmi"

	"github.com/weirnet/weir/collectors/gnmi/gpath"
	"github.com/weirnet/weir/configs"
)

// A STREAM target sends a delete for a path that goes away while the
// stream is up, but nothing for one that went away while it was down: a
// resubscription's snapshot simply leaves it out. resyncPaths keeps the
// paths a target reported, with the session that last reported each, so
// that after a resubscription's sync_response the paths of earlier
// sessions the snapshot did not report are deleted, as the target would
// have deleted them.

// maxResyncPaths bounds the paths one target's resync tracking keeps
// (113 bytes each for an interface counter's 62-byte path, measured: 11
// MB for a target at the bound, more for longer paths). Past it the
// target's tracking stops, and no deletes are made up for it.
const maxResyncPaths = 100_000

// maxResyncBytes bounds the same paths by their keys' length: 100,000
// paths of a few thousand characters each (a list keyed by long strings,
// a target naming thousands of keys in a path) would hold gigabytes by
// the count alone. 32 MiB is 100,000 paths of 335 characters.
const maxResyncBytes = 32 << 20

// resyncDeletesPerNotification bounds the deletes of one made-up
// notification, so that a large resync is queued (and published) in
// pieces the queue's byte bound can take.
const resyncDeletesPerNotification = 1000

// withResyncPaths bounds the paths kept per target at n (tests).
func withResyncPaths(n int) Option { return func(c *Collector) { c.resyncPaths = n } }

// resyncPaths are the paths a target reported (updates), keyed as
// appendPathKey writes them. It is the session reader's only: a target
// has one session at a time.
type resyncPaths struct {
	max   int
	paths map[string]uint32 // the session that last reported the path
	// size is the length of the keys in paths, bounded by maxBytes.
	size, maxBytes int
	session        uint32
	off            bool   // past max: no longer tracked
	buf            []byte // the key being looked up
	pre            []byte // the notification's prefix, written once for its updates
	// late are the subscriptions whose data may come after the
	// sync_response (see mayFollowSync), with the request's prefix;
	// delivered says which had data in the session's snapshot, and
	// snapshot that the session's first sync_response has not come yet.
	late      [][]gpath.Elem
	delivered []bool
	snapshot  bool
	// newest is the latest timestamp (as the target sends them: see
	// notificationTime) of the session's notifications: the made-up deletes are stamped no
	// earlier (see stamp).
	newest int64
}

func newResyncPaths(max int, late [][]gpath.Elem) *resyncPaths {
	return &resyncPaths{max: max, maxBytes: maxResyncBytes, paths: map[string]uint32{}, late: late, delivered: make([]bool, len(late))}
}

// mayFollowSync reports whether a STREAM subscription's data may come
// after the sync_response: a SAMPLE's first sample (some targets answer
// sync_response before it), a TARGET_DEFINED's sampled leaves, an
// ON_CHANGE's with heartbeats (as for the stall bound). An ON_CHANGE's
// snapshot is complete at the sync_response.
func mayFollowSync(s configs.GNMISubscription) bool {
	return s.StreamMode != "on_change" || s.HeartbeatInterval > 0
}

// lateSubscriptions are tc's subscriptions whose data may follow the
// sync_response, each path with the request's prefix in front.
func lateSubscriptions(tc configs.GNMITarget) [][]gpath.Elem {
	var out [][]gpath.Elem
	for _, s := range tc.Subscriptions {
		if !mayFollowSync(s) {
			continue
		}
		if p, ok := subscriptionPath(s); ok {
			out = append(out, p)
		}
	}
	return out
}

// begin starts a session: what it reports is told from what earlier
// ones did.
func (r *resyncPaths) begin() {
	r.session++
	r.snapshot = true
	r.newest = 0
	clear(r.delivered)
}

// stamp is the time of the deletes made up at now: now, or the newest
// timestamp of the session, when the target's clock is ahead of weir's.
// A delete older than the path's last update (which the target stamped
// by its clock) would be taken for one of the past downstream: enrich
// keeps an interface's or a BGP session's state over a delete older than
// its last sample, and sinks that keep series in time order leave it out.
func (r *resyncPaths) stamp(now time.Time) time.Time {
	if t := notificationTime(r.newest); r.newest > 0 && t.After(now) {
		return t
	}
	return now
}

// synced ends the session's snapshot: its first sync_response came.
func (r *resyncPaths) synced() { r.snapshot = false }

// noteDelivered marks the late subscriptions n has data of, while the
// snapshot comes (elems allocates: after the snapshot, or once every one
// has delivered, nothing is looked at).
func (r *resyncPaths) noteDelivered(n *gpb.Notification) {
	if !r.snapshot || !slices.Contains(r.delivered, false) || len(n.GetUpdate()) == 0 {
		return
	}
	prefix := elems(n.GetPrefix())
	for _, u := range n.GetUpdate() {
		p := join(prefix, elems(u.GetPath()))
		for i, sp := range r.late {
			if !r.delivered[i] && overlaps(sp, p) {
				r.delivered[i] = true
			}
		}
	}
}

// waitsForData reports whether the path key names lies under a late
// subscription that had no data in the snapshot: its data may come after
// the sync_response, so the path is not taken for gone yet.
func (r *resyncPaths) waitsForData(key string) bool {
	if !slices.Contains(r.delivered, false) {
		return false
	}
	path := key
	if i := strings.IndexByte(key, '/'); i > 0 {
		path = key[i:]
	}
	p, err := gpath.Parse(path)
	if err != nil {
		return false // not read back: skipped (and said) by resyncDeletes
	}
	for i, sp := range r.late {
		if !r.delivered[i] && overlaps(sp, p) {
			return true
		}
	}
	return false
}

// note records n's updates as reported in this session, and forgets the
// paths it deletes (the target said they are gone). It reports true when
// n took the paths past the bound: tracking stops then, and its memory
// is let go. A path already known costs no allocation but at its first
// report in a session.
func (r *resyncPaths) note(n *gpb.Notification) (overflowed bool) {
	if r.off {
		return false
	}
	r.noteDelivered(n)
	if ts := n.GetTimestamp(); ts > r.newest {
		r.newest = ts
	}
	prefix := n.GetPrefix()
	r.pre = appendPathElems(r.pre[:0], prefix)
	for _, d := range n.GetDelete() {
		r.buf = appendKeyAfter(r.buf[:0], prefix, r.pre, d)
		if _, ok := r.paths[string(r.buf)]; ok {
			r.size -= len(r.buf)
			delete(r.paths, string(r.buf)) // no allocation: the compiler reads r.buf in place
		}
	}
	for _, u := range n.GetUpdate() {
		r.buf = appendKeyAfter(r.buf[:0], prefix, r.pre, u.GetPath())
		if s, ok := r.paths[string(r.buf)]; ok {
			if s != r.session {
				r.paths[string(r.buf)] = r.session
			}
			continue
		}
		if len(r.paths) >= r.max || r.size+len(r.buf) > r.maxBytes {
			r.off, r.paths, r.size = true, nil, 0
			return true
		}
		r.paths[string(r.buf)] = r.session
		r.size += len(r.buf)
	}
	return false
}

// vanished removes and returns, sorted, the paths earlier sessions
// reported and this one has not, but those still waiting for their
// subscription's data (see waitsForData): they are kept, for a later
// snapshot to tell.
func (r *resyncPaths) vanished() []string {
	var out []string
	for k, s := range r.paths {
		if s != r.session && !r.waitsForData(k) {
			out = append(out, k)
			delete(r.paths, k)
			r.size -= len(k)
		}
	}
	slices.Sort(out)
	return out
}

// keep tracks paths again whose deletes could not be queued, as
// reported by an earlier session: the next resubscription's snapshot
// that leaves them out deletes them.
func (r *resyncPaths) keep(paths []*gpb.Path) {
	if r.off {
		return
	}
	for _, p := range paths {
		k := string(appendPathKey(nil, nil, p))
		if _, ok := r.paths[k]; !ok {
			r.size += len(k)
		}
		r.paths[k] = r.session - 1
	}
}

// appendPathKey appends the key of p under prefix: origin (the prefix's,
// else p's) and ":", then the path as gpath.String writes it (keys
// sorted, "\" and "]" in values escaped), so ParsePath reads it back.
func appendPathKey(b []byte, prefix, p *gpb.Path) []byte {
	return appendKeyAfter(b, prefix, appendPathElems(nil, prefix), p)
}

// appendKeyAfter is appendPathKey with the prefix's elements written
// already (pre): once for all of a notification's updates.
func appendKeyAfter(b []byte, prefix *gpb.Path, pre []byte, p *gpb.Path) []byte {
	origin := prefix.GetOrigin()
	if origin == "" {
		origin = p.GetOrigin()
	}
	if origin != "" {
		b = append(append(b, origin...), ':')
	}
	start := len(b)
	b = append(b, pre...)
	b = appendPathElems(b, p)
	if len(b) == start {
		b = append(b, '/')
	}
	return b
}

func appendPathElems(b []byte, p *gpb.Path) []byte {
	if pe := p.GetElem(); len(pe) > 0 || len(p.GetElement()) == 0 {
		for _, e := range pe {
			b = appendPathElem(b, e.GetName(), e.GetKey())
		}
		return b
	}
	// gNMI 0.4's string elements (rare): read as flatten reads them.
	for _, e := range elems(p) {
		b = appendPathElem(b, e.Name, e.Keys)
	}
	return b
}

func appendPathElem(b []byte, name string, keys map[string]string) []byte {
	b = append(append(b, '/'), name...)
	if len(keys) == 0 {
		return b
	}
	var room [4]string // most lists have a key or two: no allocation
	names := room[:0]
	for k := range keys {
		names = append(names, k)
	}
	slices.Sort(names)
	for _, k := range names {
		b = append(append(append(b, '['), k...), '=')
		v := keys[k]
		for i := 0; i < len(v); i++ {
			if v[i] == '\\' || v[i] == ']' {
				b = append(b, '\\')
			}
			b = append(b, v[i])
		}
		b = append(b, ']')
	}
	return b
}

// parsePathKey reads a key appendPathKey wrote back into a path.
func parsePathKey(key string) (*gpb.Path, error) {
	origin, path := "", key
	if i := strings.IndexByte(key, '/'); i > 0 {
		origin, path = strings.TrimSuffix(key[:i], ":"), key[i:]
	}
	return ParsePath(path, origin)
}

// resyncDeletes are notifications deleting the paths keys name, stamped
// at: published as the target's own deletes are. A key that does not
// read back (a name gpath cannot write) is skipped.
func resyncDeletes(keys []string, at time.Time) (ns []*gpb.Notification, skipped int) {
	var n *gpb.Notification
	for _, k := range keys {
		p, err := parsePathKey(k)
		if err != nil {
			skipped++
			continue
		}
		if n == nil || len(n.Delete) == resyncDeletesPerNotification {
			n = &gpb.Notification{Timestamp: at.UnixNano()}
			ns = append(ns, n)
		}
		n.Delete = append(n.Delete, p)
	}
	return ns, skipped
}

// trackPaths notes n's paths for the resync deletes, and says once when
// the target is past the bound.
func (t *target) trackPaths(log *slog.Logger, n *gpb.Notification) {
	if t.resync == nil || !t.resync.note(n) {
		return
	}
	log.Warn("gnmi target reports more paths than weir keeps to delete those gone after a resubscription; none are deleted for it from now on",
		slog.Int("paths", t.resync.max), slog.Int("bytes", t.resync.maxBytes))
}

// deleteVanished queues, after a resubscription's snapshot (its first
// sync_response), the deletes of the paths earlier sessions reported
// and the snapshot did not.
func (t *target) deleteVanished(log *slog.Logger, now time.Time) {
	keys := t.resync.vanished()
	if len(keys) == 0 {
		return
	}
	ns, skipped := resyncDeletes(keys, t.resync.stamp(now))
	queued := 0
	for _, n := range ns {
		if t.enqueue(log, n, now) {
			queued += len(n.Delete)
		} else {
			// Counted dropped (queue_full, memory_full); not forgotten.
			t.resync.keep(n.Delete)
		}
	}
	t.resyncDeleted.Add(float64(queued))
	log.Info("gnmi resubscribed: paths reported before and not in the new snapshot deleted",
		slog.Int("deleted", queued), slog.Int("dropped", len(keys)-skipped-queued), slog.Int("unreadable", skipped),
		slog.String("first", keys[0]))
}
