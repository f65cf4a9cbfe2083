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
	r := newRWWorker("", labeler{})
	r.appendPoint(telemetry.PointOf(&telemetry.Metric{Measurement: "m", Device: "d",
		Fields: map[string]any{"x": uint64(5), "x_total": 7.5, "y_total": 2.0}, Counters: []string{"x"}}), nil)
	if n := bytes.Count(r.body, []byte("m_x_total")); n != 1 {
		t.Errorf("m_x_total sent %d times, want once", n)
	}
	if n := bytes.Count(r.body, []byte("m_y_total")); n != 1 {
		t.Errorf("the gauge m_y_total, of no counter's name, sent %d times, want once", n)
	}
}

// TestRemoteWriteFieldsOfOneName: two fields of one metric whose names
// sanitise to one (a gNMI row's in-octets_rate and the normalised
// in_octets_rate enrichment adds beside it) are one series: it is sent
// once, not as two samples of one series at one time.
func TestRemoteWriteFieldsOfOneName(t *testing.T) {
	r := newRWWorker("", labeler{})
	for range 2 { // named, then from the cache
		r.body = r.body[:0]
		r.appendPoint(telemetry.PointOf(&telemetry.Metric{Measurement: "interface", Device: "d",
			Fields:   map[string]any{"in-octets_rate": 5.0, "in_octets_rate": 5.0, "in-octets": uint64(9), "in_utilization_pct": 1.0},
			Counters: []string{"in-octets"}}), nil)
		if n := bytes.Count(r.body, []byte("interface_in_octets_rate")); n != 1 {
			t.Errorf("interface_in_octets_rate sent %d times, want once", n)
		}
		if n := bytes.Count(r.body, []byte("interface_in_octets_total")); n != 1 {
			t.Errorf("interface_in_octets_total sent %d times, want once", n)
		}
		if n := bytes.Count(r.body, []byte("interface_in_utilization_pct")); n != 1 {
			t.Errorf("interface_in_utilization_pct sent %d times, want once", n)
		}
	}
}
