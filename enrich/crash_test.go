package enrich

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/weirnet/weir/broker"
	"github.com/weirnet/weir/broker/embedded"
	"github.com/weirnet/weir/collectors/syslog"
	"github.com/weirnet/weir/telemetry"
)

const (
	crashDirEnv  = "WEIR_ENRICH_CRASH_DIR"
	crashKindEnv = "WEIR_ENRICH_CRASH_KIND" // "syslog" (default) or "metrics"
)

// TestEnrichCrashChild runs two workers on a data directory until killed,
// printing "published N" whenever the output topic has grown to N
// records, so the test can kill it mid-work; it does nothing in a normal
// test run.
func TestEnrichCrashChild(t *testing.T) {
	dir := os.Getenv(crashDirEnv)
	if dir == "" {
		t.Skip("run by TestExactlyOnceUnderKill")
	}
	b, err := embedded.Open(dir)
	if err != nil {
		fmt.Println("open:", err)
		os.Exit(2)
	}
	inv, _ := ParseInventory([]byte(testInventory))
	cls := NewClassifier()
	output := telemetry.TopicEnrichedSyslog
	for i := range 2 {
		// No de-duplication: every input line with an event must give
		// exactly one event, so the count is checkable.
		opts := []WorkerOption{WithEventRules(-1, 0, time.Minute), WithMemberID(fmt.Sprint("w", i))}
		if os.Getenv(crashKindEnv) == "metrics" {
			output = telemetry.TopicEnrichedMetrics
			go NewMetricsWorker(b, inv, opts...).Run(context.Background())
		} else {
			go NewWorker(b, inv, cls, opts...).Run(context.Background())
		}
	}
	for last := -1; ; time.Sleep(time.Millisecond) { // until SIGKILL
		if n := countRecords(t, b, output); n != last {
			fmt.Printf("published %d\n", n)
			last = n
		}
	}
}

// killUntilDone runs the crash child of kind on dir 20 times and kills
// each run with SIGKILL at a random point of its work: once the output
// topic has grown by a random number of records, before it holds all
// (perInput for each input record). addInput adds batch input records,
// before the first run and whenever less than half a batch's work is left,
// so every kill finds work pending. Then it lets the child run until the
// output is complete, and returns the number of input records.
func killUntilDone(t *testing.T, dir, kind, topic string, perInput, batch int, addInput func(b *embedded.Broker, n int)) int {
	t.Helper()
	// run starts the child and kills it once it reports at least
	// target records published.
	run := func(target int) {
		cmd := exec.Command(os.Args[0], "-test.run=^TestEnrichCrashChild$", "-test.count=1")
		cmd.Env = append(os.Environ(), crashDirEnv+"="+dir, crashKindEnv+"="+kind)
		cmd.Stderr = os.Stderr
		out, err := cmd.StdoutPipe()
		if err != nil {
			t.Fatal(err)
		}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		defer cmd.Wait()
		defer cmd.Process.Signal(syscall.SIGKILL)
		timeout := time.AfterFunc(2*time.Minute, func() { cmd.Process.Signal(syscall.SIGKILL) })
		defer timeout.Stop()
		for sc := bufio.NewScanner(out); sc.Scan(); {
			var n int
			if _, err := fmt.Sscanf(sc.Text(), "published %d", &n); err != nil {
				continue
			}
			if n >= target {
				return
			}
		}
	}
	published := func() int {
		b, err := embedded.Open(dir)
		if err != nil {
			t.Fatal(err)
		}
		defer b.Close()
		return countRecords(t, b, topic)
	}
	inputs, done := 0, 0
	for range 20 {
		if perInput*inputs-done < perInput*batch/2 {
			b, err := embedded.Open(dir)
			if err != nil {
				t.Fatal(err)
			}
			addInput(b, batch)
			inputs += batch
			b.Close()
		}
		left := perInput*inputs - done
		run(done + 1 + rand.IntN(max(1, left/4)))
		n := published()
		if n <= done || n >= perInput*inputs {
			t.Fatalf("a kill did not land mid-work: %d published before the run, %d after, of %d", done, n, perInput*inputs)
		}
		done = n
	}
	t.Logf("20 kills mid-work; %d of %d outputs published by then", done, perInput*inputs)
	run(perInput * inputs) // to the end
	if n := published(); n < perInput*inputs {
		t.Fatalf("%d of %d outputs published in the last run", n, perInput*inputs)
	}
	return inputs
}

// srcPos is the partition and offset of the input record an output came
// from.
type srcPos struct {
	p int32
	o int64
}

// outputsPerInput counts topic's records by the input record each names in
// its src_offset header (offset -1 for records without one).
func outputsPerInput(t *testing.T, b *embedded.Broker, topic string) map[srcPos]int {
	seen := map[srcPos]int{}
	for _, r := range readTopic(t, b, topic) {
		var src int64 = -1
		for _, h := range r.Headers {
			if h.Key == headerSrcOffset {
				v := string(h.Value)
				fmt.Sscan(v[strings.LastIndexByte(v, ':')+1:], &src)
			}
		}
		seen[srcPos{r.Partition, src}]++
	}
	return seen
}

// eventsPerCause counts the events topic's records by the input record
// that caused each.
func eventsPerCause(t *testing.T, b *embedded.Broker) map[srcPos]int {
	causes := map[srcPos]int{}
	for _, r := range readTopic(t, b, telemetry.TopicEvents) {
		var ev telemetry.Event
		if err := json.Unmarshal(r.Value, &ev); err != nil {
			t.Fatal(err)
		}
		causes[srcPos{ev.Cause.Partition, ev.Cause.Offset}]++
	}
	return causes
}

// checkEach fails unless counts has want inputs, each counted n times.
func checkEach(t *testing.T, what string, counts map[srcPos]int, want, n int) {
	t.Helper()
	if len(counts) != want {
		dups, noSrc := 0, 0
		for k, c := range counts {
			if k.o < 0 {
				noSrc += c
			} else if c > n {
				dups += c - n
			}
		}
		t.Fatalf("%s: %d distinct inputs, want %d (%d records without src_offset, %d too many)", what, len(counts), want, noSrc, dups)
	}
	for k, c := range counts {
		if c != n {
			t.Fatalf("%s: input %d/%d counted %d times, want %d", what, k.p, k.o, c, n)
		}
	}
}

// TestExactlyOnceUnderKill kills a process running syslog enrichment with
// SIGKILL at random points, 20 times, then lets it finish: every raw
// record gives exactly one enriched record and every event-bearing one
// exactly one event, whatever the kills interrupted.
func TestExactlyOnceUnderKill(t *testing.T) {
	if testing.Short() {
		t.Skip("crash test in -short mode")
	}
	dir := t.TempDir()
	var p syslog.Parser
	corpus := loadCorpus(t)
	wantEvents, made := 0, 0
	add := func(b *embedded.Broker, n int) {
		recs := make([]broker.Record, 0, n)
		for range n {
			c := corpus[made%len(corpus)]
			var l telemetry.Log
			p.ParseCopy([]byte(c.Raw), &l)
			l.Device = fmt.Sprintf("dev%d", made%17)
			l.SourceAddr = "10.1.2.3:514"
			recs = append(recs, broker.Record{Key: []byte(l.Device), Value: l.AppendJSON(nil)})
			if c.Event != "" {
				wantEvents++
			}
			made++
		}
		if err := b.Produce(context.Background(), telemetry.TopicRawSyslog, recs); err != nil {
			t.Fatal(err)
		}
	}
	inputs := killUntilDone(t, dir, "syslog", telemetry.TopicEnrichedSyslog, 1, 10000, add)

	b, err := embedded.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	checkEach(t, telemetry.TopicEnrichedSyslog, outputsPerInput(t, b, telemetry.TopicEnrichedSyslog), inputs, 1)
	checkEach(t, telemetry.TopicEvents, eventsPerCause(t, b), wantEvents, 1)
}

// TestMetricsExactlyOnceUnderKill is TestExactlyOnceUnderKill for the
// metrics worker, which publishes two records per interface row (the
// enriched row and its interface view) on its publisher goroutine: every
// row gives exactly those two, and no input raises an event twice.
func TestMetricsExactlyOnceUnderKill(t *testing.T) {
	if testing.Short() {
		t.Skip("crash test in -short mode")
	}
	dir := t.TempDir()
	// 17 devices of 24 interfaces polled a minute apart; an interface
	// goes down and up again now and then, for events.
	const devices, ifaces = 17, 24
	t0 := time.Date(2026, 11, 29, 14, 0, 0, 0, time.UTC)
	made := 0
	add := func(b *embedded.Broker, n int) {
		recs := make([]broker.Record, 0, n)
		for range n {
			poll, d, i := made/(devices*ifaces), made/ifaces%devices, made%ifaces+1
			made++
			at := t0.Add(time.Duration(poll) * time.Minute)
			oper := int64(1)
			if (poll+d+i)%9 == 0 {
				oper = 2
			}
			m := telemetry.Metric{V: telemetry.Version, Measurement: "snmp_interface", Device: fmt.Sprintf("dev%d", d), Source: "snmp",
				Tags:     map[string]string{"ifIndex": fmt.Sprint(i), "ifName": fmt.Sprintf("Et%d", i), "agent": fmt.Sprintf("10.1.2.%d", d)},
				Fields:   map[string]any{"ifHCInOctets": uint64(poll * 75_000_000), "ifHCOutOctets": uint64(poll * 50_000_000), "ifOperStatus": oper, "ifHighSpeed": int64(10000)},
				Counters: []string{"ifHCInOctets", "ifHCOutOctets"}, Counters64: []string{"ifHCInOctets", "ifHCOutOctets"},
				Time: at, ReceivedAt: at, Uptime: uint32(100000 + poll*6000)}
			v, _, err := m.AppendJSON(nil, nil)
			if err != nil {
				t.Fatal(err)
			}
			recs = append(recs, broker.Record{Key: []byte(m.Device), Value: v,
				Headers: []broker.Header{{Key: telemetry.HeaderSchema, Value: []byte(telemetry.SchemaMetric)}}})
		}
		if err := b.Produce(context.Background(), telemetry.TopicRawSNMP, recs); err != nil {
			t.Fatal(err)
		}
	}
	inputs := killUntilDone(t, dir, "metrics", telemetry.TopicEnrichedMetrics, 2, 6000, add)

	b, err := embedded.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	checkEach(t, telemetry.TopicEnrichedMetrics, outputsPerInput(t, b, telemetry.TopicEnrichedMetrics), inputs, 2)
	causes := eventsPerCause(t, b)
	if len(causes) == 0 {
		t.Fatal("no events: the rows' status changes raised none")
	}
	for k, n := range causes {
		if n != 1 {
			t.Fatalf("input %d/%d raised %d events", k.p, k.o, n)
		}
	}
	t.Logf("%d inputs raised events", len(causes))
}

func countRecords(t *testing.T, b *embedded.Broker, topic string) int {
	infos, err := b.DescribeTopics(context.Background(), topic)
	if err != nil {
		return 0
	}
	n := 0
	for _, p := range infos[0].Partitions {
		n += int(p.HighWatermark - p.LogStartOffset)
	}
	return n
}
