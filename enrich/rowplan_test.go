package enrich

import (
	"math/rand/v2"
	"reflect"
	"slices"
	"testing"

	"github.com/weirnet/weir/telemetry"
)

// TestMergePlanMatchesMerge: a plan merges as mergeFields does, whether
// the keys are those of last time (replayed) or not (worked out again),
// with values that differ from one merge to the next.
func TestMergePlanMatchesMerge(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	names := []string{"a", "a_rate", "ab", "b", "b_rate", "c", "in_octets_rate", "oper_up", "z"}
	sortedFields := func() []telemetry.Field {
		var fs []telemetry.Field
		for _, n := range names {
			if rng.IntN(2) == 0 {
				fs = append(fs, telemetry.IntField(n, rng.Int64()))
			}
		}
		return fs
	}
	var pl mergePlan
	a, b := sortedFields(), sortedFields()
	replayed := 0
	for range 2000 {
		switch rng.IntN(4) {
		case 0:
			a = sortedFields()
		case 1:
			b = sortedFields()
		default: // the same keys, new values
			for i := range a {
				a[i] = telemetry.IntField(a[i].Key, rng.Int64())
			}
			for i := range b {
				b[i] = telemetry.IntField(b[i].Key, rng.Int64())
			}
			replayed++
		}
		want := mergeFields(nil, a, b)
		if got := pl.merge(nil, a, b); !reflect.DeepEqual(got, want) && len(got)+len(want) > 0 {
			t.Fatalf("merge of %v and %v:\nplan %v\nwant %v", a, b, got, want)
		}
	}
	if replayed == 0 {
		t.Fatal("no merge replayed a plan")
	}
}

// TestCounterInfoFollowsRows: the worker's per-position counter info is
// right when a row's counters change names, order or measurement.
func TestCounterInfoFollowsRows(t *testing.T) {
	w := NewMetricsWorker(nil, nil)
	rows := [][]string{
		{"ifHCInOctets", "ifInErrors"},
		{"ifHCInOctets", "ifInErrors"},
		{"ifInErrors", "ifHCInOctets", "x"},
		{"in-octets"},
	}
	for n, row := range rows {
		m := "snmp_interface"
		if n == 3 {
			m = "interfaces_interface_state_counters"
		}
		for k, c := range row {
			info := w.counterInfo(k, m, c)
			norm, hasNorm := interfaceCounterNames(m)[c]
			if info.rate != c+"_rate" || info.hasNorm != hasNorm || info.norm != norm {
				t.Errorf("row %d counter %s: %+v", n, c, info)
			}
		}
	}
	// Past the positions kept.
	if info := w.counterInfo(maxCounterInfos+5, "snmp_interface", "ifInErrors"); info.rate != "ifInErrors_rate" || !info.hasNorm {
		t.Errorf("past the cache: %+v", info)
	}
	if !slices.ContainsFunc(w.counterInfos, func(c counterInfo) bool { return c.counter == "x" }) {
		t.Error("nothing kept")
	}
}
