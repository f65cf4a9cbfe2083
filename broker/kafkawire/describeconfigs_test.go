package kafkawire

import (
	"context"
	"testing"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/weirnet/weir/broker"
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
