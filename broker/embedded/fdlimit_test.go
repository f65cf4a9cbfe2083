package embedded

import (
	"bytes"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
	"golang.org/x/sys/unix"

	"github.com/weirnet/weir/broker"
)

// The descriptor tests lower RLIMIT_NOFILE in a child process: lowered
// here, it would fail the other tests of this process.
const fdLimitEnv = "WEIR_FDLIMIT_CHILD_DIR"

// openFDs counts the descriptors the process holds.
func openFDs(t testing.TB) int {
	t.Helper()
	ents, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Skipf("no /proc/self/fd: %v", err)
	}
	return len(ents) - 1 // the one ReadDir had open
}

// lowerFDLimit leaves the process room for free more descriptors.
func lowerFDLimit(t testing.TB, free int) {
	t.Helper()
	var lim unix.Rlimit
	if err := unix.Getrlimit(unix.RLIMIT_NOFILE, &lim); err != nil {
		t.Fatal(err)
	}
	lim.Cur = uint64(openFDs(t) + free)
	if err := unix.Setrlimit(unix.RLIMIT_NOFILE, &lim); err != nil {
		t.Fatal(err)
	}
}

// runFDChild runs test name of this binary in a child, with dir in its
// environment, and returns its failure, with its output.
func runFDChild(name, dir string) error {
	cmd := exec.Command(os.Args[0], "-test.run=^"+name+"$", "-test.count=1", "-test.v")
	cmd.Env = append(os.Environ(), fdLimitEnv+"="+dir)
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("child %s: %w\n%s", name, err, out)
	}
	return nil
}

// TestCreateOutOfDescriptorsChild: see TestCreateOutOfDescriptorsLeavesNothing.
func TestCreateOutOfDescriptorsChild(t *testing.T) {
	dir := os.Getenv(fdLimitEnv)
	if dir == "" {
		t.Skip("run by TestCreateOutOfDescriptorsLeavesNothing")
	}
	b := openTest(t, dir, WithMaxPartitions(1000))
	before := openFDs(t)
	lowerFDLimit(t, 40)
	err := b.CreateTopic(ctx, "many", broker.TopicConfig{Partitions: 200})
	if !errors.Is(err, syscall.EMFILE) || !errors.Is(err, broker.ErrStorage) {
		t.Fatalf("create of 200 partitions with 40 descriptors free: %v, want a storage error, EMFILE", err)
	}
	if n := openFDs(t); n != before {
		t.Errorf("%d descriptors open after the failed create, %d before", n, before)
	}
	fmt.Println("create failed:", err)
}

// TestCreateOutOfDescriptorsLeavesNothing: a create that runs out of
// descriptors midway leaves no partition directory and no meta. It left
// NAME-0: the partitions were closed and removed one by one, and closing
// the first freed one descriptor where removing a directory takes two. And
// a partition whose directory could not be synced kept its segment open.
func TestCreateOutOfDescriptorsLeavesNothing(t *testing.T) {
	dir := t.TempDir()
	childErr := runFDChild("TestCreateOutOfDescriptorsChild", dir)
	left, _ := filepath.Glob(filepath.Join(dir, "many-*"))
	if meta := filepath.Join(dir, "meta", "topics", "many.json"); exists(meta) {
		left = append(left, meta)
	}
	if len(left) != 0 {
		t.Errorf("left behind: %v", left)
	}
	if childErr != nil {
		t.Error(childErr)
	}
}

// TestPartitionDescriptors measures what descriptorPartitions relies on: a
// new partition holds one descriptor, its active segment's .log; each
// sealed segment holds one more, its index files none once written.
func TestPartitionDescriptors(t *testing.T) {
	// Flushed at each append: no flush of index files runs while counted.
	b := openTest(t, t.TempDir(), WithFlushAlways(), WithTopicDefaults(broker.TopicConfig{SegmentBytes: 4 << 10}), WithIndexInterval(512))
	before := openFDs(t)
	if err := b.CreateTopic(ctx, "new", broker.TopicConfig{Partitions: 100}); err != nil {
		t.Fatal(err)
	}
	if n := openFDs(t) - before; n != 100 {
		t.Fatalf("100 new partitions hold %d descriptors, want 100", n)
	}
	if err := b.CreateTopic(ctx, "rolled", broker.TopicConfig{Partitions: 1}); err != nil {
		t.Fatal(err)
	}
	before = openFDs(t)
	for i := range 50 {
		if err := b.ProducePartition(ctx, "rolled", 0, makeRecords(10, i*10)); err != nil {
			t.Fatal(err)
		}
	}
	infos, err := b.DescribeTopics(ctx, "rolled")
	if err != nil {
		t.Fatal(err)
	}
	segs := infos[0].Partitions[0].Segments
	n := openFDs(t) - before
	if segs < 3 || n != segs-1 {
		t.Fatalf("a partition of %d segments holds %d descriptors more than with one", segs, n)
	}
	t.Logf("a partition of %d segments holds %d descriptors", segs, n+1)
}

// TestPartitionBound: a creation that would take all topics' partitions
// past the bound is refused up front with ErrPartitionLimit naming it,
// makes no directory, and is counted; auto-creation goes through the same
// bound, and a deleted topic makes room.
func TestPartitionBound(t *testing.T) {
	dir := t.TempDir()
	b := openTest(t, dir, WithMaxPartitions(10), WithTopicDefaults(broker.TopicConfig{Partitions: 4}))
	if err := b.CreateTopic(ctx, "a", broker.TopicConfig{Partitions: 6}); err != nil {
		t.Fatal(err)
	}
	err := b.CreateTopic(ctx, "b", broker.TopicConfig{Partitions: 5})
	if !errors.Is(err, broker.ErrPartitionLimit) || !strings.Contains(err.Error(), "would make 11 in all, more than the broker's 10 (broker.max_partitions)") {
		t.Fatalf("create past the bound: %v", err)
	}
	if left, _ := filepath.Glob(filepath.Join(dir, "b-*")); len(left) != 0 || exists(filepath.Join(dir, "meta", "topics", "b.json")) {
		t.Fatalf("a refused create left %v", left)
	}
	// Auto-created with the default 4 partitions: 6+4 fits, then not.
	if err := b.Produce(ctx, "auto1", makeRecords(1, 0)); err != nil {
		t.Fatal(err)
	}
	if err := b.Produce(ctx, "auto2", makeRecords(1, 0)); !errors.Is(err, broker.ErrPartitionLimit) {
		t.Fatalf("auto-create past the bound: %v", err)
	}
	if got := b.refusedCreates.Load(); got != 2 {
		t.Fatalf("%d refusals counted, want 2", got)
	}
	reg := prometheus.NewPedanticRegistry()
	reg.MustRegister(b.Collector())
	want := `
# HELP weir_broker_partitions_max Partitions all topics may have together: broker.max_partitions, or half the open-file limit.
# TYPE weir_broker_partitions_max gauge
weir_broker_partitions_max 10
# HELP weir_broker_topic_creates_refused_total Topic creations (CreateTopics, auto-creation, weir's own topics) refused because their partitions would pass weir_broker_partitions_max; Kafka clients get POLICY_VIOLATION.
# TYPE weir_broker_topic_creates_refused_total counter
weir_broker_topic_creates_refused_total 2
`
	if err := testutil.GatherAndCompare(reg, strings.NewReader(want), "weir_broker_topic_creates_refused_total", "weir_broker_partitions_max"); err != nil {
		t.Fatal(err)
	}
	if err := b.DeleteTopic(ctx, "a"); err != nil {
		t.Fatal(err)
	}
	if err := b.CreateTopic(ctx, "b", broker.TopicConfig{Partitions: 5}); err != nil {
		t.Fatalf("create once a topic is deleted: %v", err)
	}
}

// TestPartitionBoundFromDescriptorLimit: with no explicit bound, the broker
// takes half the open-file limit, which the child lowers before opening.
func TestPartitionBoundFromDescriptorLimit(t *testing.T) {
	if err := runFDChild("TestPartitionBoundFromDescriptorLimitChild", t.TempDir()); err != nil {
		t.Fatal(err)
	}
}

// TestPartitionBoundFromDescriptorLimitChild: see
// TestPartitionBoundFromDescriptorLimit.
func TestPartitionBoundFromDescriptorLimitChild(t *testing.T) {
	dir := os.Getenv(fdLimitEnv)
	if dir == "" {
		t.Skip("run by TestPartitionBoundFromDescriptorLimit")
	}
	var lim unix.Rlimit
	if err := unix.Getrlimit(unix.RLIMIT_NOFILE, &lim); err != nil {
		t.Fatal(err)
	}
	if lim.Max < 400 {
		t.Skipf("hard open-file limit %d", lim.Max)
	}
	lim.Cur = 400
	if err := unix.Setrlimit(unix.RLIMIT_NOFILE, &lim); err != nil {
		t.Fatal(err)
	}
	b := openTest(t, dir)
	if err := b.CreateTopic(ctx, "a", broker.TopicConfig{Partitions: 150}); err != nil {
		t.Fatal(err)
	}
	err := b.CreateTopic(ctx, "b", broker.TopicConfig{Partitions: 51})
	if !errors.Is(err, broker.ErrPartitionLimit) || !strings.Contains(err.Error(), "more than the broker's 200 (half the process's open-file limit of 400") {
		t.Fatalf("create past half the limit: %v", err)
	}
	// The room left is the other half's: the broker still works.
	if err := b.CreateTopic(ctx, "b", broker.TopicConfig{Partitions: 50}); err != nil {
		t.Fatal(err)
	}
	if err := b.Produce(ctx, "b", makeRecords(100, 0)); err != nil {
		t.Fatal(err)
	}
}

// TestPartitionBoundOverKafka: a Kafka client's CreateTopics past the bound
// gets POLICY_VIOLATION with a message naming the bound, and so does its
// Metadata asking to auto-create a topic.
func TestPartitionBoundOverKafka(t *testing.T) {
	b := openTest(t, t.TempDir(), WithMaxPartitions(10), WithTopicDefaults(broker.TopicConfig{Partitions: 6}))
	cl := serveWireClient(t, b)
	adm := kadm.NewClient(cl)
	if _, err := adm.CreateTopic(ctx, 8, 1, nil, "a"); err != nil {
		t.Fatal(err)
	}
	resp, err := adm.CreateTopic(ctx, 3, 1, nil, "b")
	if !errors.Is(err, kerr.PolicyViolation) || !strings.Contains(resp.ErrMessage, "more than the broker's 10 (broker.max_partitions)") {
		t.Fatalf("CreateTopics past the bound: %v (%q), want POLICY_VIOLATION naming the bound", err, resp.ErrMessage)
	}
	req := kmsg.NewPtrMetadataRequest()
	req.AllowAutoTopicCreation = true
	rt := kmsg.NewMetadataRequestTopic()
	rt.Topic = kmsg.StringPtr("auto")
	req.Topics = append(req.Topics, rt)
	mr, err := req.RequestWith(ctx, cl)
	if err != nil {
		t.Fatal(err)
	}
	if code := mr.Topics[0].ErrorCode; code != kerr.PolicyViolation.Code {
		t.Fatalf("Metadata auto-creating past the bound: %v, want POLICY_VIOLATION", kerr.ErrorForCode(code))
	}
	if got := b.refusedCreates.Load(); got != 2 {
		t.Fatalf("%d refusals counted, want 2", got)
	}
}

// TestPartitionBoundBelowExisting: topics with more partitions than the
// bound (a lower limit or broker.max_partitions since) open all the same,
// with a warning, and no topic is created until some are deleted.
func TestPartitionBoundBelowExisting(t *testing.T) {
	dir := t.TempDir()
	b := openTest(t, dir)
	if err := b.CreateTopic(ctx, "a", broker.TopicConfig{Partitions: 12}); err != nil {
		t.Fatal(err)
	}
	b.Close()
	var logs bytes.Buffer
	b = openTest(t, dir, WithMaxPartitions(10), WithLogger(slog.New(slog.NewTextHandler(&logs, nil))))
	if !strings.Contains(logs.String(), "more partitions than the broker's bound") || !strings.Contains(logs.String(), "partitions=12 max_partitions=10") {
		t.Fatalf("no warning of the partitions past the bound:\n%s", logs.String())
	}
	if err := b.CreateTopic(ctx, "b", broker.TopicConfig{Partitions: 1}); !errors.Is(err, broker.ErrPartitionLimit) {
		t.Fatalf("create past the bound: %v", err)
	}
	if err := b.ProducePartition(ctx, "a", 11, makeRecords(1, 0)); err != nil {
		t.Fatalf("produce to a partition past the bound: %v", err)
	}
}

// TestClientsLeaveRoomForWeirsTopics: Kafka clients creating topics up to
// the bound would stop weir's collectors, whose topics are created when
// first written to; clients stop short of it.
func TestClientsLeaveRoomForWeirsTopics(t *testing.T) {
	b := openTest(t, t.TempDir(), WithMaxPartitions(20), WithTopicDefaults(broker.TopicConfig{Partitions: 4}))
	if got := b.clientReserve(); got != 10 {
		t.Fatalf("reserve of a bound of 20: %d, want 10 (at most half)", got)
	}
	if err := b.CreateClientTopic(ctx, "client1", broker.TopicConfig{Partitions: 8}); err != nil {
		t.Fatal(err)
	}
	err := b.CreateClientTopic(ctx, "client2", broker.TopicConfig{Partitions: 4})
	want := "its 4 partitions would make 12 in all, more than the 10 Kafka clients may make: the broker's 20 less 10 kept for weir's own topics (broker.max_partitions)"
	if !errors.Is(err, broker.ErrPartitionLimit) || !strings.Contains(err.Error(), want) {
		t.Fatalf("a client's create into the reserve: %v, want %q", err, want)
	}
	// weir's own: created, and auto-created on first write, in the reserve.
	if err := b.CreateTopic(ctx, "enriched.x", broker.TopicConfig{Partitions: 4}); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"raw.x", "raw.y"} {
		if err := b.Produce(ctx, name, makeRecords(1, 0)); err != nil {
			t.Fatalf("weir's own topic %s: %v", name, err)
		}
	}
	if err := b.Produce(ctx, "raw.z", makeRecords(1, 0)); !errors.Is(err, broker.ErrPartitionLimit) {
		t.Fatalf("past the bound itself: %v", err)
	}
	for bound, want := range map[int]int{2: 1, 600: 256, 10_000: 500, 524_288: 26_214} {
		b.maxPartitions = bound
		if got := b.clientReserve(); got != want {
			t.Errorf("reserve of a bound of %d: %d, want %d", bound, got, want)
		}
	}
}
