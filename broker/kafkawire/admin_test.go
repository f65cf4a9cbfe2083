package kafkawire

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/weirnet/weir/broker"
)

// TestAdminDescribeAPIs drives DescribeConfigs, DescribeLogDirs and
// DescribeCluster the way admin tools do; they need no group coordinator.
func TestAdminDescribeAPIs(t *testing.T) {
	fl := newFakeLog()
	if err := fl.CreateTopic(context.Background(), "metrics", broker.TopicConfig{
		Partitions: 2, RetentionTime: time.Hour, RetentionBytes: -1, SegmentBytes: 1 << 20, SegmentAge: time.Minute,
	}); err != nil {
		t.Fatal(err)
	}
	newTopic(t, fl, "other", 1)
	_, addr := startServer(t, fl)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	cl := newClient(t, addr, kgo.RecordPartitioner(kgo.ManualPartitioner()))
	adm := kadm.NewClient(cl)

	rcs, err := adm.DescribeTopicConfigs(ctx, "metrics", "missing")
	if err != nil {
		t.Fatal(err)
	}
	rc, err := rcs.On("metrics", nil)
	if err != nil || rc.Err != nil {
		t.Fatalf("metrics configs: %v %v", err, rc.Err)
	}
	got := map[string]string{}
	for _, c := range rc.Configs {
		got[c.Key] = c.MaybeValue()
	}
	want := map[string]string{"retention.ms": "3600000", "retention.bytes": "-1", "segment.bytes": "1048576", "segment.ms": "60000", "cleanup.policy": "delete"}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s = %q, want %q", k, got[k], v)
		}
	}
	if missing, _ := rcs.On("missing", nil); missing.Err != kerr.UnknownTopicOrPartition {
		t.Errorf("unknown topic's configs: %v", missing.Err)
	}
	bcs, err := adm.DescribeBrokerConfigs(ctx, 0)
	if err != nil || len(bcs) != 1 || bcs[0].Err != nil || len(bcs[0].Configs) == 0 {
		t.Fatalf("broker configs: %+v %v", bcs, err)
	}

	// Only named configs, with synonyms and documentation (v4).
	req := kmsg.NewPtrDescribeConfigsRequest()
	req.Version, req.IncludeSynonyms, req.IncludeDocumentation = 4, true, true
	res := kmsg.NewDescribeConfigsRequestResource()
	res.ResourceType, res.ResourceName, res.ConfigNames = kmsg.ConfigResourceTypeTopic, "metrics", []string{"retention.ms"}
	req.Resources = append(req.Resources, res)
	resp := dialRaw(t, addr).do(req).(*kmsg.DescribeConfigsResponse)
	if cs := resp.Resources[0].Configs; len(cs) != 1 || cs[0].Name != "retention.ms" || len(cs[0].ConfigSynonyms) != 1 ||
		cs[0].Documentation == nil || cs[0].ConfigType != kmsg.ConfigTypeLong {
		t.Fatalf("named config: %+v", resp.Resources[0])
	}

	// Log dirs: bytes per partition, for all topics or a topic without
	// partition list (what `weir topics list` asks).
	for i := range 3 {
		r := &kgo.Record{Topic: "metrics", Partition: 1, Value: []byte{byte(i)}}
		if err := cl.ProduceSync(ctx, r).FirstErr(); err != nil {
			t.Fatal(err)
		}
	}
	sizes := func(set kadm.TopicsSet) map[int32]int64 {
		dirs, err := adm.DescribeAllLogDirs(ctx, set)
		if err != nil {
			t.Fatal(err)
		}
		out := map[int32]int64{}
		dirs.Each(func(d kadm.DescribedLogDir) {
			d.Topics.Each(func(p kadm.DescribedLogDirPartition) {
				if p.Topic == "metrics" {
					out[p.Partition] = p.Size
				}
			})
		})
		return out
	}
	wantBytes := fl.topics["metrics"].parts[1].bytes
	if s := sizes(nil); len(s) != 2 || s[1] != wantBytes || s[1] == 0 || s[0] != 0 {
		t.Fatalf("log dir sizes %v, want partition 1 = %d", s, wantBytes)
	}
	set := kadm.TopicsSet{}
	set.Add("metrics")
	if s := sizes(set); s[1] != wantBytes {
		t.Fatalf("log dir sizes for a topic: %v", s)
	}
	set = kadm.TopicsSet{}
	set.Add("metrics", 0)
	if s := sizes(set); len(s) != 1 {
		t.Fatalf("log dir sizes for partition 0: %v", s)
	}

	rc2 := dialRaw(t, addr)
	dc := kmsg.NewPtrDescribeClusterRequest()
	dc.Version = 1
	dr := rc2.do(dc).(*kmsg.DescribeClusterResponse)
	if dr.ErrorCode != 0 || dr.ClusterID != DefaultClusterID || dr.ControllerID != 0 || len(dr.Brokers) != 1 || dr.Brokers[0].Port <= 0 {
		t.Fatalf("DescribeCluster: %+v", dr)
	}
	dc.EndpointType = 2
	if dr := rc2.do(dc).(*kmsg.DescribeClusterResponse); dr.ErrorCode != kerr.UnsupportedEndpointType.Code {
		t.Fatalf("DescribeCluster for controllers: %+v", dr)
	}
}

// limitedLog is a Log with a batch size limit (MessageLimiter).
type limitedLog struct {
	*fakeLog
	max int
}

func (l limitedLog) MaxMessageBytes() int { return l.max }

// TestDescribeConfigsReportsTheMessageLimit: a Log with a batch limit
// reports it as every topic's max.message.bytes and the broker's
// message.max.bytes, which a client that asks (weir produce, through kadm)
// keeps its batches within; a Log without one reports none.
func TestDescribeConfigsReportsTheMessageLimit(t *testing.T) {
	for _, tc := range []struct {
		limit int // 0: a Log without a limit
		want  string
	}{{3 << 20, "3145728"}, {0, ""}} {
		fl := newFakeLog()
		newTopic(t, fl, "metrics", 1)
		var log Log = fl
		if tc.limit > 0 {
			log = limitedLog{fl, tc.limit}
		}
		_, addr := startServer(t, log)
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer cancel()
		adm := kadm.NewClient(newClient(t, addr))
		rcs, err := adm.DescribeTopicConfigs(ctx, "metrics")
		if err != nil {
			t.Fatal(err)
		}
		rc, err := rcs.On("metrics", nil)
		if err != nil || rc.Err != nil {
			t.Fatalf("metrics configs: %v %v", err, rc.Err)
		}
		got := ""
		for _, c := range rc.Configs {
			if c.Key == "max.message.bytes" {
				got = c.MaybeValue()
			}
		}
		bcs, err := adm.DescribeBrokerConfigs(ctx, 0)
		if err != nil || len(bcs) != 1 {
			t.Fatalf("broker configs: %+v %v", bcs, err)
		}
		gotBroker := ""
		for _, c := range bcs[0].Configs {
			if c.Key == "message.max.bytes" {
				gotBroker = c.MaybeValue()
			}
		}
		if got != tc.want || gotBroker != tc.want {
			t.Errorf("max.message.bytes %q, message.max.bytes %q; want %q", got, gotBroker, tc.want)
		}
	}
}

// TestCreateTopicCleanupPolicyDelete: a topic created with the cleanup
// policy the log has (and DescribeConfigs reports), as provisioning tools
// and copies of another topic's configs send it, is created; compaction,
// which the log cannot do, is still refused.
func TestCreateTopicCleanupPolicyDelete(t *testing.T) {
	fl := newFakeLog()
	_, addr := startServer(t, fl)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	adm := kadm.NewClient(newClient(t, addr))
	if _, err := adm.CreateTopic(ctx, 1, 1, map[string]*string{"cleanup.policy": kadm.StringPtr("delete")}, "explicit"); err != nil {
		t.Fatalf("cleanup.policy=delete: %v", err)
	}
	for _, v := range []string{"compact", "compact,delete", "delete,compact", ""} {
		if _, err := adm.CreateTopic(ctx, 1, 1, map[string]*string{"cleanup.policy": kadm.StringPtr(v)}, "c"); !errors.Is(err, kerr.InvalidConfig) {
			t.Errorf("cleanup.policy=%q: %v, want INVALID_CONFIG", v, err)
		}
	}
}
