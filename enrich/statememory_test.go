package enrich

import (
	"fmt"
	"runtime"
	"testing"
	"time"

	"github.com/weirnet/weir/broker"
)

// BenchmarkMetricsStateMemory: the heap a metrics worker keeps per row it
// tracks (the row's counters for rates, its states, the device's uptime),
// after two polls of stateMemoryDevices devices of each row shape, for
// sizing: each worker keeps a million rows at most (maxObjects). Reported
// as heap-B/row, the live heap after a GC less the one before the worker
// read anything.
func BenchmarkMetricsStateMemory(b *testing.B) {
	const stateMemoryDevices = 2000
	for _, shape := range benchRowShapes[:2] { // the interface rows: scalar4's gauges keep no rates
		b.Run(shape.name, func(b *testing.B) {
			t0 := time.Date(2026, 11, 29, 14, 0, 0, 0, time.UTC)
			var recs []broker.Record
			for p := range 2 {
				for d := range stateMemoryDevices {
					for i := 1; i <= shape.ifaces; i++ {
						m := shape.row(p, d, i)
						m.V, m.Device, m.Source = 1, fmt.Sprintf("leaf%04d", d), "snmp"
						m.Time, m.ReceivedAt = pollTime(t0, p, d, i)
						m.Uptime = uint32(100000 + p*6000)
						v, _, err := m.AppendJSON(nil, nil)
						if err != nil {
							b.Fatal(err)
						}
						recs = append(recs, broker.Record{Topic: "raw.snmp", Value: v})
					}
				}
			}
			rows := stateMemoryDevices * shape.ifaces
			var perRow float64
			for range b.N {
				w := benchMetricsWorker()
				w.out.useArenas(&w.arena, &w.evEnc.arena)
				var before, after runtime.MemStats
				runtime.GC()
				runtime.ReadMemStats(&before)
				var metrics, events []outRecord
				for from := 0; from < len(recs); from += 500 {
					metrics, events = w.enrichBatch(recs[from:min(from+500, len(recs))], metrics[:0], events[:0])
					w.out.recycle(&w.arena, &w.evEnc.arena)
				}
				if len(w.rates.rows) < rows {
					b.Fatalf("%d rows tracked, want %d", len(w.rates.rows), rows)
				}
				metrics, events = nil, nil
				runtime.GC()
				runtime.ReadMemStats(&after)
				perRow = float64(int64(after.HeapAlloc)-int64(before.HeapAlloc)) / float64(rows)
				runtime.KeepAlive(w)
			}
			b.ReportMetric(perRow, "heap-B/row")
		})
	}
}
