package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/weirnet/weir/broker"
)

// KafkaJS (npm kafkajs, pinned in testdata/kafkajs/package-lock.json) is a
// third Kafka client, written apart from librdkafka and franz-go, run
// against weir's listener by testdata/kafkajs/peer.js. .ci/run installs it
// (npm ci) and sets WEIR_REQUIRE_KAFKAJS, so CI fails rather than skips
// when it is missing.

// kjsLine is one line peer.js prints; each scenario fills some fields.
type kjsLine struct {
	Member   string     `json:"member"`
	Consumed *kjsRecord `json:"consumed"`
	raw      map[string]json.RawMessage
}

type kjsRecord struct {
	Topic     string                     `json:"topic"`
	Partition int32                      `json:"partition"`
	Offset    string                     `json:"offset"`
	Key       *string                    `json:"key"`
	Value     *string                    `json:"value"`
	Headers   map[string]json.RawMessage `json:"headers"`
}

// field returns the line's field name as compact JSON, or "".
func (l kjsLine) field(name string) string {
	v, ok := l.raw[name]
	if !ok {
		return ""
	}
	var b bytes.Buffer
	if err := json.Compact(&b, v); err != nil {
		return string(v)
	}
	return b.String()
}

// kafkaJSDir returns testdata/kafkajs with its node_modules installed, or
// skips the test saying what is missing (fails it under
// WEIR_REQUIRE_KAFKAJS, as in CI).
func kafkaJSDir(t *testing.T) string {
	t.Helper()
	dir, err := filepath.Abs(filepath.Join("testdata", "kafkajs"))
	if err != nil {
		t.Fatal(err)
	}
	missing := ""
	if _, err := exec.LookPath("node"); err != nil {
		missing = "node is not installed"
	} else if _, err := os.Stat(filepath.Join(dir, "node_modules", "kafkajs", "package.json")); err != nil {
		missing = "KafkaJS is not installed (npm ci --prefix cmd/weir/testdata/kafkajs)"
	}
	if missing != "" {
		if os.Getenv("WEIR_REQUIRE_KAFKAJS") != "" {
			t.Fatalf("%s, and WEIR_REQUIRE_KAFKAJS is set", missing)
		}
		t.Skipf("%s; .ci/run installs it", missing)
	}
	return dir
}

// kafkaJS runs peer.js's scenario against p's listener and returns the
// lines it printed.
func kafkaJS(t *testing.T, p *weirProc, scenario string, args ...string) []kjsLine {
	t.Helper()
	dir := kafkaJSDir(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "node", append([]string{"peer.js", scenario, p.KafkaAddr}, args...)...)
	cmd.Dir = dir
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("kafkajs %s: %v\n%s%s\nweir log:\n%s", scenario, err, stdout.String(), stderr.String(), p.Logs())
	}
	var lines []kjsLine
	for _, s := range strings.Split(strings.TrimSpace(stdout.String()), "\n") {
		var l kjsLine
		if err := json.Unmarshal([]byte(s), &l); err != nil {
			t.Fatalf("kafkajs %s printed %q: %v", scenario, s, err)
		}
		if err := json.Unmarshal([]byte(s), &l.raw); err != nil {
			t.Fatal(err)
		}
		lines = append(lines, l)
	}
	return lines
}

// kjsField returns the first line's field name, failing if none has it.
func kjsField(t *testing.T, lines []kjsLine, name string) string {
	t.Helper()
	for _, l := range lines {
		if v := l.field(name); v != "" {
			return v
		}
	}
	t.Fatalf("kafkajs printed no %q", name)
	return ""
}

// TestKafkaJSAdmin: KafkaJS's admin client creates a topic with a config,
// reads its metadata, configs and offsets, describes and lists a group
// with a member, fetches, sets and resets its offsets, and deletes the
// group and the topic.
func TestKafkaJSAdmin(t *testing.T) {
	kafkaJSDir(t)
	p := startWeir(t, t.TempDir())
	lines := kafkaJS(t, p, "admin", "kjs.admin", "kjs-admin")
	for field, want := range map[string]string{
		"created":      `true`,
		"createdAgain": `false`,
		"listed":       `true`,
		"cluster":      `{"brokers":1,"controller":0,"clusterId":"weir"}`,
		"retention":    `["3600000"]`,
		"group":        `[{"id":"kjs-admin","state":"Stable","protocolType":"consumer","protocol":"RoundRobinAssigner","members":1,"error":0}]`,
		// 12 records over 6 partitions by KafkaJS's murmur2 partitioner,
		// all committed; then partition 0 set back to 1.
		"offsets": `[{"partition":0,"offset":"2"},{"partition":1,"offset":"1"},{"partition":2,"offset":"2"},{"partition":3,"offset":"1"},{"partition":4,"offset":"4"},{"partition":5,"offset":"2"}]`,
		"set":     `["1","1","2","1","4","2"]`,
		// resetOffsets' -2 and -1 are kept as committed, as Kafka keeps
		// them: the group is not lost (Dead), and a member reads from
		// its reset position (here the start) again.
		"resetEarliest":      `["-2","-2","-2","-2","-2","-2"]`,
		"stateAfterReset":    `["Empty"]`,
		"consumedAfterReset": `12`,
		"resetLatest":        `["-1","-1","-1","-1","-1","-1"]`,
		"listedAfterDelete":  `false`,
	} {
		if got := kjsField(t, lines, field); got != want {
			t.Errorf("%s: %s, want %s", field, got, want)
		}
	}
	var meta []struct {
		Name       string
		Partitions []struct {
			ID, Leader, Error int32
			Replicas, ISR     []int32
		}
	}
	if err := json.Unmarshal([]byte(kjsField(t, lines, "metadata")), &meta); err != nil {
		t.Fatal(err)
	}
	if len(meta) != 1 || meta[0].Name != "kjs.admin" || len(meta[0].Partitions) != 6 {
		t.Fatalf("metadata: %+v", meta)
	}
	for i, p := range meta[0].Partitions {
		if p.ID != int32(i) || p.Leader != 0 || p.Error != 0 || !slices.Equal(p.Replicas, []int32{0}) || !slices.Equal(p.ISR, []int32{0}) {
			t.Errorf("partition %d: %+v", i, p)
		}
	}
	if got := kjsField(t, lines, "topicOffsets"); !strings.Contains(got, `"partition":4,"low":"0","high":"4"`) {
		t.Errorf("topic offsets: %s", got)
	}
	if got := kjsField(t, lines, "groups"); !strings.Contains(got, `"kjs-admin"`) {
		t.Errorf("listGroups: %s", got)
	}
	if got := kjsField(t, lines, "groupsAfterDelete"); strings.Contains(got, `"kjs-admin"`) {
		t.Errorf("listGroups after deleteGroups: %s", got)
	}
}

// TestKafkaJSProduce: keyed records with headers from KafkaJS's plain,
// idempotent (gzip) and snappy producers land where weir's partitioner
// puts their keys (Java's murmur2, KafkaJS's DefaultPartitioner), and
// come back whole to a KafkaJS consumer (read_committed, its default) and
// to `weir consume`.
func TestKafkaJSProduce(t *testing.T) {
	kafkaJSDir(t)
	p := startWeir(t, t.TempDir())
	lines := kafkaJS(t, p, "produce", "kjs.produce")
	kinds := []string{"plain", "idempotent-gzip", "snappy"}
	sent := 0
	for _, l := range lines {
		if s := l.field("sent"); s != "" {
			sent++
			// Every partition acknowledged without error.
			if a := l.field("acks"); strings.Contains(strings.ReplaceAll(a, `"error":0`, ""), `"error":`) {
				t.Errorf("send %s: acks %s", s, a)
			}
		}
	}
	if sent != len(kinds) {
		t.Fatalf("%d sends, want %d", sent, len(kinds))
	}
	seen := make(map[string]bool)
	for _, l := range lines {
		r := l.Consumed
		if r == nil {
			continue
		}
		if r.Key == nil || r.Value == nil {
			t.Fatalf("record without key or value: %+v", r)
		}
		if want := broker.PartitionForKey([]byte(*r.Key), 6); r.Partition != want {
			t.Errorf("key %s on partition %d; weir's partitioner puts it on %d", *r.Key, r.Partition, want)
		}
		var v struct {
			Kind string
			I    int
		}
		if err := json.Unmarshal([]byte(*r.Value), &v); err != nil {
			t.Fatalf("value %q: %v", *r.Value, err)
		}
		if *r.Key != fmt.Sprintf("device-%d", v.I) || string(r.Headers["kind"]) != `"`+v.Kind+`"` ||
			string(r.Headers["i"]) != fmt.Sprintf(`"%d"`, v.I) || string(r.Headers["repeated"]) != `["a","b"]` {
			t.Errorf("record %s %s, headers %s", *r.Key, *r.Value, r.Headers)
		}
		if seen[*r.Value] {
			t.Errorf("%s read twice", *r.Value)
		}
		seen[*r.Value] = true
	}
	if len(seen) != 40*len(kinds) {
		t.Fatalf("KafkaJS read %d distinct records, want %d", len(seen), 40*len(kinds))
	}

	// franz-go (weir consume) reads KafkaJS's compressed batches too.
	out, errs, err := p.cli(t, "", "consume", "kjs.produce", "--from-beginning")
	if err != nil {
		t.Fatalf("weir consume: %v %s", err, errs)
	}
	got := strings.Split(strings.TrimSpace(out), "\n")
	if len(got) != len(seen) {
		t.Fatalf("weir consume printed %d records, want %d", len(got), len(seen))
	}
	for _, want := range []string{`"key":"device-7","value":{"kind":"snappy","i":7},"headers":{"i":"7","kind":"snappy","repeated":["a","b"]}`} {
		if !strings.Contains(out, want) {
			t.Errorf("weir consume lacks %s", want)
		}
	}
}

// TestKafkaJSTransactionsRefused: weir has no transaction coordinator
// (README, Kafka listener), so KafkaJS's transactional producer fails
// before it writes anything, rather than writing records it takes to be
// atomic.
func TestKafkaJSTransactionsRefused(t *testing.T) {
	kafkaJSDir(t)
	p := startWeir(t, t.TempDir())
	if _, errs, err := p.cli(t, "", "topics", "create", "kjs.txn", "--partitions", "1"); err != nil {
		t.Fatal(err, errs)
	}
	lines := kafkaJS(t, p, "transaction", "kjs.txn")
	if got := kjsField(t, lines, "refused"); got != `"KafkaJSGroupCoordinatorNotFound"` {
		t.Fatalf("transactional producer: %s, want no coordinator", got)
	}
	if out, _, _ := p.cli(t, "", "topics", "list", "kjs.txn"); !strings.Contains(out, "kjs.txn  1           0 ") {
		t.Fatalf("a refused transaction wrote records:\n%s", out)
	}
}

// TestKafkaJSConsumerGroup: two KafkaJS consumers in one group share the
// partitions; when one leaves the other takes them all; it commits as it
// stops, and a new member resumes from the commits: each record read
// exactly once.
func TestKafkaJSConsumerGroup(t *testing.T) {
	kafkaJSDir(t)
	p := startWeir(t, t.TempDir())
	if _, errs, err := p.cli(t, "", "topics", "create", "kjs.group", "--partitions", "6"); err != nil {
		t.Fatal(err, errs)
	}
	lines := kafkaJS(t, p, "group", "kjs.group", "kjs-group")
	var shared struct{ A, B []int32 }
	if err := json.Unmarshal([]byte(kjsField(t, lines, "shared")), &shared); err != nil {
		t.Fatal(err)
	}
	all := slices.Sorted(slices.Values(append(slices.Clone(shared.A), shared.B...)))
	if len(shared.A) == 0 || len(shared.B) == 0 || !slices.Equal(all, []int32{0, 1, 2, 3, 4, 5}) {
		t.Fatalf("partitions not shared: %+v", shared)
	}
	count := make(map[string]int)
	byMember := make(map[string]int)
	for _, l := range lines {
		if l.Consumed == nil {
			continue
		}
		count[*l.Consumed.Value]++
		byMember[l.Member]++
		if l.Member == "b" && !slices.Contains(shared.B, l.Consumed.Partition) {
			t.Errorf("b read partition %d, not its own", l.Consumed.Partition)
		}
	}
	for i := range 120 {
		if n := count[fmt.Sprintf("r%d", i)]; n != 1 {
			t.Errorf("r%d read %d times", i, n)
		}
	}
	// The third member only reads what came after the stop: the group's
	// commits were kept.
	if byMember["c"] != 30 || byMember["a"]+byMember["b"] != 90 || byMember["b"] == 0 {
		t.Errorf("records per member: %v", byMember)
	}
	wantCaughtUp(t, p, "kjs-group", "kjs.group")
}

// TestKafkaJSReadsEnrichedTopics: a syslog line sent with logger comes out
// of weir's pipeline, and a KafkaJS consumer reads the enriched log and the
// event with their headers.
func TestKafkaJSReadsEnrichedTopics(t *testing.T) {
	kafkaJSDir(t)
	if _, err := exec.LookPath("logger"); err != nil {
		t.Skip("logger not installed")
	}
	p := startWeir(t, t.TempDir())
	p.arista(t, "%LINEPROTO-5-UPDOWN: Line protocol on Interface Ethernet3, changed state to down")
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(100 * time.Millisecond) {
		if out, _, _ := p.cli(t, "", "consume", "events", "--from-beginning"); strings.Contains(out, "interface_down") {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("no interface_down event:\n%s", p.Logs())
		}
	}
	for topic, schema := range map[string]string{"enriched.syslog": "log/1", "events": "event/1"} {
		lines := kafkaJS(t, p, "consume", topic, "1")
		r := lines[0].Consumed
		if r == nil || r.Value == nil {
			t.Fatalf("%s: %+v", topic, lines[0].raw)
		}
		var v map[string]any
		if err := json.Unmarshal([]byte(*r.Value), &v); err != nil {
			t.Fatalf("%s value %q: %v", topic, *r.Value, err)
		}
		if string(r.Headers["schema"]) != `"`+schema+`"` || string(r.Headers["source"]) == "" {
			t.Errorf("%s headers %s", topic, r.Headers)
		}
		if src := string(r.Headers["src_offset"]); !strings.HasPrefix(src, `"raw.syslog`) {
			t.Errorf("%s src_offset header %s", topic, src)
		}
		if !strings.Contains(*r.Value, "Ethernet3") {
			t.Errorf("%s value %s", topic, *r.Value)
		}
	}
}
