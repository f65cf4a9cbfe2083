package kafkawire

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/weirnet/weir/broker"
)

// configFields are the topic configs a ConfigAlterer changes, by Kafka name.
var configFields = map[string]broker.TopicConfigFields{
	"retention.ms":    broker.RetentionTimeField,
	"retention.bytes": broker.RetentionBytesField,
	"segment.bytes":   broker.SegmentBytesField,
	"segment.ms":      broker.SegmentAgeField,
}

// alterRequest is one resource of an AlterConfigs or
// IncrementalAlterConfigs request, decoded: the change to make, or the
// error to answer.
type alterRequest struct {
	typ    kmsg.ConfigResourceType
	name   string
	change broker.TopicConfigChange
	code   *kerr.Error
	err    error
	// configs is the number of configs it names.
	configs int
	// said is the change as the client wrote it (retention.ms=3600000,
	// segment.ms=(default)), for the log.
	said []string
}

// handleIncrementalAlterConfigs changes topic configs by SET and DELETE
// (APPEND and SUBTRACT are for list configs, which no changeable one is).
func (c *conn) handleIncrementalAlterConfigs(ctx context.Context, req *kmsg.IncrementalAlterConfigsRequest) kmsg.Response {
	resp := req.ResponseKind().(*kmsg.IncrementalAlterConfigsResponse)
	reqs := make([]alterRequest, len(req.Resources))
	for i, r := range req.Resources {
		a := &reqs[i]
		a.typ, a.name, a.configs = r.ResourceType, r.ResourceName, len(r.Configs)
		seen := make(map[string]bool, len(r.Configs))
		for _, rc := range r.Configs {
			if a.code != nil {
				break
			}
			if seen[rc.Name] {
				a.code, a.err = kerr.InvalidRequest, fmt.Errorf("error due to duplicate config keys: %s", rc.Name)
				break
			}
			seen[rc.Name] = true
			switch rc.Op {
			case kmsg.IncrementalAlterConfigOpSet:
				if rc.Value == nil {
					a.code, a.err = kerr.InvalidRequest, fmt.Errorf("null value not supported for: %s", rc.Name)
					break
				}
				if err := setTopicConfig(&a.change.Set, rc.Name, *rc.Value, c.maxMessageBytes()); err != nil {
					a.code, a.err = asKerr(err), err
				}
				a.said = append(a.said, rc.Name+"="+*rc.Value)
			case kmsg.IncrementalAlterConfigOpDelete:
				a.said = append(a.said, rc.Name+"=(default)")
				f, ok := configFields[rc.Name]
				switch {
				case ok:
					a.change.Delete |= f
				case rc.Name == "cleanup.policy", rc.Name == "max.message.bytes" && c.maxMessageBytes() >= 0:
					// never the topic's own: deleting leaves it as it is
				default:
					a.code, a.err = kerr.InvalidConfig, unsupportedConfig(rc.Name)
				}
			case kmsg.IncrementalAlterConfigOpAppend, kmsg.IncrementalAlterConfigOpSubtract:
				a.code, a.err = kerr.InvalidRequest, fmt.Errorf("config value %s is not allowed for config key %s: it is not a list", rc.Op, rc.Name)
			default:
				a.code, a.err = kerr.InvalidRequest, fmt.Errorf("unknown config operation %d for %s", rc.Op, rc.Name)
			}
		}
	}
	for _, a := range c.alterConfigs(ctx, reqs, req.ValidateOnly) {
		rr := kmsg.NewIncrementalAlterConfigsResponseResource()
		rr.ResourceType, rr.ResourceName = a.typ, a.name
		if a.code != nil {
			rr.ErrorCode, rr.ErrorMessage = a.code.Code, errorMessage(a.err)
		}
		resp.Resources = append(resp.Resources, rr)
	}
	return resp
}

// handleAlterConfigs replaces a topic's whole set of configs (Kafka's
// legacy AlterConfigs): those not given go back to the broker's defaults.
func (c *conn) handleAlterConfigs(ctx context.Context, req *kmsg.AlterConfigsRequest) kmsg.Response {
	resp := req.ResponseKind().(*kmsg.AlterConfigsResponse)
	reqs := make([]alterRequest, len(req.Resources))
	for i, r := range req.Resources {
		a := &reqs[i]
		a.typ, a.name, a.configs = r.ResourceType, r.ResourceName, len(r.Configs)
		a.change.Replace = true
		seen := make(map[string]bool, len(r.Configs))
		for _, rc := range r.Configs {
			switch {
			case seen[rc.Name]:
				a.code, a.err = kerr.InvalidRequest, fmt.Errorf("error due to duplicate config keys: %s", rc.Name)
			case rc.Value == nil:
				a.code, a.err = kerr.InvalidRequest, fmt.Errorf("null value not supported for topic configs: %s", rc.Name)
			default:
				if err := setTopicConfig(&a.change.Set, rc.Name, *rc.Value, c.maxMessageBytes()); err != nil {
					a.code, a.err = asKerr(err), err
				}
				a.said = append(a.said, rc.Name+"="+*rc.Value)
			}
			if a.code != nil {
				break
			}
			seen[rc.Name] = true
		}
	}
	for _, a := range c.alterConfigs(ctx, reqs, req.ValidateOnly) {
		rr := kmsg.NewAlterConfigsResponseResource()
		rr.ResourceType, rr.ResourceName = a.typ, a.name
		if a.code != nil {
			rr.ErrorCode, rr.ErrorMessage = a.code.Code, errorMessage(a.err)
		}
		resp.Resources = append(resp.Resources, rr)
	}
	return resp
}

// alterConfigs makes the decoded changes, each resource on its own (one
// refused does not stop the others, as in Kafka), and returns them with
// their errors set.
func (c *conn) alterConfigs(ctx context.Context, reqs []alterRequest, validateOnly bool) []alterRequest {
	type key struct {
		typ  kmsg.ConfigResourceType
		name string
	}
	count := make(map[key]int, len(reqs))
	for _, a := range reqs {
		count[key{a.typ, a.name}]++
	}
	alterer, _ := c.s.log.(ConfigAlterer)
	for i := range reqs {
		a := &reqs[i]
		switch {
		case count[key{a.typ, a.name}] > 1:
			// Kafka refuses every occurrence of a resource named twice.
			a.code, a.err = kerr.InvalidRequest, errors.New("each resource must appear at most once")
		case a.typ == kmsg.ConfigResourceTypeBroker:
			a.code, a.err = c.alterBroker(a)
		case a.typ != kmsg.ConfigResourceTypeTopic:
			a.code, a.err = kerr.InvalidRequest, fmt.Errorf("config resource type %v is not supported", a.typ)
		case !broker.ValidTopicName(a.name):
			a.code, a.err = kerr.InvalidTopicException, fmt.Errorf("invalid topic name %q", a.name)
		case a.code != nil:
		default:
			err := alterer.AlterTopicConfig(ctx, a.name, a.change, validateOnly)
			if err != nil {
				a.code, a.err = kafkaError(err), err
				break
			}
			if !validateOnly {
				said := strings.Join(a.said, " ")
				if a.change.Replace {
					said = strings.TrimPrefix(said+" (the others to their defaults)", " ")
				}
				c.logger.Info("kafka client: altered topic configs", "topic", a.name, "configs", said)
			}
		}
	}
	return reqs
}

// alterBroker answers a change to broker configs: the broker's settings
// are weir.yaml's, read at start, so there is none to change while it
// runs; Kafka answers the same for configs it cannot change dynamically.
func (c *conn) alterBroker(a *alterRequest) (*kerr.Error, error) {
	if id := strconv.Itoa(int(c.s.cfg.nodeID)); a.name != "" && a.name != id {
		return kerr.InvalidRequest, errors.New("unexpected broker id, expected " + id + " or empty string, but received " + a.name)
	}
	if a.configs == 0 {
		return nil, nil // nothing to change
	}
	return kerr.InvalidRequest, errors.New("broker configs cannot be changed while the broker runs: they are weir's broker settings (broker.retention, broker.segment, broker.max_message_bytes, broker.auto_create_topics in weir.yaml): change them there and restart")
}

// unsupportedConfig is the error for a topic config the log does not have.
func unsupportedConfig(name string) error {
	return &configError{kerr.InvalidConfig, fmt.Sprintf("unsupported topic config %q (supported: retention.ms, retention.bytes, segment.bytes, segment.ms, cleanup.policy=delete)", name)}
}
