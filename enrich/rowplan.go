package enrich

import (
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
// order, b's field winning where both have a key: what mergeFields gives,
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
	pl.a, pl.b, pl.steps = pl.a[:0], pl.b[:0], pl.steps[:0]
	for k := range a {
		pl.a = append(pl.a, a[k].Key)
	}
	for k := range b {
		pl.b = append(pl.b, b[k].Key)
	}
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
	if len(a) != len(pl.a) || len(b) != len(pl.b) {
		return false
	}
	for k := range a {
		if a[k].Key != pl.a[k] {
			return false
		}
	}
	for k := range b {
		if b[k].Key != pl.b[k] {
			return false
		}
	}
	return true
}

// counterInfo is what the worker worked out for the k-th counter of a
// row of a measurement: its rate field's name and the normalised rate it
// gives.
type counterInfo struct {
	measurement, counter string
	rate                 string
	norm                 counterRate
	hasNorm              bool
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
	c.norm, c.hasNorm = interfaceCounterNames(measurement)[counter]
}
