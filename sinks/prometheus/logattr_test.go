package prometheus

import (
	"bytes"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/weirnet/weir/configs"
	"github.com/weirnet/weir/sinks"
	"github.com/weirnet/weir/telemetry"
)

// TestMaxSeriesLogNamesTheSinkOnce: the logger a sink gets already names
// it (sinks/all.Build adds sink and type); the sink added sink again, so
// the max_series warning read `sink=prom type=prometheus sink=prom`, a
// JSON log line with a duplicate key.
func TestMaxSeriesLogNamesTheSinkOnce(t *testing.T) {
	var buf bytes.Buffer
	logger := slog.New(slog.NewTextHandler(&buf, nil)).With(slog.String("sink", "p"), slog.String("type", "prometheus"))
	dst, err := New(configs.Sink{Type: "prometheus", Name: "p", Listen: "127.0.0.1:0", MaxSeries: 1, Staleness: configs.Duration(time.Minute)},
		sinks.Env{Logger: logger})
	if err != nil {
		t.Fatal(err)
	}
	s := dst.(*Sink)
	defer s.Close()
	s.col.Update(&telemetry.Metric{Measurement: "m", Device: "d1", Fields: map[string]any{"a": 1.0}})
	s.col.Update(&telemetry.Metric{Measurement: "m", Device: "d2", Fields: map[string]any{"a": 1.0}})
	line := buf.String()
	if !strings.Contains(line, "max_series") {
		t.Fatalf("no max_series warning: %q", line)
	}
	if n := strings.Count(line, " sink="); n != 1 {
		t.Errorf("the warning names the sink %d times: %s", n, line)
	}
}
