package kafkawire

import (
	"context"
	"errors"
	"net"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/weirnet/weir/broker/embedded"
)

// startACLBrokerRaw is startACLBroker with PLAIN, for raw clients, and
// group "ops" holding a commit of raw.syslog and events.
func startACLBrokerRaw(t *testing.T, opts ...Option) (addr string, b *embedded.Broker) {
	t.Helper()
	addr, b = startACLLog(t, MechanismPlain, opts...)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	adm := kadm.NewClient(newClient(t, addr, kgo.SASL(mechanism(MechanismPlain, "admin", aclPasswords["admin"]))))
	var offs kadm.Offsets
	offs.Add(kadm.Offset{Topic: "raw.syslog", Partition: 0, At: 1})
	offs.Add(kadm.Offset{Topic: "events", Partition: 0, At: 1})
	for _, g := range []string{"ops", "grafana-1"} {
		if err := adm.CommitAllOffsets(ctx, g, offs); err != nil {
			t.Fatal(err)
		}
	}
	return addr, b
}

// dialAs is a raw client authenticated with PLAIN.
func dialAs(t *testing.T, addr, user, pass string) *rawClient {
	t.Helper()
	r := dialRaw(t, addr)
	hs := kmsg.NewPtrSASLHandshakeRequest()
	hs.Version, hs.Mechanism = 1, MechanismPlain
	if hr := r.do(hs).(*kmsg.SASLHandshakeResponse); hr.ErrorCode != 0 {
		t.Fatalf("SaslHandshake: %d", hr.ErrorCode)
	}
	au := kmsg.NewPtrSASLAuthenticateRequest()
	au.Version = 1
	au.SASLAuthBytes = []byte("\x00" + user + "\x00" + pass)
	if ar := r.do(au).(*kmsg.SASLAuthenticateResponse); ar.ErrorCode != 0 {
		t.Fatalf("SaslAuthenticate: %d", ar.ErrorCode)
	}
	return r
}

// TestUserTopicsAndGroupsEveryVersion: every API the listener offers, at
// every version, naming a topic (raw.syslog, by name and by ID) and a
// group (ops) outside the user's, in the all-topics forms too: refused or
// left out, answered in a form the version decodes, and nothing changed.
func TestUserTopicsAndGroupsEveryVersion(t *testing.T) {
	addr, b := startACLBrokerRaw(t)
	ctx := context.Background()
	r := dialAs(t, addr, "dash", "d-pass")
	infos, _ := b.DescribeTopics(ctx, "raw.syslog")
	rawID := infos[0].ID
	str := func(s string) *string { return &s }

	for v := int16(0); v <= 12; v++ {
		for _, form := range []string{"named", "all", "empty", "id"} {
			req := kmsg.NewPtrMetadataRequest()
			req.Version = v
			req.AllowAutoTopicCreation = true
			switch form {
			case "named":
				rt := kmsg.NewMetadataRequestTopic()
				rt.Topic = str("raw.syslog")
				req.Topics = []kmsg.MetadataRequestTopic{rt}
			case "all":
				req.Topics = nil
			case "empty":
				req.Topics = []kmsg.MetadataRequestTopic{}
			case "id":
				if v < 10 {
					continue
				}
				rt := kmsg.NewMetadataRequestTopic()
				rt.TopicID = rawID
				req.Topics = []kmsg.MetadataRequestTopic{rt}
			}
			resp := r.do(req).(*kmsg.MetadataResponse)
			for _, tp := range resp.Topics {
				if len(tp.Partitions) > 0 && (tp.Topic == nil || *tp.Topic == "raw.syslog") {
					t.Errorf("Metadata v%d %s: raw.syslog served: %+v", v, form, tp)
				}
			}
			want := map[string]int{"named": 1, "all": 2, "empty": 0, "id": 1}[form]
			if v == 0 && form == "empty" {
				want = 2 // v0 reads an empty list as all topics
			}
			if len(resp.Topics) != want {
				t.Errorf("Metadata v%d %s: %d topics, want %d", v, form, len(resp.Topics), want)
			}
		}
	}
	for v := int16(4); v <= 12; v++ {
		req := fetchReq(v, 0, 0, "raw.syslog", 0, 0)
		resp := r.do(req).(*kmsg.FetchResponse)
		for _, tp := range resp.Topics {
			for _, p := range tp.Partitions {
				if len(p.RecordBatches) > 0 || p.ErrorCode == 0 {
					t.Errorf("Fetch v%d: %+v", v, p)
				}
			}
		}
		if len(resp.Topics) != 1 {
			t.Errorf("Fetch v%d: %d topics", v, len(resp.Topics))
		}
	}
	for v := int16(0); v <= 8; v++ {
		req := kmsg.NewPtrOffsetFetchRequest()
		req.Version = v
		if v < 8 {
			req.Group = "grafana-1"
			if v < 2 {
				rt := kmsg.NewOffsetFetchRequestTopic()
				rt.Topic, rt.Partitions = "raw.syslog", []int32{0}
				req.Topics = append(req.Topics, rt)
			}
		} else {
			g := kmsg.NewOffsetFetchRequestGroup()
			g.Group = "grafana-1"
			g2 := kmsg.NewOffsetFetchRequestGroup()
			g2.Group = "ops"
			req.Groups = append(req.Groups, g, g2)
		}
		resp := r.do(req).(*kmsg.OffsetFetchResponse)
		topics := resp.Topics
		if v >= 8 {
			if len(resp.Groups) != 2 || resp.Groups[1].Group != "ops" || resp.Groups[1].ErrorCode != kerr.GroupAuthorizationFailed.Code {
				t.Fatalf("OffsetFetch v8 of grafana-1 and ops: %+v", resp.Groups)
			}
			for _, gt := range resp.Groups[0].Topics {
				topics = append(topics, kmsg.OffsetFetchResponseTopic{Topic: gt.Topic})
			}
		}
		for _, rt := range topics {
			if rt.Topic == "raw.syslog" && (v >= 2 || rt.Partitions[0].ErrorCode != kerr.TopicAuthorizationFailed.Code || rt.Partitions[0].Offset != -1) {
				t.Errorf("OffsetFetch v%d shows raw.syslog: %+v", v, rt)
			}
		}
	}

	for v := int16(0); v <= 7; v++ {
		req := kmsg.NewPtrListOffsetsRequest()
		req.Version = v
		rt := kmsg.NewListOffsetsRequestTopic()
		rt.Topic = "raw.syslog"
		rp := kmsg.NewListOffsetsRequestTopicPartition()
		rp.Timestamp = -1
		rp.MaxNumOffsets = 1
		rt.Partitions = append(rt.Partitions, rp)
		req.Topics = append(req.Topics, rt)
		resp := r.do(req).(*kmsg.ListOffsetsResponse)
		if p := resp.Topics[0].Partitions[0]; p.ErrorCode == 0 || p.Offset > 0 || len(p.OldStyleOffsets) > 0 {
			t.Errorf("ListOffsets v%d: %+v", v, p)
		}
	}
	for v := int16(3); v <= 9; v++ {
		resp := r.do(produceReq(v, 1, "raw.syslog", 0, batch("x"))).(*kmsg.ProduceResponse)
		if p := resp.Topics[0].Partitions[0]; p.ErrorCode == 0 {
			t.Errorf("Produce v%d: %+v", v, p)
		}
	}
	for v := int16(0); v <= 7; v++ {
		req := kmsg.NewPtrCreateTopicsRequest()
		req.Version = v
		rt := kmsg.NewCreateTopicsRequestTopic()
		rt.Topic, rt.NumPartitions, rt.ReplicationFactor = "raw.new", 1, 1
		req.Topics = append(req.Topics, rt)
		resp := r.do(req).(*kmsg.CreateTopicsResponse)
		if resp.Topics[0].ErrorCode == 0 {
			t.Errorf("CreateTopics v%d", v)
		}
	}
	for v := int16(0); v <= 6; v++ {
		req := kmsg.NewPtrDeleteTopicsRequest()
		req.Version = v
		if v < 6 {
			req.TopicNames = []string{"raw.syslog"}
		} else {
			a, b := kmsg.NewDeleteTopicsRequestTopic(), kmsg.NewDeleteTopicsRequestTopic()
			a.Topic = str("raw.syslog")
			b.TopicID = rawID
			req.Topics = append(req.Topics, a, b)
		}
		for _, rt := range r.do(req).(*kmsg.DeleteTopicsResponse).Topics {
			if rt.ErrorCode != kerr.TopicAuthorizationFailed.Code {
				t.Errorf("DeleteTopics v%d: %+v", v, rt)
			}
		}
	}
	for v := int16(0); v <= 4; v++ {
		req := kmsg.NewPtrDescribeConfigsRequest()
		req.Version = v
		rr := kmsg.NewDescribeConfigsRequestResource()
		rr.ResourceType, rr.ResourceName = kmsg.ConfigResourceTypeTopic, "raw.syslog"
		req.Resources = append(req.Resources, rr)
		resp := r.do(req).(*kmsg.DescribeConfigsResponse)
		if resp.Resources[0].ErrorCode == 0 || len(resp.Resources[0].Configs) > 0 {
			t.Errorf("DescribeConfigs v%d", v)
		}
	}
	for v := int16(0); v <= 1; v++ {
		req := kmsg.NewPtrIncrementalAlterConfigsRequest()
		req.Version = v
		rr := kmsg.NewIncrementalAlterConfigsRequestResource()
		rr.ResourceType, rr.ResourceName = kmsg.ConfigResourceTypeTopic, "raw.syslog"
		c := kmsg.NewIncrementalAlterConfigsRequestResourceConfig()
		c.Name, c.Value = "retention.ms", str("1")
		rr.Configs = append(rr.Configs, c)
		req.Resources = append(req.Resources, rr)
		resp := r.do(req).(*kmsg.IncrementalAlterConfigsResponse)
		if resp.Resources[0].ErrorCode == 0 {
			t.Errorf("IncrementalAlterConfigs v%d", v)
		}
	}
	for v := int16(0); v <= 2; v++ {
		req := kmsg.NewPtrAlterConfigsRequest()
		req.Version = v
		rr := kmsg.NewAlterConfigsRequestResource()
		rr.ResourceType, rr.ResourceName = kmsg.ConfigResourceTypeTopic, "raw.syslog"
		c := kmsg.NewAlterConfigsRequestResourceConfig()
		c.Name, c.Value = "retention.ms", str("1")
		rr.Configs = append(rr.Configs, c)
		req.Resources = append(req.Resources, rr)
		resp := r.do(req).(*kmsg.AlterConfigsResponse)
		if resp.Resources[0].ErrorCode == 0 {
			t.Errorf("AlterConfigs v%d", v)
		}
	}
	for v := int16(0); v <= 4; v++ {
		for _, named := range []bool{false, true} {
			req := kmsg.NewPtrDescribeLogDirsRequest()
			req.Version = v
			if named {
				rt := kmsg.NewDescribeLogDirsRequestTopic()
				rt.Topic, rt.Partitions = "raw.syslog", []int32{0}
				req.Topics = append(req.Topics, rt)
			}
			resp := r.do(req).(*kmsg.DescribeLogDirsResponse)
			for _, d := range resp.Dirs {
				for _, tp := range d.Topics {
					if tp.Topic == "raw.syslog" {
						t.Errorf("DescribeLogDirs v%d named=%v lists raw.syslog", v, named)
					}
				}
			}
		}
	}
	for v := int16(0); v <= 4; v++ {
		req := kmsg.NewPtrFindCoordinatorRequest()
		req.Version = v
		req.CoordinatorKey = "ops"
		req.CoordinatorKeys = []string{"ops", "grafana-1"}
		resp := r.do(req).(*kmsg.FindCoordinatorResponse)
		if v < 4 && (resp.ErrorCode != kerr.GroupAuthorizationFailed.Code || resp.NodeID != -1) {
			t.Errorf("FindCoordinator v%d of ops: %+v", v, resp)
		}
		for _, co := range resp.Coordinators {
			if refused := co.ErrorCode == kerr.GroupAuthorizationFailed.Code; refused != (co.Key == "ops") || refused && co.NodeID != -1 {
				t.Errorf("FindCoordinator v4: %+v", co)
			}
		}
		if v == 4 && len(resp.Coordinators) != 2 {
			t.Errorf("FindCoordinator v4 answered %d keys, want 2", len(resp.Coordinators))
		}
	}
	for v := int16(0); v <= 9; v++ {
		req := kmsg.NewPtrJoinGroupRequest()
		req.Version = v
		req.Group, req.ProtocolType, req.SessionTimeoutMillis, req.RebalanceTimeoutMillis = "ops", "consumer", 10000, 10000
		p := kmsg.NewJoinGroupRequestProtocol()
		p.Name = "range"
		req.Protocols = append(req.Protocols, p)
		resp := r.do(req).(*kmsg.JoinGroupResponse)
		if resp.ErrorCode == 0 {
			t.Errorf("JoinGroup v%d", v)
		}
	}
	for v := int16(0); v <= 5; v++ {
		req := kmsg.NewPtrSyncGroupRequest()
		req.Version = v
		req.Group, req.MemberID, req.Generation = "ops", "m", 1
		if resp := r.do(req).(*kmsg.SyncGroupResponse); resp.ErrorCode == 0 {
			t.Errorf("SyncGroup v%d", v)
		}
	}
	for v := int16(0); v <= 4; v++ {
		req := kmsg.NewPtrHeartbeatRequest()
		req.Version = v
		req.Group, req.MemberID, req.Generation = "ops", "m", 1
		if resp := r.do(req).(*kmsg.HeartbeatResponse); resp.ErrorCode == 0 {
			t.Errorf("Heartbeat v%d", v)
		}
	}
	for v := int16(0); v <= 5; v++ {
		req := kmsg.NewPtrLeaveGroupRequest()
		req.Version = v
		req.Group, req.MemberID = "ops", "m"
		m := kmsg.NewLeaveGroupRequestMember()
		m.MemberID = "m"
		req.Members = append(req.Members, m)
		if resp := r.do(req).(*kmsg.LeaveGroupResponse); resp.ErrorCode == 0 {
			t.Errorf("LeaveGroup v%d", v)
		}
	}
	for v := int16(0); v <= 8; v++ {
		req := kmsg.NewPtrOffsetCommitRequest()
		req.Version = v
		req.Group, req.Generation = "ops", -1
		rt := kmsg.NewOffsetCommitRequestTopic()
		rt.Topic = "events"
		rp := kmsg.NewOffsetCommitRequestTopicPartition()
		rp.Offset = 0
		rt.Partitions = append(rt.Partitions, rp)
		req.Topics = append(req.Topics, rt)
		resp := r.do(req).(*kmsg.OffsetCommitResponse)
		if resp.Topics[0].Partitions[0].ErrorCode == 0 {
			t.Errorf("OffsetCommit v%d", v)
		}
	}
	for v := int16(0); v <= 5; v++ {
		req := kmsg.NewPtrListGroupsRequest()
		req.Version = v
		resp := r.do(req).(*kmsg.ListGroupsResponse)
		for _, g := range resp.Groups {
			if g.Group != "grafana-1" {
				t.Errorf("ListGroups v%d: %s", v, g.Group)
			}
		}
	}
	for v := int16(0); v <= 5; v++ {
		req := kmsg.NewPtrDescribeGroupsRequest()
		req.Version = v
		req.Groups = []string{"ops"}
		if resp := r.do(req).(*kmsg.DescribeGroupsResponse); resp.Groups[0].ErrorCode == 0 {
			t.Errorf("DescribeGroups v%d", v)
		}
	}
	for v := int16(0); v <= 2; v++ {
		req := kmsg.NewPtrDeleteGroupsRequest()
		req.Version = v
		req.Groups = []string{"ops"}
		if resp := r.do(req).(*kmsg.DeleteGroupsResponse); resp.Groups[0].ErrorCode == 0 {
			t.Errorf("DeleteGroups v%d", v)
		}
	}
	adm := kadm.NewClient(newClient(t, addr, kgo.SASL(mechanism(MechanismPlain, "admin", "a-pass"))))
	end, err := adm.ListEndOffsets(ctx, "raw.syslog", "raw.new")
	if err != nil {
		t.Fatal(err)
	}
	if o, ok := end.Lookup("raw.syslog", 0); !ok || o.Offset != 1 {
		t.Errorf("raw.syslog end: %+v", o)
	}
	if _, ok := end.Lookup("raw.new", 0); ok {
		t.Errorf("raw.new created")
	}
	fo, err := adm.FetchOffsets(ctx, "ops")
	if err != nil {
		t.Fatal(err)
	}
	if o, _ := fo.Lookup("events", 0); o.At != 1 {
		t.Errorf("ops moved: %+v", o)
	}
	rc, err := adm.DescribeTopicConfigs(ctx, "raw.syslog")
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range rc[0].Configs {
		if c.Key == "retention.ms" && *c.Value == "1" {
			t.Errorf("raw.syslog's retention.ms altered")
		}
	}
}

// TestUserTopicsAcksZero: an acks=0 produce naming a topic the user may
// not use closes the connection, as any failed acks=0 produce does (at
// Debug: the producer reconnects and would flood the log), and the
// topics it may use are written all the same, as Kafka writes them.
func TestUserTopicsAcksZero(t *testing.T) {
	closed := make(chan error, 1)
	addr, b := startACLBrokerRaw(t, WithMetrics(&Metrics{ConnClosed: func(_ net.Addr, err error) {
		if err != nil {
			closed <- err
		}
	}}))
	r := dialAs(t, addr, "dash", "d-pass")
	req := produceReq(9, 0, "events", 0, batch("allowed"))
	denied := produceReq(9, 0, "raw.syslog", 0, batch("refused"))
	req.Topics = append(req.Topics, denied.Topics...)
	r.send(req)
	expectClosed(t, r.c)
	select {
	case err := <-closed:
		if !errors.Is(err, errAcksZeroFailed) {
			t.Errorf("connection closed with %v, want a failed acks=0 produce", err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("connection not closed")
	}
	for topic, want := range map[string]int64{"events": 2, "raw.syslog": 1} {
		infos, err := b.DescribeTopics(context.Background(), topic)
		if err != nil {
			t.Fatal(err)
		}
		if hwm := infos[0].Partitions[0].HighWatermark; hwm != want {
			t.Errorf("%s: end offset %d, want %d", topic, hwm, want)
		}
	}
}

// TestUserTopicsUpdate: an Update (weir's SIGHUP) that changes nothing
// but a user's topics applies to the sessions authenticated afterwards
// and, as Kafka applies an ACL change, to one authenticated before.
func TestUserTopicsUpdate(t *testing.T) {
	fl := newFakeLog()
	newTopic(t, fl, "a", 1)
	newTopic(t, fl, "b", 1)
	auth, err := NewSASL([]string{MechanismPlain}, []User{{Name: "u", Password: "p", Topics: Patterns{"a"}}})
	if err != nil {
		t.Fatal(err)
	}
	_, addr := startServer(t, fl, WithSASL(auth))
	listed := func(r *rawClient) []string {
		md := kmsg.NewPtrMetadataRequest()
		md.Version = 12
		var names []string
		for _, tp := range r.do(md).(*kmsg.MetadataResponse).Topics {
			names = append(names, *tp.Topic)
		}
		return names
	}
	before := dialAs(t, addr, "u", "p")
	if err := auth.Update([]string{MechanismPlain}, []User{{Name: "u", Password: "p", Topics: Patterns{"b"}}}); err != nil {
		t.Fatal(err)
	}
	if got := listed(dialAs(t, addr, "u", "p")); len(got) != 1 || got[0] != "b" {
		t.Errorf("a session after the update lists %q, want [b]", got)
	}
	if got := listed(before); len(got) != 1 || got[0] != "b" {
		t.Errorf("the session from before the update lists %q, want [b]", got)
	}
}
