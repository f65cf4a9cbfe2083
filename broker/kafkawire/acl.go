package kafkawire

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// Patterns name the topics or groups a user may use (User.Topics,
// User.Groups): a name, or a prefix ending in "*" ("enriched.*", Kafka's
// PREFIXED resource pattern), "*" for all.
type Patterns []string

// Allows reports whether name matches one of p.
func (p Patterns) Allows(name string) bool {
	for _, pat := range p {
		if prefix, ok := strings.CutSuffix(pat, "*"); ok && strings.HasPrefix(name, prefix) || pat == name {
			return true
		}
	}
	return false
}

// Check reports a pattern that is empty or has a "*" other than at its
// end (Kafka's prefixes have none inside either).
func (p Patterns) Check() error {
	for _, pat := range p {
		if pat == "" || strings.Contains(strings.TrimSuffix(pat, "*"), "*") {
			return fmt.Errorf("%q is not a name or a prefix ending in *", pat)
		}
	}
	return nil
}

// topicAllowed reports whether the connection's user may use topic: every
// topic without a user or without User.Topics.
func (c *conn) topicAllowed(topic string) bool {
	return c.user == nil || c.user.Topics == nil || c.user.Topics.Allows(topic)
}

// groupAllowed is topicAllowed for consumer groups (User.Groups).
func (c *conn) groupAllowed(group string) bool {
	return c.user == nil || c.user.Groups == nil || c.user.Groups.Allows(group)
}

// restricted reports whether the user is limited to some topics or groups:
// only then do requests go through restrict.
func (c *conn) restricted() bool {
	return c.user != nil && (c.user.Topics != nil || c.user.Groups != nil)
}

// restrict applies the user's topics and groups to a request as Kafka's
// ACLs do: what the request names outside them gets TOPIC_ or
// GROUP_AUTHORIZATION_FAILED, listings (Metadata for all topics, ListGroups,
// OffsetFetch for all of a group's topics, DescribeLogDirs) leave it out,
// and the rest of the request is served. It removes the denied part from
// req and returns fix, which adds the denied part's answers to the
// handler's response (nil for a request it leaves alone), and skip, true
// when nothing is left to serve: the handler is not called and fix is
// given the empty response. closeAfter, for an acks=0 produce naming a
// topic the user may not use, has no response to carry it: the rest is
// served, then the connection closes with it (as Kafka does).
func (c *conn) restrict(ctx context.Context, kreq kmsg.Request) (fix func(kmsg.Response), skip bool, closeAfter error) {
	if !c.restricted() {
		return nil, false, nil
	}
	if req, ok := kreq.(*kmsg.ProduceRequest); ok {
		fix, skip = c.restrictProduce(req)
		if fix != nil && req.Acks == 0 {
			// errAcksZeroFailed: logged at Debug, as the producer
			// reconnects and produces again.
			return nil, skip, fmt.Errorf("%w: user %q may not use a topic it produced to", errAcksZeroFailed, c.user.Name)
		}
		return fix, skip, nil
	}
	fix, skip = c.restrictOther(ctx, kreq)
	return fix, skip, nil
}

// restrictOther is restrict for the requests but Produce.
func (c *conn) restrictOther(ctx context.Context, kreq kmsg.Request) (fix func(kmsg.Response), skip bool) {
	switch req := kreq.(type) {
	case *kmsg.FetchRequest:
		return c.restrictFetch(req)
	case *kmsg.ListOffsetsRequest:
		return c.restrictListOffsets(req)
	case *kmsg.MetadataRequest:
		return c.restrictMetadata(req)
	case *kmsg.CreateTopicsRequest:
		return c.restrictCreateTopics(req)
	case *kmsg.DeleteTopicsRequest:
		return c.restrictDeleteTopics(ctx, req)
	case *kmsg.DescribeConfigsRequest:
		return c.restrictDescribeConfigs(req)
	case *kmsg.AlterConfigsRequest:
		return c.restrictAlterConfigs(req)
	case *kmsg.IncrementalAlterConfigsRequest:
		return c.restrictIncrementalAlterConfigs(req)
	case *kmsg.DescribeLogDirsRequest:
		return func(r kmsg.Response) {
			resp := r.(*kmsg.DescribeLogDirsResponse)
			for i := range resp.Dirs {
				resp.Dirs[i].Topics = slices.DeleteFunc(resp.Dirs[i].Topics, func(t kmsg.DescribeLogDirsResponseDirTopic) bool { return !c.topicAllowed(t.Topic) })
			}
		}, false
	case *kmsg.FindCoordinatorRequest:
		return c.restrictFindCoordinator(req)
	case *kmsg.OffsetCommitRequest:
		return c.restrictOffsetCommit(req)
	case *kmsg.OffsetFetchRequest:
		return c.restrictOffsetFetch(req)
	case *kmsg.ListGroupsRequest:
		return func(r kmsg.Response) {
			resp := r.(*kmsg.ListGroupsResponse)
			resp.Groups = slices.DeleteFunc(resp.Groups, func(g kmsg.ListGroupsResponseGroup) bool { return !c.groupAllowed(g.Group) })
		}, false
	case *kmsg.DescribeGroupsRequest:
		return c.restrictDescribeGroups(req)
	case *kmsg.DeleteGroupsRequest:
		return c.restrictDeleteGroups(req)
	case *kmsg.JoinGroupRequest:
		return c.denyGroup(req.Group, func(r kmsg.Response) { r.(*kmsg.JoinGroupResponse).ErrorCode = kerr.GroupAuthorizationFailed.Code })
	case *kmsg.SyncGroupRequest:
		return c.denyGroup(req.Group, func(r kmsg.Response) { r.(*kmsg.SyncGroupResponse).ErrorCode = kerr.GroupAuthorizationFailed.Code })
	case *kmsg.HeartbeatRequest:
		return c.denyGroup(req.Group, func(r kmsg.Response) { r.(*kmsg.HeartbeatResponse).ErrorCode = kerr.GroupAuthorizationFailed.Code })
	case *kmsg.LeaveGroupRequest:
		return c.denyGroup(req.Group, func(r kmsg.Response) { r.(*kmsg.LeaveGroupResponse).ErrorCode = kerr.GroupAuthorizationFailed.Code })
	}
	return nil, false
}

// denied notes a request refused for a topic or group, in the log once per
// connection: a client that keeps asking would fill it.
func (c *conn) denied(kind, name string) {
	if c.deniedLogged {
		return
	}
	c.deniedLogged = true
	c.logger.Info("kafka client: not allowed", kind, name,
		"hint", fmt.Sprintf("the user's %ss in broker.kafka_sasl do not include it (logged once per connection)", kind))
}

// keepTopics removes the items of s whose topic the user may not use,
// calling deny for each. An item whose topic is "" is kept.
func keepTopics[T any](c *conn, s []T, topic func(*T) string, deny func(*T)) []T {
	return slices.DeleteFunc(s, func(t T) bool {
		name := topic(&t)
		if name == "" || c.topicAllowed(name) { // "": not a topic, or one named by an unknown ID
			return false
		}
		c.denied("topic", name)
		deny(&t)
		return true
	})
}

// keepGroups is keepTopics for consumer groups.
func keepGroups[T any](c *conn, s []T, group func(*T) string, deny func(*T)) []T {
	return slices.DeleteFunc(s, func(g T) bool {
		name := group(&g)
		if c.groupAllowed(name) {
			return false
		}
		c.denied("group", name)
		deny(&g)
		return true
	})
}

// groupName is a group named by itself, for keepGroups.
func groupName(g *string) string { return *g }

func (c *conn) denyGroup(group string, deny func(kmsg.Response)) (func(kmsg.Response), bool) {
	if c.groupAllowed(group) {
		return nil, false
	}
	c.denied("group", group)
	return deny, true
}

// restrictProduce returns no fix when every topic is allowed.
func (c *conn) restrictProduce(req *kmsg.ProduceRequest) (func(kmsg.Response), bool) {
	var out []kmsg.ProduceResponseTopic
	req.Topics = keepTopics(c, req.Topics, func(t *kmsg.ProduceRequestTopic) string { return t.Topic }, func(t *kmsg.ProduceRequestTopic) {
		rt := kmsg.NewProduceResponseTopic()
		rt.Topic = t.Topic
		for _, p := range t.Partitions {
			rp := kmsg.NewProduceResponseTopicPartition()
			rp.Partition, rp.ErrorCode = p.Partition, kerr.TopicAuthorizationFailed.Code
			rt.Partitions = append(rt.Partitions, rp)
		}
		out = append(out, rt)
	})
	if len(out) == 0 {
		return nil, false
	}
	return func(r kmsg.Response) {
		resp := r.(*kmsg.ProduceResponse)
		resp.Topics = append(resp.Topics, out...)
	}, len(req.Topics) == 0
}

func (c *conn) restrictFetch(req *kmsg.FetchRequest) (func(kmsg.Response), bool) {
	var out []kmsg.FetchResponseTopic
	req.Topics = keepTopics(c, req.Topics, func(t *kmsg.FetchRequestTopic) string { return t.Topic }, func(t *kmsg.FetchRequestTopic) {
		rt := kmsg.NewFetchResponseTopic()
		rt.Topic, rt.TopicID = t.Topic, t.TopicID
		for _, p := range t.Partitions {
			rp := kmsg.NewFetchResponseTopicPartition()
			rp.Partition, rp.ErrorCode = p.Partition, kerr.TopicAuthorizationFailed.Code
			rt.Partitions = append(rt.Partitions, rp)
		}
		out = append(out, rt)
	})
	// Nothing left to fetch: answered at once, not after a long poll.
	return func(r kmsg.Response) {
		resp := r.(*kmsg.FetchResponse)
		resp.Topics = append(resp.Topics, out...)
	}, len(req.Topics) == 0 && len(out) > 0
}

func (c *conn) restrictListOffsets(req *kmsg.ListOffsetsRequest) (func(kmsg.Response), bool) {
	var out []kmsg.ListOffsetsResponseTopic
	req.Topics = keepTopics(c, req.Topics, func(t *kmsg.ListOffsetsRequestTopic) string { return t.Topic }, func(t *kmsg.ListOffsetsRequestTopic) {
		rt := kmsg.NewListOffsetsResponseTopic()
		rt.Topic = t.Topic
		for _, p := range t.Partitions {
			rp := kmsg.NewListOffsetsResponseTopicPartition()
			rp.Partition, rp.ErrorCode = p.Partition, kerr.TopicAuthorizationFailed.Code
			rt.Partitions = append(rt.Partitions, rp)
		}
		out = append(out, rt)
	})
	return func(r kmsg.Response) {
		resp := r.(*kmsg.ListOffsetsResponse)
		resp.Topics = append(resp.Topics, out...)
	}, len(req.Topics) == 0 && len(out) > 0
}

// restrictMetadata: a listing of all topics leaves out those the user may
// not use (Kafka lists only what a principal may describe); one asked for
// by name gets TOPIC_AUTHORIZATION_FAILED and is not auto-created.
func (c *conn) restrictMetadata(req *kmsg.MetadataRequest) (func(kmsg.Response), bool) {
	all := req.Topics == nil || req.Version == 0 && len(req.Topics) == 0
	var out []kmsg.MetadataResponseTopic
	if !all {
		req.Topics = keepTopics(c, req.Topics, func(t *kmsg.MetadataRequestTopic) string {
			if t.Topic == nil {
				return "" // by ID: checked in the response
			}
			return *t.Topic
		}, func(t *kmsg.MetadataRequestTopic) {
			rt := kmsg.NewMetadataResponseTopic()
			rt.Topic, rt.TopicID, rt.ErrorCode = t.Topic, t.TopicID, kerr.TopicAuthorizationFailed.Code
			out = append(out, rt)
		})
	}
	if !all && len(req.Topics) == 0 && len(out) > 0 && req.Version == 0 {
		// v0 reads an empty list as all topics: serve the brokers,
		// then none of the topics.
		return func(r kmsg.Response) {
			resp := r.(*kmsg.MetadataResponse)
			resp.Topics = append(resp.Topics[:0], out...)
		}, false
	}
	return func(r kmsg.Response) {
		resp := r.(*kmsg.MetadataResponse)
		// A listing leaves them out; a topic asked for by ID is named
		// only in the response: refused there, without its name.
		resp.Topics = slices.DeleteFunc(resp.Topics, func(t kmsg.MetadataResponseTopic) bool {
			if t.Topic == nil || c.topicAllowed(*t.Topic) {
				return false
			}
			if !all {
				c.denied("topic", *t.Topic)
				rt := kmsg.NewMetadataResponseTopic()
				rt.TopicID, rt.ErrorCode = t.TopicID, kerr.TopicAuthorizationFailed.Code
				out = append(out, rt)
			}
			return true
		})
		resp.Topics = append(resp.Topics, out...)
	}, false
}

func (c *conn) restrictCreateTopics(req *kmsg.CreateTopicsRequest) (func(kmsg.Response), bool) {
	var out []kmsg.CreateTopicsResponseTopic
	req.Topics = keepTopics(c, req.Topics, func(t *kmsg.CreateTopicsRequestTopic) string { return t.Topic }, func(t *kmsg.CreateTopicsRequestTopic) {
		rt := kmsg.NewCreateTopicsResponseTopic()
		rt.Topic, rt.ErrorCode, rt.ErrorMessage = t.Topic, kerr.TopicAuthorizationFailed.Code, c.deniedMessage("topic")
		out = append(out, rt)
	})
	return func(r kmsg.Response) {
		resp := r.(*kmsg.CreateTopicsResponse)
		resp.Topics = append(resp.Topics, out...)
	}, len(req.Topics) == 0 && len(out) > 0
}

// restrictDeleteTopics: a topic deleted by ID is named from the log to
// check it.
func (c *conn) restrictDeleteTopics(ctx context.Context, req *kmsg.DeleteTopicsRequest) (func(kmsg.Response), bool) {
	var out []kmsg.DeleteTopicsResponseTopic
	deny := func(name *string, id [16]byte) {
		rt := kmsg.NewDeleteTopicsResponseTopic()
		rt.Topic, rt.TopicID, rt.ErrorCode, rt.ErrorMessage = name, id, kerr.TopicAuthorizationFailed.Code, c.deniedMessage("topic")
		out = append(out, rt)
	}
	req.TopicNames = keepTopics(c, req.TopicNames, func(t *string) string { return *t }, func(t *string) { deny(t, [16]byte{}) })
	var ids map[[16]byte]string
	for _, t := range req.Topics {
		if t.Topic == nil && ids == nil {
			ids = map[[16]byte]string{}
			for id, info := range c.topicsByID(ctx) {
				ids[id] = info.Name
			}
		}
	}
	req.Topics = keepTopics(c, req.Topics, func(t *kmsg.DeleteTopicsRequestTopic) string {
		if t.Topic != nil {
			return *t.Topic
		}
		if name, ok := ids[t.TopicID]; ok {
			return name
		}
		return "" // an unknown ID: the handler says so
	}, func(t *kmsg.DeleteTopicsRequestTopic) { deny(t.Topic, t.TopicID) })
	return func(r kmsg.Response) {
		resp := r.(*kmsg.DeleteTopicsResponse)
		resp.Topics = append(resp.Topics, out...)
	}, len(req.TopicNames) == 0 && len(req.Topics) == 0 && len(out) > 0
}

// topicResource is the name of a config resource for topicAllowed: a
// broker's resources are not topics, and are allowed.
func topicResource(t kmsg.ConfigResourceType, name string) string {
	if t == kmsg.ConfigResourceTypeTopic {
		return name
	}
	return ""
}

func (c *conn) restrictDescribeConfigs(req *kmsg.DescribeConfigsRequest) (func(kmsg.Response), bool) {
	var out []kmsg.DescribeConfigsResponseResource
	req.Resources = keepTopics(c, req.Resources, func(r *kmsg.DescribeConfigsRequestResource) string {
		return topicResource(r.ResourceType, r.ResourceName)
	}, func(r *kmsg.DescribeConfigsRequestResource) {
		rr := kmsg.NewDescribeConfigsResponseResource()
		rr.ResourceType, rr.ResourceName, rr.ErrorCode, rr.ErrorMessage = r.ResourceType, r.ResourceName, kerr.TopicAuthorizationFailed.Code, c.deniedMessage("topic")
		out = append(out, rr)
	})
	return func(r kmsg.Response) {
		resp := r.(*kmsg.DescribeConfigsResponse)
		resp.Resources = append(resp.Resources, out...)
	}, len(req.Resources) == 0 && len(out) > 0
}

func (c *conn) restrictAlterConfigs(req *kmsg.AlterConfigsRequest) (func(kmsg.Response), bool) {
	var out []kmsg.AlterConfigsResponseResource
	req.Resources = keepTopics(c, req.Resources, func(r *kmsg.AlterConfigsRequestResource) string {
		return topicResource(r.ResourceType, r.ResourceName)
	}, func(r *kmsg.AlterConfigsRequestResource) {
		rr := kmsg.NewAlterConfigsResponseResource()
		rr.ResourceType, rr.ResourceName, rr.ErrorCode, rr.ErrorMessage = r.ResourceType, r.ResourceName, kerr.TopicAuthorizationFailed.Code, c.deniedMessage("topic")
		out = append(out, rr)
	})
	return func(r kmsg.Response) {
		resp := r.(*kmsg.AlterConfigsResponse)
		resp.Resources = append(resp.Resources, out...)
	}, len(req.Resources) == 0 && len(out) > 0
}

func (c *conn) restrictIncrementalAlterConfigs(req *kmsg.IncrementalAlterConfigsRequest) (func(kmsg.Response), bool) {
	var out []kmsg.IncrementalAlterConfigsResponseResource
	req.Resources = keepTopics(c, req.Resources, func(r *kmsg.IncrementalAlterConfigsRequestResource) string {
		return topicResource(r.ResourceType, r.ResourceName)
	}, func(r *kmsg.IncrementalAlterConfigsRequestResource) {
		rr := kmsg.NewIncrementalAlterConfigsResponseResource()
		rr.ResourceType, rr.ResourceName, rr.ErrorCode, rr.ErrorMessage = r.ResourceType, r.ResourceName, kerr.TopicAuthorizationFailed.Code, c.deniedMessage("topic")
		out = append(out, rr)
	})
	return func(r kmsg.Response) {
		resp := r.(*kmsg.IncrementalAlterConfigsResponse)
		resp.Resources = append(resp.Resources, out...)
	}, len(req.Resources) == 0 && len(out) > 0
}

// deniedMessage is the error message of a refused topic or group, for the
// responses with room for one.
func (c *conn) deniedMessage(kind string) *string {
	msg := fmt.Sprintf("user %q may not use this %s (its %ss in broker.kafka_sasl)", c.user.Name, kind, kind)
	return &msg
}

func (c *conn) restrictFindCoordinator(req *kmsg.FindCoordinatorRequest) (func(kmsg.Response), bool) {
	if req.CoordinatorType != coordinatorGroup {
		return nil, false
	}
	if req.Version < 4 {
		return c.denyGroup(req.CoordinatorKey, func(r kmsg.Response) {
			resp := r.(*kmsg.FindCoordinatorResponse)
			resp.ErrorCode, resp.ErrorMessage, resp.NodeID, resp.Port = kerr.GroupAuthorizationFailed.Code, c.deniedMessage("group"), -1, -1
		})
	}
	var out []kmsg.FindCoordinatorResponseCoordinator
	req.CoordinatorKeys = keepGroups(c, req.CoordinatorKeys, groupName, func(key *string) {
		co := kmsg.NewFindCoordinatorResponseCoordinator()
		co.Key, co.ErrorCode, co.ErrorMessage, co.NodeID, co.Port = *key, kerr.GroupAuthorizationFailed.Code, c.deniedMessage("group"), -1, -1
		out = append(out, co)
	})
	if len(out) == 0 {
		return nil, false
	}
	return func(r kmsg.Response) {
		resp := r.(*kmsg.FindCoordinatorResponse)
		resp.Coordinators = append(resp.Coordinators, out...)
	}, len(req.CoordinatorKeys) == 0
}

// restrictOffsetCommit refuses a commit to a group the user may not use
// (every partition GROUP_AUTHORIZATION_FAILED, as Kafka answers), and
// the partitions of topics it may not use.
func (c *conn) restrictOffsetCommit(req *kmsg.OffsetCommitRequest) (func(kmsg.Response), bool) {
	var out []kmsg.OffsetCommitResponseTopic
	deny := func(t *kmsg.OffsetCommitRequestTopic, code int16) {
		rt := kmsg.NewOffsetCommitResponseTopic()
		rt.Topic = t.Topic
		for _, p := range t.Partitions {
			rp := kmsg.NewOffsetCommitResponseTopicPartition()
			rp.Partition, rp.ErrorCode = p.Partition, code
			rt.Partitions = append(rt.Partitions, rp)
		}
		out = append(out, rt)
	}
	fix := func(r kmsg.Response) {
		resp := r.(*kmsg.OffsetCommitResponse)
		resp.Topics = append(resp.Topics, out...)
	}
	if !c.groupAllowed(req.Group) {
		c.denied("group", req.Group)
		for i := range req.Topics {
			deny(&req.Topics[i], kerr.GroupAuthorizationFailed.Code)
		}
		return fix, true
	}
	req.Topics = keepTopics(c, req.Topics, func(t *kmsg.OffsetCommitRequestTopic) string { return t.Topic }, func(t *kmsg.OffsetCommitRequestTopic) {
		deny(t, kerr.TopicAuthorizationFailed.Code)
	})
	return fix, len(req.Topics) == 0 && len(out) > 0
}

// restrictOffsetFetch: a group the user may not use gets
// GROUP_AUTHORIZATION_FAILED; topics it may not use, asked for by name,
// TOPIC_AUTHORIZATION_FAILED per partition, and are left out of a fetch
// of all the group's topics.
func (c *conn) restrictOffsetFetch(req *kmsg.OffsetFetchRequest) (func(kmsg.Response), bool) {
	if req.Version < 8 {
		if !c.groupAllowed(req.Group) {
			c.denied("group", req.Group)
			return func(r kmsg.Response) {
				resp := r.(*kmsg.OffsetFetchResponse)
				resp.ErrorCode = kerr.GroupAuthorizationFailed.Code // v2+
				// v0-1 have no such field: each partition says it.
				for _, t := range req.Topics {
					rt := kmsg.NewOffsetFetchResponseTopic()
					rt.Topic = t.Topic
					for _, p := range t.Partitions {
						rp := kmsg.NewOffsetFetchResponseTopicPartition()
						rp.Partition, rp.Offset, rp.ErrorCode = p, -1, kerr.GroupAuthorizationFailed.Code
						rt.Partitions = append(rt.Partitions, rp)
					}
					resp.Topics = append(resp.Topics, rt)
				}
			}, true
		}
		var out []kmsg.OffsetFetchResponseTopic
		if req.Topics != nil {
			req.Topics = keepTopics(c, req.Topics, func(t *kmsg.OffsetFetchRequestTopic) string { return t.Topic }, func(t *kmsg.OffsetFetchRequestTopic) {
				rt := kmsg.NewOffsetFetchResponseTopic()
				rt.Topic = t.Topic
				for _, p := range t.Partitions {
					rp := kmsg.NewOffsetFetchResponseTopicPartition()
					rp.Partition, rp.Offset, rp.ErrorCode = p, -1, kerr.TopicAuthorizationFailed.Code
					rt.Partitions = append(rt.Partitions, rp)
				}
				out = append(out, rt)
			})
		}
		return func(r kmsg.Response) {
			resp := r.(*kmsg.OffsetFetchResponse)
			resp.Topics = slices.DeleteFunc(resp.Topics, func(t kmsg.OffsetFetchResponseTopic) bool { return !c.topicAllowed(t.Topic) })
			resp.Topics = append(resp.Topics, out...)
		}, false
	}
	// v8+: several groups, each with its topics.
	var deniedGroups []kmsg.OffsetFetchResponseGroup
	denied := map[string][]kmsg.OffsetFetchResponseGroupTopic{}
	req.Groups = keepGroups(c, req.Groups, func(g *kmsg.OffsetFetchRequestGroup) string { return g.Group }, func(g *kmsg.OffsetFetchRequestGroup) {
		rg := kmsg.NewOffsetFetchResponseGroup()
		rg.Group, rg.ErrorCode = g.Group, kerr.GroupAuthorizationFailed.Code
		deniedGroups = append(deniedGroups, rg)
	})
	for i := range req.Groups {
		g := &req.Groups[i]
		if g.Topics == nil {
			continue
		}
		g.Topics = keepTopics(c, g.Topics, func(t *kmsg.OffsetFetchRequestGroupTopic) string { return t.Topic }, func(t *kmsg.OffsetFetchRequestGroupTopic) {
			rt := kmsg.NewOffsetFetchResponseGroupTopic()
			rt.Topic = t.Topic
			for _, p := range t.Partitions {
				rp := kmsg.NewOffsetFetchResponseGroupTopicPartition()
				rp.Partition, rp.Offset, rp.ErrorCode = p, -1, kerr.TopicAuthorizationFailed.Code
				rt.Partitions = append(rt.Partitions, rp)
			}
			denied[g.Group] = append(denied[g.Group], rt)
		})
	}
	return func(r kmsg.Response) {
		resp := r.(*kmsg.OffsetFetchResponse)
		for i := range resp.Groups {
			g := &resp.Groups[i]
			g.Topics = slices.DeleteFunc(g.Topics, func(t kmsg.OffsetFetchResponseGroupTopic) bool { return !c.topicAllowed(t.Topic) })
			g.Topics = append(g.Topics, denied[g.Group]...)
		}
		resp.Groups = append(resp.Groups, deniedGroups...)
	}, len(req.Groups) == 0 && len(deniedGroups) > 0
}

func (c *conn) restrictDescribeGroups(req *kmsg.DescribeGroupsRequest) (func(kmsg.Response), bool) {
	var out []kmsg.DescribeGroupsResponseGroup
	req.Groups = keepGroups(c, req.Groups, groupName, func(g *string) {
		rg := kmsg.NewDescribeGroupsResponseGroup()
		rg.Group, rg.ErrorCode = *g, kerr.GroupAuthorizationFailed.Code
		out = append(out, rg)
	})
	return func(r kmsg.Response) {
		resp := r.(*kmsg.DescribeGroupsResponse)
		resp.Groups = append(resp.Groups, out...)
	}, len(req.Groups) == 0 && len(out) > 0
}

func (c *conn) restrictDeleteGroups(req *kmsg.DeleteGroupsRequest) (func(kmsg.Response), bool) {
	var out []kmsg.DeleteGroupsResponseGroup
	req.Groups = keepGroups(c, req.Groups, groupName, func(g *string) {
		rg := kmsg.NewDeleteGroupsResponseGroup()
		rg.Group, rg.ErrorCode = *g, kerr.GroupAuthorizationFailed.Code
		out = append(out, rg)
	})
	return func(r kmsg.Response) {
		resp := r.(*kmsg.DeleteGroupsResponse)
		resp.Groups = append(resp.Groups, out...)
	}, len(req.Groups) == 0 && len(out) > 0
}
