package enrich

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/weirnet/weir/broker"
	"github.com/weirnet/weir/broker/kafkacluster"
	"github.com/weirnet/weir/collectors/syslog"
	"github.com/weirnet/weir/telemetry"
)

const (
	kafkaSeedsEnv = "WEIR_ENRICH_KAFKA_SEEDS"
	// childLogEnv, set, has the "paths" crash child log to stderr.
	childLogEnv = "WEIR_TEST_CHILD_LOG"
	// kafkaSession is the workers' session timeout: how long the group
	// waits for the members of a killed process.
	kafkaSession = 1500 * time.Millisecond
)

// TestEnrichKafkaCrashChild runs two workers on the Kafka cluster at
// $WEIR_ENRICH_KAFKA_SEEDS until killed; it does nothing in a normal test
// run.
func TestEnrichKafkaCrashChild(t *testing.T) {
	seeds := os.Getenv(kafkaSeedsEnv)
	if seeds == "" {
		t.Skip("run by TestExactlyOnceUnderKillOnKafka")
	}
	// Small fetches make small batches: many transactions, so that kills
	// fall in every phase of one.
	// One instance name for every run, as weir run keeps its own in the
	// data directory: a run's members take the killed run's partitions
	// back at their first join (static membership, see
	// kafkacluster.WithInstance).
	b, err := kafkacluster.New(strings.Split(seeds, ","), kafkacluster.WithReplicationFactor(3), kafkacluster.WithInstance("crash-child"),
		kafkacluster.WithClientOpts(kgo.FetchMaxBytes(16<<10), kgo.FetchMaxPartitionBytes(16<<10)))
	if err != nil {
		fmt.Println("kafka:", err)
		os.Exit(2)
	}
	inv, _ := ParseInventory([]byte(testInventory))
	cls := NewClassifier()
	if os.Getenv(crashKindEnv) == "paths" {
		// As runPathsCrashChild: a syslog and a trap worker sharing
		// their rules, de-duplication on.
		rules := NewEventRules(DefaultDedupWindow, DefaultFlapThreshold, DefaultFlapWindow)
		rules.HoldUntilWarm(2)
		logger := slog.New(slog.DiscardHandler)
		if os.Getenv(childLogEnv) != "" {
			logger = slog.New(slog.NewTextHandler(os.Stderr, nil)).With("pid", os.Getpid())
		}
		go NewWorker(b, inv, cls, WithSharedEventRules(rules), WithMemberID("logs"), WithSessionTimeout(kafkaSession), WithWorkerLogger(logger.With("worker", "logs"))).Run(context.Background())
		go NewTrapWorker(b, inv, WithSharedEventRules(rules), WithMemberID("traps"), WithSessionTimeout(kafkaSession), WithWorkerLogger(logger.With("worker", "traps"))).Run(context.Background())
		select {} // until SIGKILL
	}
	for i := range 2 {
		// No de-duplication, as in TestExactlyOnceUnderKill.
		w := NewWorker(b, inv, cls, WithEventRules(-1, 0, time.Minute), WithMemberID(fmt.Sprint("w", i)),
			WithSessionTimeout(kafkaSession))
		go w.Run(context.Background())
	}
	select {} // until SIGKILL
}

// TestExactlyOnceUnderKillOnKafka is TestExactlyOnceUnderKill on a 3-broker
// Kafka cluster (kfake, in this process), where enrichment is exactly once
// by Kafka transactions: a process running two workers is killed with
// SIGKILL at random points of the stream, 12 times, then runs until done;
// every raw record gives exactly one enriched record and every
// event-bearing one exactly one event, as a read-committed consumer sees
// them. The output
// topics have another partition count than raw.syslog, so the embedded
// log's method (which needs them aligned) would be at least once here: the
// transactions are what keeps the outputs free of duplicates.
func TestExactlyOnceUnderKillOnKafka(t *testing.T) {
	if testing.Short() {
		t.Skip("crash test in -short mode")
	}
	t.Parallel()
	seeds, b := kafkaCluster(t, 3, kafkacluster.WithReplicationFactor(3))
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	for topic, n := range map[string]int32{telemetry.TopicRawSyslog: 4, telemetry.TopicEnrichedSyslog: 3, telemetry.TopicEvents: 3} {
		if err := b.CreateTopic(ctx, topic, broker.TopicConfig{Partitions: n}); err != nil {
			t.Fatal(err)
		}
	}
	// Every input record carries its number in proc_id, which its
	// enriched record keeps; events name their input by partition and
	// offset.
	var p syslog.Parser
	corpus := loadCorpus(t)
	const rounds = 250 // of the corpus: 11,250 records
	var recs []broker.Record
	hasEvent := map[int]bool{}
	for r := 0; r < rounds; r++ {
		for _, c := range corpus {
			var l telemetry.Log
			p.ParseCopy([]byte(c.Raw), &l)
			l.Device = fmt.Sprintf("dev%d", len(recs)%17)
			l.SourceAddr = "10.1.2.3:514"
			l.ProcID = strconv.Itoa(len(recs))
			hasEvent[len(recs)] = c.Event != ""
			recs = append(recs, broker.Record{Key: []byte(l.Device), Value: l.AppendJSON(nil)})
		}
	}
	if err := b.Produce(ctx, telemetry.TopicRawSyslog, recs); err != nil {
		t.Fatal(err)
	}
	type pos struct {
		p int32
		o int64
	}
	seqAt := map[pos]int{}
	wantEvents := 0
	for i, r := range recs {
		seqAt[pos{r.Partition, r.Offset}] = i
		if hasEvent[i] {
			wantEvents++
		}
	}

	admin := kadm.NewClient(mustClient(t, kgo.SeedBrokers(seeds...)))
	// progress is how many input records the group has committed.
	progress := func() int {
		offs, err := admin.FetchOffsets(ctx, Group)
		if err != nil {
			return 0 // no group yet
		}
		n := 0
		offs.Each(func(o kadm.OffsetResponse) {
			if o.Err == nil && o.At > 0 {
				n += int(o.At)
			}
		})
		return n
	}
	killOnKafka(t, seeds, "", len(recs), progress)

	enriched := readCommitted(t, ctx, b, seeds, telemetry.TopicEnrichedSyslog, 3)
	seen := map[int]int{}
	for _, v := range enriched {
		var e telemetry.EnrichedLog
		if err := json.Unmarshal(v, &e); err != nil {
			t.Fatal(err)
		}
		seq, err := strconv.Atoi(e.ProcID)
		if err != nil {
			t.Fatalf("enriched record without its input's number: %.200s", v)
		}
		seen[seq]++
	}
	dups := 0
	for _, n := range seen {
		dups += n - 1
	}
	if len(seen) != len(recs) || dups != 0 {
		t.Fatalf("%d distinct inputs enriched, want %d; %d duplicates", len(seen), len(recs), dups)
	}
	causes := map[pos]int{}
	for _, v := range readCommitted(t, ctx, b, seeds, telemetry.TopicEvents, 3) {
		var ev telemetry.Event
		if err := json.Unmarshal(v, &ev); err != nil {
			t.Fatal(err)
		}
		k := pos{ev.Cause.Partition, ev.Cause.Offset}
		if i, ok := seqAt[k]; !ok || !hasEvent[i] {
			t.Fatalf("event from input %d/%d, which has none: %s", k.p, k.o, v)
		}
		causes[k]++
	}
	dups = 0
	for _, n := range causes {
		dups += n - 1
	}
	if len(causes) != wantEvents || dups != 0 {
		t.Fatalf("%d inputs raised events, want %d; %d duplicate events", len(causes), wantEvents, dups)
	}
}

// killOnKafka runs the Kafka crash child of kind on the cluster at seeds
// and kills it with SIGKILL 12 times, each at a random point of the next
// share of the total input progress says is committed, then runs it until
// all is.
func killOnKafka(t *testing.T, seeds []string, kind string, total int, progress func() int) {
	t.Helper()
	// run starts a process and kills it once the group's committed input
	// has passed target (at once, or a few milliseconds later: in any
	// phase of the batch in flight), or after d.
	run := func(target int, d time.Duration) {
		cmd := exec.Command(os.Args[0], "-test.run=^TestEnrichKafkaCrashChild$", "-test.count=1")
		cmd.Env = append(os.Environ(), kafkaSeedsEnv+"="+strings.Join(seeds, ","), crashKindEnv+"="+kind)
		cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		for deadline := time.Now().Add(d); time.Now().Before(deadline); time.Sleep(5 * time.Millisecond) {
			if progress() >= target {
				time.Sleep(time.Duration(rand.IntN(20)) * time.Millisecond)
				break
			}
		}
		cmd.Process.Signal(syscall.SIGKILL)
		cmd.Wait()
	}
	// The kills spread over the stream whatever the speed: each at a
	// random point of the next share of what is left.
	const kills = 12
	midway := 0
	var steps []int
	for i := range kills {
		before := progress()
		if before >= total {
			break // done: a process started now would be killed idle
		}
		share := max((total-before)/(kills-i+1), 1)
		run(before+1+rand.IntN(share), 10*time.Second)
		n := progress()
		steps = append(steps, n)
		if n < total {
			midway++
		}
	}
	t.Logf("committed input after each kill: %v of %d", steps, total)
	if midway < kills {
		t.Logf("only %d kills came while records were left to enrich; the test proved less this time", midway)
	}
	// A last run long enough to finish.
	deadline := time.Now().Add(60 * time.Second)
	for progress() < total && time.Now().Before(deadline) {
		run(total, 10*time.Second)
	}
	if n := progress(); n != total {
		t.Fatalf("%d of %d input records committed after the last run", n, total)
	}
}

// kafkaCluster is a kfake cluster of n brokers whose groups take the
// workers' short sessions, and a weir broker on it with opts; both closed
// when the test ends.
func kafkaCluster(t *testing.T, n int, opts ...kafkacluster.Option) ([]string, *kafkacluster.Broker) {
	t.Helper()
	cluster, err := kfake.NewCluster(kfake.NumBrokers(n), kfake.GroupMinSessionTimeout(100*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(cluster.Close)
	b, err := kafkacluster.New(cluster.ListenAddrs(), opts...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { b.Close() })
	return cluster.ListenAddrs(), b
}

func mustClient(t *testing.T, opts ...kgo.Opt) *kgo.Client {
	t.Helper()
	cl, err := kgo.NewClient(opts...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(cl.Close)
	return cl
}

// readCommitted returns the values of topic's committed records: it marks
// the end of every partition with a record of its own, produced outside
// any transaction once the transactions the killed processes left open
// have timed out, and reads with read_committed up to the marks.
func readCommitted(t *testing.T, ctx context.Context, b *kafkacluster.Broker, seeds []string, topic string, parts int32) [][]byte {
	t.Helper()
	time.Sleep(kafkaSession) // open transactions time out (4/5 of the session)
	for p := range parts {
		if err := b.ProducePartition(ctx, topic, p, []broker.Record{{Value: []byte("end")}}); err != nil {
			t.Fatal(err)
		}
	}
	cl := mustClient(t, kgo.SeedBrokers(seeds...), kgo.ConsumeTopics(topic),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()), kgo.FetchIsolationLevel(kgo.ReadCommitted()))
	var out [][]byte
	for ends := int32(0); ends < parts; {
		f := cl.PollFetches(ctx)
		if ctx.Err() != nil {
			t.Fatalf("reading %s: %d of %d end marks after %d records", topic, ends, parts, len(out))
		}
		f.EachRecord(func(r *kgo.Record) {
			if string(r.Value) == "end" {
				ends++
			} else {
				out = append(out, r.Value)
			}
		})
	}
	return out
}
