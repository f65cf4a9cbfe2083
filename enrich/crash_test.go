package enrich

import (
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

const crashDirEnv = "WEIR_ENRICH_CRASH_DIR"

// TestEnrichCrashChild runs two workers on a data directory until killed;
// it does nothing in a normal test run.
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
	for i := range 2 {
		// No de-duplication: every input line with an event must give
		// exactly one event, so the count is checkable.
		w := NewWorker(b, inv, cls, WithEventRules(-1, 0, time.Minute), WithMemberID(fmt.Sprint("w", i)))
		go w.Run(context.Background())
	}
	select {} // until SIGKILL
}

// TestExactlyOnceUnderKill kills a process running enrichment with SIGKILL
// at random points, 20 times, then lets it finish: every raw record gives
// exactly one enriched record and every event-bearing one exactly one
// event, whatever the kills interrupted.
func TestExactlyOnceUnderKill(t *testing.T) {
	if testing.Short() {
		t.Skip("crash test in -short mode")
	}
	dir := t.TempDir()
	b, err := embedded.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	var p syslog.Parser
	corpus := loadCorpus(t)
	wantEvents := 0
	const rounds = 400 // of the corpus: ~18,000 records, more than one kill's worth
	var recs []broker.Record
	for r := 0; r < rounds; r++ {
		for _, c := range corpus {
			var l telemetry.Log
			p.ParseCopy([]byte(c.Raw), &l)
			l.Device = fmt.Sprintf("dev%d", len(recs)%17)
			l.SourceAddr = "10.1.2.3:514"
			recs = append(recs, broker.Record{Key: []byte(l.Device), Value: l.AppendJSON(nil)})
			if c.Event != "" {
				wantEvents++
			}
		}
	}
	if err := b.Produce(context.Background(), telemetry.TopicRawSyslog, recs); err != nil {
		t.Fatal(err)
	}
	b.Close()

	run := func(d time.Duration) {
		cmd := exec.Command(os.Args[0], "-test.run=^TestEnrichCrashChild$", "-test.count=1")
		cmd.Env = append(os.Environ(), crashDirEnv+"="+dir)
		cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		time.Sleep(d)
		cmd.Process.Signal(syscall.SIGKILL)
		cmd.Wait()
	}
	progress := 0
	for i := 0; i < 20; i++ {
		run(time.Duration(20+rand.IntN(100)) * time.Millisecond)
		b, err := embedded.Open(dir)
		if err != nil {
			t.Fatal(err)
		}
		n := countRecords(t, b, telemetry.TopicEnrichedSyslog)
		b.Close()
		if n > progress && n < len(recs) {
			progress = n
		}
	}
	t.Logf("after 20 kills %d of %d records enriched", progress, len(recs))
	// A last run long enough to finish.
	deadline := time.Now().Add(60 * time.Second)
	for {
		run(2 * time.Second)
		b, err := embedded.Open(dir)
		if err != nil {
			t.Fatal(err)
		}
		done := countRecords(t, b, telemetry.TopicEnrichedSyslog) >= len(recs)
		b.Close()
		if done || time.Now().After(deadline) {
			break
		}
	}

	b, err = embedded.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	type pos struct {
		p int32
		o int64
	}
	seen := map[pos]int{}
	for _, r := range readTopic(t, b, telemetry.TopicEnrichedSyslog) {
		var src int64 = -1
		for _, h := range r.Headers {
			if h.Key == headerSrcOffset {
				v := string(h.Value)
				fmt.Sscan(v[strings.LastIndexByte(v, ':')+1:], &src)
			}
		}
		seen[pos{r.Partition, src}]++
	}
	if len(seen) != len(recs) {
		dups, noSrc := 0, 0
		for k, n := range seen {
			if k.o < 0 {
				noSrc += n
			} else if n > 1 {
				dups += n - 1
			}
		}
		t.Fatalf("%d distinct inputs enriched, want %d (%d records without src_offset, %d duplicates)", len(seen), len(recs), noSrc, dups)
	}
	for k, n := range seen {
		if n != 1 {
			t.Fatalf("input %d/%d enriched %d times", k.p, k.o, n)
		}
	}
	causes := map[pos]int{}
	for _, r := range readTopic(t, b, telemetry.TopicEvents) {
		var ev telemetry.Event
		if err := json.Unmarshal(r.Value, &ev); err != nil {
			t.Fatal(err)
		}
		causes[pos{ev.Cause.Partition, ev.Cause.Offset}]++
	}
	if len(causes) != wantEvents {
		t.Fatalf("%d inputs raised events, want %d", len(causes), wantEvents)
	}
	for k, n := range causes {
		if n != 1 {
			t.Fatalf("input %d/%d raised %d events", k.p, k.o, n)
		}
	}
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
