package kafkawire

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/weirnet/weir/broker"
)

// configEntry is one config DescribeConfigs reports.
type configEntry struct {
	name, value string
	source      kmsg.ConfigSource
	typ         kmsg.ConfigType
	doc         string
}

// handleDescribeConfigs reports topic configs (the ones CreateTopics
// accepts, plus cleanup.policy, which is always delete) and a minimal set of
// broker configs, for admin tools. Everything is read-only: there is no
// AlterConfigs; topic configs are set when the topic is created.
func (c *conn) handleDescribeConfigs(ctx context.Context, req *kmsg.DescribeConfigsRequest) kmsg.Response {
	resp := req.ResponseKind().(*kmsg.DescribeConfigsResponse)
	for _, r := range req.Resources {
		rr := kmsg.NewDescribeConfigsResponseResource()
		rr.ResourceType, rr.ResourceName = r.ResourceType, r.ResourceName
		var (
			entries []configEntry
			code    *kerr.Error
			err     error
		)
		switch r.ResourceType {
		case kmsg.ConfigResourceTypeTopic:
			entries, code, err = c.topicConfigs(ctx, r.ResourceName)
		case kmsg.ConfigResourceTypeBroker:
			entries, code, err = c.brokerConfigs(r.ResourceName)
		default:
			code, err = kerr.InvalidRequest, fmt.Errorf("config resource type %v is not supported", r.ResourceType)
		}
		if code != nil {
			rr.ErrorCode, rr.ErrorMessage = code.Code, errorMessage(err)
			resp.Resources = append(resp.Resources, rr)
			continue
		}
		for _, e := range entries {
			if len(r.ConfigNames) > 0 && !slices.Contains(r.ConfigNames, e.name) { // empty, as null: all (as Kafka)
				continue
			}
			rc := kmsg.NewDescribeConfigsResponseResourceConfig()
			value := e.value
			rc.Name, rc.Value = e.name, &value
			rc.ReadOnly = true
			rc.Source = e.source
			rc.IsDefault = e.source == kmsg.ConfigSourceDefaultConfig // v0's way of saying it
			rc.ConfigType = e.typ
			if req.IncludeSynonyms {
				syn := kmsg.NewDescribeConfigsResponseResourceConfigConfigSynonym()
				syn.Name, syn.Value, syn.Source = e.name, &value, e.source
				rc.ConfigSynonyms = []kmsg.DescribeConfigsResponseResourceConfigConfigSynonym{syn}
			}
			if req.IncludeDocumentation {
				doc := e.doc
				rc.Documentation = &doc
			}
			rr.Configs = append(rr.Configs, rc)
		}
		resp.Resources = append(resp.Resources, rr)
	}
	return resp
}

// topicConfigs are a topic's configs in effect. The Log reports effective
// values only (the topic's own over the broker's defaults), so they are all
// reported as the topic's (DYNAMIC_TOPIC_CONFIG), except cleanup.policy,
// which cannot be set, and max.message.bytes, which is the broker's for
// every topic (DEFAULT_CONFIG: there is no topic override to copy).
func (c *conn) topicConfigs(ctx context.Context, name string) ([]configEntry, *kerr.Error, error) {
	if !broker.ValidTopicName(name) {
		return nil, kerr.InvalidTopicException, fmt.Errorf("invalid topic name %q", name)
	}
	infos, err := c.s.log.DescribeTopics(ctx, name)
	if err == nil && len(infos) != 1 {
		err = fmt.Errorf("topic %s: %w", name, broker.ErrUnknownTopic)
	}
	if err != nil {
		return nil, kafkaError(err), err
	}
	cfg := infos[0].Config
	topic := kmsg.ConfigSourceDynamicTopicConfig
	return append([]configEntry{
		{"cleanup.policy", "delete", kmsg.ConfigSourceDefaultConfig, kmsg.ConfigTypeList,
			"Always delete: old segments are deleted by retention; compaction is not supported."},
		{"retention.bytes", strconv.FormatInt(cfg.RetentionBytes, 10), topic, kmsg.ConfigTypeLong,
			"Bytes kept per partition before old segments are deleted; -1 is unbounded."},
		{"retention.ms", durationMillis(cfg.RetentionTime), topic, kmsg.ConfigTypeLong,
			"Age after which a segment's records are deleted; -1 keeps them forever."},
		{"segment.bytes", strconv.FormatInt(cfg.SegmentBytes, 10), topic, kmsg.ConfigTypeInt,
			"Size at which the active segment is rolled."},
		{"segment.ms", durationMillis(cfg.SegmentAge), topic, kmsg.ConfigTypeLong,
			"Age of its first record at which the active segment is rolled."},
	}, c.messageLimit("max.message.bytes", kmsg.ConfigSourceDefaultConfig)...), nil, nil
}

// messageLimit is the Log's batch size limit as the config name given
// (a topic's max.message.bytes, the broker's message.max.bytes), or
// nothing for a Log without one.
func (c *conn) messageLimit(name string, source kmsg.ConfigSource) []configEntry {
	l, ok := c.s.log.(MessageLimiter)
	if !ok {
		return nil
	}
	return []configEntry{{name, strconv.Itoa(l.MaxMessageBytes()), source, kmsg.ConfigTypeInt,
		"The largest record batch the broker takes (weir's broker.max_message_bytes); larger ones are refused whole."}}
}

// durationMillis formats a config duration in milliseconds; negative means
// forever (-1).
func durationMillis(d time.Duration) string {
	if d < 0 {
		return "-1"
	}
	return strconv.FormatInt(d.Milliseconds(), 10)
}

// brokerConfigs are the few broker configs the listener knows, for the
// resource named by this broker's ID. An empty name asks, as in Kafka, for
// the cluster-wide dynamic defaults, of which there are none.
func (c *conn) brokerConfigs(name string) ([]configEntry, *kerr.Error, error) {
	id := strconv.Itoa(int(c.s.cfg.nodeID))
	switch name {
	case "":
		return nil, nil, nil
	case id:
	default:
		return nil, kerr.InvalidRequest, errors.New("unexpected broker id, expected " + id + " or empty string, but received " + name)
	}
	static := kmsg.ConfigSourceStaticBrokerConfig
	return append([]configEntry{
		{"auto.create.topics.enable", strconv.FormatBool(c.s.log.AutoCreateTopics()), static, kmsg.ConfigTypeBoolean,
			"Whether producing to or asking for metadata of a missing topic creates it."},
		{"broker.id", id, static, kmsg.ConfigTypeInt, "This node's ID."},
		{"node.id", id, static, kmsg.ConfigTypeInt, "This node's ID."},
	}, c.messageLimit("message.max.bytes", kmsg.ConfigSourceStaticBrokerConfig)...), nil, nil
}
