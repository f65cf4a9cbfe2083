package kafkawire

import (
	"fmt"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// readOnly reports whether the connection's user may only read (see
// User.ReadOnly).
func (c *conn) readOnly() bool { return c.user != nil && c.user.ReadOnly }

// refuseReadOnly answers the requests a read-only user may not make, as
// Kafka answers a principal its ACLs deny: every topic, resource or group
// the request names gets TOPIC_, CLUSTER_ or GROUP_AUTHORIZATION_FAILED,
// with a message naming the user where the response has room for one.
// nil: the request is allowed. Produce is refused in handleProduce (acks=0
// closes the connection there), Metadata's topic creation in
// handleMetadata.
func (c *conn) refuseReadOnly(kreq kmsg.Request) kmsg.Response {
	if !c.readOnly() {
		return nil
	}
	msg := fmt.Sprintf("user %q is read_only (broker.kafka_sasl)", c.user.Name)
	switch req := kreq.(type) {
	case *kmsg.CreateTopicsRequest:
		resp := req.ResponseKind().(*kmsg.CreateTopicsResponse)
		for _, t := range req.Topics {
			rt := kmsg.NewCreateTopicsResponseTopic()
			rt.Topic, rt.ErrorCode, rt.ErrorMessage = t.Topic, kerr.TopicAuthorizationFailed.Code, &msg
			resp.Topics = append(resp.Topics, rt)
		}
		return resp
	case *kmsg.DeleteTopicsRequest:
		resp := req.ResponseKind().(*kmsg.DeleteTopicsResponse)
		add := func(name *string, id [16]byte) {
			rt := kmsg.NewDeleteTopicsResponseTopic()
			rt.Topic, rt.TopicID, rt.ErrorCode, rt.ErrorMessage = name, id, kerr.TopicAuthorizationFailed.Code, &msg
			resp.Topics = append(resp.Topics, rt)
		}
		if req.Version < 6 {
			for i := range req.TopicNames {
				add(&req.TopicNames[i], [16]byte{})
			}
		}
		for _, t := range req.Topics {
			add(t.Topic, t.TopicID)
		}
		return resp
	case *kmsg.AlterConfigsRequest:
		resp := req.ResponseKind().(*kmsg.AlterConfigsResponse)
		for _, r := range req.Resources {
			rr := kmsg.NewAlterConfigsResponseResource()
			rr.ResourceType, rr.ResourceName, rr.ErrorCode, rr.ErrorMessage = r.ResourceType, r.ResourceName, resourceDenied(r.ResourceType), &msg
			resp.Resources = append(resp.Resources, rr)
		}
		return resp
	case *kmsg.IncrementalAlterConfigsRequest:
		resp := req.ResponseKind().(*kmsg.IncrementalAlterConfigsResponse)
		for _, r := range req.Resources {
			rr := kmsg.NewIncrementalAlterConfigsResponseResource()
			rr.ResourceType, rr.ResourceName, rr.ErrorCode, rr.ErrorMessage = r.ResourceType, r.ResourceName, resourceDenied(r.ResourceType), &msg
			resp.Resources = append(resp.Resources, rr)
		}
		return resp
	case *kmsg.DeleteGroupsRequest:
		resp := req.ResponseKind().(*kmsg.DeleteGroupsResponse)
		for _, g := range req.Groups {
			rg := kmsg.NewDeleteGroupsResponseGroup()
			rg.Group, rg.ErrorCode = g, kerr.GroupAuthorizationFailed.Code
			resp.Groups = append(resp.Groups, rg)
		}
		return resp
	case *kmsg.InitProducerIDRequest:
		// An idempotent producer's first request: Kafka wants
		// IDEMPOTENT_WRITE on the cluster (or WRITE on a topic).
		resp := req.ResponseKind().(*kmsg.InitProducerIDResponse)
		resp.ProducerID, resp.ProducerEpoch = -1, -1
		resp.ErrorCode = kerr.ClusterAuthorizationFailed.Code
		return resp
	}
	return nil
}

// resourceDenied is the error a config resource of type t gets: topics
// TOPIC_AUTHORIZATION_FAILED, the broker (and anything else)
// CLUSTER_AUTHORIZATION_FAILED, as Kafka answers.
func resourceDenied(t kmsg.ConfigResourceType) int16 {
	if t == kmsg.ConfigResourceTypeTopic {
		return kerr.TopicAuthorizationFailed.Code
	}
	return kerr.ClusterAuthorizationFailed.Code
}
