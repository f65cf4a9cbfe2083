package kafkawire

import (
	"context"
	"errors"
	"fmt"
	"math"
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
	// synonyms, when set, are the values the config's value was chosen
	// from, highest first (the topic's, the broker's, the default), as
	// Kafka lists them; otherwise the value itself is its only synonym.
	synonyms []configSynonym
}

// configSynonym is one of a config's synonyms.
type configSynonym struct {
	name, value string
	source      kmsg.ConfigSource
}

// handleDescribeConfigs reports topic configs (the ones CreateTopics
// accepts, plus cleanup.policy, which is always delete) and a minimal set of
// broker configs, for admin tools. Broker configs are read-only, and so
// are topic configs unless the Log is a ConfigAlterer, which lets clients
// change retention.ms, retention.bytes, segment.bytes and segment.ms
// (but for those a ConfigPinner fixes).
func (c *conn) handleDescribeConfigs(ctx context.Context, req *kmsg.DescribeConfigsRequest) kmsg.Response {
	resp := req.ResponseKind().(*kmsg.DescribeConfigsResponse)
	_, alterable := c.s.log.(ConfigAlterer)
	pinner, _ := c.s.log.(ConfigPinner)
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
		var pinned broker.TopicConfigFields
		if pinner != nil && r.ResourceType == kmsg.ConfigResourceTypeTopic {
			pinned = pinner.PinnedTopicConfigs(r.ResourceName)
		}
		for _, e := range entries {
			if len(r.ConfigNames) > 0 && !slices.Contains(r.ConfigNames, e.name) { // empty, as null: all (as Kafka)
				continue
			}
			rc := kmsg.NewDescribeConfigsResponseResourceConfig()
			value := e.value
			rc.Name, rc.Value = e.name, &value
			field, changeable := configFields[e.name]
			rc.ReadOnly = !(changeable && alterable && r.ResourceType == kmsg.ConfigResourceTypeTopic) || pinned.Has(field) && field != 0
			rc.Source = e.source
			rc.IsDefault = e.source == kmsg.ConfigSourceDefaultConfig // v0's way of saying it
			rc.ConfigType = e.typ
			if req.IncludeSynonyms {
				syns := e.synonyms
				if syns == nil {
					syns = []configSynonym{{e.name, e.value, e.source}}
				}
				for _, s := range syns {
					syn := kmsg.NewDescribeConfigsResponseResourceConfigConfigSynonym()
					syn.Name, syn.Value, syn.Source = s.name, &s.value, s.source
					rc.ConfigSynonyms = append(rc.ConfigSynonyms, syn)
				}
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

// topicConfigs are a topic's configs in effect. With a ConfigSourcer Log
// each has the source Kafka would give it: DYNAMIC_TOPIC_CONFIG for a value
// the topic set itself, STATIC_BROKER_CONFIG for the broker's setting,
// DEFAULT_CONFIG for a built-in default; its synonyms are the topic's value,
// the broker's and the default, under Kafka's broker config names
// (log.retention.ms and so on), as far as they are set. cleanup.policy
// cannot be set (the default, delete), and max.message.bytes is the
// broker's for every topic (message.max.bytes).
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
	// Without layers, every value is the topic's own.
	own, layered := cfg, false
	var wide, builtin broker.TopicConfig
	if cs, ok := c.s.log.(ConfigSourcer); ok {
		if own, wide, builtin, err = cs.TopicConfigLayers(name); err != nil {
			return nil, kafkaError(err), err
		}
		layered = true
	}
	// entry is one config from its layers: set says whether a layer sets
	// it, str formats a layer's value.
	entry := func(name, brokerName string, typ kmsg.ConfigType, doc string, set func(broker.TopicConfig) bool, str func(broker.TopicConfig) string) configEntry {
		e := configEntry{name: name, value: str(cfg), typ: typ, doc: doc}
		if !layered {
			e.source = kmsg.ConfigSourceDynamicTopicConfig
			return e
		}
		if set(own) {
			e.synonyms = append(e.synonyms, configSynonym{name, str(own), kmsg.ConfigSourceDynamicTopicConfig})
		}
		if set(wide) {
			e.synonyms = append(e.synonyms, configSynonym{brokerName, str(wide), kmsg.ConfigSourceStaticBrokerConfig})
		}
		e.synonyms = append(e.synonyms, configSynonym{brokerName, str(builtin), kmsg.ConfigSourceDefaultConfig})
		e.source = e.synonyms[0].source
		return e
	}
	entries := []configEntry{
		{name: "cleanup.policy", value: "delete", source: kmsg.ConfigSourceDefaultConfig, typ: kmsg.ConfigTypeList,
			doc: "Always delete: old segments are deleted by retention; compaction is not supported."},
		entry("retention.bytes", "log.retention.bytes", kmsg.ConfigTypeLong,
			"Bytes kept per partition before old segments are deleted; -1 is unbounded.",
			func(c broker.TopicConfig) bool { return c.RetentionBytes != 0 },
			func(c broker.TopicConfig) string { return strconv.FormatInt(c.RetentionBytes, 10) }),
		entry("retention.ms", "log.retention.ms", kmsg.ConfigTypeLong,
			"Age after which a segment's records are deleted; -1 keeps them forever.",
			func(c broker.TopicConfig) bool { return c.RetentionTime != 0 },
			func(c broker.TopicConfig) string { return durationMillis(c.RetentionTime) }),
		entry("segment.bytes", "log.segment.bytes", kmsg.ConfigTypeInt,
			"Size at which the active segment is rolled.",
			func(c broker.TopicConfig) bool { return c.SegmentBytes != 0 },
			func(c broker.TopicConfig) string { return strconv.FormatInt(c.SegmentBytes, 10) }),
		entry("segment.ms", "log.roll.ms", kmsg.ConfigTypeLong,
			"Age of its first record at which the active segment is rolled.",
			func(c broker.TopicConfig) bool { return c.SegmentAge != 0 },
			func(c broker.TopicConfig) string { return durationMillis(c.SegmentAge) }),
	}
	if layered {
		entries[0].synonyms = []configSynonym{{"log.cleanup.policy", "delete", kmsg.ConfigSourceDefaultConfig}}
	}
	return append(entries, c.messageLimit("max.message.bytes")...), nil, nil
}

// messageLimit is the Log's batch size limit as the config name given
// (a topic's max.message.bytes, the broker's message.max.bytes), or
// nothing for a Log without one. It is the broker's setting
// (STATIC_BROKER_CONFIG), or, with a ConfigSourcer Log that says it is
// the built-in one, the default.
func (c *conn) messageLimit(name string) []configEntry {
	l, ok := c.s.log.(MessageLimiter)
	if !ok {
		return nil
	}
	const brokerName = "message.max.bytes"
	e := configEntry{name: name, value: strconv.Itoa(l.MaxMessageBytes()), source: kmsg.ConfigSourceStaticBrokerConfig, typ: kmsg.ConfigTypeInt,
		doc: "The largest record batch the broker takes (weir's broker.max_message_bytes); larger ones are refused whole."}
	if cs, ok := c.s.log.(ConfigSourcer); ok {
		def := cs.DefaultMaxMessageBytes()
		if def == l.MaxMessageBytes() {
			e.source = kmsg.ConfigSourceDefaultConfig
		} else {
			e.synonyms = []configSynonym{{brokerName, e.value, e.source}}
		}
		e.synonyms = append(e.synonyms, configSynonym{brokerName, strconv.Itoa(def), kmsg.ConfigSourceDefaultConfig})
	}
	return []configEntry{e}
}

// durationMillis formats a config duration in milliseconds; negative means
// forever (-1). The longest a Duration holds (about 292 years, in whole
// milliseconds, what millis saturates Kafka's Long.MAX_VALUE to and what
// the meta file keeps of it) is Long.MAX_VALUE, so that a tool that set
// that reads back what it set.
func durationMillis(d time.Duration) string {
	if d < 0 {
		return "-1"
	}
	if d.Milliseconds() >= int64(math.MaxInt64/time.Millisecond) {
		return strconv.FormatInt(math.MaxInt64, 10)
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
			"Whether producing to or asking for metadata of a missing topic creates it.", nil},
		{"broker.id", id, static, kmsg.ConfigTypeInt, "This node's ID.", nil},
		{"node.id", id, static, kmsg.ConfigTypeInt, "This node's ID.", nil},
	}, c.messageLimit("message.max.bytes")...), nil, nil
}
