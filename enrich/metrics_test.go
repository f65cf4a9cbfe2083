package enrich

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"maps"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/weirnet/weir/broker"
	"github.com/weirnet/weir/broker/embedded"
	"github.com/weirnet/weir/telemetry"
)

// TestMetricsWorker: SNMP interface rows become rates, utilisation and
// normalised fields on enriched.metrics; ifOperStatus, snmp_up (both
// ways) and a sysUpTime going back raise events.
func TestMetricsWorker(t *testing.T) {
	b, err := embedded.Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	t0 := time.Date(2026, 11, 29, 14, 0, 0, 0, time.UTC)
	row := func(sec int, in uint64, oper int64, uptime uint32) telemetry.Metric {
		return telemetry.Metric{V: 1, Measurement: "snmp_interface", Device: "edge1",
			Tags:     map[string]string{"ifName": "Gi0/1", "agent": "192.0.2.1"},
			Fields:   map[string]any{"ifHCInOctets": in, "ifHCOutOctets": in / 2, "ifHighSpeed": int64(1000), "ifOperStatus": oper},
			Counters: []string{"ifHCInOctets", "ifHCOutOctets"},
			Time:     t0.Add(time.Duration(sec) * time.Second), Uptime: uptime, Source: "snmp"}
	}
	status := func(sec int, up int64) telemetry.Metric {
		return telemetry.Metric{V: 1, Measurement: "snmp_status", Device: "edge1", Tags: map[string]string{"agent": "192.0.2.1"},
			Fields: map[string]any{"snmp_up": up}, Time: t0.Add(time.Duration(sec) * time.Second), Source: "snmp"}
	}
	ms := []telemetry.Metric{
		row(0, math.MaxUint64-1_000_000_000, 1, 1000),
		row(60, 6_500_000_000, 1, 7000), // 64-bit wrap: 7.5e9 bytes in 60s
		status(60, 1),
		row(120, 6_500_000_000+750_000_000, 2, 13000), // 100 Mbit/s, link down
		status(120, 0),
		row(180, 1000, 2, 500), // rebooted: no spike
		status(180, 1),
	}
	var recs []broker.Record
	for _, m := range ms {
		v, _ := json.Marshal(&m)
		recs = append(recs, broker.Record{Key: []byte("edge1"), Value: v})
	}
	if err := b.Produce(context.Background(), telemetry.TopicRawSNMP, recs); err != nil {
		t.Fatal(err)
	}
	// Each of the 4 interface rows gives its interface view too; the 4
	// events may be published after the rows.
	runMetricsWorker(t, b, func() bool {
		return len(readTopic(t, b, telemetry.TopicEnrichedMetrics)) >= len(ms)+4 && len(readTopic(t, b, telemetry.TopicEvents)) >= 4
	})
	var rows []map[string]any
	for _, r := range readTopic(t, b, telemetry.TopicEnrichedMetrics) {
		var m telemetry.Metric
		if err := json.Unmarshal(r.Value, &m); err != nil {
			t.Fatal(err)
		}
		if m.Measurement == "snmp_interface" {
			if m.Tags["site"] != "ams1" {
				t.Errorf("inventory tags missing: %v", m.Tags)
			}
			rows = append(rows, m.Fields)
		}
	}
	if len(rows) != 4 {
		t.Fatalf("%d interface rows", len(rows))
	}
	if _, ok := rows[0]["in_octets_rate"]; ok {
		t.Errorf("first sample has a rate")
	}
	if r := rows[1]["ifHCInOctets_rate"].(float64); math.Abs(r-7_500_000_001.0/60) > 1 {
		t.Errorf("64-bit wrap rate %v", r)
	}
	if u := rows[2]["in_utilization_pct"].(float64); math.Abs(u-10) > 1e-6 {
		t.Errorf("utilisation %v%%, want 10%%", u)
	}
	if u := rows[2]["out_utilization_pct"].(float64); math.Abs(u-5) > 1e-6 {
		t.Errorf("out utilisation %v%%, want 5%%", u)
	}
	if _, ok := rows[3]["in_octets_rate"]; ok {
		t.Errorf("rate across a reboot: %v", rows[3]["in_octets_rate"])
	}
	got := map[string]bool{}
	for _, r := range readTopic(t, b, telemetry.TopicEvents) {
		var ev telemetry.Event
		json.Unmarshal(r.Value, &ev)
		got[ev.Type+" "+ev.Object] = true
		// No syslog line gives these a severity: their type's, so
		// that a sink's severities filter takes them.
		if want := map[string]string{"interface_down": "error", "device_unreachable": "error", "device_rebooted": "warning", "device_reachable": "notice"}[ev.Type]; ev.Severity != want {
			t.Errorf("%s: severity %q, want %q", ev.Type, ev.Severity, want)
		}
	}
	for _, want := range []string{"interface_down Gi0/1", "device_unreachable ", "device_rebooted ", "device_reachable "} {
		if !got[want] {
			t.Errorf("missing event %q; got %v", want, got)
		}
	}
	if len(got) != 4 {
		t.Errorf("events %v", got)
	}
}

// TestGNMIAndSNMPShareOneInterfaceView: OpenConfig counters from gNMI and
// IF-MIB rows from SNMP both come out as measurement "interface" with the
// same field names.
func TestGNMIAndSNMPShareOneInterfaceView(t *testing.T) {
	b, err := embedded.Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	t0 := time.Date(2026, 11, 29, 14, 0, 0, 0, time.UTC)
	var recs []broker.Record
	for i, in := range []uint64{1000, 61000} {
		m := telemetry.Metric{V: 1, Measurement: "interfaces_interface_state_counters", Device: "spine1",
			Tags:     map[string]string{"name": "Ethernet1", "path": "/interfaces/interface[name=Ethernet1]/state/counters"},
			Fields:   map[string]any{"in-octets": in, "out-octets": in * 2},
			Counters: []string{"in-octets", "out-octets"}, Time: t0.Add(time.Duration(i) * time.Minute), Source: "gnmi"}
		v, _ := json.Marshal(&m)
		recs = append(recs, broker.Record{Key: []byte("spine1"), Value: v})
	}
	b.Produce(context.Background(), telemetry.TopicRawGNMI, recs)
	inv, _ := ParseInventory([]byte(testInventory))
	w := NewMetricsWorker(b, inv, WithInputTopic(telemetry.TopicRawGNMI))
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { w.Run(ctx); close(done) }()
	var view *telemetry.Metric
	for deadline := time.Now().Add(10 * time.Second); view == nil && time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		for _, r := range readTopic(t, b, telemetry.TopicEnrichedMetrics) {
			var m telemetry.Metric
			json.Unmarshal(r.Value, &m)
			if m.Measurement == "interface" {
				view = &m
			}
		}
	}
	cancel()
	<-done
	if view == nil {
		t.Fatal("no interface record from gNMI counters")
	}
	if view.Tags["interface"] != "Ethernet1" || view.Device != "spine1" || view.Fields["in_octets_rate"] != 1000.0 || view.Fields["out_octets_rate"] != 2000.0 {
		t.Fatalf("interface view %+v", view)
	}
}

// benchCounter is counter k of interface i at poll p: growing by an
// uneven amount each poll, so that rates are not whole numbers, as they
// are not from real devices.
func benchCounter(p, i, k int) uint64 {
	return uint64(p*(60_000_000*(k+1)+12_347*i) + (p*p*37+k*i)%1000 + i*1000)
}

// pollTime is when poll p of device d began and when its row i was
// published, a few milliseconds off the minute as a poller's are.
func pollTime(t0 time.Time, p, d, i int) (at, received time.Time) {
	at = t0.Add(time.Duration(p)*time.Minute + time.Duration((p*7919+d*104_729)%40_000_000))
	return at, at.Add(3*time.Millisecond + time.Duration(i*20_011))
}

// BenchmarkEnrichMetrics: a worker's whole per-row path short of the
// broker (decode, inventory, rates, utilisation, the interface view,
// events, encoding) on rows as the SNMP poller publishes them, 20 devices
// polled every minute for 10 minutes (every row after the first poll gives
// rates; the worker starts afresh when the rows run out). As from the
// poller, a poll's rows share its start time, each has its own
// received_at, and counters grow unevenly:
//
//   - ifmib27: full IF-MIB rows (ifTable joined with ifXTable, 27 columns,
//     16 of them counters), 48 interfaces per device;
//   - ifmib8: the interface columns dashboards use (6 counters, oper status
//     and speed), 48 interfaces per device;
//   - scalar4: a CPU and memory row of 4 gauges, 4 per device.
//
// MB/s is of the raw records read.
func BenchmarkEnrichMetrics(b *testing.B) {
	for _, shape := range benchRowShapes {
		b.Run(shape.name, func(b *testing.B) {
			recs, size := benchMetricRecords(b, shape)
			newWorker := func() *MetricsWorker {
				w := benchMetricsWorker()
				w.out.useArenas(&w.arena, &w.evEnc.arena)
				return w
			}
			w := newWorker()
			const batch = 500
			var metrics, events []outRecord
			enriched := 0
			b.SetBytes(int64(size / len(recs)))
			b.ReportAllocs()
			b.ResetTimer()
			cpu := processCPU()
			// i counts the rows enriched: a pass's last batch may be short
			// (9,600 ifmib27 rows end in one of 100, scalar4's 800 in one of
			// 300), and counting it as a whole batch made ns/op read low.
			for i, next := 0, 0; i < b.N; {
				n := min(batch, b.N-i, len(recs)-next)
				i += n
				metrics, events = w.enrichBatch(recs[next:next+n], metrics[:0], events[:0])
				enriched += len(metrics)
				w.out.recycle(&w.arena, &w.evEnc.arena) // as Run does once they are delivered
				if next += n; next == len(recs) {
					b.StopTimer()
					w, next = newWorker(), 0 // the samples start again: a new worker has no rates yet
					b.StartTimer()
				}
			}
			b.StopTimer()
			reportCPU(b, cpu)
			if enriched == 0 {
				b.Fatal("nothing enriched")
			}
		})
	}
}

// BenchmarkMetricsCodec: the JSON part of BenchmarkEnrichMetrics/ifmib27
// alone, on the same rows: decoding a raw row, and encoding what the worker
// publishes for it (the enriched row and its interface view), each with
// the worker's own reused Decoder and PointEncoder. Their sum is what a
// row costs before any enrichment is done; it sets how far the whole path
// can go while the values on both sides are JSON.
func BenchmarkMetricsCodec(b *testing.B) {
	recs, size := benchMetricRecords(b, benchRowShapes[0])
	w := benchMetricsWorker()
	// The Points the worker would encode, after its first poll (rates and
	// all), copied out of its reused scratch.
	clone := func(p telemetry.Point) telemetry.Point {
		p.Tags, p.Fields = slices.Clone(p.Tags), slices.Clone(p.Fields)
		p.Counters, p.Counters64 = slices.Clone(p.Counters), slices.Clone(p.Counters64)
		return p
	}
	var rows, views []telemetry.Point
	for i := range recs {
		if _, ok := w.enrich(&recs[i]); !ok {
			b.Fatal("a row was not enriched")
		}
		row := clone(w.row)
		if !w.interfaceView(&w.row, &w.view) {
			b.Fatal("a row had no interface view")
		}
		if i >= len(recs)/benchPolls {
			rows, views = append(rows, row), append(views, clone(w.view))
		}
	}
	encode := func(b *testing.B, points ...[]telemetry.Point) {
		var e telemetry.PointEncoder
		buf := make([]byte, 0, 8<<10)
		n := 0
		b.ReportAllocs()
		b.ResetTimer()
		for i := 0; i < b.N; i++ {
			for _, ps := range points {
				buf, _ = e.AppendJSON(buf[:0], &ps[i%len(ps)])
				n += len(buf)
			}
		}
		b.ReportMetric(float64(n)/float64(b.N), "B/row")
	}
	b.Run("decode", func(b *testing.B) {
		var d telemetry.Decoder
		var p telemetry.Point
		b.SetBytes(int64(size / len(recs)))
		b.ReportAllocs()
		for i := 0; i < b.N; i++ {
			if err := d.DecodePoint(recs[i%len(recs)].Value, &p); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("encode-row", func(b *testing.B) { encode(b, rows) })
	b.Run("encode-view", func(b *testing.B) { encode(b, views) })
	b.Run("encode-both", func(b *testing.B) { encode(b, rows, views) })
}

// benchRowShape is a kind of row the metric benchmarks enrich: row(p, d, i)
// is poll p's row i of device d.
type benchRowShape struct {
	name   string
	ifaces int // rows per device and poll
	row    func(p, d, i int) telemetry.Metric
}

// benchRowShapes are the rows of BenchmarkEnrichMetrics, widest first.
var benchRowShapes = []benchRowShape{
	{"ifmib27", 48, benchInterfaceRow([]string{"ifInOctets", "ifInUcastPkts", "ifInDiscards", "ifInErrors", "ifOutOctets", "ifOutUcastPkts",
		"ifOutDiscards", "ifOutErrors", "ifHCInOctets", "ifHCInUcastPkts", "ifHCInMulticastPkts", "ifHCInBroadcastPkts",
		"ifHCOutOctets", "ifHCOutUcastPkts", "ifHCOutMulticastPkts", "ifHCOutBroadcastPkts"},
		map[string]any{"ifType": int64(6), "ifMtu": int64(9216), "ifSpeed": int64(4294967295),
			"ifPhysAddress": "00:1c:73:aa:bb:cc", "ifAdminStatus": int64(1), "ifOperStatus": int64(1),
			"ifLastChange": int64(123456), "ifHighSpeed": int64(10000)}, map[string]string{"ifDescr": "Ethernet", "ifAlias": "uplink to spine"})},
	{"ifmib8", 48, benchInterfaceRow([]string{"ifHCInOctets", "ifHCOutOctets", "ifInErrors", "ifOutErrors", "ifInDiscards", "ifOutDiscards"},
		map[string]any{"ifOperStatus": int64(1), "ifHighSpeed": int64(10000)}, map[string]string{})},
	{"scalar4", 4, func(p, d, i int) telemetry.Metric {
		return telemetry.Metric{Measurement: "cisco_cpu", Tags: map[string]string{"cpmCPUTotalIndex": fmt.Sprint(i), "agent": fmt.Sprintf("10.0.%d.1", d)},
			Fields: map[string]any{"cpmCPUTotal5secRev": float64(p % 7), "cpmCPUTotal1minRev": float64(p % 5),
				"cpmCPUMemoryUsed": float64(812345 + p), "cpmCPUMemoryFree": float64(1234567 - p)}}
	}},
}

// benchInterfaceRow makes IF-MIB rows of the counters, gauges and tags
// given, as the poller writes them: counters sorted, the HC ones listed as
// Counter64.
func benchInterfaceRow(counters []string, gauges map[string]any, tags map[string]string) func(p, d, i int) telemetry.Metric {
	var wide []string
	for _, c := range counters {
		if strings.HasPrefix(c, "ifHC") {
			wide = append(wide, c)
		}
	}
	sorted, wide := slices.Sorted(slices.Values(counters)), slices.Sorted(slices.Values(wide))
	return func(p, d, i int) telemetry.Metric {
		fields := maps.Clone(gauges)
		for k, c := range counters {
			fields[c] = benchCounter(p, i, k)
		}
		t := maps.Clone(tags)
		t["ifIndex"], t["ifName"], t["agent"] = fmt.Sprint(i), fmt.Sprintf("Et%d", i), fmt.Sprintf("10.0.%d.1", d)
		return telemetry.Metric{Measurement: "snmp_interface", Tags: t, Fields: fields, Counters: sorted, Counters64: wide}
	}
}

// The metric benchmarks' devices and polls, a minute apart.
const benchDevices, benchPolls = 20, 10

// benchMetricRecords are the raw records of benchDevices devices polled
// benchPolls times, poll by poll, with their total size.
func benchMetricRecords(b testing.TB, shape benchRowShape) (recs []broker.Record, size int) {
	t0 := time.Date(2026, 11, 29, 14, 0, 0, 0, time.UTC)
	for p := 0; p < benchPolls; p++ {
		for d := 0; d < benchDevices; d++ {
			for i := 1; i <= shape.ifaces; i++ {
				m := shape.row(p, d, i)
				m.V, m.Device, m.Source = 1, fmt.Sprintf("leaf%02d", d), "snmp"
				m.Time, m.ReceivedAt = pollTime(t0, p, d, i)
				m.Uptime = uint32(100000 + p*6000)
				v, _, err := m.AppendJSON(nil, nil)
				if err != nil {
					b.Fatal(err)
				}
				recs = append(recs, broker.Record{Topic: telemetry.TopicRawSNMP, Value: v})
				size += len(v)
			}
		}
	}
	return recs, size
}

// benchMetricsWorker is a metrics worker over testInventory with the
// outputs Run would make, short of a broker.
func benchMetricsWorker() *MetricsWorker {
	inv, _ := ParseInventory([]byte(testInventory))
	w := NewMetricsWorker(nil, inv)
	w.out = newOutputs(nil, telemetry.TopicRawSNMP, w.logger, w.m, false) // as Run makes it
	return w
}

// TestArenaValuesStayIntact: values handed out by the arena are not
// overwritten by later ones, whatever their sizes.
func TestArenaValuesStayIntact(t *testing.T) {
	var a arena
	var kept [][]byte
	var want []string
	for i := 0; i < 500; i++ {
		n := (i * 977) % 5000 // some past the 2 KiB reserve, some past a chunk's rest
		if i%97 == 0 {
			n = arenaChunk + 1
		}
		start := a.start()
		if i%3 == 0 {
			start = a.startFor(n) // room asked for, as for a long syslog line
		}
		v := a.keep(append(start, bytes.Repeat([]byte{byte('a' + i%26)}, n)...))
		if cap(v) != len(v) {
			t.Fatalf("value %d: capacity %d past its length %d: an append would write into the next", i, cap(v), len(v))
		}
		kept, want = append(kept, v), append(want, strings.Repeat(string(rune('a'+i%26)), n))
	}
	for i := range kept {
		if string(kept[i]) != want[i] {
			t.Fatalf("value %d was overwritten", i)
		}
	}
}

func TestMergeTagsLaterWins(t *testing.T) {
	a := []telemetry.Tag{{Key: "agent", Value: "1"}, {Key: "site", Value: "row"}, {Key: "z", Value: "z"}}
	b := []telemetry.Tag{{Key: "region", Value: "eu"}, {Key: "site", Value: "inv"}}
	got := mergeTags(nil, a, b)
	want := []telemetry.Tag{{Key: "agent", Value: "1"}, {Key: "region", Value: "eu"}, {Key: "site", Value: "inv"}, {Key: "z", Value: "z"}}
	if !slices.Equal(got, want) {
		t.Fatalf("got %v, want %v", got, want)
	}
}

// TestRowsWithoutInterfaceHaveTheirOwnRates: rows told apart by tags other
// than an interface's (BGP peers, storage rows) each get their own rates,
// whatever order a poll lists them in.
func TestRowsWithoutInterfaceHaveTheirOwnRates(t *testing.T) {
	t0 := time.Date(2026, 11, 29, 14, 0, 0, 0, time.UTC)
	peer := func(minute int, addr string, updates uint64) broker.Record {
		m := telemetry.Metric{V: 1, Measurement: "snmp_bgp_peer", Device: "edge1",
			Tags:   map[string]string{"bgpPeerRemoteAddr": addr, "agent": "192.0.2.1"},
			Fields: map[string]any{"bgpPeerInUpdates": updates}, Counters: []string{"bgpPeerInUpdates"},
			Time: t0.Add(time.Duration(minute) * time.Minute), Source: "snmp"}
		v, _, err := m.AppendJSON(nil, nil)
		if err != nil {
			t.Fatal(err)
		}
		return broker.Record{Topic: telemetry.TopicRawSNMP, Value: v}
	}
	inv, _ := ParseInventory([]byte(testInventory))
	w := NewMetricsWorker(nil, inv)
	w.out = newOutputs(nil, telemetry.TopicRawSNMP, w.logger, w.m, false)
	metrics, _ := w.enrichBatch([]broker.Record{
		peer(0, "10.0.0.1", 100), peer(0, "10.0.0.2", 10_000),
		peer(1, "10.0.0.2", 10_060), peer(1, "10.0.0.1", 160),
	}, nil, nil)
	rates := map[string]any{}
	for _, out := range metrics[2:] {
		var m telemetry.Metric
		if err := json.Unmarshal(out.rec.Value, &m); err != nil {
			t.Fatal(err)
		}
		rates[m.Tags["bgpPeerRemoteAddr"]] = m.Fields["bgpPeerInUpdates_rate"]
	}
	if rates["10.0.0.1"] != 1.0 || rates["10.0.0.2"] != 1.0 {
		t.Fatalf("rates per peer %v, want 1/s each", rates)
	}
}

// TestClearedCountersNoPhantomUtilisation: when ifHCInOctets (a
// Counter64) is reset, ifInOctets, its low 32 bits, goes back too and
// reads as a 32-bit wrap; the normalised rate and the utilisation come
// from the best counter the row has or not at all, not from that wrap.
func TestClearedCountersNoPhantomUtilisation(t *testing.T) {
	inv, _ := ParseInventory([]byte(testInventory))
	w := NewMetricsWorker(nil, inv)
	t0 := time.Date(2026, 11, 29, 14, 0, 0, 0, time.UTC)
	row := func(sec int, hc uint64) *broker.Record {
		m := telemetry.Metric{V: 1, Measurement: "snmp_interface", Device: "edge1",
			Tags:     map[string]string{"ifName": "Fa0/1", "agent": "192.0.2.1"},
			Fields:   map[string]any{"ifHCInOctets": hc, "ifInOctets": hc & 0xffffffff, "ifHighSpeed": int64(100), "ifOperStatus": int64(1)},
			Counters: []string{"ifHCInOctets", "ifInOctets"}, Counters64: []string{"ifHCInOctets"},
			Time: t0.Add(time.Duration(sec) * time.Second), Uptime: uint32(100000 + sec*100), Source: "snmp"}
		v, _ := json.Marshal(&m)
		return &broker.Record{Topic: "raw.snmp", Value: v}
	}
	w.rates.setNow(time.Now())
	fields := func() map[string]float64 {
		out := map[string]float64{}
		for _, f := range w.row.Fields {
			if x, ok := f.Number(); ok {
				out[f.Key] = x
			}
		}
		return out
	}
	w.enrich(row(0, 3<<32+3_000_000_000))
	w.enrich(row(60, 3<<32+3_000_000_000+60_000_000))
	if f := fields(); f["in_octets_rate"] != 1_000_000 || f["in_utilization_pct"] != 8 {
		t.Fatalf("before the reset: %v", f)
	}
	w.enrich(row(120, 1000)) // counters cleared, sysUpTime going on
	for _, k := range []string{"in_octets_rate", "in_utilization_pct", "ifHCInOctets_rate"} {
		if x, ok := fields()[k]; ok {
			t.Errorf("after the counters were cleared: %s = %v, want none", k, x)
		}
	}
}

// TestStatesForgotten: the interface and reachability states and uptimes
// of devices unseen for an hour are forgotten, as their rates are, so
// memory follows the live network.
func TestStatesForgotten(t *testing.T) {
	inv, _ := ParseInventory([]byte(testInventory))
	w := NewMetricsWorker(nil, inv)
	t0 := time.Date(2026, 11, 29, 14, 0, 0, 0, time.UTC)
	row := func(dev string) *broker.Record {
		m := telemetry.Metric{V: 1, Measurement: "snmp_interface", Device: dev,
			Tags:   map[string]string{"ifName": "Gi0/1"},
			Fields: map[string]any{"ifOperStatus": int64(1)}, Time: t0, Uptime: 100, Source: "snmp"}
		v, _ := json.Marshal(&m)
		return &broker.Record{Topic: "raw.snmp", Value: v}
	}
	w.rates.setNow(t0)
	w.enrich(row("gone"))
	w.rates.setNow(t0.Add(2 * time.Hour))
	w.enrich(row("live"))
	w.forgetStates(t0.Add(time.Hour))
	if len(w.state) != 1 || len(w.uptimes) != 1 {
		t.Fatalf("%d states and %d uptimes kept, want those of the live device only", len(w.state), len(w.uptimes))
	}
	if _, ok := w.uptimes["live"]; !ok {
		t.Fatal("the live device's uptime was forgotten")
	}
}

// TestForgottenWithinTheHourAndTenMinutes: rows and states unseen for an
// hour are forgotten at the next sweep, which comes every ten minutes, not
// every hour (when a row could live on for nearly two).
func TestForgottenWithinTheHourAndTenMinutes(t *testing.T) {
	inv, _ := ParseInventory([]byte(testInventory))
	w := NewMetricsWorker(nil, inv)
	t0 := time.Date(2026, 11, 29, 14, 0, 0, 0, time.UTC)
	m := telemetry.Metric{V: 1, Measurement: "snmp_interface", Device: "gone",
		Tags:   map[string]string{"ifName": "Gi0/1"},
		Fields: map[string]any{"ifOperStatus": int64(1), "ifHCInOctets": uint64(1)}, Counters: []string{"ifHCInOctets"},
		Time: t0, Uptime: 100, Source: "snmp"}
	v, _ := json.Marshal(&m)
	w.sweepForgotten(t0) // the first sweep
	w.rates.setNow(t0.Add(time.Minute))
	w.enrich(&broker.Record{Topic: "raw.snmp", Value: v})
	for now := t0.Add(2 * time.Minute); now.Before(t0.Add(time.Minute + time.Hour)); now = now.Add(time.Minute) {
		w.sweepForgotten(now)
		if len(w.rates.rows) != 1 || len(w.state) != 1 {
			t.Fatalf("at %v, %v after the row's record: %d rows and %d states kept, want 1 and 1",
				now, now.Sub(t0.Add(time.Minute)), len(w.rates.rows), len(w.state))
		}
	}
	// The README's promise: gone by an hour and ten minutes.
	for now := t0.Add(time.Minute + time.Hour); !now.After(t0.Add(time.Minute + 70*time.Minute)); now = now.Add(time.Minute) {
		w.sweepForgotten(now)
	}
	if len(w.rates.rows) != 0 || len(w.state) != 0 || len(w.uptimes) != 0 {
		t.Fatalf("70m after the row's record: %d rows, %d states and %d uptimes kept, want none",
			len(w.rates.rows), len(w.state), len(w.uptimes))
	}
}

// A target polled under its own name but found in the inventory (here by
// its agent's address) gives records and events under the inventory name,
// as syslog and traps do, so the same link down from both is one event;
// its state (here sysUpTime) stays its own.
func TestMetricsTakeInventoryName(t *testing.T) {
	b, err := embedded.Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	t0 := time.Date(2026, 11, 29, 14, 0, 0, 0, time.UTC)
	row := func(sec int, oper int64, uptime uint32) telemetry.Metric {
		return telemetry.Metric{V: 1, Measurement: "snmp_interface", Device: "edge1-snmp",
			Tags:   map[string]string{"ifName": "Gi0/1", "agent": "192.0.2.1"},
			Fields: map[string]any{"ifOperStatus": oper}, Time: t0.Add(time.Duration(sec) * time.Second), Uptime: uptime, Source: "snmp"}
	}
	var recs []broker.Record
	for _, m := range []telemetry.Metric{row(0, 1, 1000), row(60, 2, 7000), row(120, 2, 500)} {
		v, _ := json.Marshal(&m)
		recs = append(recs, broker.Record{Key: []byte(m.Device), Value: v})
	}
	if err := b.Produce(context.Background(), telemetry.TopicRawSNMP, recs); err != nil {
		t.Fatal(err)
	}
	runMetricsWorker(t, b, func() bool { return len(readTopic(t, b, telemetry.TopicEvents)) >= 2 })
	for _, r := range readTopic(t, b, telemetry.TopicEnrichedMetrics) {
		var m telemetry.Metric
		if err := json.Unmarshal(r.Value, &m); err != nil {
			t.Fatal(err)
		}
		if m.Device != "edge1" || string(r.Key) != "edge1" || m.Tags["target"] != "edge1-snmp" {
			t.Errorf("enriched %s record of device %q, key %q, tags %v; want edge1, and the target's name in tag target",
				m.Measurement, m.Device, r.Key, m.Tags)
		}
	}
	var got []string
	for _, r := range readTopic(t, b, telemetry.TopicEvents) {
		var ev telemetry.Event
		json.Unmarshal(r.Value, &ev)
		got = append(got, ev.Device+" "+ev.Type+" "+ev.Object)
	}
	slices.Sort(got)
	if want := []string{"edge1 device_rebooted ", "edge1 interface_down Gi0/1"}; !slices.Equal(got, want) {
		t.Errorf("events %q, want %q", got, want)
	}
}

// Two targets that poll one device (found in the inventory by the same
// agent address) keep their own state: their sysUpTimes, interleaved, are
// not taken for a reboot, though their records share the inventory name.
func TestMetricsStateKeyedByTarget(t *testing.T) {
	b, err := embedded.Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	t0 := time.Date(2026, 11, 29, 14, 0, 0, 0, time.UTC)
	status := func(target string, sec int, uptime uint32) telemetry.Metric {
		return telemetry.Metric{V: 1, Measurement: "snmp_status", Device: target, Tags: map[string]string{"agent": "192.0.2.1"},
			Fields: map[string]any{"snmp_up": int64(1)}, Time: t0.Add(time.Duration(sec) * time.Second), Uptime: uptime, Source: "snmp"}
	}
	var recs []broker.Record
	for i, m := range []telemetry.Metric{status("a", 0, 9000), status("b", 1, 100), status("a", 60, 15000), status("b", 61, 6100)} {
		v, _ := json.Marshal(&m)
		recs = append(recs, broker.Record{Key: []byte("edge1"), Value: v, Timestamp: t0.Add(time.Duration(i) * time.Second)})
	}
	if err := b.Produce(context.Background(), telemetry.TopicRawSNMP, recs); err != nil {
		t.Fatal(err)
	}
	runMetricsWorker(t, b, func() bool { return len(readTopic(t, b, telemetry.TopicEnrichedMetrics)) >= 4 })
	targets := map[string]int{}
	for _, r := range readTopic(t, b, telemetry.TopicEnrichedMetrics) {
		var m telemetry.Metric
		if err := json.Unmarshal(r.Value, &m); err != nil {
			t.Fatal(err)
		}
		targets[m.Device+"/"+m.Tags["target"]]++
	}
	// One device, two series: the target tag tells them apart.
	if len(targets) != 2 || targets["edge1/a"] != 2 || targets["edge1/b"] != 2 {
		t.Fatalf("enriched records by device/target: %v", targets)
	}
	for _, r := range readTopic(t, b, telemetry.TopicEvents) {
		t.Errorf("event %s: two targets' uptimes taken for one device's", r.Value)
	}
}

// runMetricsWorker runs a metrics worker over b, with the test inventory,
// until done holds (10 s at most), and stops it.
func runMetricsWorker(t *testing.T, b broker.Broker, done func() bool) {
	t.Helper()
	inv, _ := ParseInventory([]byte(testInventory))
	w := NewMetricsWorker(b, inv)
	ctx, cancel := context.WithCancel(context.Background())
	stopped := make(chan struct{})
	go func() { w.Run(ctx); close(stopped) }()
	for deadline := time.Now().Add(10 * time.Second); !done() && time.Now().Before(deadline); {
		time.Sleep(20 * time.Millisecond)
	}
	cancel()
	<-stopped
}

// TestDeviceRebootedFromSysUpTime: sysUpTime going back raises
// device_rebooted, once, also from 300 days up; sysUpTime wrapping past
// 2^32 hundredths (after 497 days up) does not, nor does a row without
// one, nor an older poll read after a newer one, nor a sysUpTime standing
// still; a poll stamped ahead of weir's clock does not hide the next reboot.
func TestDeviceRebootedFromSysUpTime(t *testing.T) {
	inv, _ := ParseInventory([]byte(testInventory))
	t0 := time.Date(2026, 11, 29, 14, 0, 0, 0, time.UTC)
	const day = 24 * 3600 * 100
	for _, tc := range []struct {
		name    string
		uptimes []uint32
		want    []bool // device_rebooted at each poll
		minutes []int  // when each poll ran; nil: a minute apart
	}{
		{"steady", []uint32{1000, 7000, 13000}, []bool{false, false, false}, nil},
		{"rebooted", []uint32{900000, 906000, 500, 6500}, []bool{false, false, true, false}, nil},
		{"sysUpTime wraps", []uint32{4_294_961_000, 4_294_965_000, 3704}, []bool{false, false, false}, nil},
		{"no sysUpTime", []uint32{9000, 0, 15000}, []bool{false, false, false}, nil},
		// Back by more than 2^31 hundredths, as no wrap goes.
		{"rebooted after 300 days up", []uint32{300 * day, 300*day + 6000, 500}, []bool{false, false, true}, nil},
		// Five minutes between polls, sysUpTime standing still.
		{"sysUpTime standing still", []uint32{6000, 6000, 6000}, []bool{false, false, false}, []int{0, 5, 10}},
		{"a slow poll", []uint32{6000, 12000, 24000}, []bool{false, false, false}, []int{0, 1, 3}},
		{"an older poll read after", []uint32{12000, 6000, 18000}, []bool{false, false, false}, []int{1, 0, 2}},
		// weir's clock (the poller's) jumped a year ahead for one poll,
		// and back: the polls after it still tell a reboot.
		{"a poll stamped a year ahead", []uint32{6000, 12000, 18000, 500}, []bool{false, false, false, true}, []int{0, 525_600, 2, 3}},
	} {
		w := NewMetricsWorker(nil, inv)
		for i, up := range tc.uptimes {
			at := t0.Add(time.Duration(i) * time.Minute)
			if tc.minutes != nil {
				at = t0.Add(time.Duration(tc.minutes[i]) * time.Minute)
			}
			w.rates.setNow(at.Add(time.Second)) // SNMP times are weir's clock
			m := telemetry.Metric{V: 1, Measurement: "snmp_status", Device: "edge1", Tags: map[string]string{"agent": "192.0.2.1"},
				Fields: map[string]any{"snmp_up": int64(1)}, Time: at, Uptime: up, Source: "snmp"}
			v, _ := json.Marshal(&m)
			evs, ok := w.enrich(&broker.Record{Topic: telemetry.TopicRawSNMP, Offset: int64(i), Value: v})
			if !ok {
				t.Fatalf("%s: poll %d not enriched", tc.name, i)
			}
			rebooted := len(evs) == 1 && evs[0].Type == "device_rebooted" && evs[0].Device == "edge1"
			if rebooted != tc.want[i] || len(evs) > 1 || len(evs) == 1 && !rebooted {
				t.Errorf("%s: poll %d (sysUpTime %d): events %+v, want rebooted %v", tc.name, i, up, evs, tc.want[i])
			}
		}
	}
}

// TestUtilisationSpeed: utilisation is of ifHighSpeed (Mbit/s), else of
// ifSpeed (bit/s) when ifHighSpeed is missing or 0 (an agent without
// ifXTable); a saturated ifSpeed (2^32-1: faster than 4 Gbit/s) without
// ifHighSpeed is no speed, so no utilisation.
func TestUtilisationSpeed(t *testing.T) {
	inv, _ := ParseInventory([]byte(testInventory))
	t0 := time.Date(2026, 11, 29, 14, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		name      string
		speed     map[string]any
		mbps, pct float64 // 0: none
	}{
		{"ifHighSpeed", map[string]any{"ifHighSpeed": int64(10000), "ifSpeed": int64(4294967295)}, 10000, 0.1},
		{"ifSpeed alone", map[string]any{"ifSpeed": int64(100_000_000)}, 100, 10},
		{"ifHighSpeed 0", map[string]any{"ifHighSpeed": int64(0), "ifSpeed": int64(100_000_000)}, 100, 10},
		{"ifSpeed saturated", map[string]any{"ifSpeed": int64(4294967295)}, 0, 0},
		{"no speed", map[string]any{}, 0, 0},
	} {
		w := NewMetricsWorker(nil, inv)
		w.rates.setNow(t0)
		for i, in := range []uint64{1000, 1000 + 75_000_000} { // 10 Mbit/s
			fields := map[string]any{"ifHCInOctets": in}
			maps.Copy(fields, tc.speed)
			m := telemetry.Metric{V: 1, Measurement: "snmp_interface", Device: "edge1", Tags: map[string]string{"ifName": "Gi0/1"},
				Fields: fields, Counters: []string{"ifHCInOctets"}, Time: t0.Add(time.Duration(i) * time.Minute), Source: "snmp"}
			v, _ := json.Marshal(&m)
			if _, ok := w.enrich(&broker.Record{Topic: telemetry.TopicRawSNMP, Value: v}); !ok {
				t.Fatalf("%s: not enriched", tc.name)
			}
		}
		got := func(k string) float64 {
			f, ok := w.row.Field(k)
			if !ok {
				return 0
			}
			x, _ := f.Number()
			return x
		}
		if got("in_octets_rate") != 1_250_000 || got("speed_mbps") != tc.mbps || math.Abs(got("in_utilization_pct")-tc.pct) > 1e-9 {
			t.Errorf("%s: in_octets_rate %v, speed_mbps %v, in_utilization_pct %v; want 1250000, %v, %v",
				tc.name, got("in_octets_rate"), got("speed_mbps"), got("in_utilization_pct"), tc.mbps, tc.pct)
		}
	}
}

// TestIfOperStatusEvents: ifOperStatus reads as gNMI's oper-status does:
// up(1) is up; down(2), notPresent(6) and lowerLayerDown(7) are down;
// testing(3), unknown(4) and dormant(5) raise nothing, and a change from
// up to down across them is one interface_down. The first status seen is
// the baseline.
func TestIfOperStatusEvents(t *testing.T) {
	inv, _ := ParseInventory([]byte(testInventory))
	t0 := time.Date(2026, 11, 29, 14, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		statuses []int64
		want     []string // the event of each poll, "" for none
	}{
		{[]int64{1, 2, 1}, []string{"", "interface_down", "interface_up"}},
		{[]int64{1, 7, 1}, []string{"", "interface_down", "interface_up"}},
		{[]int64{1, 6, 2, 1}, []string{"", "interface_down", "", "interface_up"}},
		{[]int64{2, 7, 2}, []string{"", "", ""}},
		{[]int64{1, 5, 1}, []string{"", "", ""}},
		{[]int64{1, 3, 2, 4, 1}, []string{"", "", "interface_down", "", "interface_up"}},
	} {
		w := NewMetricsWorker(nil, inv)
		w.rates.setNow(t0)
		for i, st := range tc.statuses {
			m := telemetry.Metric{V: 1, Measurement: "snmp_interface", Device: "edge1", Tags: map[string]string{"ifName": "Gi0/1", "agent": "192.0.2.1"},
				Fields: map[string]any{"ifOperStatus": st}, Time: t0.Add(time.Duration(i) * time.Minute), Source: "snmp"}
			v, _ := json.Marshal(&m)
			evs, ok := w.enrich(&broker.Record{Topic: telemetry.TopicRawSNMP, Offset: int64(i), Value: v})
			if !ok {
				t.Fatalf("%v: poll %d not enriched", tc.statuses, i)
			}
			got := ""
			for _, ev := range evs {
				got += ev.Type
				if ev.Object != "Gi0/1" {
					t.Errorf("%v: poll %d: event %+v", tc.statuses, i, ev)
				}
			}
			if got != tc.want[i] {
				t.Errorf("%v: poll %d (ifOperStatus %d): event %q, want %q", tc.statuses, i, st, got, tc.want[i])
			}
			if f, ok := w.row.Field("oper_up"); !ok || f.Kind != telemetry.FieldBool || f.Bool() != (st == 1) {
				t.Errorf("%v: poll %d: oper_up %+v", tc.statuses, i, f)
			}
		}
	}
}

// TestMetricsEventsShareTheDetector: a metrics worker's state changes go
// through the detector the other workers share: the link down an SNMP poll
// shows seconds after the syslog line said it is not published again, and
// SNMP changes count towards flapping with the syslog one.
func TestMetricsEventsShareTheDetector(t *testing.T) {
	inv, _ := ParseInventory([]byte(testInventory))
	rules := NewEventRules(30*time.Second, 5, 10*time.Minute)
	t0 := time.Date(2026, 11, 29, 14, 0, 0, 0, time.UTC)
	sys := telemetry.Event{Type: "interface_down", Device: "edge1", Object: "GigabitEthernet0/1", Time: t0,
		Cause: telemetry.Cause{Topic: telemetry.TopicRawSyslog, Offset: 0}}
	if n := len(rules.d.observe(sys, t0)); n != 1 {
		t.Fatalf("the syslog line's event: %d events", n)
	}
	w := NewMetricsWorker(nil, inv, WithSharedEventRules(rules))
	w.out = newOutputs(nil, telemetry.TopicRawSNMP, w.logger, w.m, false) // as Run makes it
	w.rates.setNow(t0)
	var recs []broker.Record
	for i, st := range []int64{1, 2, 1, 2, 1, 2, 1} {
		at := t0.Add(-time.Minute + time.Duration(i)*time.Minute + 5*time.Second)
		if i == 0 {
			at = t0.Add(-time.Minute) // the baseline, before the link went down
		}
		m := telemetry.Metric{V: 1, Measurement: "snmp_interface", Device: "edge1", Tags: map[string]string{"ifName": "Gi0/1", "agent": "192.0.2.1"},
			Fields: map[string]any{"ifOperStatus": st}, Time: at, Source: "snmp"}
		v, _ := json.Marshal(&m)
		recs = append(recs, broker.Record{Topic: telemetry.TopicRawSNMP, Offset: int64(i), Timestamp: at, Value: v})
	}
	_, events := w.enrichBatch(recs, nil, nil)
	var got []string
	for _, out := range events {
		var ev telemetry.Event
		if err := json.Unmarshal(out.rec.Value, &ev); err != nil {
			t.Fatal(err)
		}
		got = append(got, ev.Type)
		if ev.Type == "interface_flapping" && ev.Count != 6 {
			t.Errorf("flapping count %d, want 6", ev.Count)
		}
	}
	want := []string{"interface_up", "interface_down", "interface_up", "interface_down", "interface_up", "interface_flapping"}
	if !slices.Equal(got, want) {
		t.Errorf("published %v, want %v: the first down was the syslog line's", got, want)
	}
}

// TestMetricsMatchInventoryBySysName: a target whose name and address the
// inventory does not list, but whose sysName it does (in any case, with or
// without the domain), takes that entry from its system row on: its rows
// carry the inventory's name and tags, and keep the target's name in a
// target tag.
func TestMetricsMatchInventoryBySysName(t *testing.T) {
	inv, err := ParseInventory([]byte("devices:\n  - {name: core1.fra.example.net, site: fra1, role: core}\n  - {name: lab, cidr: 10.0.0.0/8, site: lab}\n"))
	if err != nil {
		t.Fatal(err)
	}
	t0 := time.Date(2026, 11, 29, 14, 0, 0, 0, time.UTC)
	for _, c := range []struct{ agent, sysName, device, site string }{
		{"192.0.2.50", "core1.fra.example.net", "core1.fra.example.net", "fra1"},
		{"192.0.2.50", "CORE1", "core1.fra.example.net", "fra1"},               // the first label, in capitals
		{"10.1.2.3", "core1.fra.example.net", "core1.fra.example.net", "fra1"}, // a name beats a CIDR
		{"10.1.2.3", "other", "fra-core1", "lab"},
		{"192.0.2.50", "", "fra-core1", ""}, // no sysName: unknown
	} {
		w := NewMetricsWorker(nil, inv)
		var got telemetry.Point
		for _, m := range []telemetry.Metric{
			{V: 1, Measurement: "snmp_system", Device: "fra-core1", Source: "snmp", Tags: map[string]string{"agent": c.agent},
				Fields: map[string]any{"sysName": c.sysName, "sysUpTime": float64(1000)}, Time: t0},
			{V: 1, Measurement: "snmp_interface", Device: "fra-core1", Source: "snmp", Tags: map[string]string{"agent": c.agent, "ifIndex": "1", "ifName": "Gi0/1"},
				Fields: map[string]any{"ifOperStatus": int64(1)}, Time: t0},
		} {
			v, _ := json.Marshal(&m)
			if _, ok := w.enrich(&broker.Record{Topic: telemetry.TopicRawSNMP, Value: v}); !ok {
				t.Fatalf("%+v: not enriched", c)
			}
			got = w.row
		}
		tags := tagMap(got.Tags)
		if got.Device != c.device || tags["site"] != c.site {
			t.Errorf("sysName %q from %s: device %q site %q, want %q %q", c.sysName, c.agent, got.Device, tags["site"], c.device, c.site)
		}
		if got.Device != "fra-core1" && tags["target"] != "fra-core1" {
			t.Errorf("sysName %q: renamed without a target tag: %v", c.sysName, tags)
		}
	}
}

// TestOneRebootOneEventFromAClockAhead: polls stamped ten minutes or more
// ahead of the enricher's clock (a collector's clock that stays ahead),
// a reboot, then an older poll read late: the late poll is ignored, as
// with clocks that agree, and the reboot is one event, not two.
func TestOneRebootOneEventFromAClockAhead(t *testing.T) {
	inv, _ := ParseInventory([]byte(testInventory))
	t0 := time.Date(2026, 11, 29, 14, 0, 0, 0, time.UTC)
	uptimes := []uint32{900000, 906000, 500, 906000, 6500}
	minutes := []int{10, 11, 12, 11, 13} // poll 3 is poll 1 read again, late
	for _, skew := range []time.Duration{30 * time.Minute, 0} {
		w := NewMetricsWorker(nil, inv)
		w.rates.setNow(t0.Add(skew)) // skew 0: polls 10-13 minutes ahead
		n := 0
		for i, up := range uptimes {
			m := telemetry.Metric{V: 1, Measurement: "snmp_status", Device: "edge1", Tags: map[string]string{"agent": "192.0.2.1"},
				Fields: map[string]any{"snmp_up": int64(1)}, Time: t0.Add(time.Duration(minutes[i]) * time.Minute), Uptime: up, Source: "snmp"}
			v, _ := json.Marshal(&m)
			evs, _ := w.enrich(&broker.Record{Topic: telemetry.TopicRawSNMP, Offset: int64(i), Value: v})
			for _, e := range evs {
				if e.Type == "device_rebooted" {
					n++
				}
			}
		}
		if n != 1 {
			t.Errorf("weir's clock %v after t0: %d device_rebooted for one reboot, want 1", skew, n)
		}
	}
}

// TestLookupTargetFollowsReload: the worker's last look-up of a target is
// its entry until the inventory is reloaded, and the new entry after.
func TestLookupTargetFollowsReload(t *testing.T) {
	path := filepath.Join(t.TempDir(), "inventory.yaml")
	write := func(site string) {
		if err := os.WriteFile(path, []byte("devices:\n  - {name: leaf1, site: "+site+"}\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("ams1")
	inv, err := LoadInventory(path, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	w := NewMetricsWorker(nil, inv)
	before := w.lookupTarget("leaf1", "10.0.0.1")
	if before == nil || before != inv.LookupTarget("leaf1", "10.0.0.1") || w.lookupTarget("leaf1", "10.0.0.1") != before {
		t.Fatalf("before the reload: %+v", before)
	}
	write("fra1")
	if err := inv.Reload(); err != nil {
		t.Fatal(err)
	}
	if after := w.lookupTarget("leaf1", "10.0.0.1"); after == before || after != inv.LookupTarget("leaf1", "10.0.0.1") {
		t.Fatalf("after the reload: %+v, the entry before %+v", after, before)
	}
	if d := w.lookupTarget("leaf2", "10.0.0.1"); d != nil {
		t.Fatalf("another target: %+v", d)
	}
}
