package embedded

import (
	"errors"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/weirnet/weir/broker"
)

// TestAlterTopicConfig: a topic's own configs are set, deleted and
// replaced, checked as CreateTopics checks them, kept across a restart,
// and left alone by a validate-only change or a refused one.
func TestAlterTopicConfig(t *testing.T) {
	dir := t.TempDir()
	b := openTest(t, dir)
	if err := b.CreateTopic(ctx, "t", broker.TopicConfig{Partitions: 2, SegmentBytes: 1 << 20}); err != nil {
		t.Fatal(err)
	}
	own := func(b *Broker) broker.TopicConfig {
		t.Helper()
		o, _, _, err := b.TopicConfigLayers("t")
		if err != nil {
			t.Fatal(err)
		}
		return o
	}
	effective := func(b *Broker) broker.TopicConfig {
		t.Helper()
		infos, err := b.DescribeTopics(ctx, "t")
		if err != nil {
			t.Fatal(err)
		}
		return infos[0].Config
	}
	alter := func(b *Broker, ch broker.TopicConfigChange, validateOnly bool) error {
		return b.AlterTopicConfig(ctx, "t", ch, validateOnly)
	}
	if err := alter(b, broker.TopicConfigChange{Set: broker.TopicConfig{RetentionTime: time.Hour, RetentionBytes: -1}}, false); err != nil {
		t.Fatal(err)
	}
	want := broker.TopicConfig{Partitions: 2, RetentionTime: time.Hour, RetentionBytes: -1, SegmentBytes: 1 << 20}
	if got := own(b); got != want {
		t.Fatalf("own after set: %+v, want %+v", got, want)
	}
	if got := effective(b); got.RetentionTime != time.Hour || got.RetentionBytes != -1 || got.SegmentAge != DefaultSegmentAge {
		t.Fatalf("in effect after set: %+v", got)
	}
	// Refused values and validate-only change nothing.
	for _, ch := range []broker.TopicConfigChange{
		{Set: broker.TopicConfig{SegmentBytes: broker.MinSegmentBytes - 1}},
		{Set: broker.TopicConfig{SegmentBytes: broker.MaxSegmentBytes + 1}},
		{Set: broker.TopicConfig{SegmentAge: -time.Second}},
		{Set: broker.TopicConfig{Partitions: 3}},
		{Set: broker.TopicConfig{RetentionTime: 2 * time.Hour}, Delete: broker.RetentionTimeField},
	} {
		if err := alter(b, ch, false); !errors.Is(err, broker.ErrInvalidConfig) {
			t.Errorf("%+v: %v, want ErrInvalidConfig", ch, err)
		}
	}
	if err := alter(b, broker.TopicConfigChange{Set: broker.TopicConfig{SegmentAge: time.Minute}, Delete: broker.RetentionTimeField}, true); err != nil {
		t.Fatal(err)
	}
	if got := own(b); got != want {
		t.Fatalf("own after refused and validate-only changes: %+v, want %+v", got, want)
	}
	// Delete, then survive a restart.
	if err := alter(b, broker.TopicConfigChange{Delete: broker.RetentionBytesField | broker.SegmentAgeField}, false); err != nil {
		t.Fatal(err)
	}
	want.RetentionBytes = 0
	if got := own(b); got != want {
		t.Fatalf("own after delete: %+v, want %+v", got, want)
	}
	infos, _ := b.DescribeTopics(ctx, "t")
	id := infos[0].ID
	if err := b.Close(); err != nil {
		t.Fatal(err)
	}
	b = openTest(t, dir)
	if got := own(b); got != want {
		t.Fatalf("own after restart: %+v, want %+v", got, want)
	}
	if got := effective(b); got.RetentionBytes != DefaultRetentionBytes || got.RetentionTime != time.Hour {
		t.Fatalf("in effect after restart: %+v", got)
	}
	if infos, _ := b.DescribeTopics(ctx, "t"); infos[0].ID != id || len(infos[0].Partitions) != 2 {
		t.Fatalf("the topic changed: %+v", infos[0])
	}
	// Replace: what is not given goes; for ever survives a restart too.
	if err := alter(b, broker.TopicConfigChange{Set: broker.TopicConfig{RetentionTime: -1}, Replace: true}, false); err != nil {
		t.Fatal(err)
	}
	b.Close()
	b = openTest(t, dir)
	if got := own(b); got.RetentionTime >= 0 || got.SegmentBytes != 0 || got.RetentionBytes != 0 {
		t.Fatalf("own after replace and restart: %+v", got)
	}
	if err := b.AlterTopicConfig(ctx, "missing", broker.TopicConfigChange{Set: broker.TopicConfig{RetentionTime: time.Hour}}, false); !errors.Is(err, broker.ErrUnknownTopic) {
		t.Fatalf("unknown topic: %v", err)
	}
}

// TestAlterTopicConfigUnderWeirYAML: a config the topic's broker.topics
// entry sets wins over the topic's own, so changing or deleting it is
// refused, saying where it is set; setting it to its value is a no-op
// (tools send back every config they read), and the others change.
func TestAlterTopicConfigUnderWeirYAML(t *testing.T) {
	dir := t.TempDir()
	opts := []Option{WithTopicConfig("t", broker.TopicConfig{RetentionTime: 2 * time.Hour})}
	b := openTest(t, dir, opts...)
	if err := b.CreateTopic(ctx, "t", broker.TopicConfig{Partitions: 1}); err != nil {
		t.Fatal(err)
	}
	for _, ch := range []broker.TopicConfigChange{
		{Set: broker.TopicConfig{RetentionTime: 3 * time.Hour}},
		{Set: broker.TopicConfig{RetentionTime: -1}},
		{Delete: broker.RetentionTimeField},
	} {
		err := b.AlterTopicConfig(ctx, "t", ch, false)
		if !errors.Is(err, broker.ErrConfigPolicy) || !strings.Contains(err.Error(), "broker.topics.t.retention.time") {
			t.Errorf("%+v: %v, want ErrConfigPolicy naming broker.topics.t.retention.time", ch, err)
		}
	}
	if err := b.AlterTopicConfig(ctx, "t", broker.TopicConfigChange{Set: broker.TopicConfig{RetentionTime: 2 * time.Hour, RetentionBytes: 1 << 20}}, false); err != nil {
		t.Fatal(err)
	}
	// A replace that leaves it out keeps it.
	if err := b.AlterTopicConfig(ctx, "t", broker.TopicConfigChange{Set: broker.TopicConfig{SegmentBytes: 1 << 20, RetentionBytes: 1 << 20}, Replace: true}, false); err != nil {
		t.Fatal(err)
	}
	want := broker.TopicConfig{Partitions: 1, RetentionTime: 2 * time.Hour, RetentionBytes: 1 << 20, SegmentBytes: 1 << 20}
	o, _, _, _ := b.TopicConfigLayers("t")
	if o != want {
		t.Fatalf("own: %+v, want %+v", o, want)
	}
	b.Close()
	// Without the weir.yaml entry, the topic stores no retention time of
	// its own: the alters did not put one there.
	b = openTest(t, dir)
	o, _, _, _ = b.TopicConfigLayers("t")
	if want.RetentionTime = 0; o != want {
		t.Fatalf("own without weir.yaml's entry: %+v, want %+v", o, want)
	}
}

// TestAlterTopicConfigRetentionApplies: a shortened retention applies to
// the running topic: the next retention check deletes what is older.
func TestAlterTopicConfigRetentionApplies(t *testing.T) {
	now := time.Now()
	var clock atomic.Pointer[time.Time]
	clock.Store(&now)
	b := openTest(t, t.TempDir(), withClock(func() time.Time { return *clock.Load() }))
	if err := b.CreateTopic(ctx, "t", broker.TopicConfig{Partitions: 1, SegmentBytes: 8 << 10}); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 100; i++ {
		if err := b.Produce(ctx, "t", makeRecords(10, i*10)); err != nil {
			t.Fatal(err)
		}
	}
	later := now.Add(2 * time.Hour)
	clock.Store(&later)
	b.ApplyRetention() // a week's retention: nothing goes
	if infos, _ := b.DescribeTopics(ctx, "t"); infos[0].Partitions[0].LogStartOffset != 0 {
		t.Fatalf("deleted before the change: %+v", infos[0].Partitions[0])
	}
	if err := b.AlterTopicConfig(ctx, "t", broker.TopicConfigChange{Set: broker.TopicConfig{RetentionTime: time.Hour}}, false); err != nil {
		t.Fatal(err)
	}
	b.ApplyRetention()
	p := func() broker.PartitionInfo { infos, _ := b.DescribeTopics(ctx, "t"); return infos[0].Partitions[0] }()
	if p.LogStartOffset != 1000 || p.HighWatermark != 1000 || p.Bytes != 0 {
		t.Fatalf("after retention shortened to 1h, 2h later: %+v", p)
	}
}
