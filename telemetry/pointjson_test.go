package telemetry

import (
	"bytes"
	"encoding/json"
	"math"
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
	f.Fuzz(func(t *testing.T, b []byte) {
		if d.DecodePoint(b, &p) == nil {
			checkPointJSON(t, &p)
		}
	})
}
