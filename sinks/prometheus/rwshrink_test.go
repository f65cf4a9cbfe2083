package prometheus

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"runtime"
	"testing"
	"time"

	"github.com/weirnet/weir/configs"
	"github.com/weirnet/weir/sinks"
	"github.com/weirnet/weir/sinks/internal/shrink"
	"github.com/weirnet/weir/telemetry"
)

// TestRemoteWriteLetsGoOfABacklogsBuffers: the encoding buffers grew to
// the largest batch and kept that size: after a 90 s outage of
// Prometheus, the backlog's batches left 40 MB of a 190 MB process held
// for good. Once the batches after it use a fraction of them for a while,
// they are let go, and the requests stay whole.
func TestRemoteWriteLetsGoOfABacklogsBuffers(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(4))
	requests := 0
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		requests++
		w.WriteHeader(204)
	}))
	defer hs.Close()
	d, err := NewRemoteWrite(configs.Sink{URL: hs.URL}, sinks.Env{})
	if err != nil {
		t.Fatal(err)
	}
	r := d.(*RemoteWrite)
	batch := func(n, from int) []sinks.Item {
		items := make([]sinks.Item, n)
		for i := range items {
			m := &telemetry.Metric{Measurement: "interface", Device: fmt.Sprintf("r%d", i%100), Time: time.UnixMilli(int64(from + i)),
				Tags:   map[string]string{"ifName": fmt.Sprintf("Ethernet%d", i), "site": "ams1"},
				Fields: map[string]any{"in_octets_rate": float64(i), "out_octets_rate": 1.0, "in_errors_rate": 0.0, "out_errors_rate": 0.0}}
			items[i].Point = telemetry.PointOf(m)
		}
		return items
	}
	held := func() (n int) {
		n = cap(r.compressed)
		for _, w := range r.workers {
			n += cap(w.body) + cap(w.z)
		}
		return n
	}
	if err := r.Write(context.Background(), batch(40_000, 0)); err != nil {
		t.Fatal(err)
	}
	backlog := held()
	if backlog < 4*shrink.MinCap {
		t.Fatalf("the backlog's batch holds %d bytes of buffers: too small a batch for the test", backlog)
	}
	for i := range shrink.After + 1 {
		if err := r.Write(context.Background(), batch(20, 100_000+i*20)); err != nil {
			t.Fatal(err)
		}
	}
	if got := held(); got > shrink.MinCap {
		t.Errorf("after %d small batches the buffers hold %d bytes (the backlog's %d)", shrink.After+1, got, backlog)
	}
	if requests != shrink.After+2 {
		t.Errorf("%d requests, want %d", requests, shrink.After+2)
	}
}
