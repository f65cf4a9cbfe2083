package enrich

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/weirnet/weir/broker"
	"github.com/weirnet/weir/telemetry"
)

// mergeFields is mergeTags for fields: what a mergePlan must give.
func mergeFields(dst, a, b []telemetry.Field) []telemetry.Field {
	return mergeSorted(dst, a, b, func(f telemetry.Field) string { return f.Key })
}

// TestMergePlanMatchesMerge: a plan merges as mergeFields does (of the
// first two lists, then of that and the third), whether
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
	a, b, c := sortedFields(), sortedFields(), sortedFields()
	replayed := 0
	for range 3000 {
		switch rng.IntN(5) {
		case 0:
			a = sortedFields()
		case 1:
			b = sortedFields()
		case 2:
			c = sortedFields()
		default: // the same keys, new values
			for _, fs := range [][]telemetry.Field{a, b, c} {
				for i := range fs {
					fs[i] = telemetry.IntField(fs[i].Key, rng.Int64())
				}
			}
			replayed++
		}
		want := mergeFields(nil, mergeFields(nil, a, b), c)
		if got := pl.merge(nil, a, b, c); !reflect.DeepEqual(got, want) && len(got)+len(want) > 0 {
			t.Fatalf("merge of %v, %v and %v:\nplan %v\nwant %v", a, b, c, got, want)
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

// TestWorkerCachesChangeNothing: a worker that keeps its decoder's
// shapes, its encoder's texts, its merge plans and counter infos from row
// to row writes what one that starts each row without them writes, on
// rows whose measurements, devices, value kinds and times change.
func TestWorkerCachesChangeNothing(t *testing.T) {
	inv, _ := ParseInventory([]byte(testInventory))
	newWorker := func() *MetricsWorker {
		w := NewMetricsWorker(nil, inv)
		w.out = newOutputs(nil, telemetry.TopicRawSNMP, w.logger, w.m, false)
		w.out.useArenas(&w.arena, &w.evEnc.arena)
		return w
	}
	kept, fresh := newWorker(), newWorker()
	rng := rand.New(rand.NewPCG(3, 4))
	t0 := time.Date(2026, 11, 29, 14, 0, 0, 0, time.UTC)
	odd := []string{"2.5", `"x"`, "true", "null", "-1", "18446744073709551615", "1e3"}
	for p := range 30 {
		var recs []broker.Record
		for d, dev := range []string{"edge1", "lab1", "x"} {
			agent := []string{"192.0.2.1", "10.0.0.1", "198.51.100.1"}[d]
			for i := 1; i <= 6; i++ {
				meas := "snmp_interface"
				if rng.IntN(4) == 0 {
					meas = []string{"interfaces_interface_state_counters", "snmp_bgp_peer"}[rng.IntN(2)]
				}
				v := func() string {
					if rng.IntN(5) == 0 {
						return odd[rng.IntN(len(odd))]
					}
					return fmt.Sprint(uint64(p)*uint64(1e9+rng.IntN(1e6)) + uint64(i))
				}
				at := t0.Add(time.Duration(p)*time.Minute + time.Duration(rng.IntN(1e9)))
				rec := fmt.Sprintf(`{"v":1,"measurement":%q,"device":%q,"tags":{"agent":%q,"ifName":"Et%d","name":"Et%d"},`+
					`"fields":{"ifHCInOctets":%s,"ifHCOutOctets":%s,"ifHighSpeed":%s,"ifInErrors":%s,"ifInOctets":%s,"ifOperStatus":%s,"in-octets":%s,"out-octets":%s},`+
					`"counters":["ifHCInOctets","ifHCOutOctets","ifInErrors","ifInOctets","in-octets","out-octets"],"counters64":["ifHCInOctets","ifHCOutOctets"],`+
					`"time":%q,"received_at":%q,"uptime":%d,"source":"snmp"}`,
					meas, dev, agent, i, i, v(), v(), []string{"1000", "0", `"x"`}[rng.IntN(3)], v(), v(), []string{"1", "2", `"up"`}[rng.IntN(3)], v(), v(),
					at.Format(time.RFC3339Nano), at.Add(time.Millisecond).Format(time.RFC3339Nano), 1000+p*60)
				recs = append(recs, broker.Record{Topic: telemetry.TopicRawSNMP, Value: []byte(rec), Offset: int64(len(recs))})
			}
		}
		got, _ := kept.enrichBatch(recs, nil, nil)
		var want []outRecord
		for i := range recs {
			fresh.dec, fresh.enc = telemetry.Decoder{}, telemetry.PointEncoder{}
			fresh.fieldsPlan, fresh.counterInfos, fresh.viewRecipe = mergePlan{}, nil, viewRecipe{}
			want, _ = fresh.enrichBatch(recs[i:i+1], want, nil)
		}
		if len(got) != len(want) {
			t.Fatalf("poll %d: %d records, want %d", p, len(got), len(want))
		}
		for i := range got {
			if !bytes.Equal(got[i].rec.Value, want[i].rec.Value) {
				t.Fatalf("poll %d record %d:\n%s\nwant\n%s", p, i, got[i].rec.Value, want[i].rec.Value)
			}
		}
		kept.out.recycle(&kept.arena, &kept.evEnc.arena)
		fresh.out.recycle(&fresh.arena, &fresh.evEnc.arena)
	}
}

// interfaceViewReference is interfaceView as it was before its recipe:
// every row's view worked out afresh (the object found as interfaceView
// finds it).
func interfaceViewReference(p, v *telemetry.Point) bool {
	object, ok := viewObject(p)
	if !ok {
		return false
	}
	var fields []telemetry.Field
	for i, j := 0, 0; i < len(p.Fields) && j < len(normalisedFields); {
		switch c := strings.Compare(p.Fields[i].Key, normalisedFields[j]); {
		case c < 0:
			i++
		case c > 0:
			j++
		default:
			fields = append(fields, p.Fields[i])
			i, j = i+1, j+1
		}
	}
	if object == "" || len(fields) == 0 {
		return false
	}
	var tags []telemetry.Tag
	for _, t := range p.Tags {
		if !viewDroppedTags[t.Key] || t.Key == "ifIndex" && viewKeepsIndex(p) {
			tags = append(tags, t)
		}
	}
	tags = mergeTags(nil, []telemetry.Tag{{Key: "interface", Value: object}}, tags)
	if alias, _ := p.Tag("ifAlias"); alias != "" {
		tags = mergeTags(nil, tags, []telemetry.Tag{{Key: "description", Value: alias}})
	}
	*v = telemetry.Point{V: telemetry.Version, Measurement: "interface", Device: p.Device, Tags: tags, Fields: fields,
		Time: p.Time, ReceivedAt: p.ReceivedAt, Source: "enrich"}
	return true
}

// TestViewRecipeMatchesReference: a worker keeping its view recipe makes
// the view interfaceViewReference makes, for rows whose tags and fields
// come and go (an alias or not, a row's own interface or description
// tag, tags the view drops, normalised fields or none), repeated so that
// recipes are both kept and worked out again.
func TestViewRecipeMatchesReference(t *testing.T) {
	w := NewMetricsWorker(nil, nil)
	rng := rand.New(rand.NewPCG(11, 12))
	tagKeys := []string{"agent", "a", "description", "ifAlias", "ifDescr", "ifIndex", "ifName", "interface", "name", "role", "site", "z"}
	fieldKeys := []string{"a", "ifHCInOctets", "in_octets_rate", "in_utilization_pct", "oper_up", "out_errors_rate", "speed_mbps", "zz"}
	slices.Sort(tagKeys)
	slices.Sort(fieldKeys)
	subset := func(keys []string) []string {
		var out []string
		for _, k := range keys {
			if rng.IntN(2) == 0 {
				out = append(out, k)
			}
		}
		return out
	}
	var tk, fk []string
	for n := range 5000 {
		if n%4 == 0 {
			tk, fk = subset(tagKeys), subset(fieldKeys)
		}
		p := &telemetry.Point{Measurement: []string{"snmp_interface", "interfaces_interface_state_counters", "cpu"}[rng.IntN(3)], Device: "d"}
		for _, k := range tk {
			v := fmt.Sprint(k, rng.IntN(3))
			if rng.IntN(4) == 0 {
				v = "" // an empty ifAlias or ifName
			}
			p.Tags = append(p.Tags, telemetry.Tag{Key: k, Value: v})
		}
		for _, k := range fk {
			p.Fields = append(p.Fields, telemetry.FloatField(k, rng.Float64()))
		}
		var got, want telemetry.Point
		okGot, okWant := w.interfaceView(p, &got), interfaceViewReference(p, &want)
		if okGot != okWant {
			t.Fatalf("%+v: view %v, want %v", p, okGot, okWant)
		}
		if !okGot {
			continue
		}
		if len(got.Counters) == 0 {
			got.Counters = nil
		}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("%+v:\nview %+v\nwant %+v", p, got, want)
		}
	}
}
