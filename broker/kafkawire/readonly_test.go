package kafkawire

import (
	"bytes"
	"context"
	"errors"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/weirnet/weir/broker/embedded"
)

// TestReadOnlyUser: against the embedded broker (groups, configs), a
// read_only user reads, consumes in a group and commits, and is refused
// produce, topic creation (also through Metadata), deletion, config
// changes and group deletion with Kafka's authorization errors; a writer
// is not.
func TestReadOnlyUser(t *testing.T) {
	b, err := embedded.Open(t.TempDir(), embedded.WithLogger(testLogger(t)))
	if err != nil {
		t.Fatal(err)
	}
	_, addr := startServer(t, b, WithSASL(testSASL(t, MechanismScramSHA512)))
	t.Cleanup(func() { b.Close() })
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	as := func(u User, opts ...kgo.Opt) *kgo.Client {
		return newClient(t, addr, append([]kgo.Opt{kgo.SASL(mechanism(MechanismScramSHA512, u.Name, u.Password)), kgo.RequestRetries(1)}, opts...)...)
	}
	writer, reader := testUsers[0], testUsers[1]
	wadm := kadm.NewClient(as(writer))
	if _, err := wadm.CreateTopic(ctx, 2, 1, nil, "metrics"); err != nil {
		t.Fatal(err)
	}
	if err := as(writer).ProduceSync(ctx, &kgo.Record{Topic: "metrics", Value: []byte("v")}).FirstErr(); err != nil {
		t.Fatalf("writer produce: %v", err)
	}

	// Reading works: a group consumer that commits, offsets, configs.
	cons := as(reader, kgo.ConsumeTopics("metrics"), kgo.ConsumerGroup("dash"), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	fs := cons.PollFetches(ctx)
	if err := fs.Err0(); err != nil || fs.NumRecords() != 1 {
		t.Fatalf("reader consume: %v, %d records", err, fs.NumRecords())
	}
	if err := cons.CommitUncommittedOffsets(ctx); err != nil {
		t.Fatalf("reader commit: %v", err)
	}
	cons.Close()
	radm := kadm.NewClient(as(reader))
	if _, err := radm.ListEndOffsets(ctx, "metrics"); err != nil {
		t.Fatalf("reader ListEndOffsets: %v", err)
	}
	if _, err := radm.DescribeTopicConfigs(ctx, "metrics"); err != nil {
		t.Fatalf("reader DescribeTopicConfigs: %v", err)
	}

	// Writing is refused, each with its code.
	for _, idem := range []bool{true, false} {
		opts := []kgo.Opt{kgo.ProducerBatchMaxBytes(1 << 20)}
		want := kerr.TopicAuthorizationFailed
		if idem {
			want = kerr.ClusterAuthorizationFailed // InitProducerID
		} else {
			opts = append(opts, kgo.DisableIdempotentWrite())
		}
		err := as(reader, opts...).ProduceSync(ctx, &kgo.Record{Topic: "metrics", Value: []byte("x")}).FirstErr()
		if !errors.Is(err, want) {
			t.Errorf("reader produce (idempotent %v): %v, want %v", idem, err, want)
		}
	}
	if _, err := radm.CreateTopic(ctx, 1, 1, nil, "new"); !errors.Is(err, kerr.TopicAuthorizationFailed) {
		t.Errorf("reader CreateTopic: %v", err)
	}
	if r, err := radm.DeleteTopic(ctx, "metrics"); err == nil && !errors.Is(r.Err, kerr.TopicAuthorizationFailed) {
		t.Errorf("reader DeleteTopic: %v", r.Err)
	}
	ret := "1"
	rs, err := radm.AlterTopicConfigs(ctx, []kadm.AlterConfig{{Name: "retention.ms", Value: &ret}}, "metrics")
	if err != nil || len(rs) != 1 || !errors.Is(rs[0].Err, kerr.TopicAuthorizationFailed) {
		t.Errorf("reader IncrementalAlterConfigs: %v %+v", err, rs)
	}
	if rs, err := radm.DeleteGroups(ctx, "dash"); err != nil || !errors.Is(rs["dash"].Err, kerr.GroupAuthorizationFailed) {
		t.Errorf("reader DeleteGroups: %v %+v", err, rs)
	}
	// AlterConfigs (the legacy API), on a topic and on the broker.
	ac := kmsg.NewPtrAlterConfigsRequest()
	for _, r := range []struct {
		typ  kmsg.ConfigResourceType
		name string
	}{{kmsg.ConfigResourceTypeTopic, "metrics"}, {kmsg.ConfigResourceTypeBroker, "0"}} {
		res := kmsg.NewAlterConfigsRequestResource()
		res.ResourceType, res.ResourceName = r.typ, r.name
		ac.Resources = append(ac.Resources, res)
	}
	resp, err := ac.RequestWith(ctx, as(reader))
	if err != nil || len(resp.Resources) != 2 || resp.Resources[0].ErrorCode != kerr.TopicAuthorizationFailed.Code ||
		resp.Resources[1].ErrorCode != kerr.ClusterAuthorizationFailed.Code || !strings.Contains(*resp.Resources[0].ErrorMessage, `user "reader" is read_only`) {
		t.Errorf("reader AlterConfigs: %v %+v", err, resp)
	}
	// Metadata does not create a topic for a reader.
	md := kmsg.NewPtrMetadataRequest()
	mt := kmsg.NewMetadataRequestTopic()
	name := "autocreated"
	mt.Topic = &name
	md.Topics, md.AllowAutoTopicCreation = []kmsg.MetadataRequestTopic{mt}, true
	if _, err := md.RequestWith(ctx, as(reader)); err != nil {
		t.Fatal(err)
	}
	if infos, _ := b.DescribeTopics(ctx, "autocreated"); len(infos) != 0 {
		t.Errorf("reader's Metadata created the topic")
	}

	// Nothing changed; the writer still may.
	if o, err := wadm.ListEndOffsets(ctx, "metrics"); err != nil || o["metrics"][0].Offset+o["metrics"][1].Offset != 1 {
		t.Errorf("after the reader: %v %v", err, o)
	}
	if rs, err := wadm.DeleteGroups(ctx, "dash"); err != nil || rs["dash"].Err != nil {
		t.Errorf("writer DeleteGroups: %v %+v", err, rs)
	}
	if _, err := wadm.DeleteTopic(ctx, "metrics"); err != nil {
		t.Errorf("writer DeleteTopic: %v", err)
	}
}

// TestReadOnlyKcat: kcat as a read_only user is refused produce with
// librdkafka's authorization error.
func TestReadOnlyKcat(t *testing.T) {
	kcat, err := exec.LookPath("kcat")
	if err != nil {
		t.Skip("kcat not installed")
	}
	fl := newFakeLog()
	newTopic(t, fl, "lines", 1)
	_, addr := startServer(t, fl, WithSASL(testSASL(t, MechanismScramSHA256)))
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, kcat, "-b", addr, "-X", "security.protocol=SASL_PLAINTEXT", "-X", "sasl.mechanisms=SCRAM-SHA-256",
		"-X", "sasl.username=reader", "-X", "sasl.password=r-pass", "-P", "-t", "lines")
	cmd.Stdin = strings.NewReader("no\n")
	var errOut bytes.Buffer
	cmd.Stderr = &errOut
	err = cmd.Run()
	t.Logf("kcat: %v\n%s", err, errOut.String())
	if err == nil || !strings.Contains(errOut.String(), "Topic authorization failed") {
		t.Errorf("kcat's error does not say authorization failed")
	}
	if n := fl.hwm("lines", 0); n != 0 {
		t.Errorf("the reader's record was stored: hwm %d", n)
	}
}
