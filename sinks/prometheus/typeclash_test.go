package prometheus

import (
	"bytes"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/weirnet/weir/telemetry"
)

// TestCounterAndGaugeOfOneNameDoNotShareASeries: a counter field x
// (x_total) and a gauge field x_total of one measurement make one family,
// the first type seen winning; but both fields wrote the one series of
// that family and label set, so the counter's series took the gauge's
// value at every other update: a counter going down and up, which rate()
// reads as resets. The field of the other type is not served, and a
// warning says which.
func TestCounterAndGaugeOfOneNameDoNotShareASeries(t *testing.T) {
	var buf bytes.Buffer
	c := NewCollector("", time.Hour, time.Now)
	// As sinks/all.Build gives it: the warning must not repeat its keys.
	c.logger = slog.New(slog.NewTextHandler(&buf, nil)).With(slog.String("sink", "p"), slog.String("type", "prometheus"))
	for _, v := range []uint64{100, 200} {
		c.Update(&telemetry.Metric{Measurement: "m", Device: "d",
			Fields: map[string]any{"x": v, "x_total": 7.0}, Counters: []string{"x"}})
		got := string(c.render())
		if !strings.Contains(got, "# TYPE m_x_total counter\n") {
			t.Fatalf("no counter m_x_total:\n%s", got)
		}
		if want := `m_x_total{device="d"} ` + map[uint64]string{100: "100", 200: "200"}[v] + "\n"; !strings.Contains(got, want) {
			t.Errorf("the counter's series is not the counter's value %d:\n%s", v, got)
		}
	}
	if log := buf.String(); !strings.Contains(log, "x_total") || strings.Count(log, "\n") != 1 {
		t.Errorf("want one warning naming the clash, got %q", log)
	} else if strings.Count(log, " type=") != 1 {
		t.Errorf("the warning repeats the key type: %s", log)
	}
}
