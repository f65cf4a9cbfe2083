package kafkawire

import (
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// Special ListOffsets timestamps.
const (
	offsetLatest       = -1
	offsetEarliest     = -2
	offsetMaxTimestamp = -3 // v7+ (KIP-734)
)

// handleListOffsets resolves timestamps to offsets: -1 is the high watermark
// (there are no transactions, so it is also the last stable offset), -2 the
// log start, -3 the record with the largest timestamp, anything else the
// first record at or after the timestamp.
func (c *conn) handleListOffsets(req *kmsg.ListOffsetsRequest) kmsg.Response {
	resp := req.ResponseKind().(*kmsg.ListOffsetsResponse)
	resp.Topics = make([]kmsg.ListOffsetsResponseTopic, 0, len(req.Topics))
	for i := range req.Topics {
		rt := &req.Topics[i]
		st := kmsg.NewListOffsetsResponseTopic()
		st.Topic = rt.Topic
		st.Partitions = make([]kmsg.ListOffsetsResponseTopicPartition, 0, len(rt.Partitions))
		for j := range rt.Partitions {
			rp := &rt.Partitions[j]
			sp := kmsg.NewListOffsetsResponseTopicPartition()
			sp.Partition = rp.Partition
			st.Partitions = append(st.Partitions, c.listOffset(req.Version, rt.Topic, rp, sp))
		}
		resp.Topics = append(resp.Topics, st)
	}
	return resp
}

func (c *conn) listOffset(version int16, topic string, rp *kmsg.ListOffsetsRequestTopicPartition, sp kmsg.ListOffsetsResponseTopicPartition) kmsg.ListOffsetsResponseTopicPartition {
	if rp.Timestamp == offsetMaxTimestamp && version < 7 {
		sp.ErrorCode = kerr.UnsupportedVersion.Code
		return sp
	}
	offset, ts, err := c.s.log.ListOffset(topic, rp.Partition, rp.Timestamp)
	if err != nil {
		sp.ErrorCode = errorCode(err)
		return sp
	}
	if version == 0 {
		// v0 answers with a list of up to MaxNumOffsets offsets (Kafka
		// lists segment starts too); the one that matters is enough.
		if offset >= 0 && rp.MaxNumOffsets > 0 {
			sp.OldStyleOffsets = []int64{offset}
		}
		return sp
	}
	sp.Offset = offset
	sp.Timestamp = -1
	if rp.Timestamp != offsetLatest && rp.Timestamp != offsetEarliest && offset >= 0 {
		sp.Timestamp = ts
	}
	sp.LeaderEpoch = 0 // see topicMetadata
	return sp
}
