package telemetry

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
	"time"
)

// checkPointJSON: p.AppendJSON writes what json.Marshal writes of
// p.Metric(), or fails where it fails.
func checkPointJSON(t *testing.T, p *Point) {
	t.Helper()
	for i := range p.Fields {
		if p.Fields[i].Kind == FieldInvalid {
			// Metric() makes it nil; AppendJSON refuses it.
			if _, err := p.AppendJSON(nil); err == nil {
				t.Fatalf("AppendJSON took the invalid field %s", p.Fields[i].Key)
			}
			return
		}
	}
	got, gerr := p.AppendJSON(nil)
	want, werr := json.Marshal(p.Metric())
	if (gerr == nil) != (werr == nil) || gerr == nil && !bytes.Equal(got, want) {
		t.Fatalf("AppendJSON %s (%v)\njson.Marshal %s (%v)", got, gerr, want, werr)
	}
}

func TestPointAppendJSONMatchesEncodingJSON(t *testing.T) {
	var d Decoder
	for _, s := range metricSeeds {
		var p Point
		if d.DecodePoint([]byte(s), &p) == nil {
			checkPointJSON(t, &p)
		}
	}
	at := time.Date(2026, 11, 29, 12, 0, 0, 5, time.FixedZone("", 3600))
	built := &Point{V: 1, Measurement: "interface", Device: "r<1>", Time: at, ReceivedAt: at, Uptime: 7, Source: "enrich",
		Tags: []Tag{{"a", "x&y"}, {"b", "\u2028"}},
		Fields: []Field{FloatField("f", 1e21), IntField("i", -3), BoolField("ok", true), StringField("s", "\"q\""),
			UintField("u", math.MaxUint64), {Key: "z", Kind: FieldNull}}}
	checkPointJSON(t, built)
	checkPointJSON(t, &Point{})
	checkPointJSON(t, &Point{Fields: []Field{FloatField("nan", math.NaN())}})
	checkPointJSON(t, &Point{Time: time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC)})
	checkPointJSON(t, PointOf(&Metric{Fields: map[string]any{"bad": []int{1}}}))
}

// FuzzPointAppendJSON: whatever metric value decodes, its Point encodes
// as json.Marshal encodes the same metric.
func FuzzPointAppendJSON(f *testing.F) {
	for _, s := range metricSeeds {
		f.Add([]byte(s))
	}
	var d Decoder
	var p Point
	var e PointEncoder // across inputs, so its caches are both hit and missed
	f.Fuzz(func(t *testing.T, b []byte) {
		if d.DecodePoint(b, &p) == nil {
			checkPointJSON(t, &p)
			checkEncoder(t, &e, &p)
		}
	})
}

// checkEncoder: e writes p as p.AppendJSON does.
func checkEncoder(t *testing.T, e *PointEncoder, p *Point) {
	t.Helper()
	want, werr := p.AppendJSON(nil)
	got, gerr := e.AppendJSON(nil, p)
	if (gerr == nil) != (werr == nil) || gerr == nil && !bytes.Equal(got, want) {
		t.Fatalf("PointEncoder %s (%v)\nAppendJSON %s (%v)", got, gerr, want, werr)
	}
}

// TestPointEncoderFollowsChanges: an encoder writes each Point as it is,
// whatever it wrote before: keys, lists and times that change, grow or
// shrink from one to the next.
func TestPointEncoderFollowsChanges(t *testing.T) {
	at := time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)
	base := func() *Point {
		return &Point{V: 1, Measurement: "m", Device: "d", Time: at, ReceivedAt: at, Source: "s",
			Tags:     []Tag{{"a", "1"}, {"b", "2"}},
			Fields:   []Field{IntField("c", 1), FloatField("g", 0.5)},
			Counters: []string{"c"}, Counters64: []string{"c"}}
	}
	var e PointEncoder
	steps := []func(p *Point){
		func(p *Point) {},
		func(p *Point) { p.Tags[1].Key = "b<" },
		func(p *Point) { p.Fields = append(p.Fields, StringField("z", "x")) },
		func(p *Point) { p.Fields = p.Fields[:1]; p.Tags = nil },
		func(p *Point) { p.Counters = []string{"c", "d"}; p.Counters64 = nil },
		func(p *Point) { p.Counters = []string{"e"} },
		func(p *Point) { p.Time = at.In(time.FixedZone("", 3600)) },
		func(p *Point) { p.Time = time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC) },
		func(p *Point) { p.ReceivedAt = at.Add(time.Second) },
		func(p *Point) {},
	}
	for _, step := range steps {
		p := base()
		step(p)
		checkEncoder(t, &e, p)
	}
	// Floats of every kind, many more than the float cache holds, some
	// repeated, under measurements that take turns.
	rng := rand.New(rand.NewPCG(5, 6))
	var recent []float64
	for n := range 5000 {
		p := base()
		p.Measurement = fmt.Sprint("m", n%6)
		for k := range 8 {
			var x float64
			switch rng.IntN(4) {
			case 0:
				x = rng.Float64() * math.Pow(10, float64(rng.IntN(40)-15))
			case 1:
				x = float64(rng.Int64N(1e6)) / 60.013
			case 2:
				x = -rng.NormFloat64()
			default:
				if len(recent) > 0 {
					x = recent[rng.IntN(len(recent))]
				}
			}
			recent = append(recent[max(0, len(recent)-100):], x)
			p.Fields = append(p.Fields, FloatField(fmt.Sprint("x", k), x))
		}
		checkEncoder(t, &e, p)
	}
}
