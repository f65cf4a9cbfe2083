package kafkawire

import (
	"context"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// endpointBrokers is DescribeCluster's endpoint type for brokers (v1+;
// the other, 2, is controllers).
const endpointBrokers = 1

// handleDescribeCluster describes the one-node cluster, as Metadata does:
// this node is the only broker and the controller. Asking for the
// controllers' endpoints is refused as a Kafka broker refuses it (clients
// ask controllers that, and there are none separate from this node).
func (c *conn) handleDescribeCluster(req *kmsg.DescribeClusterRequest) kmsg.Response {
	resp := req.ResponseKind().(*kmsg.DescribeClusterResponse)
	resp.EndpointType = endpointBrokers
	if req.Version >= 1 && req.EndpointType != endpointBrokers {
		resp.EndpointType = req.EndpointType
		resp.ErrorCode = kerr.UnsupportedEndpointType.Code
		msg := "this node serves broker endpoints only"
		resp.ErrorMessage = &msg
		return resp
	}
	node := c.s.cfg.nodeID
	resp.ClusterID = c.s.cfg.clusterID
	resp.ControllerID = node
	b := kmsg.NewDescribeClusterResponseBroker()
	b.NodeID, b.Host, b.Port = node, c.advHost, c.advPort
	resp.Brokers = []kmsg.DescribeClusterResponseBroker{b}
	return resp
}

// logDirer is what a Log may implement to name its data directory in
// DescribeLogDirs (the embedded broker does).
type logDirer interface{ LogDir() string }

// handleDescribeLogDirs reports the bytes each partition holds, in one log
// directory. A topic listed without partitions means all of its partitions
// (Kafka would report none; answering with all is what a client naming only
// topics wants, and costs nothing). Unknown topics and partitions are left
// out, as Kafka does. Volume sizes (v4) are not reported (-1).
func (c *conn) handleDescribeLogDirs(ctx context.Context, req *kmsg.DescribeLogDirsRequest) kmsg.Response {
	resp := req.ResponseKind().(*kmsg.DescribeLogDirsResponse)
	infos, err := c.s.log.DescribeTopics(ctx)
	d := kmsg.NewDescribeLogDirsResponseDir()
	d.Dir = "weir"
	if ld, ok := c.s.log.(logDirer); ok {
		d.Dir = ld.LogDir()
	}
	if err != nil {
		c.logger.Warn("kafka client: describing topics failed", "err", err)
		d.ErrorCode = errorCode(err)
		resp.Dirs = append(resp.Dirs, d)
		return resp
	}
	var want map[string]map[int32]bool // nil: everything
	if req.Topics != nil {
		want = make(map[string]map[int32]bool, len(req.Topics))
		for _, t := range req.Topics {
			ps := want[t.Topic]
			if ps == nil {
				ps = make(map[int32]bool)
				want[t.Topic] = ps
			}
			for _, p := range t.Partitions {
				ps[p] = true
			}
		}
	}
	for _, info := range infos {
		ps, ok := want[info.Name]
		if want != nil && !ok {
			continue
		}
		t := kmsg.NewDescribeLogDirsResponseDirTopic()
		t.Topic = info.Name
		for _, p := range info.Partitions {
			if len(ps) > 0 && !ps[p.Partition] {
				continue
			}
			rp := kmsg.NewDescribeLogDirsResponseDirTopicPartition()
			rp.Partition, rp.Size = p.Partition, p.Bytes
			t.Partitions = append(t.Partitions, rp)
		}
		d.Topics = append(d.Topics, t)
	}
	resp.Dirs = append(resp.Dirs, d)
	return resp
}
