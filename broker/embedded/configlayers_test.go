package embedded

import (
	"errors"
	"testing"
	"time"

	"github.com/weirnet/weir/broker"
)

// TestTopicConfigLayers: the Kafka listener reports each config's source
// from TopicConfigLayers, so it must tell what a topic set itself (at
// creation, under its per-topic settings) from the broker-wide settings
// and the built-in defaults, also after a restart, when the topic's own
// configs come from its meta file.
func TestTopicConfigLayers(t *testing.T) {
	dir := t.TempDir()
	opts := []Option{
		WithTopicDefaults(broker.TopicConfig{RetentionBytes: 2 << 30, SegmentAge: DefaultSegmentAge}),
		WithTopicConfig("t", broker.TopicConfig{RetentionTime: time.Hour}),
	}
	b := openTest(t, dir, opts...)
	if err := b.CreateTopic(ctx, "t", broker.TopicConfig{Partitions: 2, RetentionTime: 2 * time.Hour, SegmentBytes: 1 << 20}); err != nil {
		t.Fatal(err)
	}
	if err := b.CreateTopic(ctx, "u", broker.TopicConfig{RetentionBytes: -1}); err != nil {
		t.Fatal(err)
	}
	check := func(b *Broker) {
		t.Helper()
		builtin := broker.TopicConfig{Partitions: DefaultPartitions, RetentionTime: DefaultRetentionTime,
			RetentionBytes: DefaultRetentionBytes, SegmentBytes: DefaultSegmentBytes, SegmentAge: DefaultSegmentAge}
		// A broker-wide value equal to the built-in default is the default.
		wide := broker.TopicConfig{RetentionBytes: 2 << 30}
		for name, wantOwn := range map[string]broker.TopicConfig{
			"t": {Partitions: 2, RetentionTime: time.Hour, SegmentBytes: 1 << 20}, // the per-topic setting wins
			"u": {Partitions: DefaultPartitions, RetentionBytes: -1},
		} {
			own, bw, bi, err := b.TopicConfigLayers(name)
			if err != nil {
				t.Fatal(err)
			}
			if own != wantOwn || bw != wide || bi != builtin {
				t.Errorf("%s: layers %+v, %+v, %+v; want %+v, %+v, %+v", name, own, bw, bi, wantOwn, wide, builtin)
			}
		}
		if _, _, _, err := b.TopicConfigLayers("missing"); !errors.Is(err, broker.ErrUnknownTopic) {
			t.Errorf("unknown topic: %v", err)
		}
	}
	check(b)
	if err := b.Close(); err != nil {
		t.Fatal(err)
	}
	check(openTest(t, dir, opts...))
}
