package kafkawire

import (
	"context"
	"net"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// FuzzRequest feeds arbitrary bytes as a request frame body through header
// parsing, kmsg decoding, dispatch to the fake log and response encoding.
// Nothing may panic; errors (closing the connection) are fine.
//
//	go test -fuzz FuzzRequest ./broker/kafkawire/
func FuzzRequest(f *testing.F) {
	seed := func(req kmsg.Request) {
		frame := kmsg.NewRequestFormatter(kmsg.FormatterClientID("fuzz")).AppendRequest(nil, req, 1)
		f.Add(frame[4:])
	}
	for v := int16(0); v <= 5; v++ {
		av := kmsg.NewPtrApiVersionsRequest()
		av.Version = v
		av.ClientSoftwareName, av.ClientSoftwareVersion = "fuzz", "1"
		seed(av)
	}
	for _, v := range []int16{0, 4, 9, 12} {
		md := kmsg.NewPtrMetadataRequest()
		md.Version = v
		md.AllowAutoTopicCreation = true
		rt := kmsg.NewMetadataRequestTopic()
		rt.Topic = kmsg.StringPtr("new")
		md.Topics = append(md.Topics, rt)
		seed(md)
	}
	for _, v := range []int16{3, 8, 9} {
		seed(produceReq(v, -1, "t", 0, batch("a", "b")))
		seed(produceReq(v, 0, "t", 1, batch("c")))
	}
	for _, v := range []int16{4, 11, 12} {
		seed(fetchReq(v, 0, 0, "t", 0, 0, 1))
	}
	lo := kmsg.NewPtrListOffsetsRequest()
	lo.Version = 7
	lot := kmsg.NewListOffsetsRequestTopic()
	lot.Topic = "t"
	lot.Partitions = append(lot.Partitions, kmsg.NewListOffsetsRequestTopicPartition())
	lo.Topics = append(lo.Topics, lot)
	seed(lo)
	ct := kmsg.NewPtrCreateTopicsRequest()
	ct.Version = 7
	ctt := kmsg.NewCreateTopicsRequestTopic()
	ctt.Topic, ctt.NumPartitions, ctt.ReplicationFactor = "made", 2, 1
	ctt.Configs = append(ctt.Configs, kmsg.CreateTopicsRequestTopicConfig{Name: "retention.ms", Value: kmsg.StringPtr("1000")})
	ct.Topics = append(ct.Topics, ctt)
	seed(ct)
	dt := kmsg.NewPtrDeleteTopicsRequest()
	dt.Version = 6
	dtt := kmsg.NewDeleteTopicsRequestTopic()
	dtt.Topic = kmsg.StringPtr("t")
	dt.Topics = append(dt.Topics, dtt)
	seed(dt)
	ip := kmsg.NewPtrInitProducerIDRequest()
	ip.Version = 4
	seed(ip)
	fc := kmsg.NewPtrFindCoordinatorRequest()
	fc.Version = 3
	seed(fc)
	f.Add([]byte{})
	f.Add([]byte{0, 18, 0, 3, 0, 0, 0, 1})

	f.Fuzz(func(t *testing.T, body []byte) {
		fl := newFakeLog()
		fl.autoCreate = true
		newTopic(t, fl, "t", 2)
		fl.AppendBatches(context.Background(), "t", 0, batch("existing"))
		s := New(fl)
		a, b := net.Pipe()
		defer a.Close()
		defer b.Close()
		c := s.newConn(a, s.cfg.logger)
		// A fetch may long-poll; the deadline bounds it.
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
		defer cancel()
		h, resp, err := c.handle(ctx, body)
		if err != nil || resp == nil {
			return
		}
		// The client reads the response as the version it asked for
		// (ApiVersions it cannot parse excepted: that answer is v0,
		// KIP-511): what is sent must read back as that version.
		if v := resp.GetVersion(); resp.Key() != h.key || v != h.version && resp.Key() != kmsg.ApiVersions.Int16() {
			t.Fatalf("request key %d v%d answered with key %d v%d", h.key, h.version, resp.Key(), v)
		}
		back := kmsg.ResponseForKey(resp.Key())
		back.SetVersion(resp.GetVersion())
		if err := back.ReadFrom(resp.AppendTo(nil)); err != nil {
			t.Fatalf("%s v%d response does not read back: %v", kmsg.NameForKey(resp.Key()), resp.GetVersion(), err)
		}
	})
}
