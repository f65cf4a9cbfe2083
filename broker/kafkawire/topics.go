package kafkawire

import (
	"context"
	"errors"
	"fmt"
	"math"
	"strconv"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/weirnet/weir/broker"
)

// handleCreateTopics creates topics with the few configs the log supports.
// Replication is not a thing on one node: a replication factor other than 1
// (or -1, the default) is refused so that nobody believes their data is
// replicated.
func (c *conn) handleCreateTopics(ctx context.Context, req *kmsg.CreateTopicsRequest) kmsg.Response {
	resp := req.ResponseKind().(*kmsg.CreateTopicsResponse)
	// Kafka refuses every occurrence of a topic named twice in a request.
	seen := make(map[string]int, len(req.Topics))
	for i := range req.Topics {
		seen[req.Topics[i].Topic]++
	}
	resp.Topics = make([]kmsg.CreateTopicsResponseTopic, 0, len(req.Topics))
	for i := range req.Topics {
		t := &req.Topics[i]
		rt := kmsg.NewCreateTopicsResponseTopic()
		rt.Topic = t.Topic

		var kerrCode *kerr.Error
		cfg, err := c.createConfig(t)
		switch {
		case seen[t.Topic] > 1:
			kerrCode, err = kerr.InvalidRequest, fmt.Errorf("topic %q appears more than once in the request", t.Topic)
		case err != nil:
			kerrCode = asKerr(err)
		case req.ValidateOnly:
			// Report what creating would say, without creating.
			if v, ok := c.s.log.(TopicCreateValidator); ok {
				if err = v.ValidateCreateTopic(ctx, t.Topic, cfg); err != nil {
					kerrCode = kafkaError(err)
				}
			} else if _, derr := c.s.log.DescribeTopics(ctx, t.Topic); derr == nil {
				err = broker.ErrTopicExists
				kerrCode = kerr.TopicAlreadyExists
			}
		default:
			if err = c.s.log.CreateTopic(ctx, t.Topic, cfg); err != nil {
				kerrCode = kafkaError(err)
			}
		}
		if kerrCode != nil {
			rt.ErrorCode = kerrCode.Code
			rt.ErrorMessage = errorMessage(err)
			resp.Topics = append(resp.Topics, rt)
			continue
		}

		rt.ReplicationFactor = 1
		rt.NumPartitions = -1 // the log's default, unknown until created
		if cfg.Partitions > 0 {
			rt.NumPartitions = cfg.Partitions
		}
		if !req.ValidateOnly {
			c.logger.Info("kafka client: created topic", "topic", t.Topic)
			if infos, err := c.s.log.DescribeTopics(ctx, t.Topic); err == nil && len(infos) == 1 {
				rt.TopicID = infos[0].ID
				rt.NumPartitions = int32(len(infos[0].Partitions))
			}
		}
		resp.Topics = append(resp.Topics, rt)
	}
	return resp
}

// configError is a CreateTopics request the server refuses, with the Kafka
// error to answer.
type configError struct {
	kerr *kerr.Error
	msg  string
}

func (e *configError) Error() string { return e.msg }

func asKerr(err error) *kerr.Error {
	var ce *configError
	if errors.As(err, &ce) {
		return ce.kerr
	}
	return kafkaError(err)
}

// createConfig turns a CreateTopics topic into the log's TopicConfig.
func (c *conn) createConfig(t *kmsg.CreateTopicsRequestTopic) (broker.TopicConfig, error) {
	var cfg broker.TopicConfig
	if !broker.ValidTopicName(t.Topic) {
		return cfg, &configError{kerr.InvalidTopicException, fmt.Sprintf("invalid topic name %q: use 1 to 249 of [a-zA-Z0-9._-]", t.Topic)}
	}
	if len(t.ReplicaAssignment) > 0 {
		// A manual assignment gives the partition count; on one node
		// every partition can only live on this node.
		if t.NumPartitions != -1 || t.ReplicationFactor != -1 {
			return cfg, &configError{kerr.InvalidRequest, "a replica assignment requires partitions and replication factor -1"}
		}
		n := int32(len(t.ReplicaAssignment))
		used := make(map[int32]bool, n)
		for _, a := range t.ReplicaAssignment {
			if a.Partition < 0 || a.Partition >= n || used[a.Partition] {
				return cfg, &configError{kerr.InvalidReplicaAssignment, "replica assignment partitions must be 0 to n-1, each once"}
			}
			used[a.Partition] = true
			if len(a.Replicas) != 1 || a.Replicas[0] != c.s.cfg.nodeID {
				return cfg, &configError{kerr.InvalidReplicaAssignment, fmt.Sprintf("every partition must have exactly one replica, on node %d", c.s.cfg.nodeID)}
			}
		}
		cfg.Partitions = n
	} else {
		switch {
		case t.NumPartitions == -1:
			// the log's default
		case t.NumPartitions <= 0:
			return cfg, &configError{kerr.InvalidPartitions, "the number of partitions must be positive, or -1 for the default"}
		default:
			cfg.Partitions = t.NumPartitions
		}
		if t.ReplicationFactor != -1 && t.ReplicationFactor != 1 {
			return cfg, &configError{kerr.InvalidReplicationFactor, fmt.Sprintf("replication factor %d: this broker is a single node, use 1 or -1", t.ReplicationFactor)}
		}
	}
	for _, kv := range t.Configs {
		if kv.Value == nil {
			continue // null: keep the default
		}
		if err := setTopicConfig(&cfg, kv.Name, *kv.Value, c.maxMessageBytes()); err != nil {
			return cfg, err
		}
	}
	return cfg, nil
}

// setTopicConfig applies one Kafka topic config to cfg. Only the configs the
// log implements are accepted: silently ignoring, say, cleanup.policy=compact
// would leave the user believing their topic is compacted. cleanup.policy=delete
// is what every topic has, and max.message.bytes is the broker's limit
// (maxMessageBytes, -1 for a Log without one) for every topic; DescribeConfigs
// lists both, and provisioning tools send back what they read: those values
// are accepted and change nothing.
func setTopicConfig(cfg *broker.TopicConfig, name, value string, maxMessageBytes int) error {
	switch name {
	case "retention.ms", "retention.bytes", "segment.bytes", "segment.ms", "max.message.bytes":
	case "cleanup.policy":
		if value == "delete" {
			return nil
		}
		return &configError{kerr.InvalidConfig, fmt.Sprintf("invalid value %q for cleanup.policy: only delete is supported (no compaction)", value)}
	default:
		return unsupportedConfig(name)
	}
	v, err := strconv.ParseInt(value, 10, 64)
	bad := func(want string) error {
		return &configError{kerr.InvalidConfig, fmt.Sprintf("invalid value %q for %s: want %s", value, name, want)}
	}
	if err != nil {
		return bad("an integer")
	}
	switch name {
	case "max.message.bytes":
		if maxMessageBytes < 0 {
			return unsupportedConfig(name)
		}
		if v != int64(maxMessageBytes) {
			return &configError{kerr.PolicyViolation, fmt.Sprintf("max.message.bytes %d: every topic has the broker's limit, %d (weir.yaml's broker.max_message_bytes); a topic cannot set its own", v, maxMessageBytes)}
		}
	case "retention.ms":
		switch {
		case v == -1:
			cfg.RetentionTime = -1 // keep forever
		case v > 0:
			cfg.RetentionTime = millis(v)
		default:
			return bad("-1 (forever) or a positive number of milliseconds")
		}
	case "retention.bytes":
		switch {
		case v == -1:
			cfg.RetentionBytes = -1 // unbounded
		case v > 0:
			cfg.RetentionBytes = v
		default:
			return bad("-1 (unbounded) or a positive number of bytes")
		}
	case "segment.bytes":
		if v < broker.MinSegmentBytes || v > broker.MaxSegmentBytes {
			return bad(fmt.Sprintf("a number of bytes from %d (64 KiB) to %d (2 GiB)", broker.MinSegmentBytes, broker.MaxSegmentBytes))
		}
		cfg.SegmentBytes = v
	case "segment.ms":
		if v <= 0 {
			return bad("a positive number of milliseconds")
		}
		cfg.SegmentAge = millis(v)
	}
	return nil
}

// maxMessageBytes is the Log's batch size limit, or -1 for a Log without
// one.
func (c *conn) maxMessageBytes() int {
	if l, ok := c.s.log.(MessageLimiter); ok {
		return l.MaxMessageBytes()
	}
	return -1
}

// millis converts milliseconds to a Duration, saturating instead of
// overflowing for Kafka's "practically forever" values like Long.MAX_VALUE.
func millis(ms int64) time.Duration {
	if ms > int64(math.MaxInt64/time.Millisecond) {
		return math.MaxInt64
	}
	return time.Duration(ms) * time.Millisecond
}

// handleDeleteTopics deletes topics by name, or from v6 on by topic ID.
func (c *conn) handleDeleteTopics(ctx context.Context, req *kmsg.DeleteTopicsRequest) kmsg.Response {
	resp := req.ResponseKind().(*kmsg.DeleteTopicsResponse)
	targets := req.Topics
	if req.Version < 6 {
		targets = make([]kmsg.DeleteTopicsRequestTopic, len(req.TopicNames))
		for i := range req.TopicNames {
			targets[i].Topic = &req.TopicNames[i]
		}
	}
	var ids map[[16]byte]*broker.TopicInfo
	resp.Topics = make([]kmsg.DeleteTopicsResponseTopic, 0, len(targets))
	for _, t := range targets {
		rt := kmsg.NewDeleteTopicsResponseTopic()
		rt.Topic, rt.TopicID = t.Topic, t.TopicID
		hasID := t.TopicID != [16]byte{}
		var err error
		switch {
		case t.Topic != nil && hasID:
			rt.ErrorCode = kerr.InvalidRequest.Code
			err = errors.New("name a topic by name or by ID, not both")
		case t.Topic == nil:
			if ids == nil {
				ids = c.topicsByID(ctx)
			}
			info, ok := ids[t.TopicID]
			if !ok {
				rt.ErrorCode = kerr.UnknownTopicID.Code
				break
			}
			name := info.Name
			rt.Topic = &name
			err = c.deleteTopic(ctx, name)
			rt.ErrorCode = errorCode(err)
		default:
			if req.Version >= 6 { // the response carries the ID
				if infos, derr := c.s.log.DescribeTopics(ctx, *t.Topic); derr == nil && len(infos) == 1 {
					rt.TopicID = infos[0].ID
				}
			}
			err = c.deleteTopic(ctx, *t.Topic)
			rt.ErrorCode = errorCode(err)
		}
		if rt.ErrorCode != 0 {
			rt.ErrorMessage = errorMessage(err)
		}
		resp.Topics = append(resp.Topics, rt)
	}
	return resp
}

func (c *conn) deleteTopic(ctx context.Context, name string) error {
	err := c.s.log.DeleteTopic(ctx, name)
	if err == nil {
		c.logger.Info("kafka client: deleted topic", "topic", name)
	}
	return err
}
