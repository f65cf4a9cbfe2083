package main

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kfake"

	"github.com/weirnet/weir/broker"
	"github.com/weirnet/weir/broker/embedded"
)

// TestTopicsCreateSaysWhy: a topic the broker refuses to create is
// reported with the broker's reason (which config, which value), not only
// Kafka's generic text for the code ("INVALID_CONFIG: Configuration is
// invalid."), which leaves the user guessing which --config was wrong.
func TestTopicsCreateSaysWhy(t *testing.T) {
	p := startWeir(t, t.TempDir())
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--config", "cleanup.policy=compact"}, `invalid value "compact" for cleanup.policy: only delete is supported`},
		{[]string{"--config", "retention.ms=abc"}, `invalid value "abc" for retention.ms`},
		{[]string{"--partitions", "0"}, "the number of partitions must be positive"},
		// The code's name and the broker's message, not Kafka's stock
		// text for the code, which says the opposite here.
		{[]string{"--partitions", "100000"}, "INVALID_PARTITIONS: invalid partition count: 100000 (1 to 10000)"},
	} {
		args := append([]string{"topics", "create", "t"}, c.args...)
		_, errs, err := p.cli(t, "", args...)
		if err == nil {
			t.Fatalf("weir %s succeeded", strings.Join(args, " "))
		}
		if !strings.Contains(errs, c.want) {
			t.Errorf("weir %s: stderr %q does not say %q", strings.Join(args, " "), errs, c.want)
		}
	}
}

// TestTopicsCreatePartitionBound: broker.max_partitions reaches the
// embedded broker, and a create past it tells the user the code, the bound
// and where it comes from; nothing of the topic is left in data_dir.
func TestTopicsCreatePartitionBound(t *testing.T) {
	dir := t.TempDir()
	cfg := filepath.Join(dir, "weir.yaml")
	// 100, of which Kafka clients may make 50.
	if err := os.WriteFile(cfg, []byte("broker:\n  max_partitions: 100\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	data := filepath.Join(dir, "data")
	p := startWeir(t, data, "--config", cfg)
	if out, errs, err := p.cli(t, "", "topics", "create", "many1", "--partitions", "12"); err != nil {
		t.Fatalf("topics create many1: %v %s%s", err, out, errs)
	}
	_, errs, err := p.cli(t, "", "topics", "create", "many2", "--partitions", "40")
	want := []string{"POLICY_VIOLATION: partition limit reached: topic many2: its 40 partitions would make ",
		" in all, more than the 50 Kafka clients may make: the broker's 100 less 50 kept for weir's own topics (broker.max_partitions)"}
	if err == nil || !strings.Contains(errs, want[0]) || !strings.Contains(errs, want[1]) {
		t.Fatalf("topics create past the bound: %v, stderr %q; want %q", err, errs, want)
	}
	if left, _ := filepath.Glob(filepath.Join(data, "many2-*")); len(left) != 0 {
		t.Fatalf("left behind: %v", left)
	}
}

// TestTopicsCreateFlagsOnlyForCreate: create's flags given to another
// subcommand are refused, not ignored (`topics list --partitions 3` listed
// as if nothing was asked), and are not in that subcommand's help.
func TestTopicsCreateFlagsOnlyForCreate(t *testing.T) {
	p := startWeir(t, t.TempDir())
	if _, errs, err := p.cli(t, "", "topics", "list", "--partitions", "3"); err == nil || !strings.Contains(errs, "-partitions") {
		t.Fatalf("topics list --partitions 3: %v, stderr %q", err, errs)
	}
	if out, errs, _ := p.cli(t, "", "topics", "list", "-h"); strings.Contains(out+errs, "retention") {
		t.Fatalf("topics list -h shows create's flags:\n%s%s", out, errs)
	}
}

// TestTopicsCreateRetentionForever: --retention -1 keeps records for ever,
// as -1 does in the config file. It parsed as -1ns, sent as retention.ms
// 0: the embedded broker refused "0" (a value the user never wrote), and
// a Kafka cluster takes 0 and deletes the topic's records at once. A
// retention under a millisecond, which would also become 0, is refused.
func TestTopicsCreateRetentionForever(t *testing.T) {
	p := startWeir(t, t.TempDir())
	if out, errs, err := p.cli(t, "", "topics", "create", "forever", "--retention", "-1", "--retention-bytes", "-1"); err != nil || !strings.Contains(out, "created forever") {
		t.Fatalf("topics create --retention -1: %v %s%s", err, out, errs)
	}
	if _, errs, err := p.cli(t, "", "topics", "create", "tiny", "--retention", "500us"); err == nil || !strings.Contains(errs, "500us") {
		t.Errorf("--retention 500us: %v, stderr %q; want an error naming it", err, errs)
	}
}

// TestTopicsCreateNameChecked: a name Kafka refuses is refused before it
// is sent: a cluster that takes it anyway (kfake did, `bad/name`) leaves
// a topic no Kafka tool nor weir's config can name.
func TestTopicsCreateNameChecked(t *testing.T) {
	c, err := kfake.NewCluster(kfake.NumBrokers(1))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	for _, name := range []string{"bad/name", "..", "a b"} {
		var stdout, stderr bytes.Buffer
		err := dispatch(ctx, []string{"topics", "create", "--brokers", c.ListenAddrs()[0], name}, strings.NewReader(""), &stdout, &stderr)
		if err == nil || !strings.Contains(err.Error()+stderr.String(), "invalid topic name") {
			t.Errorf("topics create %q: %v (%s%s), want an invalid topic name", name, err, stdout.String(), stderr.String())
		}
	}
}

// TestTopicsDescribeShowsConfig: describe shows how long the topic keeps
// records and when its segments roll, as the broker reports them
// (DescribeConfigs): the one question describe could not answer, a
// topic's retention, needed kcat or Kafka's tools. A value the topic does
// not set is marked with where it comes from (the broker's default), as
// the broker reports it: one set at creation, even to the default, is not.
func TestTopicsDescribeShowsConfig(t *testing.T) {
	p := startWeir(t, t.TempDir())
	if out, errs, err := p.cli(t, "", "topics", "create", "kept", "--retention", "2d", "--retention-bytes", "1GiB", "--config", "segment.ms=3600000"); err != nil {
		t.Fatalf("topics create: %v %s%s", err, out, errs)
	}
	out, errs, err := p.cli(t, "", "topics", "describe", "kept")
	if err != nil {
		t.Fatalf("topics describe: %v %s", err, errs)
	}
	for _, want := range []string{"retention.ms=172800000 (2d)  ", "retention.bytes=1073741824 (1.0GiB)  ", "segment.bytes=268435456 (256.0MiB, default)  ", "segment.ms=3600000 (1h)\n"} {
		if !strings.Contains(out, want) {
			t.Errorf("describe does not show %s:\n%s", want, out)
		}
	}
	if _, errs, err := p.cli(t, "", "topics", "create", "forever", "--retention", "-1", "--retention-bytes", "-1"); err != nil {
		t.Fatalf("topics create: %v %s", err, errs)
	}
	out, _, _ = p.cli(t, "", "topics", "describe", "forever")
	for _, want := range []string{"retention.ms=-1 (for ever)", "retention.bytes=-1 (no bound)"} {
		if !strings.Contains(out, want) {
			t.Errorf("describe does not show %s:\n%s", want, out)
		}
	}
}

// TestClientLogValidatesWithTheClientsBound: a validate_only CreateTopics
// through the listener says what the client's creation would, the
// reserve for weir's own topics included.
func TestClientLogValidatesWithTheClientsBound(t *testing.T) {
	b, err := embedded.Open(t.TempDir(), embedded.WithMaxPartitions(100))
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	l := clientLog{Broker: b}
	err = l.ValidateCreateTopic(context.Background(), "many", broker.TopicConfig{Partitions: 60})
	if !errors.Is(err, broker.ErrPartitionLimit) || !strings.Contains(err.Error(), "more than the 50 Kafka clients may make") {
		t.Fatalf("validating 60 partitions of a bound of 100: %v", err)
	}
	if err := b.ValidateCreateTopic(context.Background(), "many", broker.TopicConfig{Partitions: 60}); err != nil {
		t.Fatalf("weir's own 60 partitions: %v", err)
	}
}
