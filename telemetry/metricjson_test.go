package telemetry

import (
	"bytes"
	"encoding/json"
	"math"
	"testing"
)

// FuzzMetricAppendJSON: Metric.AppendJSON writes float and json.Number
// fields exactly as json.Marshal does, errors included.
func FuzzMetricAppendJSON(f *testing.F) {
	for _, v := range []float64{0, math.Copysign(0, -1), 1, 0.1, 1e-7, 123456789e15, 1e21, 1e-6, -2.5e-300, 5e-324} {
		f.Add(v, "12")
	}
	f.Add(1.5, "-0.5e+3")
	f.Add(1.5, "01")
	f.Add(1.5, "")
	f.Add(math.Inf(-1), "1")
	f.Add(math.NaN(), "1")
	f.Fuzz(func(t *testing.T, x float64, n string) {
		m := Metric{V: 1, Fields: map[string]any{"f": x, "n": json.Number(n)}}
		got, _, gerr := m.AppendJSON(nil, nil)
		want, werr := json.Marshal(&m)
		if (gerr == nil) != (werr == nil) || gerr == nil && !bytes.Equal(got, want) {
			t.Fatalf("AppendJSON %s (%v), json.Marshal %s (%v)", got, gerr, want, werr)
		}
	})
}
