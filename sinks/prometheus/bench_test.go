package prometheus_test

import (
	"fmt"
	"io"
	"net/http/httptest"
	"runtime"
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

// BenchmarkSeriesMemory: the heap one series takes, for IF-MIB-like rows
// (25 fields, 8 tags, 4,000 interfaces: 100,000 series), which
// max_series's default is sized by (reported as bytes/series).
func BenchmarkSeriesMemory(b *testing.B) {
	fields := map[string]any{}
	for k := range 25 {
		fields[fmt.Sprintf("ifField%d", k)] = float64(k)
	}
	var perSeries float64
	for b.Loop() {
		runtime.GC()
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		col := promsink.NewCollector("", time.Hour, time.Now)
		for d := range 100 {
			for i := range 40 {
				col.Update(&telemetry.Metric{Measurement: "snmp_interface", Device: fmt.Sprintf("edge%03d.ams1", d), Fields: fields,
					Tags: map[string]string{"ifName": fmt.Sprintf("Ethernet1/%d", i), "ifDescr": fmt.Sprintf("Ethernet1/%d", i),
						"ifAlias": "uplink to core router", "ifIndex": fmt.Sprint(i), "site": "ams1", "region": "eu", "role": "edge", "vendor": "arista"}})
			}
		}
		runtime.GC()
		runtime.ReadMemStats(&after)
		perSeries = float64(after.HeapAlloc-before.HeapAlloc) / 100_000
		runtime.KeepAlive(col)
	}
	b.ReportMetric(perSeries, "bytes/series")
}
