package main

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// TestTopicOverrideRemovedFromTheConfig: a topic of broker.topics takes
// its settings there at every start, and once removed from the file goes
// back to the broker's defaults. The settings of the first start were
// stored with the topic, so removing them brought those back (retention
// 1h after the file had said 2h, then nothing).
func TestTopicOverrideRemovedFromTheConfig(t *testing.T) {
	dir := t.TempDir()
	data := filepath.Join(dir, "data")
	cfg := filepath.Join(dir, "weir.yaml")
	retention := func(conf string) (string, kmsg.ConfigSource) {
		t.Helper()
		if err := os.WriteFile(cfg, []byte(conf), 0o644); err != nil {
			t.Fatal(err)
		}
		p := startWeir(t, data, "-c", cfg)
		defer p.Stop(t)
		cl, err := kgo.NewClient(kgo.SeedBrokers(p.KafkaAddr))
		if err != nil {
			t.Fatal(err)
		}
		defer cl.Close()
		rcs, err := kadm.NewClient(cl).DescribeTopicConfigs(context.Background(), "ovr")
		if err != nil {
			t.Fatal(err)
		}
		for _, rc := range rcs {
			for _, c := range rc.Configs {
				if c.Key == "retention.ms" {
					return c.MaybeValue(), c.Source
				}
			}
		}
		t.Fatal("no retention.ms for ovr")
		return "", 0
	}
	// Reported as the topic's own (DYNAMIC_TOPIC_CONFIG) only while
	// broker.topics sets it, as Kafka tools tell overrides apart.
	for _, c := range []struct {
		conf, want string
		source     kmsg.ConfigSource
	}{
		{"broker:\n  topics:\n    ovr: {partitions: 2, retention: {time: 1h}}\n", "3600000", kmsg.ConfigSourceDynamicTopicConfig},
		{"broker:\n  topics:\n    ovr: {partitions: 2, retention: {time: 2h}}\n", "7200000", kmsg.ConfigSourceDynamicTopicConfig},
		{"broker:\n  topics:\n    other: {partitions: 1}\n", "604800000", kmsg.ConfigSourceDefaultConfig},
		{"broker:\n  retention: {time: 2d}\n", "172800000", kmsg.ConfigSourceStaticBrokerConfig},
	} {
		if got, source := retention(c.conf); got != c.want || source != c.source {
			t.Fatalf("with %q: retention.ms %s (%v), want %s (%v)", c.conf, got, source, c.want, c.source)
		}
	}
}
