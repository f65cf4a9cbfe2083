package kafkawire

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/weirnet/weir/broker"
	"github.com/weirnet/weir/broker/embedded"
	"github.com/weirnet/weir/internal/syncbuf"
)

// The embedded broker lets Kafka clients change topic configs.
var _ ConfigAlterer = (*embedded.Broker)(nil)
var _ ConfigPinner = (*embedded.Broker)(nil)

// topicConfig is one config of a topic as DescribeConfigs reports it.
func topicConfig(t *testing.T, adm *kadm.Client, topic, key string) kadm.Config {
	t.Helper()
	rcs, err := adm.DescribeTopicConfigs(context.Background(), topic)
	if err != nil {
		t.Fatal(err)
	}
	rc, err := rcs.On(topic, nil)
	if err != nil || rc.Err != nil {
		t.Fatalf("describe %s: %v %v", topic, err, rc.Err)
	}
	for _, c := range rc.Configs {
		if c.Key == key {
			return c
		}
	}
	t.Fatalf("%s: no %s", topic, key)
	return kadm.Config{}
}

func set(k, v string) kadm.AlterConfig {
	return kadm.AlterConfig{Op: kadm.SetConfig, Name: k, Value: &v}
}

// alterErr is the one resource's error message and error of an alter (or
// the request's error).
func alterErr(rs kadm.AlterConfigsResponses, err error) (string, error) {
	if err != nil {
		return "request failed", err
	}
	if len(rs) != 1 {
		return "", fmt.Errorf("%d resources answered", len(rs))
	}
	return rs[0].ErrMessage, rs[0].Err
}

// openServed opens the embedded broker in dir, with weir.yaml's
// broker.topics.ovr.retention.time: 1h, and serves it.
func openServed(t *testing.T, dir string) (*embedded.Broker, *kadm.Client) {
	t.Helper()
	b, err := embedded.Open(dir, embedded.WithLogger(testLogger(t)),
		embedded.WithTopicConfig("ovr", broker.TopicConfig{RetentionTime: time.Hour}))
	if err != nil {
		t.Fatal(err)
	}
	_, addr := startServer(t, b)
	t.Cleanup(func() { b.Close() })
	return b, kadm.NewClient(newClient(t, addr))
}

// TestIncrementalAlterConfigs: kadm's AlterTopicConfigs (as
// kafka-configs --alter --add-config, Terraform) against the embedded
// broker: the value shows as the topic's own (DYNAMIC_TOPIC_CONFIG) and
// survives a restart, DELETE returns it to the default, bad values are
// refused INVALID_CONFIG with nothing changed, validate_only changes
// nothing, and a config weir.yaml sets for the topic is refused
// POLICY_VIOLATION rather than silently not applied.
func TestIncrementalAlterConfigs(t *testing.T) {
	dir := t.TempDir()
	b, adm := openServed(t, dir)
	ctx := context.Background()
	for _, name := range []string{"t", "ovr"} {
		if _, err := adm.CreateTopic(ctx, 1, 1, nil, name); err != nil {
			t.Fatal(err)
		}
	}
	if msg, err := alterErr(adm.AlterTopicConfigs(ctx, []kadm.AlterConfig{set("retention.ms", "3600000"), set("segment.bytes", "1048576")}, "t")); err != nil {
		t.Fatalf("alter: %v %s", err, msg)
	}
	check := func(key, value string, source kmsg.ConfigSource) {
		t.Helper()
		c := topicConfig(t, adm, "t", key)
		if c.Value == nil || *c.Value != value || c.Source != source {
			t.Errorf("%s: %v from %v, want %s from %v", key, c.MaybeValue(), c.Source, value, source)
		}
	}
	check("retention.ms", "3600000", kmsg.ConfigSourceDynamicTopicConfig)
	check("segment.bytes", "1048576", kmsg.ConfigSourceDynamicTopicConfig)
	// The broker's message limit, which every topic has, may be sent back
	// or deleted; it stays the broker's.
	if msg, err := alterErr(adm.AlterTopicConfigs(ctx, []kadm.AlterConfig{set("max.message.bytes", "8388608"), {Op: kadm.DeleteConfig, Name: "cleanup.policy"}}, "t")); err != nil {
		t.Errorf("max.message.bytes at the broker's limit: %v %s", err, msg)
	}
	if msg, err := alterErr(adm.AlterTopicConfigs(ctx, []kadm.AlterConfig{{Op: kadm.DeleteConfig, Name: "max.message.bytes"}}, "t")); err != nil {
		t.Errorf("delete max.message.bytes: %v %s", err, msg)
	}
	check("max.message.bytes", "8388608", kmsg.ConfigSourceDefaultConfig)

	// Refused, each with its reason, and nothing of the resource changes.
	for _, tc := range []struct {
		configs []kadm.AlterConfig
		want    error
		says    string
	}{
		{[]kadm.AlterConfig{set("retention.bytes", "1048576"), set("segment.bytes", "1")}, kerr.InvalidConfig, "segment.bytes"},
		{[]kadm.AlterConfig{set("retention.ms", "0")}, kerr.InvalidConfig, "retention.ms"},
		{[]kadm.AlterConfig{set("retention.ms", "soon")}, kerr.InvalidConfig, "integer"},
		{[]kadm.AlterConfig{set("max.message.bytes", "1000")}, kerr.PolicyViolation, "broker.max_message_bytes"},
		{[]kadm.AlterConfig{set("cleanup.policy", "compact")}, kerr.InvalidConfig, "compaction"},
		{[]kadm.AlterConfig{{Op: kadm.DeleteConfig, Name: "flush.ms"}}, kerr.InvalidConfig, "unsupported"},
		{[]kadm.AlterConfig{{Op: kadm.AppendConfig, Name: "retention.ms", Value: kmsg.StringPtr("1")}}, kerr.InvalidRequest, "list"},
		{[]kadm.AlterConfig{{Op: kadm.SubtractConfig, Name: "retention.ms", Value: kmsg.StringPtr("1")}}, kerr.InvalidRequest, "list"},
		{[]kadm.AlterConfig{set("retention.ms", "1"), {Op: kadm.DeleteConfig, Name: "retention.ms"}}, kerr.InvalidRequest, "duplicate"},
	} {
		msg, err := alterErr(adm.AlterTopicConfigs(ctx, tc.configs, "t"))
		if !errors.Is(err, tc.want) || !strings.Contains(msg, tc.says) {
			t.Errorf("%+v: %v %q, want %v saying %q", tc.configs, err, msg, tc.want, tc.says)
		}
	}
	check("retention.bytes", "1073741824", kmsg.ConfigSourceDefaultConfig)
	check("segment.bytes", "1048576", kmsg.ConfigSourceDynamicTopicConfig)

	// validate_only answers as the change would, and changes nothing.
	if msg, err := alterErr(adm.ValidateAlterTopicConfigs(ctx, []kadm.AlterConfig{set("retention.ms", "60000")}, "t")); err != nil {
		t.Fatalf("validate: %v %s", err, msg)
	}
	if _, err := alterErr(adm.ValidateAlterTopicConfigs(ctx, []kadm.AlterConfig{set("segment.bytes", "1")}, "t")); !errors.Is(err, kerr.InvalidConfig) {
		t.Errorf("validate a bad value: %v", err)
	}
	check("retention.ms", "3600000", kmsg.ConfigSourceDynamicTopicConfig)

	if _, err := alterErr(adm.AlterTopicConfigs(ctx, []kadm.AlterConfig{set("retention.ms", "1000")}, "missing")); !errors.Is(err, kerr.UnknownTopicOrPartition) {
		t.Errorf("unknown topic: %v", err)
	}
	// weir.yaml's broker.topics.ovr.retention.time wins: another value
	// is refused, saying where it is set; the same value is taken.
	if msg, err := alterErr(adm.AlterTopicConfigs(ctx, []kadm.AlterConfig{set("retention.ms", "7200000")}, "ovr")); !errors.Is(err, kerr.PolicyViolation) || !strings.Contains(msg, "broker.topics.ovr") {
		t.Errorf("changing a config weir.yaml sets: %v %q", err, msg)
	}
	if msg, err := alterErr(adm.AlterTopicConfigs(ctx, []kadm.AlterConfig{set("retention.ms", "3600000"), set("retention.bytes", "1048576")}, "ovr")); err != nil {
		t.Errorf("setting a config weir.yaml sets to its value, and another: %v %s", err, msg)
	}
	if c := topicConfig(t, adm, "ovr", "retention.bytes"); c.MaybeValue() != "1048576" {
		t.Errorf("ovr retention.bytes %s", c.MaybeValue())
	}

	// Broker configs are weir.yaml's: refused as Kafka refuses configs it
	// cannot change dynamically.
	if msg, err := alterErr(adm.AlterBrokerConfigs(ctx, []kadm.AlterConfig{set("log.retention.ms", "1000")}, 0)); !errors.Is(err, kerr.InvalidRequest) || !strings.Contains(msg, "weir.yaml") {
		t.Errorf("broker config: %v %q", err, msg)
	}

	// A restart keeps it; DELETE then returns it to the default.
	b.Close()
	_, adm = openServed(t, dir)
	check("retention.ms", "3600000", kmsg.ConfigSourceDynamicTopicConfig)
	check("segment.bytes", "1048576", kmsg.ConfigSourceDynamicTopicConfig)
	if msg, err := alterErr(adm.AlterTopicConfigs(ctx, []kadm.AlterConfig{{Op: kadm.DeleteConfig, Name: "retention.ms"}}, "t")); err != nil {
		t.Fatalf("delete: %v %s", err, msg)
	}
	check("retention.ms", "604800000", kmsg.ConfigSourceDefaultConfig)
	check("segment.bytes", "1048576", kmsg.ConfigSourceDynamicTopicConfig)
}

// TestAlterConfigsReplaces: the legacy AlterConfigs (sarama's
// ClusterAdmin.AlterConfig, kadm's AlterTopicConfigsState) replaces the
// topic's whole set of configs.
func TestAlterConfigsReplaces(t *testing.T) {
	_, adm := openServed(t, t.TempDir())
	ctx := context.Background()
	if _, err := adm.CreateTopic(ctx, 1, 1, map[string]*string{"segment.ms": kmsg.StringPtr("60000")}, "t"); err != nil {
		t.Fatal(err)
	}
	// As a tool that sends back every config DescribeConfigs listed.
	if msg, err := alterErr(adm.AlterTopicConfigsState(ctx, []kadm.AlterConfig{set("retention.bytes", "1048576"), set("cleanup.policy", "delete"), set("max.message.bytes", "8388608")}, "t")); err != nil {
		t.Fatalf("alter: %v %s", err, msg)
	}
	if c := topicConfig(t, adm, "t", "retention.bytes"); c.MaybeValue() != "1048576" || c.Source != kmsg.ConfigSourceDynamicTopicConfig {
		t.Errorf("retention.bytes %s from %v", c.MaybeValue(), c.Source)
	}
	if c := topicConfig(t, adm, "t", "segment.ms"); c.Source != kmsg.ConfigSourceDefaultConfig {
		t.Errorf("segment.ms, not given, %s from %v; want the default", c.MaybeValue(), c.Source)
	}
	if _, err := alterErr(adm.ValidateAlterTopicConfigsState(ctx, []kadm.AlterConfig{set("segment.bytes", "1")}, "t")); !errors.Is(err, kerr.InvalidConfig) {
		t.Errorf("bad value: %v", err)
	}
	// The one the topic's weir.yaml entry sets stays when not named.
	if _, err := adm.CreateTopic(ctx, 1, 1, nil, "ovr"); err != nil {
		t.Fatal(err)
	}
	if msg, err := alterErr(adm.AlterTopicConfigsState(ctx, []kadm.AlterConfig{set("segment.ms", "60000")}, "ovr")); err != nil {
		t.Fatalf("alter ovr: %v %s", err, msg)
	}
	if c := topicConfig(t, adm, "ovr", "retention.ms"); c.MaybeValue() != "3600000" {
		t.Errorf("ovr retention.ms %s", c.MaybeValue())
	}
}

// TestAlterConfigsRaw: what kadm does not send: a resource named twice,
// unsupported resource types, and the versions ApiVersions advertises.
func TestAlterConfigsRaw(t *testing.T) {
	b, addr := startEmbedded(t)
	if err := b.CreateTopic(context.Background(), "t", broker.TopicConfig{Partitions: 1}); err != nil {
		t.Fatal(err)
	}
	rc := dialRaw(t, addr)
	av := rc.do(kmsg.NewPtrApiVersionsRequest()).(*kmsg.ApiVersionsResponse)
	want := map[int16][2]int16{kmsg.AlterConfigs.Int16(): {0, 2}, kmsg.IncrementalAlterConfigs.Int16(): {0, 1}}
	for _, k := range av.ApiKeys {
		if w, ok := want[k.ApiKey]; ok {
			if k.MinVersion != w[0] || k.MaxVersion != w[1] {
				t.Errorf("key %d: v%d-%d, want v%d-%d", k.ApiKey, k.MinVersion, k.MaxVersion, w[0], w[1])
			}
			delete(want, k.ApiKey)
		}
	}
	if len(want) > 0 {
		t.Errorf("not advertised: %v", want)
	}
	for _, v := range []int16{0, 1} {
		req := kmsg.NewPtrIncrementalAlterConfigsRequest()
		req.Version = v
		for _, r := range []struct {
			typ  kmsg.ConfigResourceType
			name string
		}{{kmsg.ConfigResourceTypeTopic, "t"}, {kmsg.ConfigResourceTypeTopic, "t"}, {kmsg.ConfigResourceTypeBrokerLogger, "0"}, {kmsg.ConfigResourceTypeBroker, "7"}} {
			rr := kmsg.NewIncrementalAlterConfigsRequestResource()
			rr.ResourceType, rr.ResourceName = r.typ, r.name
			rr.Configs = []kmsg.IncrementalAlterConfigsRequestResourceConfig{{Name: "retention.ms", Value: kmsg.StringPtr("1000")}}
			req.Resources = append(req.Resources, rr)
		}
		resp := rc.do(req).(*kmsg.IncrementalAlterConfigsResponse)
		if len(resp.Resources) != 4 {
			t.Fatalf("v%d: %+v", v, resp.Resources)
		}
		for i, r := range resp.Resources {
			if r.ErrorCode != kerr.InvalidRequest.Code || r.ErrorMessage == nil {
				t.Errorf("v%d resource %d (%v %s): code %d", v, i, r.ResourceType, r.ResourceName, r.ErrorCode)
			}
		}
	}
	for _, v := range []int16{0, 2} {
		req := kmsg.NewPtrAlterConfigsRequest()
		req.Version = v
		rr := kmsg.NewAlterConfigsRequestResource()
		rr.ResourceType, rr.ResourceName = kmsg.ConfigResourceTypeTopic, "t"
		rr.Configs = []kmsg.AlterConfigsRequestResourceConfig{{Name: "retention.ms", Value: nil}}
		req.Resources = append(req.Resources, rr)
		resp := rc.do(req).(*kmsg.AlterConfigsResponse)
		if len(resp.Resources) != 1 || resp.Resources[0].ErrorCode != kerr.InvalidRequest.Code {
			t.Errorf("v%d null value: %+v", v, resp.Resources)
		}
	}
	// The configs a client may change are not read-only; the others are.
	dreq := kmsg.NewPtrDescribeConfigsRequest()
	dr := kmsg.NewDescribeConfigsRequestResource()
	dr.ResourceType, dr.ResourceName = kmsg.ConfigResourceTypeTopic, "t"
	dreq.Resources = append(dreq.Resources, dr)
	for _, c := range rc.do(dreq).(*kmsg.DescribeConfigsResponse).Resources[0].Configs {
		_, changeable := configFields[c.Name]
		if c.ReadOnly == changeable {
			t.Errorf("%s: read-only %v", c.Name, c.ReadOnly)
		}
	}
	if own, _, _, _ := b.TopicConfigLayers("t"); own.RetentionTime != 0 {
		t.Errorf("refused requests changed the topic: %+v", own)
	}
}

// TestAlterConfigsRetentionApplies: records older than a newly shortened
// retention are deleted at the broker's next retention check.
func TestAlterConfigsRetentionApplies(t *testing.T) {
	b, adm := openServed(t, t.TempDir())
	ctx := context.Background()
	if _, err := adm.CreateTopic(ctx, 1, 1, nil, "t"); err != nil {
		t.Fatal(err)
	}
	if err := b.Produce(ctx, "t", []broker.Record{{Value: []byte("a")}, {Value: []byte("b")}}); err != nil {
		t.Fatal(err)
	}
	start := func() int64 {
		t.Helper()
		o, err := adm.ListStartOffsets(ctx, "t")
		if err != nil {
			t.Fatal(err)
		}
		l, _ := o.Lookup("t", 0)
		return l.Offset
	}
	b.ApplyRetention()
	if s := start(); s != 0 {
		t.Fatalf("log start %d before the change", s)
	}
	if msg, err := alterErr(adm.AlterTopicConfigs(ctx, []kadm.AlterConfig{set("retention.ms", "1")}, "t")); err != nil {
		t.Fatalf("alter: %v %s", err, msg)
	}
	// The records are a millisecond old soon; the check deletes them then.
	deadline := time.Now().Add(10 * time.Second)
	for start() != 2 {
		if time.Now().After(deadline) {
			t.Fatal("records older than the new retention are still there")
		}
		time.Sleep(5 * time.Millisecond)
		b.ApplyRetention()
	}
}

// TestAlterConfigsLongMaxRoundTrips: Long.MAX_VALUE milliseconds, Kafka's
// "practically forever" that tools and Terraform set for retention.ms and
// segment.ms, reads back as Long.MAX_VALUE, before and after a restart,
// not as the ~292 years a time.Duration holds (which Terraform would see as
// a change to make again at every plan).
func TestAlterConfigsLongMaxRoundTrips(t *testing.T) {
	const longMax = "9223372036854775807"
	dir := t.TempDir()
	b, adm := openServed(t, dir)
	ctx := context.Background()
	if _, err := adm.CreateTopic(ctx, 1, 1, nil, "t"); err != nil {
		t.Fatal(err)
	}
	if msg, err := alterErr(adm.AlterTopicConfigs(ctx, []kadm.AlterConfig{set("retention.ms", longMax), set("segment.ms", longMax)}, "t")); err != nil {
		t.Fatalf("alter: %v %s", err, msg)
	}
	for round := range 2 {
		for _, key := range []string{"retention.ms", "segment.ms"} {
			if c := topicConfig(t, adm, "t", key); c.MaybeValue() != longMax {
				t.Errorf("round %d: %s reads back %s, want %s", round, key, c.MaybeValue(), longMax)
			}
		}
		b.Close()
		b, adm = openServed(t, dir)
	}
}

// TestCreateTopicMaxMessageBytes: a topic created with the broker's
// message limit, as a copy of another topic's configs sends it, is
// created; another limit is refused saying where the limit is set.
func TestCreateTopicMaxMessageBytes(t *testing.T) {
	_, adm := openServed(t, t.TempDir())
	ctx := context.Background()
	if _, err := adm.CreateTopic(ctx, 1, 1, map[string]*string{"max.message.bytes": kmsg.StringPtr("8388608")}, "copy"); err != nil {
		t.Fatalf("max.message.bytes at the broker's limit: %v", err)
	}
	resp, err := adm.CreateTopic(ctx, 1, 1, map[string]*string{"max.message.bytes": kmsg.StringPtr("1048576")}, "own")
	if !errors.Is(err, kerr.PolicyViolation) || !strings.Contains(resp.ErrMessage, "broker.max_message_bytes") {
		t.Errorf("another max.message.bytes: %v %q", err, resp.ErrMessage)
	}
}

// TestAlterConfigsLogsTheChange: a topic config changed by a Kafka client
// is logged with what changed, for the operator who later wonders why a
// topic keeps a day less; a validate_only request and a refused one log
// nothing.
func TestAlterConfigsLogsTheChange(t *testing.T) {
	b, err := embedded.Open(t.TempDir(), embedded.WithLogger(testLogger(t)))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { b.Close() })
	var logs syncbuf.Buffer
	_, addr := startServer(t, b, WithLogger(slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelInfo}))))
	adm := kadm.NewClient(newClient(t, addr))
	ctx := context.Background()
	if _, err := adm.CreateTopic(ctx, 1, 1, nil, "t"); err != nil {
		t.Fatal(err)
	}
	if _, err := adm.ValidateAlterTopicConfigs(ctx, []kadm.AlterConfig{set("retention.ms", "60000")}, "t"); err != nil {
		t.Fatal(err)
	}
	if msg, err := alterErr(adm.AlterTopicConfigs(ctx, []kadm.AlterConfig{set("segment.bytes", "1")}, "t")); err == nil {
		t.Fatalf("segment.bytes 1 accepted: %s", msg)
	}
	if msg, err := alterErr(adm.AlterTopicConfigs(ctx, []kadm.AlterConfig{set("retention.ms", "3600000"), {Op: kadm.DeleteConfig, Name: "segment.ms"}}, "t")); err != nil {
		t.Fatalf("alter: %v %s", err, msg)
	}
	if msg, err := alterErr(adm.AlterTopicConfigsState(ctx, []kadm.AlterConfig{set("retention.bytes", "1048576")}, "t")); err != nil {
		t.Fatalf("legacy alter: %v %s", err, msg)
	}
	got := logs.String()
	for _, want := range []string{
		`topic=t configs="retention.ms=3600000 segment.ms=(default)"`,
		`topic=t configs="retention.bytes=1048576 (the others to their defaults)"`,
	} {
		if !strings.Contains(got, want) {
			t.Errorf("log lacks %s:\n%s", want, got)
		}
	}
	if strings.Contains(got, "60000 ") || strings.Contains(got, "segment.bytes") {
		t.Errorf("a validate_only or refused change was logged:\n%s", got)
	}
}

// TestPinnedConfigsReadOnly: a config weir.yaml's broker.topics sets for a
// topic cannot be changed by a client (POLICY_VIOLATION), so
// DescribeConfigs says it is read-only, as admin UIs (kafka-ui, AKHQ)
// show it; the topic's other configs stay changeable.
func TestPinnedConfigsReadOnly(t *testing.T) {
	b, err := embedded.Open(t.TempDir(), embedded.WithLogger(testLogger(t)),
		embedded.WithTopicConfig("ovr", broker.TopicConfig{RetentionTime: time.Hour}))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { b.Close() })
	if err := b.CreateTopic(context.Background(), "ovr", broker.TopicConfig{Partitions: 1}); err != nil {
		t.Fatal(err)
	}
	_, addr := startServer(t, b)
	req := kmsg.NewPtrDescribeConfigsRequest()
	dr := kmsg.NewDescribeConfigsRequestResource()
	dr.ResourceType, dr.ResourceName = kmsg.ConfigResourceTypeTopic, "ovr"
	req.Resources = append(req.Resources, dr)
	readOnly := map[string]bool{}
	for _, c := range dialRaw(t, addr).do(req).(*kmsg.DescribeConfigsResponse).Resources[0].Configs {
		readOnly[c.Name] = c.ReadOnly
	}
	if !readOnly["retention.ms"] {
		t.Error("ovr retention.ms, pinned by weir.yaml, is not read-only")
	}
	if readOnly["retention.bytes"] || readOnly["segment.ms"] {
		t.Errorf("ovr's configs weir.yaml does not set are read-only: %v", readOnly)
	}
}
