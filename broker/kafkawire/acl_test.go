package kafkawire

import (
	"bytes"
	"context"
	"errors"
	"os/exec"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/weirnet/weir/broker/embedded"
)

// aclUsers: an administrator, and a dashboard user limited to the events
// and enriched topics and to groups named grafana-*.
var aclUsers = []User{
	{Name: "admin", Password: "a-pass"},
	{Name: "dash", Password: "d-pass", Topics: Patterns{"events", "enriched.*"}, Groups: Patterns{"grafana-*"}},
}

// startACLBroker is the embedded broker behind a SCRAM listener with
// aclUsers, and events, enriched.syslog and raw.syslog of one record each.
func startACLBroker(t *testing.T) (addr string, as func(name string, opts ...kgo.Opt) *kgo.Client) {
	t.Helper()
	addr, _ = startACLLog(t, MechanismScramSHA512)
	as = func(name string, opts ...kgo.Opt) *kgo.Client {
		return newClient(t, addr, append([]kgo.Opt{kgo.SASL(mechanism(MechanismScramSHA512, name, aclPasswords[name])), kgo.RequestRetries(1)}, opts...)...)
	}
	return addr, as
}

// aclPasswords are aclUsers' passwords by name.
var aclPasswords = map[string]string{"admin": "a-pass", "dash": "d-pass"}

// startACLLog is the embedded broker behind a listener taking aclUsers
// with mech (opts added), and events, enriched.syslog and raw.syslog of
// one record each, which admin made.
func startACLLog(t *testing.T, mech string, opts ...Option) (string, *embedded.Broker) {
	t.Helper()
	b, err := embedded.Open(t.TempDir(), embedded.WithLogger(testLogger(t)))
	if err != nil {
		t.Fatal(err)
	}
	auth, err := NewSASL([]string{mech}, aclUsers)
	if err != nil {
		t.Fatal(err)
	}
	_, addr := startServer(t, b, append([]Option{WithSASL(auth)}, opts...)...)
	t.Cleanup(func() { b.Close() })
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	admin := newClient(t, addr, kgo.SASL(mechanism(mech, "admin", aclPasswords["admin"])))
	for _, topic := range []string{"events", "enriched.syslog", "raw.syslog"} {
		if _, err := kadm.NewClient(admin).CreateTopic(ctx, 1, 1, nil, topic); err != nil {
			t.Fatal(err)
		}
		if err := admin.ProduceSync(ctx, &kgo.Record{Topic: topic, Value: []byte(topic)}).FirstErr(); err != nil {
			t.Fatal(err)
		}
	}
	return addr, b
}

// TestUserTopicsAndGroups: a user with topics and groups uses those as
// any user does, and is refused the others as Kafka's ACLs refuse them
// (TOPIC_ or GROUP_AUTHORIZATION_FAILED), which listings leave out; in a
// request that names both, the allowed part is served. The admin, without
// either, is not limited.
func TestUserTopicsAndGroups(t *testing.T) {
	_, as := startACLBroker(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	dash := kadm.NewClient(as("dash"))

	// Listings show only what the user may use.
	listed, err := dash.ListTopics(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if names := listed.Names(); !slices.Equal(slices.Sorted(slices.Values(names)), []string{"enriched.syslog", "events"}) {
		t.Errorf("dash lists topics %q", names)
	}
	if _, err := dash.ListTopics(ctx, "raw.syslog"); !errors.Is(err, kerr.TopicAuthorizationFailed) {
		t.Errorf("dash's Metadata for raw.syslog: %v", err)
	}

	// Reading and writing allowed topics in an allowed group.
	cons := as("dash", kgo.ConsumeTopics("events", "enriched.syslog"), kgo.ConsumerGroup("grafana-1"), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	got := 0
	for got < 2 {
		fs := cons.PollFetches(ctx)
		if err := fs.Err0(); err != nil {
			t.Fatalf("dash consume: %v", err)
		}
		got += fs.NumRecords()
	}
	if err := cons.CommitUncommittedOffsets(ctx); err != nil {
		t.Fatalf("dash commit: %v", err)
	}
	cons.Close()
	if err := as("dash").ProduceSync(ctx, &kgo.Record{Topic: "events", Value: []byte("d")}).FirstErr(); err != nil {
		t.Errorf("dash produce to events: %v", err)
	}

	// Other topics: produce, offsets, configs, deletion.
	if err := as("dash", kgo.DisableIdempotentWrite()).ProduceSync(ctx, &kgo.Record{Topic: "raw.syslog", Value: []byte("x")}).FirstErr(); !errors.Is(err, kerr.TopicAuthorizationFailed) {
		t.Errorf("dash produce to raw.syslog: %v", err)
	}
	// ListOffsets naming both topics: the allowed one is answered.
	lo := kmsg.NewPtrListOffsetsRequest()
	for _, topic := range []string{"raw.syslog", "events"} {
		rt := kmsg.NewListOffsetsRequestTopic()
		rt.Topic = topic
		rp := kmsg.NewListOffsetsRequestTopicPartition()
		rp.Timestamp = -1 // the end
		rt.Partitions = append(rt.Partitions, rp)
		lo.Topics = append(lo.Topics, rt)
	}
	// To the broker itself: a client would split the request by the
	// topics' leaders, after Metadata refused raw.syslog.
	raw, err := as("dash").SeedBrokers()[0].Request(ctx, lo)
	if err != nil {
		t.Fatal(err)
	}
	loResp := raw.(*kmsg.ListOffsetsResponse)
	for _, rt := range loResp.Topics {
		switch p := rt.Partitions[0]; {
		case rt.Topic == "raw.syslog" && p.ErrorCode != kerr.TopicAuthorizationFailed.Code,
			rt.Topic == "events" && (p.ErrorCode != 0 || p.Offset != 2):
			t.Errorf("dash's end offset of %s: %+v", rt.Topic, p)
		}
	}
	if len(loResp.Topics) != 2 {
		t.Errorf("ListOffsets answered %d topics, want 2", len(loResp.Topics))
	}
	if rcs, err := dash.DescribeTopicConfigs(ctx, "raw.syslog"); err == nil {
		if rc, _ := rcs.On("raw.syslog", nil); !errors.Is(rc.Err, kerr.TopicAuthorizationFailed) {
			t.Errorf("dash DescribeConfigs raw.syslog: %+v", rc)
		}
	}
	if r, err := dash.DeleteTopic(ctx, "raw.syslog"); err == nil && !errors.Is(r.Err, kerr.TopicAuthorizationFailed) {
		t.Errorf("dash DeleteTopic raw.syslog: %+v", r)
	}
	if _, err := dash.CreateTopic(ctx, 1, 1, nil, "raw.other"); !errors.Is(err, kerr.TopicAuthorizationFailed) {
		t.Errorf("dash CreateTopic raw.other: %v", err)
	}
	dirs, err := dash.DescribeAllLogDirs(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	dirs.Each(func(d kadm.DescribedLogDir) {
		d.Topics.Each(func(p kadm.DescribedLogDirPartition) {
			if p.Topic == "raw.syslog" {
				t.Errorf("dash's DescribeLogDirs shows raw.syslog")
			}
		})
	})

	// A commit naming an allowed and a refused topic, to the broker
	// itself (kadm would look both up first): the allowed one is
	// committed.
	oc := kmsg.NewPtrOffsetCommitRequest()
	oc.Group, oc.Generation = "grafana-1", -1
	for _, topic := range []string{"raw.syslog", "events"} {
		rt := kmsg.NewOffsetCommitRequestTopic()
		rt.Topic = topic
		rp := kmsg.NewOffsetCommitRequestTopicPartition()
		rp.Offset = 1
		rt.Partitions = append(rt.Partitions, rp)
		oc.Topics = append(oc.Topics, rt)
	}
	raw, err = as("dash").SeedBrokers()[0].Request(ctx, oc)
	if err != nil {
		t.Fatal(err)
	}
	for _, rt := range raw.(*kmsg.OffsetCommitResponse).Topics {
		want := map[string]int16{"raw.syslog": kerr.TopicAuthorizationFailed.Code, "events": 0}[rt.Topic]
		if code := rt.Partitions[0].ErrorCode; code != want {
			t.Errorf("dash's commit of %s: error %d, want %d", rt.Topic, code, want)
		}
	}
	var offs kadm.Offsets
	offs.Add(kadm.Offset{Topic: "events", Partition: 0, At: 1})

	// Groups: the admin's is not the dashboard's to see or move.
	admin := kadm.NewClient(as("admin"))
	var adminOffs kadm.Offsets
	adminOffs.Add(kadm.Offset{Topic: "raw.syslog", Partition: 0, At: 1})
	adminOffs.Add(kadm.Offset{Topic: "events", Partition: 0, At: 1})
	for _, g := range []string{"ops", "grafana-1"} {
		if err := admin.CommitAllOffsets(ctx, g, adminOffs); err != nil {
			t.Fatal(err)
		}
	}
	groups, err := dash.ListGroups(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if names := groups.Groups(); !slices.Equal(names, []string{"grafana-1"}) {
		t.Errorf("dash lists groups %q", names)
	}
	if r, err := dash.CommitOffsets(ctx, "ops", offs); !errors.Is(err, kerr.GroupAuthorizationFailed) && !errors.Is(r.Error(), kerr.GroupAuthorizationFailed) {
		t.Errorf("dash's commit to group ops: %v %v", err, r.Error())
	}
	if fetched := dash.FetchManyOffsets(ctx, "ops", "grafana-1"); !errors.Is(fetched["ops"].Err, kerr.GroupAuthorizationFailed) {
		t.Errorf("dash's offsets of group ops: %+v", fetched["ops"])
	} else if r := fetched["grafana-1"]; r.Err != nil {
		t.Errorf("dash's offsets of grafana-1: %v", r.Err)
	} else if _, ok := r.Fetched.Lookup("raw.syslog", 0); ok {
		t.Errorf("dash's offsets of grafana-1 show raw.syslog, which the admin committed there")
	} else if o, ok := r.Fetched.Lookup("events", 0); !ok || o.At != 1 {
		t.Errorf("dash's offsets of grafana-1: events %+v", o)
	}
	// kadm asks FindCoordinator first, which refuses the group.
	if described, err := dash.DescribeGroups(ctx, "ops"); !errors.Is(err, kerr.GroupAuthorizationFailed) && !errors.Is(described["ops"].Err, kerr.GroupAuthorizationFailed) {
		t.Errorf("dash DescribeGroups ops: %v %+v", err, described["ops"])
	}
	if deleted, err := dash.DeleteGroups(ctx, "ops"); !errors.Is(err, kerr.GroupAuthorizationFailed) && !errors.Is(deleted["ops"].Err, kerr.GroupAuthorizationFailed) {
		t.Errorf("dash DeleteGroups ops: %v %+v", err, deleted)
	}
	// The broker itself answers a request naming both groups for each.
	dg := kmsg.NewPtrDescribeGroupsRequest()
	dg.Groups = []string{"ops", "grafana-1"}
	if raw, err = as("dash").SeedBrokers()[0].Request(ctx, dg); err != nil {
		t.Fatal(err)
	}
	for _, g := range raw.(*kmsg.DescribeGroupsResponse).Groups {
		want := map[string]int16{"ops": kerr.GroupAuthorizationFailed.Code, "grafana-1": 0}[g.Group]
		if g.ErrorCode != want {
			t.Errorf("DescribeGroups %s: error %d, want %d", g.Group, g.ErrorCode, want)
		}
	}
	other := as("dash", kgo.ConsumeTopics("events"), kgo.ConsumerGroup("other"))
	if fs := other.PollFetches(ctx); !errors.Is(fs.Err0(), kerr.GroupAuthorizationFailed) {
		t.Errorf("dash joining group other: %v", fs.Err0())
	}
	other.Close()

	// The admin is not limited.
	if listed, err := admin.ListTopics(ctx); err != nil || len(listed.Names()) != 3 {
		t.Errorf("admin lists %v %v", listed.Names(), err)
	}
	if groups, err := admin.ListGroups(ctx); err != nil || len(groups.Groups()) != 2 {
		t.Errorf("admin lists groups %v %v", groups.Groups(), err)
	}
}

// TestUserTopicsKcat: librdkafka (kcat) as a user limited to some topics
// lists only those, and reading another fails with its authorization
// error.
func TestUserTopicsKcat(t *testing.T) {
	kcat, err := exec.LookPath("kcat")
	if err != nil {
		t.Skip("kcat not installed")
	}
	addr, _ := startACLBroker(t)
	run := func(args ...string) (string, string, error) {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		cmd := exec.CommandContext(ctx, kcat, append([]string{"-b", addr, "-X", "security.protocol=SASL_PLAINTEXT", "-X", "sasl.mechanisms=SCRAM-SHA-512",
			"-X", "sasl.username=dash", "-X", "sasl.password=d-pass"}, args...)...)
		var out, errOut bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &errOut
		err := cmd.Run()
		return out.String(), errOut.String(), err
	}
	out, errs, err := run("-L")
	if err != nil || !strings.Contains(out, `topic "events"`) || !strings.Contains(out, `topic "enriched.syslog"`) || strings.Contains(out, "raw.syslog") {
		t.Errorf("kcat -L: %v\n%s%s", err, out, errs)
	}
	out, errs, err = run("-C", "-t", "events", "-o", "beginning", "-e", "-q")
	if err != nil || strings.TrimSpace(out) != "events" {
		t.Errorf("kcat -C -t events: %v %q %s", err, out, errs)
	}
	out, errs, err = run("-C", "-t", "raw.syslog", "-o", "beginning", "-e", "-q")
	t.Logf("kcat -C -t raw.syslog: %v %q %s", err, out, errs)
	if err == nil || out != "" || !strings.Contains(strings.ToLower(errs), "authorization failed") {
		t.Errorf("kcat read raw.syslog, or did not say why not")
	}
}
