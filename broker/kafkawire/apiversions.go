package kafkawire

import (
	"bytes"
	"reflect"
	"slices"

	"github.com/twmb/franz-go/pkg/kbin"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// advertisedKeys is the one list of what the server implements: ApiVersions
// reports exactly this, and every other key or version is refused with
// UNSUPPORTED_VERSION. Clients pick the highest version both sides know, so
// advertising a version that is not fully handled would break them. The
// group APIs are listed only when there is a group coordinator (withGroups):
// a client that sees FindCoordinator assumes it can use groups.
//
// AlterConfigs and IncrementalAlterConfigs are listed only when the Log is
// a ConfigAlterer (withAlter); otherwise they are refused on every resource
// (unsupportedAnswer).
//
// SaslHandshake and SaslAuthenticate are listed only when the listener
// requires SASL (withSASL).
func advertisedKeys(withGroups, withAlter, withSASL bool) []kmsg.ApiVersionsResponseApiKey {
	type keyRange struct {
		key      kmsg.Key
		min, max int16
	}
	ranges := []keyRange{
		// v3 is the first Produce carrying RecordBatch v2, the only
		// format the log stores; v10+ adds leader-change tags. v0-v2
		// are advertised all the same, as Kafka 4 does (KAFKA-18659):
		// librdkafka before 2.8 compresses with gzip, snappy and lz4
		// only when the broker's Produce range includes v0, and
		// otherwise sends every batch uncompressed. Clients use the
		// highest version both sides know; a v0-v2 request is decoded
		// and each partition refused (handleProduce).
		{kmsg.Produce, 0, 9},
		// v13+ identifies topics by ID only, which needs fetch
		// sessions and ID lookups clients do not need from us.
		{kmsg.Fetch, 4, 12},
		// v8+ adds tiered-storage timestamps (-4, -5).
		{kmsg.ListOffsets, 0, 7},
		// v13 only adds a top-level error code.
		{kmsg.Metadata, 0, 12},
		// v4+ changes how unsupported versions are answered (KIP-511
		// follow-ups); v3 is what every current client starts with.
		{kmsg.ApiVersions, 0, 3},
		{kmsg.CreateTopics, 0, 7},
		{kmsg.DeleteTopics, 0, 6},
		// v5 is transactions v2 (KIP-890); idempotence needs v0.
		{kmsg.InitProducerID, 0, 4},
		// Topic and (minimal) broker configs, read-only.
		{kmsg.DescribeConfigs, 0, 4},
		// v5 adds cordoned log dirs.
		{kmsg.DescribeLogDirs, 0, 4},
		// v2 only adds fenced brokers, of which there are none.
		{kmsg.DescribeCluster, 0, 2},
	}
	if withAlter {
		ranges = append(ranges, []keyRange{
			// v2 is flexible; the API is deprecated for
			// IncrementalAlterConfigs, but sarama and older
			// tools still send it.
			{kmsg.AlterConfigs, 0, 2},
			// v1 is flexible, the highest there is.
			{kmsg.IncrementalAlterConfigs, 0, 1},
		}...)
	}
	if withSASL {
		ranges = append(ranges, []keyRange{
			// v0 is followed by bare SASL tokens, v1 by
			// SaslAuthenticate (KIP-152).
			{kmsg.SASLHandshake, 0, 1},
			// v1 adds the session lifetime (always 0: no
			// re-authentication), v2 is flexible.
			{kmsg.SASLAuthenticate, 0, 2},
		}...)
	}
	if withGroups {
		ranges = append(ranges, []keyRange{
			// v5+ are for transactions v2 and share groups.
			{kmsg.FindCoordinator, 0, 4},
			// v9 is the highest kmsg knows; KIP-848 is a
			// separate API (ConsumerGroupHeartbeat, not offered).
			{kmsg.JoinGroup, 0, 9},
			{kmsg.SyncGroup, 0, 5},
			{kmsg.Heartbeat, 0, 4},
			{kmsg.LeaveGroup, 0, 5},
			// v9 carries KIP-848 member epochs, v10 topic IDs.
			{kmsg.OffsetCommit, 0, 8},
			{kmsg.OffsetFetch, 0, 8},
			{kmsg.ListGroups, 0, 5},
			// v6 adds GROUP_ID_NOT_FOUND for unknown groups
			// (KIP-1043); before, they are reported Dead.
			{kmsg.DescribeGroups, 0, 5},
			{kmsg.DeleteGroups, 0, 2},
		}...)
	}
	// By key, as Kafka lists them.
	slices.SortFunc(ranges, func(a, b keyRange) int { return int(a.key) - int(b.key) })
	keys := make([]kmsg.ApiVersionsResponseApiKey, 0, len(ranges))
	for _, r := range ranges {
		k := kmsg.NewApiVersionsResponseApiKey()
		k.ApiKey, k.MinVersion, k.MaxVersion = r.key.Int16(), r.min, r.max
		keys = append(keys, k)
	}
	return keys
}

// supports reports whether the server implements version of API key.
func (s *Server) supports(key, version int16) bool {
	for _, k := range s.apiKeys {
		if k.ApiKey == key {
			return version >= k.MinVersion && version <= k.MaxVersion
		}
	}
	return false
}

func (c *conn) handleApiVersions(req *kmsg.ApiVersionsRequest) kmsg.Response {
	resp := req.ResponseKind().(*kmsg.ApiVersionsResponse)
	// Kafka rejects v3+ requests whose client name or version is not a
	// plain token (they end up in metrics names); do the same so that a
	// client which works here also works against Kafka.
	if req.Version >= 3 && (!validSoftware(req.ClientSoftwareName) || !validSoftware(req.ClientSoftwareVersion)) {
		resp.ErrorCode = kerr.InvalidRequest.Code
		return resp
	}
	resp.ApiKeys = c.s.apiKeys // read-only: encoding does not modify it
	return resp
}

// apiVersionsUnsupported is Kafka's answer to an ApiVersions request of a
// version it does not know: a v0 response with UNSUPPORTED_VERSION that
// lists only ApiVersions' own range (KIP-511).
func (s *Server) apiVersionsUnsupported() kmsg.Response {
	resp := kmsg.NewPtrApiVersionsResponse()
	resp.Version = 0
	resp.ErrorCode = kerr.UnsupportedVersion.Code
	for _, k := range s.apiKeys {
		if k.ApiKey == kmsg.ApiVersions.Int16() {
			resp.ApiKeys = append(resp.ApiKeys, k)
		}
	}
	return resp
}

// unsupportedResponse answers a request for an API or version the server
// does not implement: the response kind kmsg knows for the key, at the
// requested version, with UNSUPPORTED_VERSION in its top-level error code
// when it has one. Responses without one (per-topic errors only) go back
// empty, except for the admin requests unsupportedAnswer fills in;
// well-behaved clients never get here because ApiVersions told them what
// to use.
func unsupportedResponse(req kmsg.Request, version int16) kmsg.Response {
	req.SetVersion(version)
	resp := req.ResponseKind()
	resp.SetVersion(version)
	if f := reflect.ValueOf(resp).Elem().FieldByName("ErrorCode"); f.IsValid() && f.CanSet() && f.Kind() == reflect.Int16 {
		f.SetInt(int64(kerr.UnsupportedVersion.Code))
	}
	return resp
}

// unsupportedAnswer is unsupportedResponse with the per-item errors filled
// in where the response has no top-level error code: the requested
// resources, topics or partitions each answered UNSUPPORTED_VERSION. An
// empty answer to, say, AlterConfigs looks like success to clients that
// send it without consulting ApiVersions (sarama's ClusterAdmin does, and
// returns nil). body is the request after its header's client ID; a
// request that does not decode at this version gets the empty answer.
func unsupportedAnswer(req kmsg.Request, version int16, body []byte) kmsg.Response {
	resp := unsupportedResponse(req, version)
	if topLevelErrorEncoded(resp) {
		return resp
	}
	if version > req.MaxVersion() {
		return resp // kmsg cannot decode it
	}
	req.SetVersion(version)
	r := kbin.Reader{Src: body}
	if req.IsFlexible() {
		kmsg.SkipTags(&r)
	}
	if !r.Ok() || req.ReadFrom(r.Src) != nil {
		return resp
	}
	code := kerr.UnsupportedVersion.Code
	msg := kerr.UnsupportedVersion.Message
	switch q := req.(type) {
	case *kmsg.AlterConfigsRequest:
		rs := resp.(*kmsg.AlterConfigsResponse)
		for _, res := range q.Resources {
			rr := kmsg.NewAlterConfigsResponseResource()
			rr.ErrorCode, rr.ErrorMessage = code, &msg
			rr.ResourceType, rr.ResourceName = res.ResourceType, res.ResourceName
			rs.Resources = append(rs.Resources, rr)
		}
	case *kmsg.IncrementalAlterConfigsRequest:
		rs := resp.(*kmsg.IncrementalAlterConfigsResponse)
		for _, res := range q.Resources {
			rr := kmsg.NewIncrementalAlterConfigsResponseResource()
			rr.ErrorCode, rr.ErrorMessage = code, &msg
			rr.ResourceType, rr.ResourceName = res.ResourceType, res.ResourceName
			rs.Resources = append(rs.Resources, rr)
		}
	case *kmsg.FetchRequest:
		rs := resp.(*kmsg.FetchResponse)
		for _, t := range q.Topics {
			rt := kmsg.NewFetchResponseTopic()
			rt.Topic = t.Topic
			for _, p := range t.Partitions {
				rp := kmsg.NewFetchResponseTopicPartition()
				rp.Partition, rp.ErrorCode = p.Partition, code
				rp.HighWatermark, rp.LastStableOffset, rp.LogStartOffset = -1, -1, -1
				rp.RecordBatches = []byte{}
				rt.Partitions = append(rt.Partitions, rp)
			}
			rs.Topics = append(rs.Topics, rt)
		}
	case *kmsg.CreatePartitionsRequest:
		rs := resp.(*kmsg.CreatePartitionsResponse)
		for _, t := range q.Topics {
			rt := kmsg.NewCreatePartitionsResponseTopic()
			rt.Topic, rt.ErrorCode, rt.ErrorMessage = t.Topic, code, &msg
			rs.Topics = append(rs.Topics, rt)
		}
	case *kmsg.DeleteRecordsRequest:
		rs := resp.(*kmsg.DeleteRecordsResponse)
		for _, t := range q.Topics {
			rt := kmsg.NewDeleteRecordsResponseTopic()
			rt.Topic = t.Topic
			for _, p := range t.Partitions {
				rp := kmsg.NewDeleteRecordsResponseTopicPartition()
				rp.Partition, rp.LowWatermark, rp.ErrorCode = p.Partition, -1, code
				rt.Partitions = append(rt.Partitions, rp)
			}
			rs.Topics = append(rs.Topics, rt)
		}
	case *kmsg.OffsetForLeaderEpochRequest:
		rs := resp.(*kmsg.OffsetForLeaderEpochResponse)
		for _, t := range q.Topics {
			rt := kmsg.NewOffsetForLeaderEpochResponseTopic()
			rt.Topic = t.Topic
			for _, p := range t.Partitions {
				rp := kmsg.NewOffsetForLeaderEpochResponseTopicPartition()
				rp.Partition, rp.ErrorCode = p.Partition, code
				rt.Partitions = append(rt.Partitions, rp)
			}
			rs.Topics = append(rs.Topics, rt)
		}
	case *kmsg.AlterClientQuotasRequest:
		rs := resp.(*kmsg.AlterClientQuotasResponse)
		for _, e := range q.Entries {
			re := kmsg.NewAlterClientQuotasResponseEntry()
			re.ErrorCode, re.ErrorMessage = code, &msg
			for _, en := range e.Entity {
				re.Entity = append(re.Entity, kmsg.AlterClientQuotasResponseEntryEntity{Type: en.Type, Name: en.Name})
			}
			rs.Entries = append(rs.Entries, re)
		}
	case *kmsg.AlterUserSCRAMCredentialsRequest:
		rs := resp.(*kmsg.AlterUserSCRAMCredentialsResponse)
		for _, d := range q.Deletions {
			rr := kmsg.NewAlterUserSCRAMCredentialsResponseResult()
			rr.User, rr.ErrorCode, rr.ErrorMessage = d.Name, code, &msg
			rs.Results = append(rs.Results, rr)
		}
		for _, u := range q.Upsertions {
			rr := kmsg.NewAlterUserSCRAMCredentialsResponseResult()
			rr.User, rr.ErrorCode, rr.ErrorMessage = u.Name, code, &msg
			rs.Results = append(rs.Results, rr)
		}
	case *kmsg.CreateACLsRequest:
		rs := resp.(*kmsg.CreateACLsResponse)
		for range q.Creations {
			rr := kmsg.NewCreateACLsResponseResult()
			rr.ErrorCode, rr.ErrorMessage = code, &msg
			rs.Results = append(rs.Results, rr)
		}
	}
	return resp
}

// topLevelErrorEncoded reports whether resp, at its version, carries the
// top-level error code unsupportedResponse set. Some responses have the
// field only from some version on (Fetch from v7): kmsg keeps it in the
// struct for every version and leaves it out of the encoding.
func topLevelErrorEncoded(resp kmsg.Response) bool {
	f := reflect.ValueOf(resp).Elem().FieldByName("ErrorCode")
	if !f.IsValid() || !f.CanSet() || f.Kind() != reflect.Int16 {
		return false
	}
	with := resp.AppendTo(nil)
	code := f.Int()
	f.SetInt(0)
	without := resp.AppendTo(nil)
	f.SetInt(code)
	return !bytes.Equal(with, without)
}

// validSoftware matches Kafka's pattern for client software names and
// versions: [a-zA-Z0-9](?:[a-zA-Z0-9\-.]*[a-zA-Z0-9])?
func validSoftware(s string) bool {
	if s == "" {
		return false
	}
	alnum := func(c byte) bool {
		return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
	}
	if !alnum(s[0]) || !alnum(s[len(s)-1]) {
		return false
	}
	for i := 1; i < len(s)-1; i++ {
		if c := s[i]; !alnum(c) && c != '-' && c != '.' {
			return false
		}
	}
	return true
}
