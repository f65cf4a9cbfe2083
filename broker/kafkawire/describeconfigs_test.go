package kafkawire

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/weirnet/weir/broker"
	"github.com/weirnet/weir/broker/embedded"
)

// TestDescribeConfigsEmptyKeyListMeansAll: Kafka (ConfigHelper) takes an
// empty, non-null configuration_keys list as null: every config of the
// resource. Clients that build the resource without naming keys (the Rust
// kafka-protocol crate's default) send an empty list.
func TestDescribeConfigsEmptyKeyListMeansAll(t *testing.T) {
	b, addr := startEmbedded(t)
	if err := b.CreateTopic(context.Background(), "cfg", broker.TopicConfig{Partitions: 1}); err != nil {
		t.Fatal(err)
	}
	rc := dialRaw(t, addr)
	for _, v := range []int16{1, 4} {
		req := kmsg.NewPtrDescribeConfigsRequest()
		req.Version = v
		r := kmsg.NewDescribeConfigsRequestResource()
		r.ResourceType = kmsg.ConfigResourceTypeTopic
		r.ResourceName = "cfg"
		r.ConfigNames = []string{} // empty, not null
		req.Resources = append(req.Resources, r)
		resp := rc.do(req).(*kmsg.DescribeConfigsResponse)
		if len(resp.Resources) != 1 || resp.Resources[0].ErrorCode != 0 {
			t.Fatalf("v%d: %+v", v, resp.Resources)
		}
		if n := len(resp.Resources[0].Configs); n == 0 {
			t.Errorf("DescribeConfigs v%d with an empty config name list returned no configs; Kafka returns all of them", v)
		}
	}
}

// TestDescribeConfigsSources: as on Kafka, a topic config's source says
// where its value comes from, for the tools that tell overrides from
// defaults by it (kafka-configs --describe, kafka-ui, Terraform, kadm
// users): DYNAMIC_TOPIC_CONFIG for what the topic set itself (at
// CreateTopics, or a per-topic setting of weir.yaml, which wins),
// STATIC_BROKER_CONFIG for weir.yaml's broker-wide settings, DEFAULT_CONFIG
// for built-in defaults; synonyms list the topic's value, then the broker's
// and the default it overrides.
// The embedded broker tells where its configs come from.
var _ ConfigSourcer = (*embedded.Broker)(nil)

func TestDescribeConfigsSources(t *testing.T) {
	b, err := embedded.Open(t.TempDir(), embedded.WithLogger(testLogger(t)),
		embedded.WithTopicDefaults(broker.TopicConfig{RetentionBytes: 2 << 30}),
		embedded.WithTopicConfig("ovr", broker.TopicConfig{RetentionTime: time.Hour}),
		embedded.WithMaxMessageBytes(1<<20))
	if err != nil {
		t.Fatal(err)
	}
	_, addr := startServer(t, b)
	t.Cleanup(func() { b.Close() })
	ctx := context.Background()
	if err := b.CreateTopic(ctx, "plain", broker.TopicConfig{Partitions: 1}); err != nil {
		t.Fatal(err)
	}
	adm := kadm.NewClient(newClient(t, addr))
	str := func(s string) *string { return &s }
	if _, err := adm.CreateTopic(ctx, 1, 1, map[string]*string{"segment.ms": str("60000"), "retention.bytes": str("-1")}, "made"); err != nil {
		t.Fatal(err)
	}
	if _, err := adm.CreateTopic(ctx, 1, 1, map[string]*string{"retention.ms": str("7200000")}, "ovr"); err != nil {
		t.Fatal(err)
	}
	rcs, err := adm.DescribeTopicConfigs(ctx, "plain", "made", "ovr")
	if err != nil {
		t.Fatal(err)
	}
	type syn struct {
		name, value string
		source      kmsg.ConfigSource
	}
	got := map[string]map[string]kadm.Config{}
	for _, rc := range rcs {
		if rc.Err != nil {
			t.Fatalf("%s: %v", rc.Name, rc.Err)
		}
		got[rc.Name] = map[string]kadm.Config{}
		for _, c := range rc.Configs {
			got[rc.Name][c.Key] = c
		}
	}
	const (
		dyn    = kmsg.ConfigSourceDynamicTopicConfig
		static = kmsg.ConfigSourceStaticBrokerConfig
		def    = kmsg.ConfigSourceDefaultConfig
	)
	for _, w := range []struct {
		topic, key, value string
		source            kmsg.ConfigSource
		synonyms          []syn
	}{
		{"plain", "retention.ms", "604800000", def, []syn{{"log.retention.ms", "604800000", def}}},
		{"plain", "retention.bytes", "2147483648", static, []syn{{"log.retention.bytes", "2147483648", static}, {"log.retention.bytes", "1073741824", def}}},
		{"plain", "segment.bytes", "268435456", def, []syn{{"log.segment.bytes", "268435456", def}}},
		{"plain", "segment.ms", "604800000", def, []syn{{"log.roll.ms", "604800000", def}}},
		{"plain", "cleanup.policy", "delete", def, []syn{{"log.cleanup.policy", "delete", def}}},
		{"plain", "max.message.bytes", "1048576", static, []syn{{"message.max.bytes", "1048576", static}, {"message.max.bytes", "8388608", def}}},
		{"made", "segment.ms", "60000", dyn, []syn{{"segment.ms", "60000", dyn}, {"log.roll.ms", "604800000", def}}},
		{"made", "retention.bytes", "-1", dyn, []syn{{"retention.bytes", "-1", dyn}, {"log.retention.bytes", "2147483648", static}, {"log.retention.bytes", "1073741824", def}}},
		{"made", "retention.ms", "604800000", def, []syn{{"log.retention.ms", "604800000", def}}},
		{"ovr", "retention.ms", "3600000", dyn, []syn{{"retention.ms", "3600000", dyn}, {"log.retention.ms", "604800000", def}}},
		{"ovr", "segment.bytes", "268435456", def, []syn{{"log.segment.bytes", "268435456", def}}},
	} {
		c, ok := got[w.topic][w.key]
		if !ok {
			t.Errorf("%s: no %s", w.topic, w.key)
			continue
		}
		if c.MaybeValue() != w.value || c.Source != w.source {
			t.Errorf("%s %s = %s (%v), want %s (%v)", w.topic, w.key, c.MaybeValue(), c.Source, w.value, w.source)
		}
		var syns []syn
		for _, s := range c.Synonyms {
			v := ""
			if s.Value != nil {
				v = *s.Value
			}
			syns = append(syns, syn{s.Key, v, s.Source})
		}
		if !slices.Equal(syns, w.synonyms) {
			t.Errorf("%s %s synonyms %v, want %v", w.topic, w.key, syns, w.synonyms)
		}
	}

	// The broker's message.max.bytes, set, and at the default.
	messageLimit := func(adm *kadm.Client, topic string) (topicSource, brokerSource kmsg.ConfigSource) {
		t.Helper()
		rcs, err := adm.DescribeTopicConfigs(ctx, topic)
		if err != nil || len(rcs) != 1 {
			t.Fatal(rcs, err)
		}
		for _, c := range rcs[0].Configs {
			if c.Key == "max.message.bytes" {
				topicSource = c.Source
			}
		}
		bcs, err := adm.DescribeBrokerConfigs(ctx, 0)
		if err != nil || len(bcs) != 1 {
			t.Fatal(bcs, err)
		}
		for _, c := range bcs[0].Configs {
			if c.Key == "message.max.bytes" {
				brokerSource = c.Source
			}
		}
		return topicSource, brokerSource
	}
	if ts, bs := messageLimit(adm, "plain"); ts != static || bs != static {
		t.Errorf("configured limit: max.message.bytes %v, message.max.bytes %v; want both %v", ts, bs, static)
	}
	b2, addr2 := startEmbedded(t)
	if err := b2.CreateTopic(ctx, "plain", broker.TopicConfig{Partitions: 1}); err != nil {
		t.Fatal(err)
	}
	if ts, bs := messageLimit(kadm.NewClient(newClient(t, addr2)), "plain"); ts != def || bs != def {
		t.Errorf("default limit: max.message.bytes %v, message.max.bytes %v; want both %v", ts, bs, def)
	}

	// v0 has no source, only is_default: true for built-in defaults only.
	req := kmsg.NewPtrDescribeConfigsRequest()
	req.Version = 0
	for _, name := range []string{"plain", "made"} {
		r := kmsg.NewDescribeConfigsRequestResource()
		r.ResourceType, r.ResourceName = kmsg.ConfigResourceTypeTopic, name
		req.Resources = append(req.Resources, r)
	}
	resp := dialRaw(t, addr).do(req).(*kmsg.DescribeConfigsResponse)
	isDefault := map[string]bool{}
	for _, r := range resp.Resources {
		for _, c := range r.Configs {
			isDefault[r.ResourceName+" "+c.Name] = c.IsDefault
		}
	}
	for key, want := range map[string]bool{
		"plain segment.bytes": true, "plain retention.bytes": false, "plain max.message.bytes": false,
		"made segment.ms": false, "made segment.bytes": true, "made cleanup.policy": true,
	} {
		if isDefault[key] != want {
			t.Errorf("v0 %s is_default %v, want %v", key, isDefault[key], want)
		}
	}
}
