package influxdb

import (
	"bufio"
	"compress/gzip"
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

// TestLetsGoOfABacklogsBuffers: the encoding buffers (each worker's lines
// and their compressed copy, and the request body) grew to the largest
// batch, a backlog's after an outage, and kept that size for good. Once
// the batches after it use a fraction of them for a while they are let
// go, and every request still carries all its lines.
func TestLetsGoOfABacklogsBuffers(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(4))
	for _, gz := range []bool{true, false} {
		t.Run(fmt.Sprintf("gzip=%v", gz), func(t *testing.T) {
			var lines []int // each request's
			hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				body := r.Body
				if r.Header.Get("Content-Encoding") == "gzip" {
					zr, err := gzip.NewReader(r.Body)
					if err != nil {
						t.Error(err)
						w.WriteHeader(400)
						return
					}
					body = zr
				}
				n := 0
				for sc := bufio.NewScanner(body); sc.Scan(); n++ {
				}
				lines = append(lines, n)
				w.WriteHeader(204)
			}))
			defer hs.Close()
			d, err := New(configs.Sink{URL: hs.URL, Gzip: &gz}, sinks.Env{})
			if err != nil {
				t.Fatal(err)
			}
			s := d.(*Sink)
			batch := func(n int) []sinks.Item {
				items := make([]sinks.Item, n)
				for i := range items {
					m := &telemetry.Metric{Measurement: "interface", Device: fmt.Sprintf("r%d", i%100), Time: time.UnixMilli(int64(i)),
						Tags:   map[string]string{"ifName": fmt.Sprintf("Ethernet%d", i), "site": "ams1"},
						Fields: map[string]any{"in_octets_rate": float64(i) * 1.37, "out_octets_rate": float64(i) * 7.1, "in_errors_rate": 0.0}}
					items[i].Point = telemetry.PointOf(m)
				}
				return items
			}
			// held is what the buffers hold, and the largest of them.
			held := func() (n, largest int) {
				n, largest = cap(s.body), cap(s.body)
				for _, w := range s.workers {
					n, largest = n+cap(w.lines)+w.z.Cap(), max(largest, cap(w.lines), w.z.Cap())
				}
				return n, largest
			}
			if err := s.Write(context.Background(), batch(40_000)); err != nil {
				t.Fatal(err)
			}
			backlog, _ := held()
			if backlog < 4*shrink.MinCap {
				t.Fatalf("the backlog's batch holds %d bytes of buffers: too small a batch for the test", backlog)
			}
			for range shrink.After + 1 {
				if err := s.Write(context.Background(), batch(20)); err != nil {
					t.Fatal(err)
				}
			}
			// Buffers under shrink.MinCap stay, whatever they held.
			if got, largest := held(); largest >= shrink.MinCap || got > backlog/4 {
				t.Errorf("after %d small batches the buffers hold %d bytes, the largest %d (the backlog's %d)", shrink.After+1, got, largest, backlog)
			}
			if len(lines) != shrink.After+2 || lines[0] != 40_000 {
				t.Fatalf("requests' lines %v, want 40000 then %d of 20", lines, shrink.After+1)
			}
			for i, n := range lines[1:] {
				if n != 20 {
					t.Errorf("request %d: %d lines, want 20", i+1, n)
				}
			}
		})
	}
}
