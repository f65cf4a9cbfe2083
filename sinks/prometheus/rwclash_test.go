package prometheus

import (
	"bytes"
	"testing"

	"github.com/weirnet/weir/telemetry"
)

// TestRemoteWriteCounterAndGaugeOfOneName: a counter field x and a gauge
// field x_total of one metric were sent as two samples of one series at
// one time with two values (Prometheus keeps one, Mimir refuses the
// duplicate); the exposition serves the counter (the first type seen,
// x before x_total), and so does remote write now, alone.
func TestRemoteWriteCounterAndGaugeOfOneName(t *testing.T) {
	r := &rwWorker{names: map[nameKey]string{}}
	r.appendPoint(telemetry.PointOf(&telemetry.Metric{Measurement: "m", Device: "d",
		Fields: map[string]any{"x": uint64(5), "x_total": 7.5, "y_total": 2.0}, Counters: []string{"x"}}))
	if n := bytes.Count(r.body, []byte("m_x_total")); n != 1 {
		t.Errorf("m_x_total sent %d times, want once", n)
	}
	if n := bytes.Count(r.body, []byte("m_y_total")); n != 1 {
		t.Errorf("the gauge m_y_total, of no counter's name, sent %d times, want once", n)
	}
}
