// Package enrichbench measures enrichment end to end on the embedded
// broker, one worker, and prints the figures as a table: `make bench` runs
// it. Unlike the Go benchmarks in enrich, the figures include the broker:
// polling the raw topic, publishing the enriched records and events, and
// committing, as `weir run` does.
//
//	WEIR_BENCH=1 go test -run TestEnrichFigures -v -timeout 30m ./internal/enrichbench
//
// WEIR_BENCH_ENRICH_RECORDS sets the records per run (default 500,000);
// -run TestEnrichFigures/syslog (or /ifmib27, /scalar4) runs one figure;
// WEIR_BENCH_DIR=/dev/shm puts the log on a tmpfs, to leave the disk out;
// WEIR_BENCH_WARMUP=0 leaves out the unreported first run.
package enrichbench

import (
	"context"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"text/tabwriter"
	"time"

	"github.com/weirnet/weir/broker"
	"github.com/weirnet/weir/broker/embedded"
	"github.com/weirnet/weir/collectors/syslog"
	"github.com/weirnet/weir/enrich"
	"github.com/weirnet/weir/internal/corpus"
	"github.com/weirnet/weir/telemetry"
)

const inventory = `
devices:
  - {cidr: 10.0.0.0/8, site: lab, role: access}
  - {cidr: 192.0.2.0/24, site: ams1, role: edge}
`

// devices the records are spread over, as many as a mid-size network.
const devices = 1000

func TestEnrichFigures(t *testing.T) {
	if os.Getenv("WEIR_BENCH") == "" {
		t.Skip("set WEIR_BENCH=1 (make bench)")
	}
	n := 500_000
	if v, err := strconv.Atoi(os.Getenv("WEIR_BENCH_ENRICH_RECORDS")); err == nil && v > 0 {
		n = v
	}
	inv, err := enrich.ParseInventory([]byte(inventory))
	if err != nil {
		t.Fatal(err)
	}
	type figure struct {
		id, name, input, output, target string
		records                         func() []broker.Record
		perInput                        int // output records per input record
		worker                          func(b broker.Broker) interface{ Run(context.Context) error }
	}
	figures := []figure{
		{"syslog", "syslog, corpus mix", telemetry.TopicRawSyslog, telemetry.TopicEnrichedSyslog, "250,000/s",
			func() []broker.Record { return syslogRecords(t, n) }, 1, func(b broker.Broker) interface{ Run(context.Context) error } {
				return enrich.NewWorker(b, inv, enrich.NewClassifier())
			}},
		{"ifmib27", "metrics, IF-MIB rows of 27 columns", telemetry.TopicRawSNMP, telemetry.TopicEnrichedMetrics, "500,000/s",
			func() []broker.Record { return metricRecords(t, n, ifMIB27) }, 2, func(b broker.Broker) interface{ Run(context.Context) error } {
				return enrich.NewMetricsWorker(b, inv)
			}},
		{"scalar4", "metrics, CPU/memory rows of 4 gauges", telemetry.TopicRawSNMP, telemetry.TopicEnrichedMetrics, "500,000/s",
			func() []broker.Record { return metricRecords(t, n, scalar4) }, 1, func(b broker.Broker) interface{ Run(context.Context) error } {
				return enrich.NewMetricsWorker(b, inv)
			}},
	}
	if os.Getenv("WEIR_BENCH_WARMUP") != "0" {
		// A first run of the syslog figure, not reported: the first
		// run of a freshly built binary was the slowest every time
		// (syslog a third slower; a warm-up of 200,000 records was not
		// enough), as it grows the heap and the page cache into memory
		// the VM's host supplies anew (see the README's "Measuring on
		// this machine").
		f := figures[0]
		run(t, f.input, f.output, f.records(), f.perInput, f.worker)
	}
	tw := tabwriter.NewWriter(os.Stdout, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "input\trecords\tseconds\trecords/s\tCPU µs/record\tevents\ttarget")
	for _, f := range figures {
		// A subtest each: -run TestEnrichFigures/syslog runs one.
		t.Run(f.id, func(t *testing.T) {
			recs := f.records()
			secs, cpu, events := run(t, f.input, f.output, recs, f.perInput, f.worker)
			fmt.Fprintf(tw, "%s\t%d\t%.2f\t%.0f\t%.1f\t%d\t%s\n", f.name, len(recs), secs, float64(len(recs))/secs,
				cpu.Seconds()*1e6/float64(len(recs)), events, f.target)
		})
	}
	tw.Flush()
}

// run fills input with recs, then times one worker from its start until
// it has published perInput records of output per input record.
func run(t *testing.T, input, output string, recs []broker.Record, perInput int,
	worker func(broker.Broker) interface{ Run(context.Context) error }) (secs float64, cpu time.Duration, events int64) {
	dir := t.TempDir()
	if base := os.Getenv("WEIR_BENCH_DIR"); base != "" {
		// A tmpfs (/dev/shm) leaves the disk out of the figure: on this
		// VM, writing back a gigabyte of dirty pages sets the pace.
		var err error
		if dir, err = os.MkdirTemp(base, "enrichbench"); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { os.RemoveAll(dir) })
	}
	b, err := embedded.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	ctx := context.Background()
	for i := 0; i < len(recs); i += 5000 {
		if err := b.Produce(ctx, input, recs[i:min(i+5000, len(recs))]); err != nil {
			t.Fatal(err)
		}
	}
	wctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	start, cpu0 := time.Now(), processCPU()
	go func() { worker(b).Run(wctx); close(done) }()
	defer func() { cancel(); <-done }()
	want := int64(len(recs) * perInput)
	for deadline := start.Add(10 * time.Minute); ; time.Sleep(5 * time.Millisecond) {
		if got := endOffsets(t, b, output); got >= want {
			break
		} else if time.Now().After(deadline) {
			t.Fatalf("%s: %d of %d records published", output, got, want)
		}
	}
	secs, cpu = time.Since(start).Seconds(), processCPU()-cpu0
	return secs, cpu, endOffsets(t, b, telemetry.TopicEvents)
}

func endOffsets(t *testing.T, b broker.Broker, topic string) int64 {
	infos, err := b.DescribeTopics(context.Background(), topic)
	if err != nil {
		return 0 // not created yet
	}
	var n int64
	for _, p := range infos[0].Partitions {
		n += p.HighWatermark - p.LogStartOffset
	}
	return n
}

func processCPU() time.Duration {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// syslogRecords makes n raw.syslog records of the corpus lines in turn,
// as the syslog collector publishes them, from devices hosts.
func syslogRecords(t *testing.T, n int) []broker.Record {
	lines, err := corpus.Syslog()
	if err != nil {
		t.Fatal(err)
	}
	var p syslog.Parser
	received := time.Now()
	recs := make([]broker.Record, 0, n)
	for i := range n {
		var l telemetry.Log
		p.ParseCopy([]byte(lines[i%len(lines)].Raw), &l)
		l.Device = fmt.Sprintf("dev%04d", i%devices)
		l.SourceAddr, l.Listener, l.ReceivedAt = fmt.Sprintf("10.1.%d.%d:514", i%devices/250, i%250), "udp", received
		recs = append(recs, broker.Record{Key: []byte(l.Device), Value: l.AppendJSON(nil),
			Headers: []broker.Header{{Key: telemetry.HeaderSchema, Value: []byte(telemetry.SchemaLog)}}})
	}
	return recs
}

// A row shape: the measurement, tags and fields of poll p of row i.
type rowShape func(p, i int) telemetry.Metric

func ifMIB27(p, i int) telemetry.Metric {
	counters := []string{"ifInOctets", "ifInUcastPkts", "ifInDiscards", "ifInErrors", "ifOutOctets", "ifOutUcastPkts",
		"ifOutDiscards", "ifOutErrors", "ifHCInOctets", "ifHCInUcastPkts", "ifHCInMulticastPkts", "ifHCInBroadcastPkts",
		"ifHCOutOctets", "ifHCOutUcastPkts", "ifHCOutMulticastPkts", "ifHCOutBroadcastPkts"}
	fields := map[string]any{"ifType": int64(6), "ifMtu": int64(9216), "ifSpeed": int64(4294967295),
		"ifPhysAddress": "00:1c:73:aa:bb:cc", "ifAdminStatus": int64(1), "ifOperStatus": int64(1),
		"ifLastChange": int64(123456), "ifHighSpeed": int64(10000)}
	for k, c := range counters {
		// Growing unevenly, so rates are fractions as from real devices.
		fields[c] = uint64(p*(60_000_000*(k+1)+12_347*i) + (p*p*37+k*i)%1000 + i*1000)
	}
	// Sorted, with the HC ones as Counter64, as the poller writes them.
	var wide []string
	for _, c := range counters {
		if strings.HasPrefix(c, "ifHC") {
			wide = append(wide, c)
		}
	}
	slices.Sort(counters)
	slices.Sort(wide)
	return telemetry.Metric{Measurement: "snmp_interface", Fields: fields, Counters: counters, Counters64: wide,
		Tags: map[string]string{"ifIndex": strconv.Itoa(i), "ifName": fmt.Sprintf("Et%d", i),
			"ifDescr": fmt.Sprintf("Ethernet%d", i), "ifAlias": "uplink to spine"}}
}

func scalar4(p, i int) telemetry.Metric {
	return telemetry.Metric{Measurement: "cisco_cpu", Tags: map[string]string{"cpmCPUTotalIndex": strconv.Itoa(i)},
		Fields: map[string]any{"cpmCPUTotal5secRev": float64(p % 7), "cpmCPUTotal1minRev": float64(p % 5),
			"cpmCPUMemoryUsed": float64(812345 + p), "cpmCPUMemoryFree": float64(1234567 - p)}}
}

// metricRecords makes n raw.snmp records: polls a minute apart of 48 rows
// on each device, as the SNMP poller publishes them.
func metricRecords(t *testing.T, n int, shape rowShape) []broker.Record {
	const rows = 48
	t0 := time.Now().Add(-24 * time.Hour).Truncate(time.Minute)
	recs := make([]broker.Record, 0, n)
	var keys []string
	for p := 0; len(recs) < n; p++ {
		for d := 0; d < devices && len(recs) < n; d++ {
			// As from the poller: a poll's start, a few milliseconds off
			// the minute, to the nanosecond, and each row's own
			// received_at.
			at := t0.Add(time.Duration(p)*time.Minute + time.Duration((p*7919+d*104_729)%40_000_000))
			for i := 1; i <= rows && len(recs) < n; i++ {
				m := shape(p, i)
				m.V, m.Device, m.Source, m.Time, m.Uptime = telemetry.Version, fmt.Sprintf("dev%04d", d), "snmp", at, uint32(100000+p*6000)
				m.ReceivedAt = at.Add(3*time.Millisecond + time.Duration(i*20_011))
				m.Tags["agent"] = fmt.Sprintf("10.1.%d.%d", d/250, d%250)
				var v []byte
				var err error
				if v, keys, err = m.AppendJSON(nil, keys); err != nil {
					t.Fatal(err)
				}
				recs = append(recs, broker.Record{Key: []byte(m.Device), Value: v,
					Headers: []broker.Header{{Key: telemetry.HeaderSchema, Value: []byte(telemetry.SchemaMetric)}}})
			}
		}
	}
	return recs
}
