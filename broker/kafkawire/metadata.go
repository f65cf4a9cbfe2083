package kafkawire

import (
	"context"
	"errors"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/weirnet/weir/broker"
)

// handleMetadata describes this one-node cluster: the node leads every
// partition and is its only replica. Topics a client names are created on the
// way when the client allows it (always before v4) and the log has
// auto-creation on, as Kafka's auto.create.topics.enable does.
func (c *conn) handleMetadata(ctx context.Context, req *kmsg.MetadataRequest) kmsg.Response {
	resp := req.ResponseKind().(*kmsg.MetadataResponse)
	node := c.s.cfg.nodeID
	b := kmsg.NewMetadataResponseBroker()
	b.NodeID, b.Host, b.Port = node, c.advHost, c.advPort
	resp.Brokers = []kmsg.MetadataResponseBroker{b}
	clusterID := c.s.cfg.clusterID
	resp.ClusterID = &clusterID
	resp.ControllerID = node

	// v0 asks for every topic with an empty list; later versions with a
	// null one (an empty list asks for none).
	if req.Topics == nil || req.Version == 0 && len(req.Topics) == 0 {
		infos, err := c.s.log.DescribeTopics(ctx)
		if err != nil {
			c.logger.Warn("kafka client: describing topics failed", "err", err)
		}
		for i := range infos {
			resp.Topics = append(resp.Topics, c.topicMetadata(&infos[i]))
		}
		return resp
	}

	// A read-only user may not create topics (Kafka wants CREATE).
	autoCreate := (req.Version < 4 || req.AllowAutoTopicCreation) && c.s.log.AutoCreateTopics() && !c.readOnly()
	names := make([]string, 0, len(req.Topics))
	byID := false
	for _, t := range req.Topics {
		if t.Topic != nil {
			names = append(names, *t.Topic)
		} else {
			byID = true
		}
	}
	known, err := c.describeNamed(ctx, names)
	if err != nil {
		c.logger.Warn("kafka client: describing topics failed", "err", err)
	}
	var ids map[[16]byte]*broker.TopicInfo
	if byID {
		ids = c.topicsByID(ctx)
	}

	for _, t := range req.Topics {
		if t.Topic == nil { // v10+: asked for by ID
			if info, ok := ids[t.TopicID]; ok {
				resp.Topics = append(resp.Topics, c.topicMetadata(info))
				continue
			}
			rt := kmsg.NewMetadataResponseTopic()
			rt.TopicID = t.TopicID
			rt.ErrorCode = kerr.UnknownTopicID.Code
			resp.Topics = append(resp.Topics, rt)
			continue
		}
		name := *t.Topic
		if info, ok := known[name]; ok {
			resp.Topics = append(resp.Topics, c.topicMetadata(&info))
			continue
		}
		rt := kmsg.NewMetadataResponseTopic()
		rt.Topic = &name
		switch {
		case !broker.ValidTopicName(name):
			rt.ErrorCode = kerr.InvalidTopicException.Code
		case err != nil:
			rt.ErrorCode = errorCode(err)
		case autoCreate:
			info, cerr := c.autoCreate(ctx, name)
			if cerr == nil {
				resp.Topics = append(resp.Topics, c.topicMetadata(info))
				continue
			}
			rt.ErrorCode = errorCode(cerr)
		default:
			rt.ErrorCode = kerr.UnknownTopicOrPartition.Code
		}
		resp.Topics = append(resp.Topics, rt)
	}
	return resp
}

// autoCreate creates a topic with the log's defaults on a client's behalf
// and describes it. Losing a creation race to another client is fine.
func (c *conn) autoCreate(ctx context.Context, name string) (*broker.TopicInfo, error) {
	switch err := c.s.log.CreateTopic(ctx, name, broker.TopicConfig{}); {
	case err == nil:
		c.logger.Info("kafka client: auto-created topic", "topic", name)
	case !errors.Is(err, broker.ErrTopicExists):
		if n, due := c.s.autoCreateLog.Due(time.Now()); due {
			c.logger.Warn("kafka client: auto-creating topic failed", "topic", name, "err", err, "times", n)
		}
		return nil, err
	}
	infos, err := c.s.log.DescribeTopics(ctx, name)
	if err != nil {
		return nil, err
	}
	if len(infos) == 0 {
		return nil, broker.ErrUnknownTopic
	}
	return &infos[0], nil
}

// topicMetadata describes one topic: every partition led by this node, its
// only replica and in-sync replica.
func (c *conn) topicMetadata(info *broker.TopicInfo) kmsg.MetadataResponseTopic {
	node := c.s.cfg.nodeID
	replicas := []int32{node} // shared by all partitions: only read when encoding
	rt := kmsg.NewMetadataResponseTopic()
	name := info.Name
	rt.Topic = &name
	rt.TopicID = info.ID
	rt.Partitions = make([]kmsg.MetadataResponseTopicPartition, 0, len(info.Partitions))
	for _, p := range info.Partitions {
		mp := kmsg.NewMetadataResponseTopicPartition()
		mp.Partition = p.Partition
		mp.Leader = node
		// Leadership never moves, so the epoch never changes; 0 is
		// what a fresh Kafka partition reports.
		mp.LeaderEpoch = 0
		mp.Replicas = replicas
		mp.ISR = replicas
		rt.Partitions = append(rt.Partitions, mp)
	}
	return rt
}

// describeNamed describes the named topics that exist, keyed by name. The
// Log may either leave unknown names out or fail the whole call with
// ErrUnknownTopic; in the second case the names are described one by one.
func (c *conn) describeNamed(ctx context.Context, names []string) (map[string]broker.TopicInfo, error) {
	if len(names) == 0 {
		return nil, nil // describing no names would describe all
	}
	infos, err := c.s.log.DescribeTopics(ctx, names...)
	if errors.Is(err, broker.ErrUnknownTopic) {
		infos, err = nil, nil
		if len(names) > 1 {
			for _, name := range names {
				one, oerr := c.s.log.DescribeTopics(ctx, name)
				if oerr != nil && !errors.Is(oerr, broker.ErrUnknownTopic) {
					return nil, oerr
				}
				if oerr == nil {
					infos = append(infos, one...)
				}
			}
		}
	}
	if err != nil {
		return nil, err
	}
	known := make(map[string]broker.TopicInfo, len(infos))
	for _, info := range infos {
		known[info.Name] = info
	}
	return known, nil
}

// topicsByID describes all topics keyed by topic ID, for the requests that
// name topics by ID. The Log has no lookup by ID; such requests are rare.
func (c *conn) topicsByID(ctx context.Context) map[[16]byte]*broker.TopicInfo {
	infos, err := c.s.log.DescribeTopics(ctx)
	if err != nil {
		c.logger.Warn("kafka client: describing topics failed", "err", err)
	}
	ids := make(map[[16]byte]*broker.TopicInfo, len(infos))
	for i := range infos {
		ids[infos[i].ID] = &infos[i]
	}
	return ids
}
