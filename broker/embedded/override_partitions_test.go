package embedded

import (
	"bytes"
	"log/slog"
	"strings"
	"testing"

	"github.com/weirnet/weir/broker"
)

// TestOverridePartitionsOfExistingTopicIsLogged: broker.topics.T.partitions
// applies when T is created only; raised in the config for a topic that
// exists (to spread a busy raw.syslog), it was ignored at start without a
// word, and the operator believed the topic had the new count.
func TestOverridePartitionsOfExistingTopicIsLogged(t *testing.T) {
	dir := t.TempDir()
	b, err := Open(dir, WithTopicDefaults(broker.TopicConfig{Partitions: 2}))
	if err != nil {
		t.Fatal(err)
	}
	if err := b.Produce(ctx, "t", makeRecords(10, 0)); err != nil {
		t.Fatal(err)
	}
	if err := b.Close(); err != nil {
		t.Fatal(err)
	}

	open := func(opts ...Option) (*Broker, string) {
		t.Helper()
		var logs bytes.Buffer
		opts = append(opts, WithLogger(slog.New(slog.NewTextHandler(&logs, nil))))
		b := openTest(t, dir, opts...)
		return b, logs.String()
	}

	b, logs := open(WithTopicConfig("t", broker.TopicConfig{Partitions: 6}))
	infos, err := b.DescribeTopics(ctx, "t")
	if err != nil {
		t.Fatal(err)
	}
	if n := len(infos[0].Partitions); n != 2 {
		t.Fatalf("topic t has %d partitions after the open, want its 2", n)
	}
	if !strings.Contains(logs, "level=WARN") || !strings.Contains(logs, "topic=t") || !strings.Contains(logs, "configured=6") {
		t.Fatalf("a partition count the config asks for but the topic does not have is not logged:\n%s", logs)
	}
	if err := b.Close(); err != nil {
		t.Fatal(err)
	}

	// The same count, or none, says nothing.
	for _, cfg := range []broker.TopicConfig{{Partitions: 2}, {RetentionBytes: 1 << 20}} {
		b, logs := open(WithTopicConfig("t", cfg))
		// "log opened" says the partitions of all topics: no warning.
		if strings.Contains(logs, "level=WARN") || strings.Contains(logs, "configured=") {
			t.Fatalf("with override %+v the open logged a partition count:\n%s", cfg, logs)
		}
		if err := b.Close(); err != nil {
			t.Fatal(err)
		}
	}
}
