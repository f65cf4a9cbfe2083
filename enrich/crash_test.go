package enrich

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"os/exec"
	"strings"
	"sync/atomic"
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
// printing "published N committed C" whenever the output topic has grown
// to N records or the group's committed input to C records, so the test
// can kill it mid-work, or once all is done; it does nothing in a normal
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
	input, output := telemetry.TopicRawSyslog, telemetry.TopicEnrichedSyslog
	switch os.Getenv(crashKindEnv) {
	case "paths":
		runPathsCrashChild(b, inv, cls)
	case "pollpaths":
		runStatePathsCrashChild(b, inv, telemetry.TopicRawSNMP)
	case "gnmipaths":
		runStatePathsCrashChild(b, inv, telemetry.TopicRawGNMI)
	}
	for i := range 2 {
		// No de-duplication: every input line with an event must give
		// exactly one event, so the count is checkable.
		opts := []WorkerOption{WithEventRules(-1, 0, time.Minute), WithMemberID(fmt.Sprint("w", i))}
		if os.Getenv(crashKindEnv) == "metrics" {
			input, output = telemetry.TopicRawSNMP, telemetry.TopicEnrichedMetrics
			go NewMetricsWorker(b, inv, opts...).Run(context.Background())
		} else {
			go NewWorker(b, inv, cls, opts...).Run(context.Background())
		}
	}
	for last := [2]int{-1, -1}; ; time.Sleep(time.Millisecond) { // until SIGKILL
		now := [2]int{countRecords(t, b, output), committedInput(b, input)}
		if now != last {
			fmt.Printf("published %d committed %d\n", now[0], now[1])
			last = now
		}
	}
}

// committedInput is how many records of input the enrich group has
// committed, over all partitions.
func committedInput(b *embedded.Broker, input string) int {
	infos, err := b.DescribeTopics(context.Background(), input)
	if err != nil {
		return 0
	}
	n := 0
	for _, p := range infos[0].Partitions {
		if off, ok := b.Committed(Group, input, p.Partition); ok {
			n += int(off - p.LogStartOffset)
		}
	}
	return n
}

// runCrashChild starts the crash child of kind on dir and kills it once
// done says so of the outputs it reports published and the input
// committed. A child that exits, or runs 2 minutes, before done says so
// fails the test, as does a race the race detector reports in the child.
func runCrashChild(t *testing.T, dir, kind string, done func(published, committed int) bool) {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^TestEnrichCrashChild$", "-test.count=1")
	cmd.Env = append(os.Environ(), crashDirEnv+"="+dir, crashKindEnv+"="+kind)
	var stderr bytes.Buffer
	cmd.Stderr = io.MultiWriter(os.Stderr, &stderr)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() {
		cmd.Process.Signal(syscall.SIGKILL)
		cmd.Wait()
		// Killed, a -race child never exits with the race
		// detector's status: its report is the sign.
		if bytes.Contains(stderr.Bytes(), []byte("WARNING: DATA RACE")) {
			t.Fatal("the race detector reported a race in the crash child (above)")
		}
	}()
	const limit = 2 * time.Minute
	var timedOut atomic.Bool
	timeout := time.AfterFunc(limit, func() {
		timedOut.Store(true)
		cmd.Process.Signal(syscall.SIGKILL)
	})
	defer timeout.Stop()
	last := "nothing"
	for sc := bufio.NewScanner(out); sc.Scan(); {
		var n, c int
		if _, err := fmt.Sscanf(sc.Text(), "published %d committed %d", &n, &c); err != nil {
			continue
		}
		last = sc.Text()
		if done(n, c) {
			return
		}
	}
	// The child stopped before done: a run that gives up silently would
	// leave the checks after it to pass on what both runs lack.
	if timedOut.Load() {
		t.Fatalf("the crash child did not get there within %v; it last reported %s", limit, last)
	}
	t.Fatalf("the crash child exited before it got there; it last reported %s", last)
}

// killUntilDone runs the crash child of kind on dir and kills it with
// SIGKILL at a random point of its work until 20 kills have landed
// mid-work: once the output topic has grown by a random number of
// records, before it holds all (perInput for each input record). addInput
// adds batch input records, before the first run and whenever less than
// half a batch's work is left, so kills find work pending. Then it lets
// the child run until all input is committed, and returns the number of
// input records.
func killUntilDone(t *testing.T, dir, kind, topic string, perInput, batch int, addInput func(b *embedded.Broker, n int)) int {
	t.Helper()
	run := func(done func(published, committed int) bool) { runCrashChild(t, dir, kind, done) }
	published := func() int {
		b, err := embedded.Open(dir)
		if err != nil {
			t.Fatal(err)
		}
		defer b.Close()
		return countRecords(t, b, topic)
	}
	inputs, done, landed := 0, 0, 0
	for round := 0; landed < 20; round++ {
		if round == 100 {
			t.Fatalf("only %d of 100 kills landed mid-work", landed)
		}
		if perInput*inputs-done < perInput*batch/2 {
			b, err := embedded.Open(dir)
			if err != nil {
				t.Fatal(err)
			}
			addInput(b, batch)
			inputs += batch
			b.Close()
		}
		target := done + 1 + rand.IntN(max(1, (perInput*inputs-done)/4))
		run(func(n, _ int) bool { return n >= target })
		n := published()
		if n <= done {
			t.Fatalf("the child published nothing: %d outputs before the run and after", done)
		}
		if n < perInput*inputs {
			landed++ // else it finished before the kill: more input next round
		}
		done = n
	}
	t.Logf("20 kills mid-work; %d of %d outputs published by then", done, perInput*inputs)
	// To the end: every input committed, so every output of it, events
	// too, published (the outputs' count alone can be complete before
	// the events of the last records are).
	run(func(_, c int) bool { return c >= inputs })
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
	t.Parallel()
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
	// Batches of 2,500, not 10,000: every kill still lands with outputs
	// published ahead of the committed input, and each restart's warm-up
	// reads back less (half the CPU).
	inputs := killUntilDone(t, dir, "syslog", telemetry.TopicEnrichedSyslog, 1, 2500, add)

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
	t.Parallel()
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
	// Batches of 1,500 rows (nearly 4 polls of every interface), not
	// 6,000: as in TestExactlyOnceUnderKill, shorter warm-ups.
	inputs := killUntilDone(t, dir, "metrics", telemetry.TopicEnrichedMetrics, 2, 1500, add)

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

	// The events the same input raises in one run without kills: each
	// row's status changes, none lost, none twice.
	ref := t.TempDir()
	rb, err := embedded.Open(ref)
	if err != nil {
		t.Fatal(err)
	}
	// Partition by partition, so that every record keeps its offset
	// (events are compared by their cause's offset): checked, since it
	// holds only while the raw topic starts at offset 0.
	raw := readTopic(t, b, telemetry.TopicRawSNMP)
	for len(raw) > 0 {
		n := 1
		for n < len(raw) && raw[n].Partition == raw[0].Partition {
			n++
		}
		orig := make([]int64, n)
		for i := range orig {
			orig[i] = raw[i].Offset
		}
		if err := rb.ProducePartition(context.Background(), telemetry.TopicRawSNMP, raw[0].Partition, raw[:n]); err != nil {
			t.Fatal(err)
		}
		for i := range orig {
			if raw[i].Offset != orig[i] {
				t.Fatalf("input %d/%d is at offset %d in the run without kills", raw[i].Partition, orig[i], raw[i].Offset)
			}
		}
		raw = raw[n:]
	}
	rb.Close()
	runCrashChild(t, ref, "metrics", func(_, c int) bool { return c >= inputs })
	rb, err = embedded.Open(ref)
	if err != nil {
		t.Fatal(err)
	}
	defer rb.Close()
	want := eventsPerCause(t, rb)
	for k, n := range causes {
		if n != 1 || want[k] != 1 {
			t.Fatalf("input %d/%d raised %d events, %d without kills", k.p, k.o, n, want[k])
		}
	}
	if len(causes) != len(want) {
		t.Fatalf("%d inputs raised events, %d without kills", len(causes), len(want))
	}
	t.Logf("%d inputs raised events, as without kills", len(causes))
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
