package prometheus

import (
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/weirnet/weir/configs"
	"github.com/weirnet/weir/sinks"
	"github.com/weirnet/weir/telemetry"
)

// TestMaxSeriesBoundsTheSeriesHeld: a sender inventing label values (a
// gNMI path or ifAlias with a counter in it) grew the sink's series, its
// memory and every scrape without bound. Past max_series, values that
// would make a new series are counted and not served; the series held go
// on updating, and new ones are taken again once stale ones go.
func TestMaxSeriesBoundsTheSeriesHeld(t *testing.T) {
	reg := prometheus.NewRegistry()
	dst, err := New(configs.Sink{Type: "prometheus", Name: "p", Listen: "127.0.0.1:0", MaxSeries: 3, Staleness: configs.Duration(time.Minute)},
		sinks.Env{Registerer: reg})
	if err != nil {
		t.Fatal(err)
	}
	s := dst.(*Sink)
	defer s.Close()
	now := time.Unix(1000, 0)
	s.col.now = func() time.Time { return now }
	m := func(device string, v float64) *telemetry.Metric {
		return &telemetry.Metric{Measurement: "m", Device: device, Fields: map[string]any{"a": v, "b": v}}
	}
	s.col.Update(m("d1", 1)) // 2 series
	s.col.Update(m("d2", 1)) // 1 taken, 1 refused
	s.col.Update(m("d3", 1)) // both refused
	s.col.Update(m("d1", 2)) // held series update
	got := string(s.col.render())
	served := 0
	for _, l := range strings.Split(got, "\n") {
		if strings.HasPrefix(l, "m_") {
			served++
		}
	}
	if n := served; n != 3 {
		t.Errorf("%d series served, want 3:\n%s", n, got)
	}
	for _, want := range []string{`m_a{device="d1"} 2`, `m_b{device="d1"} 2`, `{device="d2"} 1`} {
		if !strings.Contains(got, want) {
			t.Errorf("exposition lacks %s:\n%s", want, got)
		}
	}
	if strings.Contains(got, "d3") {
		t.Errorf("a series past max_series served:\n%s", got)
	}
	if n := testutil.ToFloat64(s.col.limited); n != 3 {
		t.Errorf("weir_prometheus_sink_series_limited_total = %v, want 3", n)
	}
	// d2 and d3 go stale... d1 too, unless it updates: it does.
	now = now.Add(90 * time.Second)
	s.col.Update(m("d1", 3))
	s.col.Sweep()
	s.col.Update(m("d3", 4))
	got = string(s.col.render())
	if !strings.Contains(got, `{device="d3"} 4`) || strings.Contains(got, "d2") {
		t.Errorf("after d2 went stale, d3 is not taken:\n%s", got)
	}
	if s.col.live != 3 {
		t.Errorf("%d series counted live, want 3", s.col.live)
	}
}

// TestMaxSeriesConfig: max_series is a prometheus sink's, and not negative.
func TestMaxSeriesConfig(t *testing.T) {
	for yml, want := range map[string]string{
		"sinks:\n  - {type: prometheus, name: p, listen: \"127.0.0.1:9273\", topics: [enriched.metrics], max_series: -1}\n": "max_series: must not be negative",
		"sinks:\n  - {type: file, name: f, path: /tmp/x.jsonl, topics: [events], max_series: 5}\n":                          "max_series: does not apply to type file",
	} {
		if _, err := configs.Parse([]byte(yml)); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: got %v, want %q", yml, err, want)
		}
	}
}

// TestMaxSeriesReloaded: a reload's max_series applies to the running
// sink; 0 is the default again.
func TestMaxSeriesReloaded(t *testing.T) {
	s, err := NewSink(configs.Sink{Type: "prometheus", Name: "p", Listen: "127.0.0.1:0", MaxSeries: 1}, time.Now)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	m := func(device string) *telemetry.Metric {
		return &telemetry.Metric{Measurement: "m", Device: device, Fields: map[string]any{"a": 1.0}}
	}
	s.col.Update(m("d1"))
	s.col.Update(m("d2"))
	if s.col.live != 1 {
		t.Fatalf("%d series at max_series 1", s.col.live)
	}
	s.Reload(configs.Sink{Type: "prometheus", Name: "p", MaxSeries: 2})
	s.col.Update(m("d2"))
	s.col.Update(m("d3"))
	if s.col.live != 2 {
		t.Errorf("%d series after a reload to max_series 2", s.col.live)
	}
	s.Reload(configs.Sink{Type: "prometheus", Name: "p"})
	if s.col.maxSeries != configs.DefaultPrometheusMaxSeries {
		t.Errorf("max_series %d after a reload without it", s.col.maxSeries)
	}
}

// TestMaxSeriesRefusesBeforeFamilies: a value refused at max_series made
// its family (and label set) all the same, held until the next sweep: a
// flood of new names grew them between sweeps.
func TestMaxSeriesRefusesBeforeFamilies(t *testing.T) {
	c := NewCollector("", time.Hour, time.Now)
	c.maxSeries = 1
	c.Update(&telemetry.Metric{Measurement: "m", Device: "d1", Fields: map[string]any{"a": 1.0}})
	for i := range 100 {
		c.Update(&telemetry.Metric{Measurement: "m", Device: "d2", Fields: map[string]any{"f" + string(rune('a'+i%26)) + strings.Repeat("x", i): 1.0}})
	}
	if len(c.families) != 1 || len(c.sets) != 1 {
		t.Errorf("%d families and %d label sets held at max_series 1, want 1 and 1", len(c.families), len(c.sets))
	}
}
