package kafkawire

import (
	"context"
	"encoding/binary"
	"errors"
	"io"
	"net"
	"os"
	"os/exec"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/weirnet/weir/broker"
)

// TestBadInput sends what a broken or hostile client might: each bad
// connection is closed and the server keeps serving others.
func TestBadInput(t *testing.T) {
	fl := newFakeLog()
	newTopic(t, fl, "t", 1)
	_, addr := startServer(t, fl)

	// A healthy client stays connected throughout.
	healthy := dialRaw(t, addr)
	ping := func(rc *rawClient) {
		t.Helper()
		req := kmsg.NewPtrApiVersionsRequest()
		req.Version = 3
		req.ClientSoftwareName, req.ClientSoftwareVersion = "ping", "1"
		if r := rc.do(req).(*kmsg.ApiVersionsResponse); r.ErrorCode != 0 {
			t.Fatalf("ping: error %d", r.ErrorCode)
		}
	}
	ping(healthy)

	frame := func(size int32, body ...byte) []byte {
		return append(binary.BigEndian.AppendUint32(nil, uint32(size)), body...)
	}
	header := func(key, version int16) []byte {
		b := binary.BigEndian.AppendUint16(nil, uint16(key))
		b = binary.BigEndian.AppendUint16(b, uint16(version))
		b = binary.BigEndian.AppendUint32(b, 1)    // correlation id
		return binary.BigEndian.AppendUint16(b, 0) // empty client id
	}
	withSize := func(body []byte) []byte { return frame(int32(len(body)), body...) }
	// A Metadata v1 request claiming a billion topics.
	hugeArray := append(header(3, 1), 0x3f, 0xff, 0xff, 0xff)
	// A Produce v9 request cut in the middle of its topics.
	p := produceReq(9, 1, "t", 0, batch("x")).AppendTo(nil)
	cutProduce := append(header(0, 9), 0)
	cutProduce = append(cutProduce, p[:len(p)/2]...)

	for name, input := range map[string][]byte{
		"http":              []byte("GET / HTTP/1.1\r\nHost: x\r\n\r\n"),
		"tls hello":         {0x16, 0x03, 0x01, 0x02, 0x00, 0x01, 0x00, 0x01, 0xfc, 0x03, 0x03},
		"huge length":       frame(999999999),
		"negative length":   frame(-1),
		"too short":         frame(3, 0, 0, 0),
		"truncated frame":   frame(100, 0, 3, 0, 1, 0, 0, 0, 1),
		"truncated length":  {0, 0},
		"unknown key":       withSize(header(32000, 0)),
		"bad header":        withSize([]byte{0, 3, 0, 1, 0, 0, 0, 1, 0x7f, 0xff}),
		"array too long":    withSize(hugeArray),
		"truncated produce": withSize(cutProduce),
		"big control frame": frame(9<<20, header(3, 1)...),
	} {
		t.Run(name, func(t *testing.T) {
			c, err := net.Dial("tcp", addr)
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			c.Write(input)
			// Half-close, as a client that gives up would: the
			// server sees EOF where it expected more.
			c.(*net.TCPConn).CloseWrite()
			expectClosed(t, c)
			ping(dialRaw(t, addr))
		})
	}
	ping(healthy)
}

// TestPanicRecovery checks the last line of defence: a Log that panics ends
// the connection, not the process.
func TestPanicRecovery(t *testing.T) {
	_, addr := startServer(t, panicLog{newFakeLog()})
	rc := dialRaw(t, addr)
	req := kmsg.NewPtrMetadataRequest()
	req.Version = 1
	rc.send(req)
	expectClosed(t, rc.c)

	// The server still answers others.
	rc = dialRaw(t, addr)
	av := kmsg.NewPtrApiVersionsRequest()
	rc.do(av)
}

type panicLog struct{ *fakeLog }

func (panicLog) DescribeTopics(context.Context, ...string) ([]broker.TopicInfo, error) {
	panic("boom")
}

// TestPanicInParallelAppendRecovered: appends of a request's partitions
// run on goroutines of their own (WithParallelAppends), where the
// connection's recovery did not reach: a panicking append ended the
// process, not the connection.
func TestPanicInParallelAppendRecovered(t *testing.T) {
	fl := newFakeLog()
	newTopic(t, fl, "t", 2)
	_, addr := startServer(t, appendPanicLog{fl}, WithParallelAppends(8))
	rc := dialRaw(t, addr)
	req := produceReq(9, 1, "t", 0, batch("v"))
	second := kmsg.NewProduceRequestTopicPartition()
	second.Partition, second.Records = 1, batch("w")
	req.Topics[0].Partitions = append(req.Topics[0].Partitions, second)
	rc.send(req)
	expectClosed(t, rc.c)

	// The server still answers others.
	rc = dialRaw(t, addr)
	rc.do(kmsg.NewPtrApiVersionsRequest())
}

type appendPanicLog struct{ *fakeLog }

func (appendPanicLog) AppendBatches(context.Context, string, int32, []byte) (int64, error) {
	panic("boom")
}

// TestMaxRequestBytes checks WithMaxRequestBytes.
func TestMaxRequestBytes(t *testing.T) {
	fl := newFakeLog()
	newTopic(t, fl, "t", 1)
	_, addr := startServer(t, fl, WithMaxRequestBytes(1024))
	rc := dialRaw(t, addr)
	if r := rc.do(produceReq(9, 1, "t", 0, batch("small"))).(*kmsg.ProduceResponse); r.Topics[0].Partitions[0].ErrorCode != 0 {
		t.Fatal("small produce failed")
	}
	big := make([]byte, 2000)
	rc.send(produceReq(9, 1, "t", 0, batch(string(big))))
	start := time.Now()
	expectClosed(t, rc.c)
	if time.Since(start) > 2*time.Second {
		t.Fatal("slow close")
	}
}

// TestConnectionLimit: past WithMaxConnections a connection is closed on
// arrival and reported; those served go on, and once one leaves, a new
// one is served. kcat, a client none of us wrote, is served too.
func TestConnectionLimit(t *testing.T) {
	fl := newFakeLog()
	newTopic(t, fl, "t", 1)
	var refused atomic.Int32
	_, addr := startServer(t, fl, WithMaxConnections(2), WithMetrics(&Metrics{ConnRefused: func(net.Addr, string) { refused.Add(1) }}))
	ping := func(rc *rawClient) {
		t.Helper()
		req := kmsg.NewPtrApiVersionsRequest()
		if r := rc.do(req).(*kmsg.ApiVersionsResponse); r.ErrorCode != 0 {
			t.Fatalf("ping: error %d", r.ErrorCode)
		}
	}
	a, b := dialRaw(t, addr), dialRaw(t, addr)
	ping(a)
	ping(b)
	third, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer third.Close()
	third.SetReadDeadline(time.Now().Add(5 * time.Second))
	if n, err := third.Read(make([]byte, 1)); n != 0 || err == nil || errors.Is(err, os.ErrDeadlineExceeded) {
		t.Fatalf("a connection past the limit: read %d, %v; want it closed", n, err)
	}
	if refused.Load() != 1 {
		t.Errorf("refused %d, want 1", refused.Load())
	}
	ping(a) // the others are served on
	b.c.Close()
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("no connection served after one left")
		}
		if out, err := exec.Command("kcat", "-b", addr, "-L", "-m", "2").CombinedOutput(); err == nil {
			if !strings.Contains(string(out), "topic \"t\"") {
				t.Fatalf("kcat -L: %s", out)
			}
			break
		} else if _, lerr := exec.LookPath("kcat"); lerr != nil && servedRaw(addr) {
			break // without kcat: a raw ApiVersions, retried like kcat
		}
	}
}

// servedRaw reports whether a new connection to addr gets a good answer
// to an ApiVersions request: its correlation id, and no error.
func servedRaw(addr string) bool {
	c, err := net.Dial("tcp", addr)
	if err != nil {
		return false
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(2 * time.Second))
	req := kmsg.NewPtrApiVersionsRequest()
	if _, err := c.Write(kmsg.NewRequestFormatter().AppendRequest(nil, req, 7)); err != nil {
		return false
	}
	var size [4]byte
	if _, err := io.ReadFull(c, size[:]); err != nil {
		return false
	}
	body := make([]byte, binary.BigEndian.Uint32(size[:]))
	if _, err := io.ReadFull(c, body); err != nil || len(body) < 4 || int32(binary.BigEndian.Uint32(body)) != 7 {
		return false
	}
	resp := req.ResponseKind().(*kmsg.ApiVersionsResponse)
	return resp.ReadFrom(body[4:]) == nil && resp.ErrorCode == 0 && len(resp.ApiKeys) > 0
}
