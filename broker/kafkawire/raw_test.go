package kafkawire

import (
	"bytes"
	"context"
	"encoding/binary"
	"fmt"
	"math"
	"net"
	"slices"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/weirnet/weir/broker"
	"github.com/weirnet/weir/broker/recordbatch"
)

func TestApiVersions(t *testing.T) {
	_, addr := startServer(t, newFakeLog())
	rc := dialRaw(t, addr)

	for v := int16(0); v <= 3; v++ {
		req := kmsg.NewPtrApiVersionsRequest()
		req.Version = v
		req.ClientSoftwareName, req.ClientSoftwareVersion = "raw", "1.0"
		resp := rc.do(req).(*kmsg.ApiVersionsResponse)
		if resp.ErrorCode != 0 {
			t.Fatalf("v%d: error %d", v, resp.ErrorCode)
		}
		if !slices.EqualFunc(resp.ApiKeys, advertisedKeys(false, false, false), func(a, b kmsg.ApiVersionsResponseApiKey) bool {
			return a.ApiKey == b.ApiKey && a.MinVersion == b.MinVersion && a.MaxVersion == b.MaxVersion
		}) {
			t.Fatalf("v%d: advertised %+v", v, resp.ApiKeys)
		}
	}

	// A version from the future gets a v0 answer naming ours (KIP-511).
	req := kmsg.NewPtrApiVersionsRequest()
	req.Version = 4
	req.ClientSoftwareName, req.ClientSoftwareVersion = "raw", "1.0"
	corr := rc.send(req)
	resp := kmsg.NewPtrApiVersionsResponse()
	resp.Version = 0
	rc.recv(corr, resp)
	if resp.ErrorCode != kerr.UnsupportedVersion.Code || len(resp.ApiKeys) != 1 ||
		resp.ApiKeys[0].ApiKey != 18 || resp.ApiKeys[0].MaxVersion != 3 {
		t.Fatalf("ApiVersions v4: %+v", resp)
	}

	// Kafka refuses client software names that are not plain tokens.
	req = kmsg.NewPtrApiVersionsRequest()
	req.Version = 3
	req.ClientSoftwareName, req.ClientSoftwareVersion = "bad name", "1.0"
	if r := rc.do(req).(*kmsg.ApiVersionsResponse); r.ErrorCode != kerr.InvalidRequest.Code {
		t.Fatalf("bad software name: error %d", r.ErrorCode)
	}
}

// TestUnsupportedAdminRequests: admin requests the listener does not serve,
// from a client that sends them without looking at ApiVersions (sarama's
// ClusterAdmin), get UNSUPPORTED_VERSION on every resource, topic or
// partition they name. Their responses have no top-level error code, and an
// empty one reads as success: sarama's AlterConfig returns nil.
func TestUnsupportedAdminRequests(t *testing.T) {
	fl := newFakeLog()
	newTopic(t, fl, "t", 2)
	_, addr := startServer(t, fl)
	rc := dialRaw(t, addr)
	unsupported := kerr.UnsupportedVersion.Code

	ac := kmsg.NewPtrAlterConfigsRequest()
	ac.Version = 1
	acr := kmsg.NewAlterConfigsRequestResource()
	acr.ResourceType, acr.ResourceName = kmsg.ConfigResourceTypeTopic, "t"
	acr.Configs = []kmsg.AlterConfigsRequestResourceConfig{{Name: "retention.ms", Value: kmsg.StringPtr("1000")}}
	ac.Resources = append(ac.Resources, acr)
	if r := rc.do(ac).(*kmsg.AlterConfigsResponse); len(r.Resources) != 1 || r.Resources[0].ErrorCode != unsupported || r.Resources[0].ResourceName != "t" {
		t.Errorf("AlterConfigs: %+v", r)
	}

	iac := kmsg.NewPtrIncrementalAlterConfigsRequest()
	iac.Version = 1
	iacr := kmsg.NewIncrementalAlterConfigsRequestResource()
	iacr.ResourceType, iacr.ResourceName = kmsg.ConfigResourceTypeTopic, "t"
	iacr.Configs = []kmsg.IncrementalAlterConfigsRequestResourceConfig{{Name: "retention.ms", Value: kmsg.StringPtr("1000")}}
	iac.Resources = append(iac.Resources, iacr)
	if r := rc.do(iac).(*kmsg.IncrementalAlterConfigsResponse); len(r.Resources) != 1 || r.Resources[0].ErrorCode != unsupported {
		t.Errorf("IncrementalAlterConfigs: %+v", r)
	}

	cp := kmsg.NewPtrCreatePartitionsRequest()
	cp.Version = 1
	cpt := kmsg.NewCreatePartitionsRequestTopic()
	cpt.Topic, cpt.Count = "t", 4
	cp.Topics = append(cp.Topics, cpt)
	if r := rc.do(cp).(*kmsg.CreatePartitionsResponse); len(r.Topics) != 1 || r.Topics[0].ErrorCode != unsupported || r.Topics[0].Topic != "t" {
		t.Errorf("CreatePartitions: %+v", r)
	}

	dr := kmsg.NewPtrDeleteRecordsRequest()
	dr.Version = 1
	drt := kmsg.NewDeleteRecordsRequestTopic()
	drt.Topic = "t"
	drt.Partitions = []kmsg.DeleteRecordsRequestTopicPartition{{Partition: 0, Offset: 1}, {Partition: 1, Offset: 1}}
	dr.Topics = append(dr.Topics, drt)
	r := rc.do(dr).(*kmsg.DeleteRecordsResponse)
	if len(r.Topics) != 1 || len(r.Topics[0].Partitions) != 2 {
		t.Fatalf("DeleteRecords: %+v", r)
	}
	for _, p := range r.Topics[0].Partitions {
		if p.ErrorCode != unsupported {
			t.Errorf("DeleteRecords partition %d: error %d", p.Partition, p.ErrorCode)
		}
	}
	if len(fl.topics["t"].parts) != 2 {
		t.Error("partitions changed")
	}
}

// TestUnsupportedQuotaAndSCRAMRequests: AlterClientQuotas and
// AlterUserSCRAMCredentials answer per entry or user, with no top-level
// error code, like the admin requests above: an empty answer reads as
// success (sarama's AlterClientQuotas returns nil, and its
// UpsertUserScramCredentials gives no result to look at).
func TestUnsupportedQuotaAndSCRAMRequests(t *testing.T) {
	fl := newFakeLog()
	_, addr := startServer(t, fl)
	rc := dialRaw(t, addr)
	unsupported := kerr.UnsupportedVersion.Code

	aq := kmsg.NewPtrAlterClientQuotasRequest()
	aq.Version = 1
	aqe := kmsg.NewAlterClientQuotasRequestEntry()
	aqe.Entity = []kmsg.AlterClientQuotasRequestEntryEntity{{Type: "client-id", Name: kmsg.StringPtr("weir")}}
	aqe.Ops = []kmsg.AlterClientQuotasRequestEntryOp{{Key: "producer_byte_rate", Value: 1024}}
	aq.Entries = append(aq.Entries, aqe)
	if r := rc.do(aq).(*kmsg.AlterClientQuotasResponse); len(r.Entries) != 1 || r.Entries[0].ErrorCode != unsupported ||
		len(r.Entries[0].Entity) != 1 || r.Entries[0].Entity[0].Type != "client-id" {
		t.Errorf("AlterClientQuotas: %+v", r)
	}

	as := kmsg.NewPtrAlterUserSCRAMCredentialsRequest()
	as.Deletions = []kmsg.AlterUserSCRAMCredentialsRequestDeletion{{Name: "old", Mechanism: 1}}
	as.Upsertions = []kmsg.AlterUserSCRAMCredentialsRequestUpsertion{{Name: "new", Mechanism: 2, Iterations: 4096, Salt: []byte("s"), SaltedPassword: []byte("p")}}
	r := rc.do(as).(*kmsg.AlterUserSCRAMCredentialsResponse)
	if len(r.Results) != 2 {
		t.Fatalf("AlterUserSCRAMCredentials: %+v", r)
	}
	for _, res := range r.Results {
		if res.ErrorCode != unsupported || (res.User != "old" && res.User != "new") {
			t.Errorf("AlterUserSCRAMCredentials result: %+v", res)
		}
	}
}

func TestUnsupportedRequests(t *testing.T) {
	fl := newFakeLog()
	newTopic(t, fl, "t", 1)
	_, addr := startServer(t, fl)
	rc := dialRaw(t, addr)

	// Fetch v13 needs topic IDs: refused with the top-level error code.
	f := fetchReq(13, 0, 0, "t", 0, 0)
	if r := rc.do(f).(*kmsg.FetchResponse); r.ErrorCode != kerr.UnsupportedVersion.Code {
		t.Fatalf("Fetch v13: error %d", r.ErrorCode)
	}
	// Fetch v0-v3 predates RecordBatch v2 and has no top-level error
	// code: every partition is refused, not answered empty, which old
	// clients (librdkafka with api.version.request=false) would take as
	// "no data" and fetch again at once, for ever.
	for v := int16(0); v < 4; v++ {
		r := rc.do(fetchReq(v, 0, 0, "t", 0, 0)).(*kmsg.FetchResponse)
		if len(r.Topics) != 1 || len(r.Topics[0].Partitions) != 1 ||
			r.Topics[0].Partitions[0].ErrorCode != kerr.UnsupportedVersion.Code {
			t.Fatalf("Fetch v%d: %+v", v, r)
		}
	}
	// An API that is not implemented at all.
	fc := kmsg.NewPtrFindCoordinatorRequest()
	fc.Version = 2
	fc.CoordinatorKey = "group"
	if r := rc.do(fc).(*kmsg.FindCoordinatorResponse); r.ErrorCode != kerr.UnsupportedVersion.Code {
		t.Fatalf("FindCoordinator: error %d", r.ErrorCode)
	}
	// Produce v2 predates RecordBatch v2. It is advertised (for
	// librdkafka's compression, as Kafka 4 does) but every partition is
	// refused with UNSUPPORTED_VERSION.
	p := produceReq(2, 1, "t", 0, batch("x"))
	if r := rc.do(p).(*kmsg.ProduceResponse); len(r.Topics) != 1 || len(r.Topics[0].Partitions) != 1 ||
		r.Topics[0].Partitions[0].ErrorCode != kerr.UnsupportedVersion.Code {
		t.Fatalf("Produce v2: %+v", r)
	}
	// A flexible unsupported request (OffsetCommit v9) answered with
	// the flexible response header.
	oc := kmsg.NewPtrOffsetCommitRequest()
	oc.Version = 9
	oc.Group = "g"
	rc.do(oc)
	if fl.hwm("t", 0) != 0 {
		t.Fatal("an unsupported produce appended")
	}

	// The connection still serves.
	md := kmsg.NewPtrMetadataRequest()
	md.Version = 12
	if r := rc.do(md).(*kmsg.MetadataResponse); len(r.Topics) != 1 {
		t.Fatalf("metadata after unsupported requests: %+v", r)
	}

	// An API key kmsg does not know closes the connection.
	frame := binary.BigEndian.AppendUint32(nil, 10)
	frame = binary.BigEndian.AppendUint16(frame, 30000) // key
	frame = append(frame, 0, 0, 0, 0, 0, 1, 0xff, 0xff)
	rc.c.Write(frame)
	expectClosed(t, rc.c)
}

func TestMetadata(t *testing.T) {
	fl := newFakeLog()
	newTopic(t, fl, "a", 2)
	newTopic(t, fl, "b", 1)
	_, addr := startServer(t, fl, WithNodeID(7), WithClusterID("lab"), WithAdvertisedAddr("weir.example", 19092))
	rc := dialRaw(t, addr)

	for v := int16(0); v <= 12; v++ {
		req := kmsg.NewPtrMetadataRequest()
		req.Version = v
		if v == 0 {
			req.Topics = []kmsg.MetadataRequestTopic{} // v0: empty means all
		}
		resp := rc.do(req).(*kmsg.MetadataResponse)
		if len(resp.Brokers) != 1 || resp.Brokers[0].NodeID != 7 || resp.Brokers[0].Host != "weir.example" || resp.Brokers[0].Port != 19092 {
			t.Fatalf("v%d brokers %+v", v, resp.Brokers)
		}
		if v >= 2 && (resp.ClusterID == nil || *resp.ClusterID != "lab") {
			t.Fatalf("v%d cluster id %v", v, resp.ClusterID)
		}
		if len(resp.Topics) != 2 || *resp.Topics[0].Topic != "a" || len(resp.Topics[0].Partitions) != 2 {
			t.Fatalf("v%d topics %+v", v, resp.Topics)
		}
		p := resp.Topics[0].Partitions[1]
		if p.Leader != 7 || !slices.Equal(p.Replicas, []int32{7}) || !slices.Equal(p.ISR, []int32{7}) {
			t.Fatalf("v%d partition %+v", v, p)
		}
		if v >= 10 && resp.Topics[0].TopicID != fl.topics["a"].info.ID {
			t.Fatalf("v%d topic id", v)
		}
	}

	// Unknown topics, with and without auto-creation.
	ask := func(version int16, allow bool, topics ...string) *kmsg.MetadataResponse {
		req := kmsg.NewPtrMetadataRequest()
		req.Version = version
		req.AllowAutoTopicCreation = allow
		for _, name := range topics {
			rt := kmsg.NewMetadataRequestTopic()
			rt.Topic = kmsg.StringPtr(name)
			req.Topics = append(req.Topics, rt)
		}
		return rc.do(req).(*kmsg.MetadataResponse)
	}
	resp := ask(12, true, "b", "missing")
	if len(resp.Topics) != 2 || resp.Topics[0].ErrorCode != 0 || resp.Topics[1].ErrorCode != kerr.UnknownTopicOrPartition.Code {
		t.Fatalf("auto-create off: %+v", resp.Topics)
	}
	fl.autoCreate = true
	if resp := ask(12, false, "missing"); resp.Topics[0].ErrorCode != kerr.UnknownTopicOrPartition.Code {
		t.Fatalf("client disallows auto-create: %+v", resp.Topics)
	}
	if resp := ask(12, true, "bad name"); resp.Topics[0].ErrorCode != kerr.InvalidTopicException.Code {
		t.Fatalf("invalid name: %+v", resp.Topics)
	}
	if resp := ask(3, false, "auto3"); resp.Topics[0].ErrorCode != 0 || len(resp.Topics[0].Partitions) != 3 {
		t.Fatalf("v3 always auto-creates: %+v", resp.Topics)
	}
	if resp := ask(12, true, "auto12"); resp.Topics[0].ErrorCode != 0 || fl.hwm("auto12", 0) != 0 {
		t.Fatalf("v12 auto-create: %+v", resp.Topics)
	}

	// By topic ID (v12).
	req := kmsg.NewPtrMetadataRequest()
	req.Version = 12
	for _, id := range [][16]byte{fl.topics["b"].info.ID, {1, 2, 3}} {
		rt := kmsg.NewMetadataRequestTopic()
		rt.TopicID = id
		req.Topics = append(req.Topics, rt)
	}
	resp = rc.do(req).(*kmsg.MetadataResponse)
	if len(resp.Topics) != 2 || *resp.Topics[0].Topic != "b" || resp.Topics[1].ErrorCode != kerr.UnknownTopicID.Code {
		t.Fatalf("by id: %+v", resp.Topics)
	}

	// An empty list (v1+) asks for no topics.
	req = kmsg.NewPtrMetadataRequest()
	req.Version = 9
	req.Topics = []kmsg.MetadataRequestTopic{}
	if resp := rc.do(req).(*kmsg.MetadataResponse); len(resp.Topics) != 0 {
		t.Fatalf("empty topic list: %+v", resp.Topics)
	}
}

func TestAdvertisedDefault(t *testing.T) {
	s, addr := startServer(t, newFakeLog())
	rc := dialRaw(t, addr)
	req := kmsg.NewPtrMetadataRequest()
	req.Version = 1
	resp := rc.do(req).(*kmsg.MetadataResponse)
	b := resp.Brokers[0]
	if got := net.JoinHostPort(b.Host, strconv.Itoa(int(b.Port))); got != addr || s.Addr().String() != addr {
		t.Fatalf("advertised %s, Addr %v, listening on %s", got, s.Addr(), addr)
	}
}

func TestProduce(t *testing.T) {
	fl := newFakeLog()
	newTopic(t, fl, "t", 2)
	_, addr := startServer(t, fl)
	rc := dialRaw(t, addr)

	code := func(r kmsg.Response) int16 {
		return r.(*kmsg.ProduceResponse).Topics[0].Partitions[0].ErrorCode
	}
	for v := int16(3); v <= 9; v++ {
		resp := rc.do(produceReq(v, -1, "t", 0, batch("a", "b"))).(*kmsg.ProduceResponse)
		p := resp.Topics[0].Partitions[0]
		if p.ErrorCode != 0 || p.BaseOffset != int64(2*(v-3)) {
			t.Fatalf("v%d: %+v", v, p)
		}
	}
	// Several batches in one partition's records.
	two := append(batch("c"), batch("d", "e")...)
	if resp := rc.do(produceReq(9, 1, "t", 1, two)).(*kmsg.ProduceResponse); resp.Topics[0].Partitions[0].BaseOffset != 0 || fl.hwm("t", 1) != 3 {
		t.Fatalf("two batches: %+v", resp.Topics[0].Partitions[0])
	}

	corrupt := batch("x")
	corrupt[len(corrupt)-1] ^= 0xff
	txn := batch("x")
	binary.BigEndian.PutUint16(txn[21:], recordbatch.Transactional)
	lying := batch("x", "y")
	binary.BigEndian.PutUint32(lying[23:], 1<<30) // lastOffsetDelta
	for name, tc := range map[string]struct {
		req  *kmsg.ProduceRequest
		want int16
	}{
		"unknown topic":     {produceReq(9, -1, "nope", 0, batch("x")), kerr.UnknownTopicOrPartition.Code},
		"unknown partition": {produceReq(9, -1, "t", 5, batch("x")), kerr.UnknownTopicOrPartition.Code},
		"bad crc":           {produceReq(9, -1, "t", 0, corrupt), kerr.CorruptMessage.Code},
		"truncated":         {produceReq(9, -1, "t", 0, batch("x")[:70]), kerr.CorruptMessage.Code},
		"no records":        {produceReq(9, -1, "t", 0, nil), kerr.InvalidRecord.Code},
		"no records v7":     {produceReq(7, -1, "t", 0, nil), kerr.CorruptMessage.Code},
		"transactional":     {produceReq(9, -1, "t", 0, txn), kerr.InvalidTxnState.Code},
		"bad acks":          {produceReq(9, 2, "t", 0, batch("x")), kerr.InvalidRequiredAcks.Code},
		"offset range":      {produceReq(9, -1, "t", 0, lying), kerr.InvalidRecord.Code},
	} {
		if got := code(rc.do(tc.req)); got != tc.want {
			t.Errorf("%s: error %d, want %d", name, got, tc.want)
		}
	}
	if fl.hwm("t", 0) != 14 {
		t.Fatalf("failed produces appended: hwm %d", fl.hwm("t", 0))
	}

	// acks=0: no response at all; the next response is the next request's.
	corr0 := rc.send(produceReq(9, 0, "t", 0, batch("silent")))
	md := kmsg.NewPtrMetadataRequest()
	md.Version = 1
	corr1 := rc.send(md)
	if corr1 == corr0 {
		t.Fatal("same correlation ids")
	}
	rc.recv(corr1, md.ResponseKind())
	if fl.hwm("t", 0) != 15 {
		t.Fatalf("acks=0 produce not appended: hwm %d", fl.hwm("t", 0))
	}
	// A failed acks=0 produce closes the connection: the only way to
	// tell the producer.
	rc.send(produceReq(9, 0, "nope", 0, batch("lost")))
	expectClosed(t, rc.c)
}

func TestIdempotentProduce(t *testing.T) {
	fl := newFakeLog()
	newTopic(t, fl, "t", 1)
	_, addr := startServer(t, fl)
	rc := dialRaw(t, addr)

	ip := kmsg.NewPtrInitProducerIDRequest()
	ip.Version = 4
	r := rc.do(ip).(*kmsg.InitProducerIDResponse)
	if r.ErrorCode != 0 || r.ProducerID < 0 {
		t.Fatalf("InitProducerID: %+v", r)
	}
	seqBatch := func(seq int32, values ...string) []byte {
		var e recordbatch.Encoder
		e.Reset(r.ProducerID, r.ProducerEpoch, seq)
		for _, v := range values {
			e.Append(nil, []byte(v), nil, 1)
		}
		return append([]byte(nil), e.Finish(0)...)
	}
	off := func(b []byte) (int64, int16) {
		p := rc.do(produceReq(9, -1, "t", 0, b)).(*kmsg.ProduceResponse).Topics[0].Partitions[0]
		return p.BaseOffset, p.ErrorCode
	}
	if o, c := off(seqBatch(0, "a", "b")); o != 0 || c != 0 {
		t.Fatalf("first: %d %d", o, c)
	}
	if o, c := off(seqBatch(0, "a", "b")); o != 0 || c != 0 || fl.hwm("t", 0) != 2 {
		t.Fatalf("duplicate: %d %d", o, c)
	}
	if _, c := off(seqBatch(5, "c")); c != kerr.OutOfOrderSequenceNumber.Code {
		t.Fatalf("gap: %d", c)
	}

	// Transactions are not offered.
	ip = kmsg.NewPtrInitProducerIDRequest()
	ip.Version = 4
	ip.TransactionalID = kmsg.StringPtr("txn")
	if r := rc.do(ip).(*kmsg.InitProducerIDResponse); r.ErrorCode != kerr.CoordinatorNotAvailable.Code {
		t.Fatalf("transactional InitProducerID: %+v", r)
	}
}

func TestFetchLongPoll(t *testing.T) {
	fl := newFakeLog()
	newTopic(t, fl, "t", 3)
	appended := make(chan time.Time, 1)
	fl.appendHook = func(string, int32) {
		select {
		case appended <- time.Now():
		default:
		}
	}
	_, addr := startServer(t, fl)
	consumer := dialRaw(t, addr)
	producer := dialRaw(t, addr)

	// MaxWait a minute: an answer before it is the wake-up (how soon is a
	// figure: internal/brokerbench's latency over the listener).
	corr := consumer.send(fetchReq(12, 60000, 1, "t", 0, 0, 1, 2))
	produced := make(chan struct{})
	go func() {
		defer close(produced)
		time.Sleep(100 * time.Millisecond)
		producer.send(produceReq(9, 1, "t", 2, batch("wake up")))
	}()
	defer func() {
		<-produced
		producer.readFrame()
	}()
	resp := kmsg.NewPtrFetchResponse()
	resp.Version = 12
	start := time.Now()
	consumer.recv(corr, resp)
	done := time.Now()
	at := <-appended
	if done.Sub(start) > 30*time.Second {
		t.Fatalf("fetch answered %v after the append (%v after it was sent): not woken", done.Sub(at), done.Sub(start))
	}
	t.Logf("long poll answered %v after the append", done.Sub(at))
	p := resp.Topics[0].Partitions[2]
	if p.ErrorCode != 0 || p.HighWatermark != 1 || p.LastStableOffset != 1 || p.LogStartOffset != 0 ||
		p.PreferredReadReplica != -1 || countRecords(t, p.RecordBatches) != 1 || resp.SessionID != 0 {
		t.Fatalf("woken fetch: %+v", resp)
	}
}

func TestFetchMaxWait(t *testing.T) {
	fl := newFakeLog()
	newTopic(t, fl, "t", 1)
	_, addr := startServer(t, fl)
	rc := dialRaw(t, addr)
	rc.do(produceReq(9, 1, "t", 0, batch("a", "b", "c")))

	start := time.Now()
	resp := rc.do(fetchReq(11, 200, 1, "t", 3, 0)).(*kmsg.FetchResponse)
	if el := time.Since(start); el < 190*time.Millisecond || el > 3*time.Second {
		t.Fatalf("fetch with MaxWait 200ms took %v", el)
	}
	p := resp.Topics[0].Partitions[0]
	if p.ErrorCode != 0 || len(p.RecordBatches) != 0 || p.HighWatermark != 3 {
		t.Fatalf("timed out fetch: %+v", p)
	}

	// MinBytes 0 answers at once even with nothing to return.
	start = time.Now()
	rc.do(fetchReq(11, 5000, 0, "t", 3, 0))
	if el := time.Since(start); el > time.Second {
		t.Fatalf("MinBytes 0 fetch took %v", el)
	}
}

func TestFetchVersionsAndErrors(t *testing.T) {
	fl := newFakeLog()
	newTopic(t, fl, "t", 2)
	_, addr := startServer(t, fl)
	rc := dialRaw(t, addr)
	rc.do(produceReq(9, 1, "t", 0, batch("a", "b")))
	rc.do(produceReq(9, 1, "t", 0, batch("c")))

	for v := int16(4); v <= 12; v++ {
		resp := rc.do(fetchReq(v, 0, 0, "t", 1, 0)).(*kmsg.FetchResponse)
		p := resp.Topics[0].Partitions[0]
		if p.ErrorCode != 0 || p.HighWatermark != 3 || countRecords(t, p.RecordBatches) != 3 {
			t.Fatalf("v%d: %+v", v, p)
		}
	}

	// Offset out of range answers at once, whatever MaxWait says.
	start := time.Now()
	f := fetchReq(12, 5000, 1, "t", 99, 0, 1)
	f.Topics[0].Partitions[1].FetchOffset = 0
	resp := rc.do(f).(*kmsg.FetchResponse)
	if time.Since(start) > time.Second {
		t.Fatal("fetch with an error waited")
	}
	if p := resp.Topics[0].Partitions[0]; p.ErrorCode != kerr.OffsetOutOfRange.Code {
		t.Fatalf("offset out of range: %+v", p)
	}
	if p := resp.Topics[0].Partitions[1]; p.ErrorCode != 0 {
		t.Fatalf("other partition: %+v", p)
	}
	resp = rc.do(fetchReq(12, 5000, 1, "nope", 0, 0)).(*kmsg.FetchResponse)
	if p := resp.Topics[0].Partitions[0]; p.ErrorCode != kerr.UnknownTopicOrPartition.Code {
		t.Fatalf("unknown topic: %+v", p)
	}

	// A session we never handed out.
	f = fetchReq(12, 0, 0, "t", 0, 0)
	f.SessionID, f.SessionEpoch = 42, 3
	if resp := rc.do(f).(*kmsg.FetchResponse); resp.ErrorCode != kerr.FetchSessionIDNotFound.Code {
		t.Fatalf("incremental fetch: error %d", resp.ErrorCode)
	}
}

func TestFetchMaxBytes(t *testing.T) {
	fl := newFakeLog()
	newTopic(t, fl, "t", 2)
	_, addr := startServer(t, fl)
	rc := dialRaw(t, addr)
	for range 3 {
		rc.do(produceReq(9, 1, "t", 0, batch("0123456789")))
		rc.do(produceReq(9, 1, "t", 1, batch("0123456789")))
	}
	one := len(batch("0123456789"))

	// MaxBytes below one batch: the first partition still gets one batch
	// so the consumer progresses; the second gets nothing but watermarks.
	f := fetchReq(12, 0, 0, "t", 0, 0, 1)
	f.MaxBytes = 10
	resp := rc.do(f).(*kmsg.FetchResponse)
	p0, p1 := resp.Topics[0].Partitions[0], resp.Topics[0].Partitions[1]
	if len(p0.RecordBatches) != one || len(p1.RecordBatches) != 0 || p1.HighWatermark != 3 || p1.ErrorCode != 0 {
		t.Fatalf("MaxBytes 10: %d and %d bytes, p1 %+v", len(p0.RecordBatches), len(p1.RecordBatches), p1)
	}

	// PartitionMaxBytes of two batches per partition.
	f = fetchReq(12, 0, 0, "t", 0, 0, 1)
	for i := range f.Topics[0].Partitions {
		f.Topics[0].Partitions[i].PartitionMaxBytes = int32(2 * one)
	}
	resp = rc.do(f).(*kmsg.FetchResponse)
	for _, p := range resp.Topics[0].Partitions {
		if len(p.RecordBatches) != 2*one {
			t.Fatalf("partition %d: %d bytes, want %d", p.Partition, len(p.RecordBatches), 2*one)
		}
	}
}

func TestListOffsets(t *testing.T) {
	fl := newFakeLog()
	newTopic(t, fl, "t", 1)
	_, addr := startServer(t, fl)
	rc := dialRaw(t, addr)
	rc.do(produceReq(9, 1, "t", 0, batchAt([]int64{1000, 3000, 2000}, "a", "b", "c")))
	rc.do(produceReq(9, 1, "t", 0, batchAt([]int64{4000, 3500}, "d", "e")))

	list := func(version int16, ts int64) kmsg.ListOffsetsResponseTopicPartition {
		req := kmsg.NewPtrListOffsetsRequest()
		req.Version = version
		rt := kmsg.NewListOffsetsRequestTopic()
		rt.Topic = "t"
		rp := kmsg.NewListOffsetsRequestTopicPartition()
		rp.Timestamp = ts
		rp.MaxNumOffsets = 1
		rt.Partitions = append(rt.Partitions, rp)
		req.Topics = append(req.Topics, rt)
		return rc.do(req).(*kmsg.ListOffsetsResponse).Topics[0].Partitions[0]
	}
	for _, tc := range []struct {
		ts, offset, at int64
	}{
		{-1, 5, -1}, {-2, 0, -1}, {-3, 3, 4000}, {2500, 1, 3000}, {3200, 3, 4000}, {9999, -1, -1},
	} {
		for v := int16(1); v <= 7; v++ {
			if tc.ts == -3 && v < 7 {
				continue
			}
			p := list(v, tc.ts)
			if p.ErrorCode != 0 || p.Offset != tc.offset || p.Timestamp != tc.at {
				t.Errorf("v%d ts %d: offset %d at %d (error %d), want %d at %d", v, tc.ts, p.Offset, p.Timestamp, p.ErrorCode, tc.offset, tc.at)
			}
		}
	}
	if p := list(6, -3); p.ErrorCode != kerr.UnsupportedVersion.Code {
		t.Errorf("max timestamp before v7: %+v", p)
	}
	if p := list(0, -1); !slices.Equal(p.OldStyleOffsets, []int64{5}) {
		t.Errorf("v0 latest: %+v", p)
	}
	req := kmsg.NewPtrListOffsetsRequest()
	req.Version = 7
	rt := kmsg.NewListOffsetsRequestTopic()
	rt.Topic = "nope"
	rt.Partitions = append(rt.Partitions, kmsg.NewListOffsetsRequestTopicPartition())
	req.Topics = append(req.Topics, rt)
	if p := rc.do(req).(*kmsg.ListOffsetsResponse).Topics[0].Partitions[0]; p.ErrorCode != kerr.UnknownTopicOrPartition.Code {
		t.Errorf("unknown topic: %+v", p)
	}
}

func TestCreateDeleteTopicsRaw(t *testing.T) {
	fl := newFakeLog()
	_, addr := startServer(t, fl)
	rc := dialRaw(t, addr)

	create := func(version int16, topics ...kmsg.CreateTopicsRequestTopic) []kmsg.CreateTopicsResponseTopic {
		req := kmsg.NewPtrCreateTopicsRequest()
		req.Version = version
		req.Topics = topics
		return rc.do(req).(*kmsg.CreateTopicsResponse).Topics
	}
	topic := func(name string, partitions int32, rf int16) kmsg.CreateTopicsRequestTopic {
		t := kmsg.NewCreateTopicsRequestTopic()
		t.Topic, t.NumPartitions, t.ReplicationFactor = name, partitions, rf
		return t
	}
	for v := int16(0); v <= 7; v++ {
		name := fmt.Sprintf("v%d", v)
		if r := create(v, topic(name, 2, 1)); r[0].ErrorCode != 0 {
			t.Fatalf("create v%d: %+v", v, r)
		}
	}
	if len(fl.topicNames()) != 8 {
		t.Fatalf("topics %v", fl.topicNames())
	}

	// The same name twice in one request: both refused.
	r := create(7, topic("dup", 1, 1), topic("dup", 1, 1))
	if r[0].ErrorCode != kerr.InvalidRequest.Code || r[1].ErrorCode != kerr.InvalidRequest.Code {
		t.Fatalf("duplicate names: %+v", r)
	}
	// Manual assignment onto this node.
	assigned := topic("assigned", -1, -1)
	for p := range int32(3) {
		a := kmsg.NewCreateTopicsRequestTopicReplicaAssignment()
		a.Partition, a.Replicas = p, []int32{0}
		assigned.ReplicaAssignment = append(assigned.ReplicaAssignment, a)
	}
	if r := create(7, assigned); r[0].ErrorCode != 0 || r[0].NumPartitions != 3 {
		t.Fatalf("assignment: %+v", r)
	}
	assigned.Topic = "elsewhere"
	assigned.ReplicaAssignment[1].Replicas = []int32{4}
	if r := create(7, assigned); r[0].ErrorCode != kerr.InvalidReplicaAssignment.Code {
		t.Fatalf("assignment to another node: %+v", r)
	}

	// DeleteTopics by name (v0-v5) and by ID (v6).
	for v := int16(0); v <= 5; v++ {
		req := kmsg.NewPtrDeleteTopicsRequest()
		req.Version = v
		req.TopicNames = []string{fmt.Sprintf("v%d", v)}
		if r := rc.do(req).(*kmsg.DeleteTopicsResponse); r.Topics[0].ErrorCode != 0 {
			t.Fatalf("delete v%d: %+v", v, r.Topics)
		}
	}
	req := kmsg.NewPtrDeleteTopicsRequest()
	req.Version = 6
	byID := kmsg.NewDeleteTopicsRequestTopic()
	byID.TopicID = fl.topics["v6"].info.ID
	unknownID := kmsg.NewDeleteTopicsRequestTopic()
	unknownID.TopicID = [16]byte{9}
	byName := kmsg.NewDeleteTopicsRequestTopic()
	byName.Topic = kmsg.StringPtr("v7")
	wantID := fl.topics["v7"].info.ID
	req.Topics = []kmsg.DeleteTopicsRequestTopic{byID, unknownID, byName}
	got := rc.do(req).(*kmsg.DeleteTopicsResponse).Topics
	if got[0].ErrorCode != 0 || *got[0].Topic != "v6" || got[1].ErrorCode != kerr.UnknownTopicID.Code ||
		got[2].ErrorCode != 0 || got[2].TopicID != wantID {
		t.Fatalf("delete v6: %+v", got)
	}
	if names := fl.topicNames(); !slices.Equal(names, []string{"assigned"}) {
		t.Fatalf("left: %v", names)
	}
}

// TestPipelining sends several requests in one write: the responses come
// back in request order.
func TestPipelining(t *testing.T) {
	fl := newFakeLog()
	newTopic(t, fl, "t", 1)
	_, addr := startServer(t, fl)
	rc := dialRaw(t, addr)
	var frames []byte
	var reqs []kmsg.Request
	f := kmsg.NewRequestFormatter()
	for i := range 20 {
		var req kmsg.Request
		switch i % 3 {
		case 0:
			req = produceReq(9, -1, "t", 0, batch("x"))
		case 1:
			r := kmsg.NewPtrMetadataRequest()
			r.Version = 12
			req = r
		default:
			req = fetchReq(12, 0, 0, "t", 0, 0)
		}
		// AppendRequest writes the size at the start of its dst.
		frames = append(frames, f.AppendRequest(nil, req, int32(i))...)
		reqs = append(reqs, req)
	}
	rc.c.Write(frames)
	for i, req := range reqs {
		rc.recv(int32(i), req.ResponseKind())
	}
	if fl.hwm("t", 0) != 7 {
		t.Fatalf("hwm %d", fl.hwm("t", 0))
	}
}

func TestShutdownWithLongPoll(t *testing.T) {
	fl := newFakeLog()
	newTopic(t, fl, "t", 1)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s := New(fl, WithLogger(testLogger(t)))
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- s.Serve(ctx, ln) }()

	rc := dialRaw(t, ln.Addr().String())
	rc.send(fetchReq(12, 60000, 1, "t", 0, 0))
	time.Sleep(50 * time.Millisecond) // let it start polling
	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("Serve: %v", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("Serve did not return while a fetch was polling")
	}
	expectClosed(t, rc.c)
}

func TestIdleTimeout(t *testing.T) {
	_, addr := startServer(t, newFakeLog(), WithIdleTimeout(100*time.Millisecond))
	// Taken before the dial: the server's idle deadline runs from its
	// accept, which can come before a loaded test goroutine reads the
	// clock after the dial.
	start := time.Now()
	rc := dialRaw(t, addr)
	expectClosed(t, rc.c)
	if el := time.Since(start); el < 80*time.Millisecond {
		t.Fatalf("closed after %v", el)
	}
}

// TestErrorMapping checks every documented Log error.
func TestErrorMapping(t *testing.T) {
	for err, want := range map[error]*kerr.Error{
		broker.ErrUnknownTopic:         kerr.UnknownTopicOrPartition,
		broker.ErrUnknownPartition:     kerr.UnknownTopicOrPartition,
		broker.ErrOffsetOutOfRange:     kerr.OffsetOutOfRange,
		broker.ErrCorruptBatch:         kerr.CorruptMessage,
		recordbatch.ErrCRC:             kerr.CorruptMessage,
		broker.ErrRecordTooLarge:       kerr.MessageTooLarge,
		broker.ErrInvalidRecord:        kerr.InvalidRecord,
		broker.ErrOutOfOrderSequence:   kerr.OutOfOrderSequenceNumber,
		broker.ErrInvalidProducerEpoch: kerr.InvalidProducerEpoch,
		broker.ErrTopicExists:          kerr.TopicAlreadyExists,
		broker.ErrInvalidTopic:         kerr.InvalidTopicException,
		broker.ErrInvalidPartitions:    kerr.InvalidPartitions,
		broker.ErrStorage:              kerr.KafkaStorageError,
		broker.ErrPartitionLimit:       kerr.PolicyViolation,
		broker.ErrClosed:               kerr.UnknownServerError,
	} {
		wrapped := &wrapErr{err}
		if got := kafkaError(wrapped); got != want {
			t.Errorf("%v: %v, want %v", err, got, want)
		}
	}
	if errorCode(nil) != 0 {
		t.Error("nil error has a code")
	}
}

type wrapErr struct{ err error }

func (w *wrapErr) Error() string { return "context: " + w.err.Error() }
func (w *wrapErr) Unwrap() error { return w.err }

// TestLargeBatch moves a 3 MiB incompressible batch through Produce and
// Fetch: the request buffer grows in steps, and a batch larger than
// PartitionMaxBytes is still returned whole as the first one.
func TestLargeBatch(t *testing.T) {
	fl := newFakeLog()
	newTopic(t, fl, "t", 1)
	_, addr := startServer(t, fl)
	rc := dialRaw(t, addr)

	var e recordbatch.Encoder
	e.Reset(-1, -1, -1)
	value := make([]byte, 150<<10)
	for i := range 20 {
		for j := range value {
			value[j] = byte(i*31 + j*7)
		}
		e.Append(nil, value, nil, int64(i))
	}
	big := append([]byte(nil), e.Finish(0)...)
	if r := rc.do(produceReq(9, -1, "t", 0, big)).(*kmsg.ProduceResponse); r.Topics[0].Partitions[0].ErrorCode != 0 {
		t.Fatalf("produce: %+v", r.Topics[0].Partitions[0])
	}
	resp := rc.do(fetchReq(12, 0, 1, "t", 5, 0)).(*kmsg.FetchResponse)
	got := resp.Topics[0].Partitions[0].RecordBatches
	if len(got) != len(big) || !bytes.Equal(got[12:], big[12:]) {
		t.Fatalf("fetched %d bytes, want the %d byte batch", len(got), len(big))
	}
}

// TestMetricsHooks checks that every hook fires.
func TestMetricsHooks(t *testing.T) {
	fl := newFakeLog()
	newTopic(t, fl, "t", 1)
	var mu sync.Mutex
	counts := map[string]int{}
	add := func(k string, n int) {
		mu.Lock()
		counts[k] += n
		mu.Unlock()
	}
	m := &Metrics{
		ConnOpened: func(net.Addr) { add("opened", 1) },
		ConnClosed: func(net.Addr, error) { add("closed", 1) },
		Request:    func(int16, int16, time.Duration) { add("requests", 1) },
		Produced:   func(_ string, _ int32, records, _ int) { add("produced", records) },
		Fetched:    func(_ string, _ int32, records, _ int) { add("fetched", records) },
	}
	_, addr := startServer(t, fl, WithMetrics(m))
	rc := dialRaw(t, addr)
	rc.do(produceReq(9, -1, "t", 0, batch("a", "b", "c")))
	rc.do(fetchReq(12, 0, 0, "t", 0, 0))
	rc.c.Close()
	deadline := time.Now().Add(5 * time.Second)
	for {
		mu.Lock()
		closed := counts["closed"]
		mu.Unlock()
		if closed == 1 || time.Now().After(deadline) {
			break
		}
		time.Sleep(5 * time.Millisecond)
	}
	mu.Lock()
	defer mu.Unlock()
	want := map[string]int{"opened": 1, "closed": 1, "requests": 2, "produced": 3, "fetched": 3}
	for k, v := range want {
		if counts[k] != v {
			t.Errorf("%s: %d, want %d", k, counts[k], v)
		}
	}
}

// halfProduce starts a Produce request of size bytes on c and sends n of
// them: a client holding a half-sent request.
func halfProduce(t *testing.T, c net.Conn, size, n int) {
	t.Helper()
	hdr := binary.BigEndian.AppendUint32(nil, uint32(size))
	hdr = binary.BigEndian.AppendUint16(hdr, uint16(kmsg.Produce.Int16()))
	hdr = binary.BigEndian.AppendUint16(hdr, 7)
	if _, err := c.Write(append(hdr, make([]byte, n)...)); err != nil {
		t.Fatal(err)
	}
}

// TestHalfSentRequestTimesOut: a request whose length has come must come
// whole within the frame timeout, not the idle timeout, so a client
// cannot hold a half-sent request and its memory for ten minutes.
func TestHalfSentRequestTimesOut(t *testing.T) {
	_, addr := startServer(t, newFakeLog(), WithFrameTimeout(200*time.Millisecond))
	rc := dialRaw(t, addr)
	halfProduce(t, rc.c, 4<<20, 1<<20)
	start := time.Now()
	expectClosed(t, rc.c)
	if el := time.Since(start); el > 3*time.Second {
		t.Fatalf("closed after %v", el)
	}
}

// TestRequestMemoryIsBounded: the request bytes all connections hold are
// bounded; a request past the bound closes its connection, and the
// memory is there again once the holder is gone.
func TestRequestMemoryIsBounded(t *testing.T) {
	fl := newFakeLog()
	newTopic(t, fl, "t", 1)
	s, addr := startServer(t, fl, WithMaxBufferedRequestBytes(3<<20))
	holder := dialRaw(t, addr)
	halfProduce(t, holder.c, 8<<20, 2<<20+100) // its buffer grows to 4 MiB: over
	expectClosed(t, holder.c)
	small := dialRaw(t, addr)
	halfProduce(t, small.c, 8<<20, 1<<20+100) // 2 MiB: within
	for deadline := time.Now().Add(5 * time.Second); s.buffered.Load() < 1<<20; time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("buffered %d", s.buffered.Load())
		}
	}
	other := dialRaw(t, addr)
	halfProduce(t, other.c, 8<<20, 1<<20+100) // 2 MiB more: over, while small holds its 2
	expectClosed(t, other.c)
	small.c.Close()
	for deadline := time.Now().Add(5 * time.Second); s.buffered.Load() != 0; time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("buffered %d after the holder left", s.buffered.Load())
		}
	}
	// Whole requests go through again, and a connection that sent large
	// ones holds none of the bound once they are answered: idle
	// connections cannot keep new requests out.
	cl := newClient(t, addr)
	for range 3 {
		if err := cl.ProduceSync(context.Background(), &kgo.Record{Topic: "t", Value: bytes.Repeat([]byte("x"), 900<<10)}).FirstErr(); err != nil {
			t.Fatal(err)
		}
	}
	if n := s.buffered.Load(); n != 0 {
		t.Fatalf("%d bytes of the bound held after the requests were answered", n)
	}
}

// TestNoIdleTimeoutKeepsConnections: without an idle timeout, the frame
// timeout of one request does not close the connection while it waits
// for the next.
func TestNoIdleTimeoutKeepsConnections(t *testing.T) {
	_, addr := startServer(t, newFakeLog(), WithIdleTimeout(0), WithFrameTimeout(100*time.Millisecond))
	rc := dialRaw(t, addr)
	for range 2 {
		rc.do(&kmsg.ApiVersionsRequest{Version: 0})
		time.Sleep(300 * time.Millisecond)
	}
}

// TestFetchClientGoneWhilePolling: a client that hangs up while its Fetch
// long-polls gives its connection back at once, not when MaxWaitMillis (up
// to 24 days) has passed: otherwise clients that give up on a fetch would
// hold connection slots until the listener refuses everyone.
func TestFetchClientGoneWhilePolling(t *testing.T) {
	fl := newFakeLog()
	newTopic(t, fl, "t", 1)
	closed := make(chan struct{}, 4)
	// The frame timeout (the read deadline while a request is handled)
	// passes while it polls: the client's leaving is still noticed.
	_, addr := startServer(t, fl, WithMaxConnections(1), WithFrameTimeout(50*time.Millisecond),
		WithMetrics(&Metrics{ConnClosed: func(net.Addr, error) { closed <- struct{}{} }}))

	rc := dialRaw(t, addr)
	rc.send(fetchReq(12, math.MaxInt32, 1, "t", 0, 0))
	time.Sleep(300 * time.Millisecond) // polling, past the frame timeout
	rc.c.Close()
	select {
	case <-closed:
	case <-time.After(5 * time.Second):
		t.Fatal("connection still open 5s after its client left a polling fetch")
	}
	// Its slot is free: a new client is served.
	if !servedRaw(addr) {
		t.Fatal("a new client is not served after the polling one left")
	}
}

// TestFetchPollPipelined: a request sent behind a polling Fetch does not end
// the poll and is answered after it, on a connection that goes on serving.
func TestFetchPollPipelined(t *testing.T) {
	fl := newFakeLog()
	newTopic(t, fl, "t", 1)
	_, addr := startServer(t, fl, WithIdleTimeout(0))
	rc := dialRaw(t, addr)
	start := time.Now()
	fc := rc.send(fetchReq(12, 300, 1, "t", 0, 0))
	time.Sleep(50 * time.Millisecond)
	ac := rc.send(kmsg.NewPtrApiVersionsRequest())
	rc.recv(fc, &kmsg.FetchResponse{Version: 12})
	if el := time.Since(start); el < 290*time.Millisecond {
		t.Fatalf("fetch answered after %v, before its MaxWait", el)
	}
	rc.recv(ac, &kmsg.ApiVersionsResponse{})
	// The connection still reads: no deadline is left behind.
	time.Sleep(50 * time.Millisecond)
	if r := rc.do(kmsg.NewPtrApiVersionsRequest()).(*kmsg.ApiVersionsResponse); r.ErrorCode != 0 {
		t.Fatalf("ApiVersions after the poll: error %d", r.ErrorCode)
	}
}
