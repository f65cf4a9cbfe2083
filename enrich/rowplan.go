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

// mergePlan is how mergeSorted interleaved two lists of fields last time.
type mergePlan struct {
	a, b  []string // the keys merged
	steps []mergeStep
}

type mergeStep uint8

const (
	takeA mergeStep = iota
	takeB
	takeBOverA // the same key in both: b's wins
)

// merge appends to dst the fields of a and b, both sorted by key, in key
// order, b's field winning where both have a key (as mergeSorted does),
// by the plan when a and b have the keys of last time.
func (pl *mergePlan) merge(dst, a, b []telemetry.Field) []telemetry.Field {
	if pl.same(a, b) {
		i, j := 0, 0
		for _, s := range pl.steps {
			switch s {
			case takeA:
				dst = append(dst, a[i])
				i++
			case takeB:
				dst = append(dst, b[j])
				j++
			default:
				dst = append(dst, b[j])
				i, j = i+1, j+1
			}
		}
		return dst
	}
	pl.a, pl.b, pl.steps = appendFieldKeys(pl.a[:0], a), appendFieldKeys(pl.b[:0], b), pl.steps[:0]
	i, j := 0, 0
	for i < len(a) && j < len(b) {
		switch c := strings.Compare(a[i].Key, b[j].Key); {
		case c < 0:
			dst, pl.steps = append(dst, a[i]), append(pl.steps, takeA)
			i++
		case c > 0:
			dst, pl.steps = append(dst, b[j]), append(pl.steps, takeB)
			j++
		default:
			dst, pl.steps = append(dst, b[j]), append(pl.steps, takeBOverA)
			i, j = i+1, j+1
		}
	}
	for ; i < len(a); i++ {
		dst, pl.steps = append(dst, a[i]), append(pl.steps, takeA)
	}
	for ; j < len(b); j++ {
		dst, pl.steps = append(dst, b[j]), append(pl.steps, takeB)
	}
	return dst
}

func (pl *mergePlan) same(a, b []telemetry.Field) bool {
	return fieldKeysAre(a, pl.a) && fieldKeysAre(b, pl.b)
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
