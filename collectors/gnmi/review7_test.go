package gnmi

import (
	"context"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/weirnet/weir/configs"
)

// gathered returns the value of metric name for target in reg, and
// whether reg has that series at all.
func gathered(t *testing.T, reg *prometheus.Registry, name, target string) (float64, bool) {
	t.Helper()
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		if mf.GetName() != name {
			continue
		}
		for _, m := range mf.GetMetric() {
			for _, l := range m.GetLabel() {
				if l.GetName() == "target" && l.GetValue() == target {
					if m.GetCounter() != nil {
						return m.GetCounter().GetValue(), true
					}
					return m.GetGauge().GetValue(), true
				}
			}
		}
	}
	return 0, false
}

// TestReaddedDuringDrainKeepsItsSeries: a target removed by a reload while
// its publisher still drains (up to drainTimeout, 10 s, behind a slow
// broker), then added back by the next reload before the drain ends, must
// be reported in /metrics. The second Update builds the target with
// WithLabelValues while the removed one's series still exist, so it holds
// the very same children; when the drain ends, the removed member's Gone
// deletes the target's series (forget), and the re-added target goes on
// counting into children no registry exports: its connected gauge,
// updates, published and dropped are missing from /metrics until it is
// removed again.
func TestReaddedDuringDrainKeepsItsSeries(t *testing.T) {
	const n = 50
	s, addr := startBurst(t, n)
	b := &gatedBroker{open: make(chan struct{})}
	x := burstTarget("x", addr)
	c, _, reg := newShutdownCollector(t, b, x)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { c.Run(ctx); close(done) }()
	defer func() { cancel(); <-done }()
	waitFor(t, 10*time.Second, "x's notifications queued", func() bool {
		v, _ := gathered(t, reg, "weir_gnmi_updates_total", "x")
		return v == n
	})

	// Reload without x: its stream stops, its publisher drains behind the
	// held broker.
	if err := c.Update(nil); err != nil {
		t.Fatal(err)
	}
	waitFor(t, 5*time.Second, "x's stream to stop", func() bool { return s.ended.Load() == 1 })
	// Reload with x again, while the drain goes on; then let the broker
	// take everything.
	if err := c.Update([]configs.GNMITarget{x}); err != nil {
		t.Fatal(err)
	}
	close(b.open)

	// The re-added x subscribes again (the server sends n more) and
	// publishes them.
	waitFor(t, 10*time.Second, "the re-added x to publish", func() bool { return len(b.metrics(t)) == 2*n })
	waitFor(t, 5*time.Second, "x connected", func() bool {
		for _, st := range c.Status() {
			if st.Name == "x" && st.Connected {
				return true
			}
		}
		return false
	})
	if v, ok := gathered(t, reg, "weir_gnmi_connected", "x"); !ok || v != 1 {
		t.Errorf("weir_gnmi_connected{target=x}: %v (exported %v), want 1: the running target is missing from /metrics", v, ok)
	}
	if v, ok := gathered(t, reg, "weir_gnmi_records_published_total", "x"); !ok || v < n {
		t.Errorf("weir_gnmi_records_published_total{target=x}: %v (exported %v), want at least the %d published since it was added back", v, ok, n)
	}
}
