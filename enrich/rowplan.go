package enrich

import (
	"slices"
	"strings"

	"github.com/weirnet/weir/telemetry"
)

// The rows of one table come with the same field names row after row, so
// the metrics worker remembers, position by position, what it worked out
// for the row before: how its fields and rates interleave, and each
// counter's rate name. A name is checked with one string comparison (one
// pointer, for the decoder's interned strings) instead of being looked up
// or compared with its neighbours.

// mergePlan is how mergeSorted interleaved three lists of fields last
// time (the row's, then its rates, then its normalised fields), as runs
// of each list copied whole.
type mergePlan struct {
	keys [3][]string // the keys merged
	runs []mergeRun
	// Scratch of plan, kept: which list and field each merged field is.
	picks, spare []mergePick
}

type mergePick struct {
	src uint8
	i   int32
}

// mergeRun is n fields of list src from start.
type mergeRun struct {
	src      uint8
	start, n int32
}

// merge appends to dst the fields of a, b and c, each sorted by key, in
// key order: mergeSorted of a and b (b's field winning where both have a
// key), then of that and c (c's winning), by the plan when a, b and c
// have the keys of last time. One pass, not two: most of a row is runs a
// copy each.
func (pl *mergePlan) merge(dst, a, b, c []telemetry.Field) []telemetry.Field {
	if !pl.same(a, b, c) {
		pl.plan(a, b, c)
	}
	lists := [3][]telemetry.Field{a, b, c}
	for _, r := range pl.runs {
		if r.n == 1 {
			// A counter's rate beside it: a slice copy costs a call.
			dst = append(dst, lists[r.src][r.start])
		} else {
			dst = append(dst, lists[r.src][r.start:r.start+r.n]...)
		}
	}
	return dst
}

// plan works out the runs for a, b and c: which list each merged field
// comes from, as mergeSorted takes them, in runs.
func (pl *mergePlan) plan(a, b, c []telemetry.Field) {
	lists := [3][]telemetry.Field{a, b, c}
	for k := range pl.keys {
		pl.keys[k] = appendFieldKeys(pl.keys[k][:0], lists[k])
	}
	key := func(p mergePick) string { return lists[p.src][p.i].Key }
	// a, then b merged in, then c, each as mergeSorted does.
	picks, spare := pl.picks[:0], pl.spare[:0]
	for i := range a {
		picks = append(picks, mergePick{0, int32(i)})
	}
	for src := uint8(1); src < 3; src++ {
		picks, spare = mergeIn(spare[:0], picks, src, lists[src], key), picks
	}
	pl.picks, pl.spare = picks, spare
	pl.runs = pl.runs[:0]
	for _, p := range picks {
		if n := len(pl.runs); n > 0 {
			if r := &pl.runs[n-1]; r.src == p.src && r.start+r.n == p.i {
				r.n++
				continue
			}
		}
		pl.runs = append(pl.runs, mergeRun{src: p.src, start: p.i, n: 1})
	}
}

// mergeIn appends to dst picks with the fields of list (list src) merged
// in by key, as mergeSorted does: list's field wins a key both have.
func mergeIn(dst, picks []mergePick, src uint8, list []telemetry.Field, key func(mergePick) string) []mergePick {
	i, j := 0, 0
	for i < len(picks) && j < len(list) {
		switch cmp := strings.Compare(key(picks[i]), list[j].Key); {
		case cmp < 0:
			dst = append(dst, picks[i])
			i++
		case cmp > 0:
			dst = append(dst, mergePick{src, int32(j)})
			j++
		default:
			dst = append(dst, mergePick{src, int32(j)})
			i, j = i+1, j+1
		}
	}
	dst = append(dst, picks[i:]...)
	for ; j < len(list); j++ {
		dst = append(dst, mergePick{src, int32(j)})
	}
	return dst
}

func (pl *mergePlan) same(a, b, c []telemetry.Field) bool {
	return fieldKeysAre(a, pl.keys[0]) && fieldKeysAre(b, pl.keys[1]) && fieldKeysAre(c, pl.keys[2])
}

// fieldKeysAre: the fields' keys, in order, are keys (compared string by
// string, which is one pointer comparison for the same string). A loop of
// its own, not slices.EqualFunc: it runs twice a row over every field.
func fieldKeysAre(fs []telemetry.Field, keys []string) bool {
	if len(fs) != len(keys) {
		return false
	}
	for i := range fs {
		if fs[i].Key != keys[i] {
			return false
		}
	}
	return true
}

func appendFieldKeys(keys []string, fs []telemetry.Field) []string {
	for i := range fs {
		keys = append(keys, fs[i].Key)
	}
	return keys
}

// counterInfo is what the worker worked out for the k-th counter of a
// row of a measurement: its rate field's name and the normalised rate it
// gives.
type counterInfo struct {
	measurement, counter string
	rate                 string
	norm                 counterRate
	hasNorm              bool
	// packets: an interface row's packet counter without a normalised
	// rate (ifInUcastPkts, in-unicast-pkts), whose wrap is checked
	// against the link's speed as its errors' is.
	packets bool
}

// counterInfo returns the info of counter, the k-th of a row of
// measurement, from the row before's when it had the same there.
func (w *MetricsWorker) counterInfo(k int, measurement, counter string) *counterInfo {
	if k < len(w.counterInfos) {
		if c := &w.counterInfos[k]; c.counter == counter && c.measurement == measurement {
			return c
		}
	} else if k < maxCounterInfos {
		w.counterInfos = append(w.counterInfos, counterInfo{})
	} else {
		w.spareInfo = counterInfo{}
		w.fillCounterInfo(&w.spareInfo, measurement, counter)
		return &w.spareInfo
	}
	c := &w.counterInfos[k]
	w.fillCounterInfo(c, measurement, counter)
	return c
}

// maxCounterInfos bounds the counters of a row the worker remembers.
const maxCounterInfos = 256

func (w *MetricsWorker) fillCounterInfo(c *counterInfo, measurement, counter string) {
	c.measurement, c.counter, c.rate = measurement, counter, w.rateName(counter)
	names := interfaceCounterNames(measurement)
	c.norm, c.hasNorm = names[counter]
	c.packets = names != nil && !c.hasNorm && (strings.HasSuffix(counter, "Pkts") || strings.HasSuffix(counter, "-pkts"))
}

// viewRecipe is how interfaceView made the view of the row before: which
// of its fields it carried over, and its tags: which of the row's, and
// where the interface and description go. It holds while the row's field
// and tag keys are the same, and whether it has an alias.
type viewRecipe struct {
	fieldKeys   []string
	fieldPicks  []int
	tagKeys     []string
	withAlias   bool
	withIndex   bool  // the row's ifIndex is carried (viewKeepsIndex)
	tagSteps    []int // an index into the row's tags, or viewInterface, viewDescription
	tagsPlanned bool  // tagSteps are planned (a zero recipe has none, for a row of no tags)
}

const (
	viewInterface   = -1
	viewDescription = -2
)

// sameFields: the recipe's fields hold for fs (a zero recipe picks none,
// right for a row of no fields).
func (rc *viewRecipe) sameFields(fs []telemetry.Field) bool { return fieldKeysAre(fs, rc.fieldKeys) }

// planFields picks the row's fields named in normalisedFields.
func (rc *viewRecipe) planFields(fs []telemetry.Field) {
	rc.fieldKeys, rc.fieldPicks = appendFieldKeys(rc.fieldKeys[:0], fs), rc.fieldPicks[:0]
	for i, j := 0, 0; i < len(fs) && j < len(normalisedFields); {
		switch c := strings.Compare(fs[i].Key, normalisedFields[j]); {
		case c < 0:
			i++
		case c > 0:
			j++
		default:
			rc.fieldPicks = append(rc.fieldPicks, i)
			i, j = i+1, j+1
		}
	}
}

func (rc *viewRecipe) sameTags(tags []telemetry.Tag, withAlias, withIndex bool) bool {
	return rc.tagsPlanned && withAlias == rc.withAlias && withIndex == rc.withIndex &&
		slices.EqualFunc(tags, rc.tagKeys, func(t telemetry.Tag, k string) bool { return t.Key == k })
}

// planTags: the row's tags but those viewDroppedTags names (inventory and
// target tags), and the interface, sorted by key; the row's own tag
// "interface" (say, from a target) wins over the object. With an alias,
// the description too, over a row's own tag "description". withIndex: the
// row's ifIndex is kept (viewKeepsIndex).
func (rc *viewRecipe) planTags(tags []telemetry.Tag, withAlias, withIndex bool) {
	rc.tagKeys, rc.tagSteps, rc.withAlias, rc.withIndex, rc.tagsPlanned = rc.tagKeys[:0], rc.tagSteps[:0], withAlias, withIndex, true
	for i := range tags {
		rc.tagKeys = append(rc.tagKeys, tags[i].Key)
		if !viewDroppedTags[tags[i].Key] || withIndex && tags[i].Key == "ifIndex" {
			rc.tagSteps = append(rc.tagSteps, i)
		}
	}
	key := func(step int) string {
		switch step {
		case viewInterface:
			return "interface"
		case viewDescription:
			return "description"
		}
		return tags[step].Key
	}
	insert := func(step int, wins bool) {
		k := key(step)
		for i, s := range rc.tagSteps {
			switch c := strings.Compare(key(s), k); {
			case c == 0:
				if wins {
					rc.tagSteps[i] = step
				}
				return
			case c > 0:
				rc.tagSteps = slices.Insert(rc.tagSteps, i, step)
				return
			}
		}
		rc.tagSteps = append(rc.tagSteps, step)
	}
	insert(viewInterface, false)
	if withAlias {
		insert(viewDescription, true)
	}
}
