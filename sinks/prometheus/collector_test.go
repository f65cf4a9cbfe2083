package prometheus

import (
	"strings"
	"testing"
	"time"

	"github.com/weirnet/weir/telemetry"
)

// TestCollectorSeriesComeBack: a family dropped when all its series went
// stale (by a scrape or a sweep) comes back with the next update.
func TestCollectorSeriesComeBack(t *testing.T) {
	now := time.Unix(1000, 0)
	c := NewCollector("", time.Minute, func() time.Time { return now })
	m := func(v float64) *telemetry.Metric {
		return &telemetry.Metric{Measurement: "m", Device: "d", Tags: map[string]string{"site": "ams1"},
			Fields: map[string]any{"x": v, "c": int64(7)}, Counters: []string{"c"}}
	}
	for i, drop := range []func(){func() { c.render() }, c.Sweep} {
		c.Update(m(1))
		if got := string(c.render()); !strings.Contains(got, `m_x{device="d",site="ams1"} 1`+"\n") || !strings.Contains(got, `m_c_total{device="d",site="ams1"} 7`) {
			t.Fatalf("round %d: exposition:\n%s", i, got)
		}
		now = now.Add(2 * time.Minute)
		drop()
		if got := string(c.render()); got != "" {
			t.Fatalf("round %d: stale series served:\n%s", i, got)
		}
		c.Update(m(2))
		if got := string(c.render()); !strings.Contains(got, `m_x{device="d",site="ams1"} 2`+"\n") {
			t.Fatalf("round %d: series did not come back:\n%s", i, got)
		}
		now = now.Add(2 * time.Minute)
	}
	// A sweep forgets the label sets of series all gone.
	c.Update(&telemetry.Metric{Measurement: "m", Device: "e", Fields: map[string]any{"x": 1.0}})
	now = now.Add(2 * time.Minute)
	c.Sweep()
	if len(c.sets) != 0 || len(c.families) != 0 {
		t.Fatalf("after a sweep of stale series: %d label sets, %d families", len(c.sets), len(c.families))
	}
}

// TestCollectorLabelCollisions: tags that sanitise to one label name give
// one label, the later tag in key order, every time; a tag named like the
// device label replaces the device.
func TestCollectorLabelCollisions(t *testing.T) {
	c := NewCollector("", time.Hour, time.Now)
	for range 20 {
		c.Update(&telemetry.Metric{Measurement: "m", Device: "d", Tags: map[string]string{"ifName": "a", "if_name": "b", "Device": "D"},
			Fields: map[string]any{"x": 1.0}})
	}
	if got, want := string(c.render()), `m_x{device="D",if_name="b"} 1`; !strings.Contains(got, want) || strings.Count(got, "m_x{") != 1 {
		t.Fatalf("exposition:\n%s\nwant one series %s", got, want)
	}
}

// TestSetsByDeviceFollowsSets: the index of series sets by device that
// deletes use keeps what the sets are, whichever way a set goes: a
// delete of its path, a sweep of stale ones.
func TestSetsByDeviceFollowsSets(t *testing.T) {
	now := time.Unix(1000, 0)
	c := NewCollector("", time.Minute, func() time.Time { return now })
	for _, dev := range []string{"a", "b"} {
		c.Update(&telemetry.Metric{Measurement: "m", Device: dev, Tags: map[string]string{"path": "/x"}, Fields: map[string]any{"v": 1.0}})
	}
	if len(c.byDevice) != 2 || len(c.byDevice["a"]) != 1 {
		t.Fatalf("index %v", c.byDevice)
	}
	c.Update(&telemetry.Metric{Measurement: "gone", Device: "a", Tags: map[string]string{"path": "/x"}, Fields: map[string]any{"deleted": true}, Source: "gnmi"})
	if _, ok := c.byDevice["a"]; ok || len(c.sets) != 1 {
		t.Fatalf("after a's delete: %d sets, index %v", len(c.sets), c.byDevice)
	}
	now = now.Add(2 * time.Minute)
	c.Sweep()
	if len(c.byDevice) != 0 || len(c.sets) != 0 {
		t.Fatalf("after the sweep: %d sets, index %v", len(c.sets), c.byDevice)
	}
}
