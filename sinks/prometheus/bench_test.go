package prometheus_test

import (
	"fmt"
	"io"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	promsink "github.com/weirnet/weir/sinks/prometheus"
	"github.com/weirnet/weir/telemetry"
)

// BenchmarkScrape100k: one scrape of 100,000 series (2,000 devices x 48
// interfaces, one counter and one gauge... 96,000 series, plus 4,000 more).
func BenchmarkScrape100k(b *testing.B) {
	col := promsink.NewCollector("", time.Hour, time.Now)
	n := 0
	for d := 0; n < 100000; d++ {
		for i := 0; i < 48 && n < 100000; i++ {
			col.Update(&telemetry.Metric{Measurement: "interface", Device: fmt.Sprintf("r%d", d),
				Tags:   map[string]string{"ifName": fmt.Sprintf("Ethernet%d", i), "site": "ams1"},
				Fields: map[string]any{"ifHCInOctets": int64(d * i), "utilisation": 0.5}, Counters: []string{"ifHCInOctets"}})
			n += 2
		}
	}
	reg := prometheus.NewRegistry()
	reg.MustRegister(col)
	h := promhttp.HandlerFor(reg, promhttp.HandlerOpts{})
	b.ResetTimer()
	for b.Loop() {
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
		io.Copy(io.Discard, rec.Body)
	}
}

// BenchmarkScrape100kText is the same scrape through WriteText, what the
// sink's endpoint serves.
func BenchmarkScrape100kText(b *testing.B) {
	col := promsink.NewCollector("", time.Hour, time.Now)
	n := 0
	for d := 0; n < 100000; d++ {
		for i := 0; i < 48 && n < 100000; i++ {
			col.Update(&telemetry.Metric{Measurement: "interface", Device: fmt.Sprintf("r%d", d),
				Tags:   map[string]string{"ifName": fmt.Sprintf("Ethernet%d", i), "site": "ams1"},
				Fields: map[string]any{"ifHCInOctets": int64(d * i), "utilisation": 0.5}, Counters: []string{"ifHCInOctets"}})
			n += 2
		}
	}
	b.ResetTimer()
	for b.Loop() {
		col.WriteText(io.Discard)
	}
}
