package kafkawire

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"os/exec"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/weirnet/weir/broker/recordbatch"
)

// apiRecorder is a Metrics that records which API keys clients used.
type apiRecorder struct {
	mu   sync.Mutex
	keys map[int16]bool
}

func (a *apiRecorder) metrics() *Metrics {
	a.keys = make(map[int16]bool)
	return &Metrics{Request: func(key, version int16, _ time.Duration) {
		a.mu.Lock()
		a.keys[key] = true
		a.mu.Unlock()
	}}
}

func (a *apiRecorder) used() []int16 {
	a.mu.Lock()
	defer a.mu.Unlock()
	var keys []int16
	for k := range a.keys {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// TestKgoProduceConsume produces 10,000 records with franz-go's defaults
// (idempotent, acks=all, snappy) and reads them back with a direct partition
// consumer, checking order per partition and that no group or coordinator
// API was needed.
func TestKgoProduceConsume(t *testing.T) {
	fl := newFakeLog()
	var rec apiRecorder
	_, addr := startServer(t, fl, WithMetrics(rec.metrics()))
	ctx, cancel := context.WithTimeout(context.Background(), 45*time.Second)
	defer cancel()

	adm := kadm.NewClient(newClient(t, addr))
	if _, err := adm.CreateTopic(ctx, 6, 1, nil, "telemetry"); err != nil {
		t.Fatalf("create topic: %v", err)
	}

	const n = 10000
	prod := newClient(t, addr, kgo.DefaultProduceTopic("telemetry"))
	var (
		mu       sync.Mutex
		firstErr error
	)
	for i := range n {
		r := &kgo.Record{Key: fmt.Appendf(nil, "router-%d", i%97), Value: fmt.Appendf(nil, "value-%05d", i)}
		prod.Produce(ctx, r, func(_ *kgo.Record, err error) {
			if err != nil {
				mu.Lock()
				firstErr = cmpErr(firstErr, err)
				mu.Unlock()
			}
		})
	}
	if err := prod.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	if firstErr != nil {
		t.Fatalf("produce: %v", firstErr)
	}
	var total int64
	for p := range int32(6) {
		total += fl.hwm("telemetry", p)
	}
	if total != n {
		t.Fatalf("log holds %d records, want %d", total, n)
	}

	ends, err := adm.ListEndOffsets(ctx, "telemetry")
	if err != nil {
		t.Fatal(err)
	}
	var endSum int64
	ends.Each(func(o kadm.ListedOffset) {
		if o.Err != nil {
			t.Errorf("end offset %d: %v", o.Partition, o.Err)
		}
		endSum += o.Offset
	})
	if endSum != n {
		t.Fatalf("end offsets sum to %d, want %d", endSum, n)
	}

	cons := newClient(t, addr,
		kgo.ConsumeTopics("telemetry"),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()),
	)
	seen := make(map[string]bool, n)
	next := make(map[int32]int64)
	for len(seen) < n {
		fs := cons.PollFetches(ctx)
		if err := ctx.Err(); err != nil {
			t.Fatalf("consumed %d of %d records: %v", len(seen), n, err)
		}
		fs.EachError(func(topic string, p int32, err error) {
			t.Fatalf("fetch %s/%d: %v", topic, p, err)
		})
		fs.EachRecord(func(r *kgo.Record) {
			if r.Offset != next[r.Partition] {
				t.Fatalf("partition %d: offset %d, want %d", r.Partition, r.Offset, next[r.Partition])
			}
			next[r.Partition]++
			seen[string(r.Value)] = true
		})
	}
	for i := range n {
		if !seen[fmt.Sprintf("value-%05d", i)] {
			t.Fatalf("record %d not consumed", i)
		}
	}

	// Only implemented APIs were used: no FindCoordinator, no groups.
	implemented := make(map[int16]bool)
	for _, k := range advertisedKeys(false, false, false) {
		implemented[k.ApiKey] = true
	}
	for _, k := range rec.used() {
		if !implemented[k] {
			t.Errorf("clients used API key %d, which is not implemented", k)
		}
	}
}

func cmpErr(first, err error) error {
	if first != nil {
		return first
	}
	return err
}

func newClient(t testing.TB, addr string, opts ...kgo.Opt) *kgo.Client {
	t.Helper()
	cl, err := kgo.NewClient(append([]kgo.Opt{kgo.SeedBrokers(addr)}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(cl.Close)
	return cl
}

// TestKadm drives the admin APIs through kadm.
func TestKadm(t *testing.T) {
	fl := newFakeLog()
	_, addr := startServer(t, fl)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	adm := kadm.NewClient(newClient(t, addr))

	created, err := adm.CreateTopic(ctx, 4, 1, map[string]*string{
		"retention.ms":    kadm.StringPtr("3600000"),
		"retention.bytes": kadm.StringPtr("-1"),
		"segment.bytes":   kadm.StringPtr("1048576"),
		"segment.ms":      kadm.StringPtr("60000"),
	}, "metrics")
	if err != nil {
		t.Fatal(err)
	}
	if created.NumPartitions != 4 || created.ReplicationFactor != 1 || created.ID == (kadm.TopicID{}) {
		t.Errorf("create response: %+v", created)
	}
	cfg := fl.topics["metrics"].info.Config
	if cfg.RetentionTime != time.Hour || cfg.RetentionBytes != -1 || cfg.SegmentBytes != 1<<20 || cfg.SegmentAge != time.Minute {
		t.Errorf("topic config %+v", cfg)
	}

	// Default partitions and replication factor.
	if r, err := adm.CreateTopic(ctx, -1, -1, nil, "defaults"); err != nil || r.NumPartitions != fl.defaultPartitions {
		t.Errorf("create with defaults: %+v, %v", r, err)
	}

	for _, tc := range []struct {
		name       string
		partitions int32
		rf         int16
		configs    map[string]*string
		want       error
	}{
		{"metrics", 1, 1, nil, kerr.TopicAlreadyExists},
		{"replicated", 1, 3, nil, kerr.InvalidReplicationFactor},
		{"compacted", 1, 1, map[string]*string{"cleanup.policy": kadm.StringPtr("compact")}, kerr.InvalidConfig},
		{"badvalue", 1, 1, map[string]*string{"retention.ms": kadm.StringPtr("soon")}, kerr.InvalidConfig},
		// A segment a batch: a file pair per batch, as weir.yaml refuses.
		{"tinysegments", 1, 1, map[string]*string{"segment.bytes": kadm.StringPtr("100")}, kerr.InvalidConfig},
		{"zero", 0, 1, nil, kerr.InvalidPartitions},
		{"bad/name", 1, 1, nil, kerr.InvalidTopicException},
	} {
		_, err := adm.CreateTopic(ctx, tc.partitions, tc.rf, tc.configs, tc.name)
		if !errors.Is(err, tc.want) {
			t.Errorf("create %q: %v, want %v", tc.name, err, tc.want)
		}
	}

	// Validate-only creates nothing.
	vr, err := adm.ValidateCreateTopics(ctx, 2, 1, nil, "dry-run")
	if err != nil || vr["dry-run"].Err != nil {
		t.Fatalf("validate: %v %v", err, vr["dry-run"].Err)
	}
	if slices.Contains(fl.topicNames(), "dry-run") {
		t.Error("validate-only created the topic")
	}

	topics, err := adm.ListTopics(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if got := topics.Names(); !slices.Equal(got, []string{"defaults", "metrics"}) {
		t.Errorf("topics %v", got)
	}
	if d := topics["metrics"]; len(d.Partitions) != 4 || d.ID != created.ID {
		t.Errorf("metrics detail %+v", d)
	}

	// Start and end offsets after producing a little.
	cl := newClient(t, addr, kgo.RecordPartitioner(kgo.ManualPartitioner()))
	for i := range 5 {
		r := &kgo.Record{Topic: "metrics", Partition: 2, Value: fmt.Appendf(nil, "%d", i)}
		if err := cl.ProduceSync(ctx, r).FirstErr(); err != nil {
			t.Fatal(err)
		}
	}
	starts, err := adm.ListStartOffsets(ctx, "metrics")
	if err != nil || starts.Error() != nil {
		t.Fatal(err, starts.Error())
	}
	ends, err := adm.ListEndOffsets(ctx, "metrics")
	if err != nil || ends.Error() != nil {
		t.Fatal(err, ends.Error())
	}
	starts.Each(func(o kadm.ListedOffset) {
		if o.Offset != 0 {
			t.Errorf("start offset of %d: %d", o.Partition, o.Offset)
		}
	})
	ends.Each(func(o kadm.ListedOffset) {
		want := int64(0)
		if o.Partition == 2 {
			want = 5
		}
		if o.Offset != want {
			t.Errorf("end offset of %d: %d, want %d", o.Partition, o.Offset, want)
		}
	})

	if _, err := adm.DeleteTopic(ctx, "metrics"); err != nil {
		t.Fatal(err)
	}
	if _, err := adm.DeleteTopic(ctx, "metrics"); !errors.Is(err, kerr.UnknownTopicOrPartition) {
		t.Errorf("deleting twice: %v", err)
	}
	if got := fl.topicNames(); !slices.Equal(got, []string{"defaults"}) {
		t.Errorf("topics after delete: %v", got)
	}
}

// TestKcat runs librdkafka (through kcat) against the server: it checks
// ApiVersions strictly and does everything over one connection.
func TestKcat(t *testing.T) {
	kcat, err := exec.LookPath("kcat")
	if err != nil {
		t.Skip("kcat not installed")
	}
	fl := newFakeLog()
	newTopic(t, fl, "lines", 3)
	_, addr := startServer(t, fl)
	ctx, cancel := context.WithTimeout(context.Background(), 45*time.Second)
	defer cancel()
	run := func(stdin string, args ...string) string {
		t.Helper()
		cmd := exec.CommandContext(ctx, kcat, append([]string{"-b", addr}, args...)...)
		cmd.Stdin = strings.NewReader(stdin)
		var out, errOut bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &errOut
		if err := cmd.Run(); err != nil {
			t.Fatalf("kcat %v: %v\n%s", args, err, errOut.String())
		}
		return out.String()
	}

	meta := run("", "-L")
	if !strings.Contains(meta, "1 brokers") || !strings.Contains(meta, `topic "lines" with 3 partitions`) {
		t.Fatalf("kcat -L:\n%s", meta)
	}

	var in strings.Builder
	want := make([]string, 1000)
	for i := range want {
		want[i] = fmt.Sprintf("line %04d from kcat", i)
		in.WriteString(want[i] + "\n")
	}
	run(in.String(), "-P", "-t", "lines")
	var total int64
	for p := range int32(3) {
		total += fl.hwm("lines", p)
	}
	if total != 1000 {
		t.Fatalf("log holds %d records after kcat -P, want 1000", total)
	}

	out := run("", "-C", "-t", "lines", "-o", "beginning", "-e", "-q")
	var got []string
	sc := bufio.NewScanner(strings.NewReader(out))
	for sc.Scan() {
		got = append(got, sc.Text())
	}
	slices.Sort(got)
	if !slices.Equal(got, want) {
		t.Fatalf("kcat -C returned %d lines, want 1000 matching ones", len(got))
	}

	// A fresh connection's first fetch of empty partitions: librdkafka
	// logs PROTOERR ("invalid MessageSetSize -1") if their records are
	// encoded as null rather than empty.
	newTopic(t, fl, "sparse", 3)
	run("only one\n", "-P", "-t", "sparse", "-p", "1")
	cmd := exec.CommandContext(ctx, kcat, "-b", addr, "-C", "-t", "sparse", "-o", "beginning", "-e") // not -q: it hides librdkafka's errors
	var sparseOut, sparseErr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &sparseOut, &sparseErr
	if err := cmd.Run(); err != nil {
		t.Fatalf("kcat -C sparse: %v\n%s", err, sparseErr.String())
	}
	if sparseOut.String() != "only one\n" || strings.Contains(sparseErr.String(), "PROTOERR") {
		t.Fatalf("kcat -C sparse: stdout %q, stderr:\n%s", sparseOut.String(), sparseErr.String())
	}
}

// TestKcatCompresses produces with each of librdkafka's codecs to the
// embedded broker. librdkafka before 2.8 compresses with gzip, snappy or lz4
// only when the broker's Produce versions include v0 (librdkafka issue
// 4956; lz4 also needs FindCoordinator), and otherwise sends the batch
// uncompressed without a word; Kafka 4 advertises Produce from v0 for that
// reason (KAFKA-18659) while refusing v0-v2 requests.
func TestKcatCompresses(t *testing.T) {
	kcat, err := exec.LookPath("kcat")
	if err != nil {
		t.Skip("kcat not installed")
	}
	b, addr := startEmbedded(t)
	ctx, cancel := context.WithTimeout(context.Background(), 45*time.Second)
	defer cancel()
	for codec, want := range map[string]int{
		"gzip": recordbatch.CodecGzip, "snappy": recordbatch.CodecSnappy,
		"lz4": recordbatch.CodecLZ4, "zstd": recordbatch.CodecZstd,
	} {
		cmd := exec.CommandContext(ctx, kcat, "-b", addr, "-P", "-t", codec, "-p", "0", "-z", codec)
		// One record, so that no batch is too small to gain from
		// compression (librdkafka then sends it plain).
		cmd.Stdin = strings.NewReader(strings.Repeat("compress me, ", 1000) + "\n")
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("kcat -z %s: %v\n%s", codec, err, out)
		}
		raw, _, _, err := b.ReadBatches(nil, codec, 0, 0, 1<<20)
		if err != nil || len(raw) == 0 {
			t.Fatalf("%s: read %d bytes: %v", codec, len(raw), err)
		}
		if _, err := recordbatch.Split(raw, func(h *recordbatch.Header, _ []byte) error {
			if h.Codec() != want {
				t.Errorf("kcat -z %s: batch stored with codec %d, want %d", codec, h.Codec(), want)
			}
			return nil
		}); err != nil {
			t.Fatal(err)
		}
	}
}
