package main

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/base64"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// randomLines is n lines of random base64 text of size bytes each: what
// franz-go's compression does not shrink.
func randomLines(n, size int) string {
	var in strings.Builder
	for range n {
		b := make([]byte, size*3/4)
		rand.Read(b)
		in.WriteString(base64.StdEncoding.EncodeToString(b) + "\n")
	}
	return in.String()
}

// TestProduceWhenConfigsCannotBeDescribed: against a Kafka cluster at its
// default limits (message.max.bytes 1048588, kfake) that refuses
// DescribeConfigs (ACLs), weir produce keeps franz-go's batch limit: a
// limit of a whole line (8 MiB) would fill batches the cluster refuses
// whole.
func TestProduceWhenConfigsCannotBeDescribed(t *testing.T) {
	c, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.SeedTopics(1, "t"))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.ControlKey(int16(kmsg.DescribeConfigs), func(kr kmsg.Request) (kmsg.Response, error, bool) {
		c.KeepControl()
		req := kr.(*kmsg.DescribeConfigsRequest)
		resp := req.ResponseKind().(*kmsg.DescribeConfigsResponse)
		for _, r := range req.Resources {
			rr := kmsg.NewDescribeConfigsResponseResource()
			rr.ResourceType, rr.ResourceName = r.ResourceType, r.ResourceName
			rr.ErrorCode = kerr.TopicAuthorizationFailed.Code
			if r.ResourceType == kmsg.ConfigResourceTypeBroker {
				rr.ErrorCode = kerr.ClusterAuthorizationFailed.Code
			}
			resp.Resources = append(resp.Resources, rr)
		}
		return resp, nil, true
	})
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	var stdout, stderr bytes.Buffer
	err = dispatch(ctx, []string{"produce", "--brokers", c.ListenAddrs()[0], "--timeout", "20s", "t"},
		strings.NewReader(randomLines(3000, 1000)), &stdout, &stderr)
	if err != nil {
		t.Fatalf("3,000 lines of 1,000 bytes to a cluster at Kafka's default limits that refuses DescribeConfigs: %v\n%s", err, stderr.String())
	}
}

// TestProduceManyKeylessLinesAtDefaults: 40 MB of 1,000-byte lines
// without a key, to weir at its defaults. The producer fills batches of up
// to max_message_bytes (8 MiB) on several partitions and sends them in one
// request of up to 100 MiB, as Kafka takes (socket.request.max.bytes):
// with a listener that refused requests above 9 MiB, the command stalled.
func TestProduceManyKeylessLinesAtDefaults(t *testing.T) {
	p := startWeir(t, t.TempDir())
	if _, stderr, err := p.cli(t, randomLines(40000, 1000), "produce", "many", "--timeout", "10s"); err != nil {
		t.Fatalf("40,000 lines of 1,000 bytes at weir's defaults: %v: %s", err, stderr)
	}
}
