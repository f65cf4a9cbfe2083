package enrich

import (
	"cmp"
	"encoding/json"
	"errors"
	"io/fs"
	"log/slog"
	"net/netip"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/weirnet/weir/internal/wholefile"
	"github.com/weirnet/weir/telemetry"
)

// TypeDeviceRenamed is telemetry.TypeDeviceRenamed. A webhook sink in
// the Alertmanager form moves the alerts fired under the old name to the
// new one (keeping their labels), so the new name's events resolve them.
const TypeDeviceRenamed = telemetry.TypeDeviceRenamed

// maxRenames bounds the renames the detector remembers: a reload that
// renames more devices than this is a new inventory, not renames, and the
// ones past it are left unsaid (and logged).
const maxRenames = 1 << 16

// renameNote is a rename the detector applied to its state: from are the
// old names, sorted (more than one where a reload gave several devices'
// names one: an SNMP and a gNMI target of one address, named apart
// until an inventory entry for the address names both). Until said (a device_renamed event passed on before the new
// name's first event), said is false; then the event it went out with is
// noted, so a redo of its record (see observeInto) says it again.
type renameNote struct {
	from       []string
	said       bool
	cause      telemetry.Cause
	typ, objID string
	// at is when it was applied, then when it was said: settle forgets
	// it renameRetention after it was said (see forgetRenames).
	at time.Time
}

// newNames is the name each old name of d.renamed goes by now, through
// renames of renames (A renamed B, then B renamed C: A is C). d.mu is
// held.
func (d *detector) newNames() map[string]string {
	if len(d.renamed) == 0 {
		return nil
	}
	to := make(map[string]string, len(d.renamed))
	for name, n := range d.renamed {
		for _, from := range n.from {
			to[from] = name
		}
	}
	for from, name := range to {
		// Bounded: a cycle (A to B, B to A) is two entries' names
		// swapped, which inventoryRenames does not give.
		for range len(to) {
			next, ok := to[name]
			if !ok || next == from {
				break
			}
			name = next
		}
		to[from] = name
	}
	return to
}

// renameRetention is how long a said rename is kept for a redo of its
// record: past any transaction's retry.
const renameRetention = time.Hour

// inventoryRenames are the devices a reload from old to cur renames, old
// name to new, as the workers name them:
//   - a named entry whose name cur no longer lists, whose address cur
//     gives to another named entry (the entry renamed), or else that cur
//     finds by its name spelled otherwise (with or without the domain,
//     in another case: see lookupFold), as the hostname that found it;
//   - an SNMP target of targets, or a gNMI target of gnmi, that old and
//     cur name otherwise (an entry added or removed for its address, or
//     renamed).
//
// A device named by the hostname its syslog lines carry, that an entry
// added by address names now, is not found: the inventory does not know
// the hostname it was named by before.
func inventoryRenames(old, cur *inventoryIndex, targets *SNMPTargets, gnmi *GNMITargets) map[string]string {
	renames := map[string]string{}
	add := func(from, to string) {
		if from == "" || to == "" || from == to {
			return
		}
		if _, ok := renames[from]; !ok {
			renames[from] = to
		}
	}
	for name, d := range old.byName {
		if !d.named() || name != d.Name {
			continue
		}
		if _, ok := cur.byName[name]; ok {
			continue
		}
		if a, err := netip.ParseAddr(d.Address); err == nil {
			if nd := cur.exact(a.Unmap()); nd.named() {
				add(name, nd.Name)
				continue
			}
		}
		// The hostname that found it may find it still, spelled
		// otherwise: with or without the domain, in another case.
		if nd := cur.lookupFold(name); nd.named() {
			add(name, nd.Name)
		}
	}
	before, after := NewDeviceNamer(inventoryOf(old), targets, gnmi), NewDeviceNamer(inventoryOf(cur), targets, gnmi)
	eachTarget(targets, gnmi, func(name func(*DeviceNamer) string) { add(name(before), name(after)) })
	return renames
}

// eachTarget calls f once for each SNMP target of targets and gNMI target
// of gnmi, with how a namer names it: its inventory entry's name, else
// its own.
func eachTarget(targets *SNMPTargets, gnmi *GNMITargets, f func(name func(*DeviceNamer) string)) {
	if byAddr := targets.addresses(); byAddr != nil {
		for a, target := range *byAddr {
			if target != "" {
				host := a.String()
				f(func(n *DeviceNamer) string { return cmp.Or(n.SNMPTarget(target, host), target) })
			}
		}
	}
	if byName := gnmi.addresses(); byName != nil {
		for target := range *byName {
			f(func(n *DeviceNamer) string { return cmp.Or(n.GNMITarget(target), target) })
		}
	}
}

// inventoryOf is an inventory that holds idx, to name devices as it did.
func inventoryOf(idx *inventoryIndex) *Inventory {
	inv := &Inventory{}
	inv.idx.Store(idx)
	inv.path.Store(new(string))
	return inv
}

// followInventory applies the renames the inventory's reloads made since
// the detector last looked: what it holds of each old name's objects
// moves to the new name, so an event under the new name pairs with, and
// de-duplicates against, the ones under the old. Called at each poll of
// each worker (reportClock), before the batch's events: the batch is
// named by the inventory loaded then, or a later one (a reload within the
// batch, whose events are judged before this sees it: the old name's
// state then only fills in what the new name's lacks). d.mu is held.
func (d *detector) followInventory() {
	inv := d.inv.Load()
	if inv == nil {
		return
	}
	cur := inv.idx.Load()
	if cur == d.seenIdx {
		return
	}
	old := d.seenIdx
	d.seenIdx = cur
	d.renamesChanged()
	if old == nil {
		// The first look: the inventory of the last run, if kept.
		if old = d.loadRenames(); old == nil {
			return
		}
	}
	if renames := inventoryRenames(old, cur, d.targets.Load(), d.gnmi.Load()); len(renames) > 0 {
		d.moveDevices(renames)
		if n := d.noteRenames(renames); n > 0 {
			d.log().Warn("enrich: an inventory reload renamed more devices than the renames remembered allow; those past it are said by no device_renamed, and the alerts fired under their old names are not moved",
				slog.Int("left_unsaid", n), slog.Int("max", d.maxRenamed))
		}
	}
	var targetNames map[string]bool
	for to, n := range d.renamed {
		if n.said {
			continue
		}
		n.from = slices.DeleteFunc(n.from, func(from string) bool {
			// The old name is another device's now: the alerts fired
			// under it are that device's, not the renamed one's.
			_, ok := cur.byName[from]
			return ok
		})
		if e, ok := cur.byName[to]; !ok || !e.named() || e.Name != to {
			// The new name is no entry's now: kept only while a
			// target is named so, else a device named so later (an
			// entry added for another address) is not the renamed one.
			if targetNames == nil {
				targetNames = targetNamesOf(cur, d.targets.Load(), d.gnmi.Load())
			}
			if !targetNames[to] {
				n.from = nil
			}
		}
		if len(n.from) == 0 {
			delete(d.renamed, to)
		}
	}
}

// targetNamed notes that SNMP target's device, named as the target until
// now, is name: a poll read the sysName an inventory entry lists it by
// (by hostname alone), after polls that failed and read none. What the
// detector holds under the target's name moves to name, as an inventory
// reload's rename would, and is said by device_renamed before the new
// name's first event: an outage raised under the target's name
// (device_unreachable from its first poll) ends under name, and its
// alert moves. Nothing when it holds no reachability of the target under
// its name (the usual first poll, which answers), or only one a warm-up
// rebuilt: that may be of an outage published under name (its sysName
// read before a restart, in rows older than the warm-up's window).
func (d *detector) targetNamed(target, name string) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if st := d.stateOf(target, "", "device_unreachable"); st == nil || st.rebuilt {
		return
	}
	renames := map[string]string{target: name}
	d.moveDevices(renames)
	d.noteRenames(renames)
	d.renamesChanged()
}

// targetNamesOf is the set of names the SNMP targets of targets and the
// gNMI targets of gnmi have under the inventory idx.
func targetNamesOf(idx *inventoryIndex, targets *SNMPTargets, gnmi *GNMITargets) map[string]bool {
	names := map[string]bool{}
	namer := NewDeviceNamer(inventoryOf(idx), targets, gnmi)
	eachTarget(targets, gnmi, func(name func(*DeviceNamer) string) { names[name(namer)] = true })
	return names
}

// noteRenames notes renames (old name to new) to be said, and returns
// how many new names it left out, past maxRenamed. d.mu is held.
func (d *detector) noteRenames(renames map[string]string) (left int) {
	now := time.Now()
	if d.renamed == nil {
		d.renamed = map[string]*renameNote{}
	}
	// Against the notes before this reload: its renames are taken
	// together (see moveDevices), not one after the other. Several old
	// names may become one (an SNMP and a gNMI target of one address,
	// that an entry added for it names both): each one's alerts are
	// moved, so each is said.
	notes := make(map[string]*renameNote, len(renames))
	for from, to := range renames {
		note := notes[to]
		if note == nil {
			note = &renameNote{at: now}
			notes[to] = note
		}
		if p := d.renamed[from]; p != nil && !p.said {
			// Renamed again before its first event under the name
			// between: the alerts to move are still the first names'.
			note.from = append(note.from, p.from...)
		} else {
			note.from = append(note.from, strings.Clone(from))
		}
	}
	for from := range renames {
		if p := d.renamed[from]; p != nil && !p.said {
			delete(d.renamed, from)
		}
	}
	for to, note := range notes {
		if p := d.renamed[to]; p != nil && !p.said {
			// Renamed into before, not said yet: those alerts
			// still wait to be moved too.
			note.from = append(note.from, p.from...)
		}
		note.from = slices.DeleteFunc(note.from, func(from string) bool { return from == to })
		slices.Sort(note.from)
		note.from = slices.Compact(note.from)
		if len(note.from) == 0 {
			continue
		}
		if d.renamed[to] == nil && len(d.renamed) >= d.maxRenamed {
			left++
			continue
		}
		d.renamed[strings.Clone(to)] = note
	}
	return left
}

// log is the logger KeepRenames gave, else the default one.
func (d *detector) log() *slog.Logger {
	if d.logger != nil {
		return d.logger
	}
	return slog.Default()
}

// moveDevices moves the state of each device renames names (old to new)
// to its new name. The renames of one reload are taken together: with
// W renamed T and T renamed Z, W's state becomes T's and T's Z's (not
// W's Z's). Where the new name has state of its own for an object that
// no rename moves away (a record named by the new inventory judged before
// the move), that stays. d.mu is held.
func (d *detector) moveDevices(renames map[string]string) {
	rekey(d.last, func(k eventKey) (eventKey, bool) {
		to, ok := renames[k.device]
		return eventKey{to, telemetry.RenamedObjectID(k.typ, k.object, k.device, to), k.typ}, ok
	}, nil)
	rekey(d.states, func(k objectKey) (objectKey, bool) {
		to, ok := renames[k.device]
		return objectKey{to, telemetry.RenamedObjectID(k.family, k.object, k.device, to), k.family}, ok
	}, nil)
	// The OSPF adjacencies kept down too: else the first back under the
	// new name says the neighbor is up while another is still down.
	rekey(d.adjacencies, func(k adjacencyKey) (adjacencyKey, bool) {
		to, ok := renames[k.device]
		return adjacencyKey{to, telemetry.RenamedObjectID("ospf_neighbor_down", k.neighbor, k.device, to)}, ok
	}, nil)
	for k := range d.flapping {
		if _, ok := renames[k.device]; ok {
			delete(d.flapping, k)
		}
	}
	d.vendors.move(renames)
	rekey(d.changes, func(k objectKey) (objectKey, bool) {
		to, ok := renames[k.device]
		return objectKey{to, k.object, k.family}, ok
	}, func(k objectKey, st *flapState) {
		st.key = k
		st.last.Device = k.device
		if st.flapping {
			d.flapping[k] = st
		}
	})
}

// rekey moves each entry of m that newKey gives a new key to it, all
// taken together (an entry moved is not moved again); where the new key
// holds an entry not moved away, that one stays and the moved one is
// dropped. placed, if not nil, is told each entry moved in.
func rekey[K comparable, V any](m map[K]V, newKey func(K) (K, bool), placed func(K, V)) {
	type move struct {
		k K
		v V
	}
	var moves []move
	for k, v := range m {
		if to, ok := newKey(k); ok {
			moves = append(moves, move{to, v})
			delete(m, k)
		}
	}
	for _, mv := range moves {
		if _, taken := m[mv.k]; taken {
			continue
		}
		m[mv.k] = mv.v
		if placed != nil {
			placed(mv.k, mv.v)
		}
	}
}

// sayRenamed appends the device_renamed event of ev's device, if a rename
// to it is yet to be said, before ev's own: the first event under the new
// name, which it is caused by. When ev is the event it went out with, its
// record enriched again (a redo, or after a restart before the record's
// commit: said renames are kept across restarts for renameRetention), it
// goes out again. d.mu is held.
func (d *detector) sayRenamed(ev *telemetry.Event, id string, redo bool, out []telemetry.Event) []telemetry.Event {
	n := d.renamed[ev.Device]
	if n == nil {
		return out
	}
	switch {
	case n.said && n.cause == ev.Cause && n.typ == ev.Type && n.objID == id:
		// The event it went out with, again: its record enriched again
		// (a redo, or after a restart that came before its commit).
	case n.said || redo:
		return out
	default:
		// Kept for a redo from now on: it may have waited for this
		// event far longer than renameRetention.
		n.said, n.cause, n.typ, n.objID, n.at = true, ev.Cause, ev.Type, id, time.Now()
		d.renamesChanged()
	}
	for _, from := range n.from {
		out = append(out, telemetry.Event{V: telemetry.Version, Type: TypeDeviceRenamed, Device: ev.Device, Object: from,
			Severity: typeSeverity(TypeDeviceRenamed), Message: "device " + from + " renamed " + ev.Device + " by the inventory",
			Tags: ev.Tags, TagsJSON: ev.TagsJSON, Time: ev.Time, Cause: ev.Cause})
	}
	return out
}

// sayRenamedBefore is evs, events caused by no record (flapping cleared
// events, see Worker.settled), with the device_renamed of each one's
// device, if a rename to it is yet to be said, before its first: such an
// event can be the new name's first (a flapping that settles after the
// rename, before any record of the device), and a sink must have moved
// the old name's alerts when it comes to end them. It goes out with them,
// caused by no record either (carried with them when a transaction is
// aborted). Those from evs[rebuilt] on are cleared events of flappings a
// warm-up rebuilt, which a process before may have said a rename with
// and been killed before publishing (the rename was kept as said): as a
// record enriched again, such an event says again the rename it went out
// with.
func (d *detector) sayRenamedBefore(evs []telemetry.Event, rebuilt int) []telemetry.Event {
	d.mu.Lock()
	defer d.mu.Unlock()
	if len(d.renamed) == 0 {
		return evs
	}
	var out []telemetry.Event
	for i := range evs {
		n := d.renamed[evs[i].Device]
		if n == nil || n.said && (i < rebuilt || n.cause != evs[i].Cause || n.typ != evs[i].Type || n.objID != objectID(evs[i])) {
			if out != nil {
				out = append(out, evs[i])
			}
			continue
		}
		if out == nil {
			out = append(make([]telemetry.Event, 0, len(evs)+1), evs[:i]...)
		}
		out = d.sayRenamed(&evs[i], objectID(evs[i]), false, out)
		out = append(out, evs[i])
	}
	if out == nil {
		return evs
	}
	return out
}

// forgetRenames forgets the renames said more than renameRetention before
// now. d.mu is held.
func (d *detector) forgetRenames(now time.Time) {
	for to, n := range d.renamed {
		if n.said && now.Sub(n.at) > renameRetention {
			delete(d.renamed, to)
		}
	}
}

// renamesFile is what EventRules.KeepRenames keeps across restarts.
type renamesFile struct {
	// Inventory is the text of the inventory the workers last named
	// devices by.
	Inventory string `json:"inventory"`
	// Unsaid are the renames found and not yet said, new name to old
	// (or, where several became one, to the old ones).
	Unsaid map[string]fromNames `json:"unsaid,omitempty"`
	// Said are those said within renameRetention, with the event they
	// went out with: a restart before that event's record was committed
	// enriches it again, and says the rename again with it.
	Said []saidRename `json:"said,omitempty"`
}

// fromNames are a rename's old names: written as a string when there is
// one, as files before several were kept have it, else as an array.
type fromNames []string

func (f fromNames) MarshalJSON() ([]byte, error) {
	if len(f) == 1 {
		return json.Marshal(f[0])
	}
	return json.Marshal([]string(f))
}

func (f *fromNames) UnmarshalJSON(data []byte) error {
	var one string
	if err := json.Unmarshal(data, &one); err == nil {
		*f = fromNames{one}
		return nil
	}
	return json.Unmarshal(data, (*[]string)(f))
}

// saidRename is a said renameNote as renamesFile keeps it, one per old
// name.
type saidRename struct {
	To       string          `json:"to"`
	From     string          `json:"from"`
	Cause    telemetry.Cause `json:"cause"`
	Type     string          `json:"type"`
	ObjectID string          `json:"object_id,omitempty"`
	At       time.Time       `json:"at"`
}

// KeepRenames keeps in the file at path the inventory the workers sharing
// r last named devices by, and the renames they found and have not yet
// said: a rename made while weir was stopped is then found at the next
// start, and one found but not said before a stop is still said. Call it
// before the workers run; logger tells of a file that cannot be read or
// written (the renames are then not kept).
func (r *EventRules) KeepRenames(path string, logger *slog.Logger) {
	r.d.mu.Lock()
	defer r.d.mu.Unlock()
	r.d.renamesPath, r.d.logger = path, logger
}

// loadRenames reads the file KeepRenames names: the index of the
// inventory kept there, whose unsaid renames it notes (nil: none kept).
// d.mu is held.
func (d *detector) loadRenames() *inventoryIndex {
	if d.renamesPath == "" {
		return nil
	}
	data, err := wholefile.Read(d.renamesPath, wholefile.MaxBytes)
	if errors.Is(err, fs.ErrNotExist) {
		return nil // the first run that keeps them
	}
	var f renamesFile
	if err == nil {
		err = json.Unmarshal(data, &f)
	}
	var idx *inventoryIndex
	if err == nil {
		idx, err = parseInventory([]byte(f.Inventory), d.renamesPath)
	}
	if err != nil {
		d.log().Warn("enrich: renames made while weir was stopped are not found: the inventory of the last run is unreadable",
			slog.String("file", d.renamesPath), slog.Any("err", err))
		return nil
	}
	now := time.Now()
	if d.renamed == nil {
		d.renamed = map[string]*renameNote{}
	}
	left := 0
	for to, from := range f.Unsaid {
		switch {
		case len(from) == 0:
		case len(d.renamed) < d.maxRenamed:
			d.renamed[to] = &renameNote{from: slices.Sorted(slices.Values(from)), at: now}
		default:
			left++
		}
	}
	for _, s := range f.Said {
		if now.Sub(s.At) > renameRetention {
			continue
		}
		if n := d.renamed[s.To]; n != nil {
			if n.said && n.cause == s.Cause && n.typ == s.Type && n.objID == s.ObjectID && !slices.Contains(n.from, s.From) {
				// Another old name said with the same event.
				n.from = append(n.from, s.From)
				slices.Sort(n.from)
			}
			continue
		}
		if len(d.renamed) < d.maxRenamed {
			d.renamed[s.To] = &renameNote{from: []string{s.From}, said: true, cause: s.Cause, typ: s.Type, objID: s.ObjectID, at: s.At}
		} else {
			left++
		}
	}
	if left > 0 {
		d.log().Warn("enrich: the renames kept from the last run are more than the renames remembered allow; those past it are not said (again)",
			slog.String("file", d.renamesPath), slog.Int("left_out", left), slog.Int("max", d.maxRenamed))
	}
	return idx
}

// renamesChanged notes that what KeepRenames keeps changed, to be saved.
// d.mu is held.
func (d *detector) renamesChanged() {
	if d.renamesPath != "" {
		d.renamesGen.Add(1)
	}
}

// saveRenames writes what KeepRenames keeps, if it changed since last
// written. Each worker calls it before it commits a batch, so a rename
// said with the batch's events is kept as said before the batch is
// committed (else a stop after the commit had it said again at the next
// start), and the syslog workers at each settle, for changes no batch
// carries. It returns once the file holds every change made before the
// call: the workers' saves are written one at a time, in the order they
// took their snapshots, so an older one never replaces a newer. A failure
// is logged once until a write works, and tried again a second later (the
// batches go on meanwhile: a rename may then be said again after a
// restart).
func (d *detector) saveRenames() {
	if d.renamesGen.Load() == d.renamesSaved.Load() {
		return // the hot path: nothing new
	}
	d.renamesSaving.Lock()
	defer d.renamesSaving.Unlock()
	d.mu.Lock()
	gen := d.renamesGen.Load()
	if gen == d.renamesSaved.Load() || d.seenIdx == nil || d.renamesFailing && time.Now().Before(d.renamesRetry) {
		// Written by the save this one waited for; or nothing to write
		// yet; or failing.
		d.mu.Unlock()
		return
	}
	f := renamesFile{Inventory: string(d.seenIdx.data)}
	for to, n := range d.renamed {
		if n.said {
			for _, from := range n.from {
				f.Said = append(f.Said, saidRename{To: to, From: from, Cause: n.cause, Type: n.typ, ObjectID: n.objID, At: n.at})
			}
			continue
		}
		if f.Unsaid == nil {
			f.Unsaid = map[string]fromNames{}
		}
		f.Unsaid[to] = slices.Clone(n.from)
	}
	path, logger, replace := d.renamesPath, d.log(), d.renamesReplace
	d.mu.Unlock()
	if replace == nil {
		replace = wholefile.Replace
	}
	data, err := json.Marshal(&f)
	if err == nil {
		if err = os.MkdirAll(filepath.Dir(path), 0o755); err == nil {
			err = replace(path, data)
		}
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	if err == nil {
		d.renamesSaved.Store(gen)
		d.renamesFailing = false
		return
	}
	d.renamesRetry = time.Now().Add(time.Second)
	if !d.renamesFailing { // once, not at every try, until it works again
		d.renamesFailing = true
		logger.Warn("enrich: could not keep the inventory for the renames of the next start", slog.String("file", path), slog.Any("err", err))
	}
}
