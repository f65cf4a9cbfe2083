package gnmi

import (
	"context"
	"os"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/weirnet/weir/broker/embedded"
	"github.com/weirnet/weir/collectors/gnmi/sim"
	"github.com/weirnet/weir/configs"
)

// TestGNMIFigures measures one simulated target streaming as fast as it
// can (SAMPLE with a 1µs interval, PROTO, 100 interfaces x 10 counters)
// into the embedded log, in one process. Run with WEIR_BENCH=1:
//
//	WEIR_BENCH=1 go test -run TestGNMIFigures -v ./collectors/gnmi
func TestGNMIFigures(t *testing.T) {
	if os.Getenv("WEIR_BENCH") == "" {
		t.Skip("set WEIR_BENCH=1 to measure")
	}
	for _, enc := range []string{"proto", "json"} {
		t.Run(enc, func(t *testing.T) {
			b, err := embedded.Open(t.TempDir())
			if err != nil {
				t.Fatal(err)
			}
			defer b.Close()
			_, addr, _ := startSim(t, "127.0.0.1:0", sim.Config{Interfaces: 100, ToggleEvery: -1})
			m, err := NewMetrics(nil)
			if err != nil {
				t.Fatal(err)
			}
			tg := simTarget("fast", addr, sub(countersPath, "stream", "sample", time.Microsecond))
			tg.Encoding, tg.Timeout = enc, configs.Duration(5*time.Second)
			c, err := New(configs.GNMI{QueueSize: 10000, Targets: []configs.GNMITarget{tg}}, b, WithMetrics(m))
			if err != nil {
				t.Fatal(err)
			}
			ctx, cancel := context.WithCancel(context.Background())
			done := make(chan struct{})
			go func() { defer close(done); _ = c.Run(ctx) }()
			defer func() { cancel(); <-done }()
			updates := m.Updates.WithLabelValues("fast")
			published := m.Published.WithLabelValues("fast")
			waitFor(t, 10*time.Second, "data", func() bool { return testutil.ToFloat64(published) > 0 })
			time.Sleep(2 * time.Second) // warm up
			u0, p0, t0 := testutil.ToFloat64(updates), testutil.ToFloat64(published), time.Now()
			time.Sleep(10 * time.Second)
			u1, p1, el := testutil.ToFloat64(updates), testutil.ToFloat64(published), time.Since(t0).Seconds()
			drops := testutil.ToFloat64(m.Dropped.WithLabelValues("fast", DropQueueFull))
			t.Logf("%s: received %.0f updates/s; published %.0f records/s = %.0f updates/s into the log; queue drops %.0f",
				enc, (u1-u0)/el, (p1-p0)/el, (p1-p0)*float64(len(sim.Counters))/el, drops)
		})
	}
}
