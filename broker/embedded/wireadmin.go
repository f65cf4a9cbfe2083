package embedded

import (
	"log/slog"
	"slices"
	"strings"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// What group listings and descriptions say about groups that are not Kafka
// protocol groups: every group in weir is a consumer group, so admin tools
// (kadm's lag, kafka-consumer-groups) treat them as such.
const (
	consumerProtocolType = "consumer"
	// inProcessProtocol names how in-process members share partitions
	// (groups.go), which is not a client-side assignor.
	inProcessProtocol = "weir-in-process"
	inProcessClientID = "weir"
	inProcessHost     = "in-process"
	// classicGroupType is the ListGroups v5 group type of every group
	// here: there is no KIP-848 consumer protocol.
	classicGroupType = "classic"
)

// groupSummary is one group as ListGroups reports it.
type groupSummary struct {
	state, protocolType string
}

// ListGroups handles a Kafka ListGroups request (v0-v5). It lists the
// groups of Kafka clients, the in-process groups, and groups that only have
// committed offsets (as Empty), so weir's own workers show up in Kafka
// tools too.
func (b *Broker) ListGroups(req *kmsg.ListGroupsRequest) *kmsg.ListGroupsResponse {
	resp := req.ResponseKind().(*kmsg.ListGroupsResponse)
	if b.closed.Load() {
		resp.ErrorCode = kerr.CoordinatorNotAvailable.Code
		return resp
	}
	all := make(map[string]groupSummary)
	for name := range b.offsets.groupNames() {
		all[name] = groupSummary{wireEmpty.String(), consumerProtocolType}
	}
	for name, s := range b.wire.summaries(false) {
		all[name] = s
	}
	for _, g := range b.groups.describe() {
		all[g.Name] = groupSummary{wireStable.String(), consumerProtocolType}
	}
	for name, s := range b.wire.summaries(true) {
		all[name] = s
	}
	wantType := len(req.TypesFilter) == 0 || slices.ContainsFunc(req.TypesFilter, func(t string) bool {
		return strings.EqualFold(t, classicGroupType)
	})
	names := make([]string, 0, len(all))
	for name := range all {
		names = append(names, name)
	}
	slices.Sort(names)
	for _, name := range names {
		s := all[name]
		if !wantType || len(req.StatesFilter) > 0 && !slices.ContainsFunc(req.StatesFilter, func(f string) bool {
			return strings.EqualFold(f, s.state)
		}) {
			continue
		}
		lg := kmsg.NewListGroupsResponseGroup()
		lg.Group, lg.ProtocolType, lg.GroupState, lg.GroupType = name, s.protocolType, s.state, classicGroupType
		resp.Groups = append(resp.Groups, lg)
	}
	return resp
}

// summaries lists the Kafka client groups with members (withMembers) or
// those with only pending members (!withMembers).
func (c *wireCoordinator) summaries(withMembers bool) map[string]groupSummary {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := make(map[string]groupSummary)
	for name, g := range c.groups {
		if (len(g.members) > 0) != withMembers {
			continue
		}
		pt := g.protocolType
		if pt == "" {
			pt = consumerProtocolType
		}
		out[name] = groupSummary{g.state.String(), pt}
	}
	return out
}

// DescribeGroups handles a Kafka DescribeGroups request (v0-v5): state,
// protocol and members of Kafka client groups and of in-process groups
// (with their assignments encoded as Kafka consumer assignments). A group
// known only by its committed offsets is Empty; an unknown one Dead, as
// Kafka answers.
func (b *Broker) DescribeGroups(req *kmsg.DescribeGroupsRequest) *kmsg.DescribeGroupsResponse {
	resp := req.ResponseKind().(*kmsg.DescribeGroupsResponse)
	var local []GroupInfo
	localLoaded := false
	for _, name := range req.Groups {
		d := kmsg.NewDescribeGroupsResponseGroup()
		d.Group = name
		switch {
		case name == "":
			d.ErrorCode = kerr.InvalidGroupID.Code
		case b.closed.Load():
			d.ErrorCode = kerr.CoordinatorNotAvailable.Code
		case b.wire.describe(name, &d):
		default:
			if !localLoaded {
				local, localLoaded = b.groups.describe(), true
			}
			if i := slices.IndexFunc(local, func(g GroupInfo) bool { return g.Name == name }); i >= 0 {
				describeLocal(&local[i], &d)
				break
			}
			d.State = "Dead"
			if b.wire.known(name) || len(b.offsets.groupOffsets(name)) > 0 {
				d.State, d.ProtocolType = wireEmpty.String(), consumerProtocolType
			}
		}
		resp.Groups = append(resp.Groups, d)
	}
	return resp
}

// describe fills d for a Kafka client group with members and reports
// whether there was one. As in Kafka, member metadata and assignments are
// shown only when the group is stable; during a rebalance they are in
// flux.
func (c *wireCoordinator) describe(name string, d *kmsg.DescribeGroupsResponseGroup) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	g := c.groups[name]
	if g == nil || len(g.members) == 0 {
		return false
	}
	d.State, d.ProtocolType = g.state.String(), g.protocolType
	stable := g.state == wireStable
	if stable {
		d.Protocol = g.protocol
	}
	for _, m := range g.sortedMembers() {
		dm := kmsg.NewDescribeGroupsResponseGroupMember()
		dm.MemberID, dm.InstanceID, dm.ClientID, dm.ClientHost = m.id, m.instanceID, m.clientID, m.clientHost
		if stable {
			dm.ProtocolMetadata = m.metadata(g.protocol)
			dm.MemberAssignment = m.assignment
		}
		d.Members = append(d.Members, dm)
	}
	return true
}

// known reports whether the coordinator has the group (possibly with only
// pending members).
func (c *wireCoordinator) known(name string) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.groups[name] != nil
}

// describeLocal describes an in-process group the way Kafka describes a
// consumer group, so Kafka tools can read members and assignments.
func describeLocal(g *GroupInfo, d *kmsg.DescribeGroupsResponseGroup) {
	d.State, d.ProtocolType, d.Protocol = wireStable.String(), consumerProtocolType, inProcessProtocol
	for _, m := range g.Members {
		dm := kmsg.NewDescribeGroupsResponseGroupMember()
		dm.MemberID, dm.ClientID, dm.ClientHost = m.ID, inProcessClientID, inProcessHost
		meta := kmsg.NewConsumerMemberMetadata()
		meta.Topics = m.Topics
		dm.ProtocolMetadata = meta.AppendTo(nil)
		a := kmsg.NewConsumerMemberAssignment()
		for _, tp := range m.Assigned {
			if n := len(a.Topics); n == 0 || a.Topics[n-1].Topic != tp.Topic {
				t := kmsg.NewConsumerMemberAssignmentTopic()
				t.Topic = tp.Topic
				a.Topics = append(a.Topics, t)
			}
			t := &a.Topics[len(a.Topics)-1]
			t.Partitions = append(t.Partitions, tp.Partition)
		}
		dm.MemberAssignment = a.AppendTo(nil)
		d.Members = append(d.Members, dm)
	}
}

// DeleteGroups handles a Kafka DeleteGroups request (v0-v2): a group
// without members (of either kind) is deleted with its committed offsets;
// one with members answers NON_EMPTY_GROUP, an unknown one
// GROUP_ID_NOT_FOUND.
func (b *Broker) DeleteGroups(req *kmsg.DeleteGroupsRequest) *kmsg.DeleteGroupsResponse {
	resp := req.ResponseKind().(*kmsg.DeleteGroupsResponse)
	for _, name := range req.Groups {
		r := kmsg.NewDeleteGroupsResponseGroup()
		r.Group = name
		r.ErrorCode = b.wire.deleteGroup(name)
		resp.Groups = append(resp.Groups, r)
	}
	return resp
}

func (c *wireCoordinator) deleteGroup(name string) int16 {
	if name == "" {
		return kerr.InvalidGroupID.Code
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return kerr.CoordinatorNotAvailable.Code
	}
	g := c.groups[name]
	if g != nil && len(g.members) > 0 {
		return kerr.NonEmptyGroup.Code
	}
	// Holding the group for the Kafka side keeps in-process consumers
	// from joining while its offsets are deleted.
	if !c.kinds.acquire(name, true) {
		return kerr.NonEmptyGroup.Code
	}
	defer c.kinds.release(name, true)
	if g == nil && len(c.b.offsets.groupOffsets(name)) == 0 {
		return kerr.GroupIDNotFound.Code
	}
	if g != nil {
		if g.timer != nil {
			g.timer.Stop()
		}
		delete(c.groups, name)
	}
	if err := c.b.offsets.deleteGroup(name); err != nil {
		c.b.opts.logger.Error("deleting group offsets failed", slog.String("group", name), slog.Any("error", err))
		return kerr.KafkaStorageError.Code
	}
	c.b.opts.logger.Info("group deleted", slog.String("group", name))
	return 0
}

// memberCounts returns the number of members of each Kafka client group,
// for the group-members metric.
func (c *wireCoordinator) memberCounts() map[string]int {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := make(map[string]int, len(c.groups))
	for name, g := range c.groups {
		if len(g.members) > 0 {
			out[name] = len(g.members)
		}
	}
	return out
}
