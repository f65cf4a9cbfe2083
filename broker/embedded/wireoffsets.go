package embedded

import (
	"context"
	"errors"
	"log/slog"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/weirnet/weir/broker"
)

// maxGroupNameLen is the longest group name the offset store can hold.
const maxGroupNameLen = 1 << 15

// OffsetCommit handles a Kafka OffsetCommit request (v0-v8). The offsets go
// to the store in-process consumers use, so a group name means one set of
// committed offsets whichever kind of consumer reads it. Commit metadata
// strings are not kept (OffsetFetch returns ""), nor are leader epochs.
func (b *Broker) OffsetCommit(req *kmsg.OffsetCommitRequest) *kmsg.OffsetCommitResponse {
	resp := req.ResponseKind().(*kmsg.OffsetCommitResponse)
	code := b.wire.checkCommit(req)
	type slot struct{ t, p int }
	var (
		offs  []GroupOffset
		slots []slot
	)
	for _, t := range req.Topics {
		rt := kmsg.NewOffsetCommitResponseTopic()
		rt.Topic = t.Topic
		for _, p := range t.Partitions {
			rp := kmsg.NewOffsetCommitResponseTopicPartition()
			rp.Partition = p.Partition
			switch {
			case code != 0:
				rp.ErrorCode = code
			case !b.hasPartition(t.Topic, p.Partition):
				rp.ErrorCode = kerr.UnknownTopicOrPartition.Code
			default:
				offs = append(offs, GroupOffset{Group: req.Group, Topic: t.Topic, Partition: p.Partition, Offset: p.Offset})
				slots = append(slots, slot{len(resp.Topics), len(rt.Partitions)})
			}
			rt.Partitions = append(rt.Partitions, rp)
		}
		resp.Topics = append(resp.Topics, rt)
	}
	// One write for the whole request: a crash keeps all of it or a
	// prefix of complete entries (see offsetStore.commit).
	if err := b.offsets.commitBounded(offs, b.wire.maxOffsetGroups); err != nil {
		code := kerr.UnknownServerError.Code
		switch {
		case errors.Is(err, errTooManyGroups):
			code = kerr.PolicyViolation.Code
			b.wire.refuseCommit(req.Group, req.MemberID, b.offsets.groupCount())
		case errors.Is(err, broker.ErrStorage):
			code = kerr.KafkaStorageError.Code
			fallthrough
		default:
			b.opts.logger.Error("kafka client offset commit failed", slog.String("group", req.Group), slog.Any("error", err))
		}
		for _, s := range slots {
			resp.Topics[s.t].Partitions[s.p].ErrorCode = code
		}
	}
	return resp
}

// refuseCommit counts a commit refused at the bound of groups with
// offsets, and logs it at most once per throttle.Every.
func (c *wireCoordinator) refuseCommit(group, member string, groups int) {
	c.refusedCommits.Add(1)
	if n, ok := c.refusedCommitLog.Due(time.Now()); ok {
		c.b.opts.logger.Warn("kafka offset commit refused: too many groups with committed offsets (POLICY_VIOLATION); they go after offsets_retention without a commit, or with weir groups delete",
			slog.String("group", group), slog.String("member", member),
			slog.Int("groups", groups), slog.Int("max_groups", c.maxOffsetGroups), slog.Int("times", n))
	}
}

func (b *Broker) hasPartition(topic string, partition int32) bool {
	_, err := b.partition(context.Background(), topic, partition, false)
	return err == nil
}

// checkCommit decides whether a commit may be stored, as Kafka does: a
// commit naming a member or generation must come from a current member of
// the current generation (and not while the leader's assignment is
// pending); a "simple" commit (generation -1, no member: admin tools,
// consumers without group membership) only while nobody consumes the
// group.
func (c *wireCoordinator) checkCommit(req *kmsg.OffsetCommitRequest) int16 {
	if req.Group == "" || len(req.Group) > maxGroupNameLen {
		return kerr.InvalidGroupID.Code
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return kerr.CoordinatorNotAvailable.Code
	}
	g := c.groups[req.Group]
	if req.Generation < 0 && req.MemberID == "" && req.InstanceID == nil {
		if g != nil && len(g.members) > 0 || c.kinds.hasLocal(req.Group) {
			return kerr.UnknownMemberID.Code
		}
		return 0
	}
	if g == nil {
		return kerr.IllegalGeneration.Code
	}
	m := g.members[req.MemberID]
	switch {
	case g.fenced(req.MemberID, req.InstanceID):
		return kerr.FencedInstanceID.Code
	case m == nil:
		return kerr.UnknownMemberID.Code
	case req.Generation != g.generation:
		return kerr.IllegalGeneration.Code
	case g.state == wireCompleting:
		return kerr.RebalanceInProgress.Code
	}
	// Committing is a sign of life (Kafka counts it as a heartbeat).
	if !m.waiting() {
		m.deadline = time.Now().Add(m.session)
	}
	return 0
}

// OffsetFetch handles a Kafka OffsetFetch request: one group (v0-v7) or
// several (v8). A partition without a committed offset answers -1; a null
// topic list asks for every committed offset of the group.
func (b *Broker) OffsetFetch(req *kmsg.OffsetFetchRequest) *kmsg.OffsetFetchResponse {
	resp := req.ResponseKind().(*kmsg.OffsetFetchResponse)
	if req.Version >= 8 {
		for _, rg := range req.Groups {
			var want []kmsg.OffsetFetchRequestTopic
			if rg.Topics != nil {
				want = make([]kmsg.OffsetFetchRequestTopic, 0, len(rg.Topics))
				for _, t := range rg.Topics {
					want = append(want, kmsg.OffsetFetchRequestTopic{Topic: t.Topic, Partitions: t.Partitions})
				}
			}
			sg := kmsg.NewOffsetFetchResponseGroup()
			sg.Group = rg.Group
			topics, code := b.fetchOffsets(rg.Group, want)
			sg.ErrorCode = code
			for _, t := range topics {
				st := kmsg.NewOffsetFetchResponseGroupTopic()
				st.Topic = t.Topic
				for _, p := range t.Partitions {
					sp := kmsg.NewOffsetFetchResponseGroupTopicPartition()
					sp.Partition, sp.Offset, sp.Metadata, sp.ErrorCode = p.Partition, p.Offset, p.Metadata, p.ErrorCode
					st.Partitions = append(st.Partitions, sp)
				}
				sg.Topics = append(sg.Topics, st)
			}
			resp.Groups = append(resp.Groups, sg)
		}
		return resp
	}
	topics, code := b.fetchOffsets(req.Group, req.Topics)
	resp.Topics, resp.ErrorCode = topics, code
	return resp
}

// fetchOffsets answers one group's offset fetch in the v0-v7 shape; want
// nil means every committed offset of the group.
func (b *Broker) fetchOffsets(group string, want []kmsg.OffsetFetchRequestTopic) ([]kmsg.OffsetFetchResponseTopic, int16) {
	if group == "" {
		return nil, kerr.InvalidGroupID.Code
	}
	if b.closed.Load() {
		return nil, kerr.CoordinatorNotAvailable.Code
	}
	empty := ""
	part := func(p int32, off int64) kmsg.OffsetFetchResponseTopicPartition {
		sp := kmsg.NewOffsetFetchResponseTopicPartition()
		sp.Partition, sp.Offset, sp.Metadata = p, off, &empty
		return sp
	}
	var out []kmsg.OffsetFetchResponseTopic
	if want == nil {
		for _, o := range b.offsets.groupOffsets(group) {
			if len(out) == 0 || out[len(out)-1].Topic != o.Topic {
				t := kmsg.NewOffsetFetchResponseTopic()
				t.Topic = o.Topic
				out = append(out, t)
			}
			t := &out[len(out)-1]
			t.Partitions = append(t.Partitions, part(o.Partition, o.Offset))
		}
		return out, 0
	}
	for _, rt := range want {
		t := kmsg.NewOffsetFetchResponseTopic()
		t.Topic = rt.Topic
		for _, p := range rt.Partitions {
			off, ok := b.offsets.committed(group, rt.Topic, p)
			if !ok {
				off = -1
			}
			t.Partitions = append(t.Partitions, part(p, off))
		}
		out = append(out, t)
	}
	return out, 0
}
