package kafkawire

import (
	"context"
	"net"
	"strings"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// Groups is a consumer group coordinator for Kafka clients: Kafka's classic
// group protocol and committed offsets. The embedded broker implements it
// next to Log; the listener uses it when the Log it serves is one (or when
// given WithGroups), and otherwise advertises no group API at all.
//
// The methods take and answer kmsg messages: the group protocol is Kafka's
// through and through (member metadata and assignments are opaque client
// bytes, errors are Kafka error codes), so a translation layer would only
// restate it. Each method must handle every version the listener
// advertises (apiversions.go). Byte slices in a request point into the
// connection's buffer and are valid only during the call: copy what is
// kept. JoinGroup and SyncGroup may block until the rebalance completes;
// they must return when ctx is done.
type Groups interface {
	// JoinGroup joins (or rejoins) a member. clientID and clientHost are
	// what DescribeGroups reports for it.
	JoinGroup(ctx context.Context, clientID, clientHost string, req *kmsg.JoinGroupRequest) *kmsg.JoinGroupResponse
	SyncGroup(ctx context.Context, req *kmsg.SyncGroupRequest) *kmsg.SyncGroupResponse
	Heartbeat(req *kmsg.HeartbeatRequest) *kmsg.HeartbeatResponse
	LeaveGroup(req *kmsg.LeaveGroupRequest) *kmsg.LeaveGroupResponse
	OffsetCommit(req *kmsg.OffsetCommitRequest) *kmsg.OffsetCommitResponse
	OffsetFetch(req *kmsg.OffsetFetchRequest) *kmsg.OffsetFetchResponse
	ListGroups(req *kmsg.ListGroupsRequest) *kmsg.ListGroupsResponse
	DescribeGroups(req *kmsg.DescribeGroupsRequest) *kmsg.DescribeGroupsResponse
	DeleteGroups(req *kmsg.DeleteGroupsRequest) *kmsg.DeleteGroupsResponse
}

// Coordinator types of FindCoordinator.
const (
	coordinatorGroup       = 0
	coordinatorTransaction = 1
)

// dispatchGroup runs a group request; ok is false for other requests.
func (c *conn) dispatchGroup(ctx context.Context, h header, kreq kmsg.Request) (resp kmsg.Response, ok bool, err error) {
	g := c.s.groups
	switch req := kreq.(type) {
	case *kmsg.JoinGroupRequest:
		// Joining waits for the rebalance: answers to requests
		// pipelined before it must not wait with it.
		if err := c.flush(); err != nil {
			return nil, true, err
		}
		clientID := ""
		if h.clientID != nil {
			clientID = strings.Clone(*h.clientID)
		}
		return g.JoinGroup(ctx, clientID, c.clientHost(), req), true, nil
	case *kmsg.SyncGroupRequest:
		if err := c.flush(); err != nil {
			return nil, true, err
		}
		return g.SyncGroup(ctx, req), true, nil
	case *kmsg.HeartbeatRequest:
		return g.Heartbeat(req), true, nil
	case *kmsg.LeaveGroupRequest:
		return g.LeaveGroup(req), true, nil
	case *kmsg.OffsetCommitRequest:
		return g.OffsetCommit(req), true, nil
	case *kmsg.OffsetFetchRequest:
		return g.OffsetFetch(req), true, nil
	case *kmsg.ListGroupsRequest:
		return g.ListGroups(req), true, nil
	case *kmsg.DescribeGroupsRequest:
		return g.DescribeGroups(req), true, nil
	case *kmsg.DeleteGroupsRequest:
		return g.DeleteGroups(req), true, nil
	}
	return nil, false, nil
}

// clientHost is the client's address as Kafka reports it in group
// descriptions: the IP with a leading slash (Java's InetAddress.toString).
func (c *conn) clientHost() string {
	addr := c.nc.RemoteAddr().String()
	if host, _, err := net.SplitHostPort(addr); err == nil {
		addr = host
	}
	return "/" + addr
}

// handleFindCoordinator names this node as the coordinator of every group:
// one node holds all group state. There is no transaction coordinator
// (InitProducerID with a transactional ID says the same).
func (c *conn) handleFindCoordinator(req *kmsg.FindCoordinatorRequest) kmsg.Response {
	resp := req.ResponseKind().(*kmsg.FindCoordinatorResponse)
	find := func() (int16, *string) {
		switch req.CoordinatorType {
		case coordinatorGroup:
			return 0, nil
		case coordinatorTransaction:
			msg := "transactions are not supported by weir's embedded broker"
			return kerr.CoordinatorNotAvailable.Code, &msg
		}
		msg := "unknown coordinator type"
		return kerr.InvalidRequest.Code, &msg
	}
	node := c.s.cfg.nodeID
	if req.Version >= 4 { // KIP-699: several keys at once
		code, msg := find()
		for _, key := range req.CoordinatorKeys {
			co := kmsg.NewFindCoordinatorResponseCoordinator()
			co.Key, co.ErrorCode, co.ErrorMessage = key, code, msg
			co.NodeID, co.Port = -1, -1
			if code == 0 {
				co.NodeID, co.Host, co.Port = node, c.advHost, c.advPort
			}
			resp.Coordinators = append(resp.Coordinators, co)
		}
		return resp
	}
	resp.ErrorCode, resp.ErrorMessage = find()
	resp.NodeID, resp.Port = -1, -1
	if resp.ErrorCode == 0 {
		resp.NodeID, resp.Host, resp.Port = node, c.advHost, c.advPort
	}
	return resp
}
