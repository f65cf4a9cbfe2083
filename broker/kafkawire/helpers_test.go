package kafkawire

import (
	"context"
	"encoding/binary"
	"errors"
	"io"
	"log/slog"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kbin"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/weirnet/weir/broker"
	"github.com/weirnet/weir/broker/recordbatch"
)

// testWriter sends slog output to t.Log so that it shows with -v or on
// failure only.
type testWriter struct{ t testing.TB }

func (w testWriter) Write(b []byte) (int, error) {
	w.t.Log(strings.TrimSuffix(string(b), "\n"))
	return len(b), nil
}

func testLogger(t testing.TB) *slog.Logger {
	return slog.New(slog.NewTextHandler(testWriter{t}, &slog.HandlerOptions{Level: slog.LevelInfo}))
}

// startServer serves log on a loopback port until the test ends and returns
// the address. Cleanup checks that Serve returns promptly and cleanly.
func startServer(t testing.TB, log Log, opts ...Option) (*Server, string) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s := New(log, append([]Option{WithLogger(testLogger(t))}, opts...)...)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- s.Serve(ctx, ln) }()
	t.Cleanup(func() {
		cancel()
		select {
		case err := <-done:
			if err != nil {
				t.Errorf("Serve: %v", err)
			}
		case <-time.After(10 * time.Second):
			t.Error("Serve did not return after cancel")
		}
	})
	return s, ln.Addr().String()
}

// newTopic creates a topic in the fake or fails the test.
func newTopic(t testing.TB, l *fakeLog, name string, partitions int32) {
	t.Helper()
	if err := l.CreateTopic(context.Background(), name, broker.TopicConfig{Partitions: partitions}); err != nil {
		t.Fatal(err)
	}
}

// rawClient speaks the protocol with hand-picked versions, for the cases
// real clients never produce.
type rawClient struct {
	t    testing.TB
	c    net.Conn
	corr int32
}

func dialRaw(t testing.TB, addr string) *rawClient {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return &rawClient{t: t, c: c}
}

// send writes req at its set version and returns its correlation id.
func (r *rawClient) send(req kmsg.Request) int32 {
	r.t.Helper()
	r.corr++
	b := kmsg.NewRequestFormatter(kmsg.FormatterClientID("raw-test")).AppendRequest(nil, req, r.corr)
	r.c.SetWriteDeadline(time.Now().Add(10 * time.Second))
	if _, err := r.c.Write(b); err != nil {
		r.t.Fatalf("write: %v", err)
	}
	return r.corr
}

// readFrame reads one response frame body.
func (r *rawClient) readFrame() ([]byte, error) {
	r.c.SetReadDeadline(time.Now().Add(10 * time.Second))
	var size [4]byte
	if _, err := io.ReadFull(r.c, size[:]); err != nil {
		return nil, err
	}
	body := make([]byte, binary.BigEndian.Uint32(size[:]))
	_, err := io.ReadFull(r.c, body)
	return body, err
}

// recv reads the response to corr into resp, whose version must be set.
func (r *rawClient) recv(corr int32, resp kmsg.Response) {
	r.t.Helper()
	body, err := r.readFrame()
	if err != nil {
		r.t.Fatalf("reading response: %v", err)
	}
	rd := kbin.Reader{Src: body}
	if got := rd.Int32(); got != corr {
		r.t.Fatalf("correlation id %d, want %d", got, corr)
	}
	if resp.IsFlexible() && resp.Key() != 18 {
		kmsg.SkipTags(&rd)
	}
	if err := resp.ReadFrom(rd.Src); err != nil {
		r.t.Fatalf("decoding %s v%d response: %v", kmsg.NameForKey(resp.Key()), resp.GetVersion(), err)
	}
}

// do sends req and returns its response.
func (r *rawClient) do(req kmsg.Request) kmsg.Response {
	r.t.Helper()
	corr := r.send(req)
	resp := req.ResponseKind()
	r.recv(corr, resp)
	return resp
}

// expectClosed checks that the server closes the connection.
func expectClosed(t testing.TB, c net.Conn) {
	t.Helper()
	c.SetReadDeadline(time.Now().Add(5 * time.Second))
	buf := make([]byte, 1024)
	for {
		_, err := c.Read(buf)
		if err == nil {
			continue
		}
		var ne net.Error
		if errors.As(err, &ne) && ne.Timeout() {
			t.Fatal("server did not close the connection")
		}
		return // EOF or reset
	}
}

// batch encodes one uncompressed batch of values with producer id -1.
func batch(values ...string) []byte {
	var e recordbatch.Encoder
	e.Reset(-1, -1, -1)
	now := time.Now().UnixMilli()
	for _, v := range values {
		e.Append(nil, []byte(v), nil, now)
	}
	return append([]byte(nil), e.Finish(0)...)
}

// batchAt is batch with explicit timestamps, one per value.
func batchAt(ts []int64, values ...string) []byte {
	var e recordbatch.Encoder
	e.Reset(-1, -1, -1)
	for i, v := range values {
		e.Append(nil, []byte(v), nil, ts[i])
	}
	return append([]byte(nil), e.Finish(0)...)
}

// produceReq builds a Produce request for one partition.
func produceReq(version int16, acks int16, topic string, partition int32, records []byte) *kmsg.ProduceRequest {
	req := kmsg.NewPtrProduceRequest()
	req.Version = version
	req.Acks = acks
	req.TimeoutMillis = 5000
	rt := kmsg.NewProduceRequestTopic()
	rt.Topic = topic
	rp := kmsg.NewProduceRequestTopicPartition()
	rp.Partition = partition
	rp.Records = records
	rt.Partitions = append(rt.Partitions, rp)
	req.Topics = append(req.Topics, rt)
	return req
}

// fetchReq builds a Fetch request for partitions of one topic, all at offset.
func fetchReq(version int16, maxWait, minBytes int32, topic string, offset int64, partitions ...int32) *kmsg.FetchRequest {
	req := kmsg.NewPtrFetchRequest()
	req.Version = version
	req.MaxWaitMillis = maxWait
	req.MinBytes = minBytes
	req.MaxBytes = 50 << 20
	req.SessionEpoch = -1
	rt := kmsg.NewFetchRequestTopic()
	rt.Topic = topic
	for _, p := range partitions {
		rp := kmsg.NewFetchRequestTopicPartition()
		rp.Partition = p
		rp.FetchOffset = offset
		rp.PartitionMaxBytes = 1 << 20
		rt.Partitions = append(rt.Partitions, rp)
	}
	req.Topics = append(req.Topics, rt)
	return req
}

// countRecords sums the record counts of concatenated batches.
func countRecords(t testing.TB, b []byte) int {
	t.Helper()
	n := 0
	if _, err := recordbatch.Split(b, func(h *recordbatch.Header, _ []byte) error {
		n += int(h.NumRecords)
		return nil
	}); err != nil {
		t.Fatalf("fetched batches: %v", err)
	}
	return n
}
