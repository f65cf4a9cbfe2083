package kafkawire

import (
	"context"
	"fmt"
	"log/slog"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/weirnet/weir/broker"
	"github.com/weirnet/weir/broker/embedded"
	"github.com/weirnet/weir/internal/peers"
	"github.com/weirnet/weir/internal/syncbuf"
)

// TestKgoProducerAcrossRestart: a franz-go producer (any kgo
// application, Vector/Benthos-style shippers built on it) stays up while
// weir restarts. After the restart the topic must still be the same topic
// to it: same topic ID in Metadata. The embedded log made up a new ID at
// every open, so at its next metadata refresh (metadata.max.age, 5 min, or
// after any error) franz-go decides the topic was deleted and re-created
// and failed every record for it with UNKNOWN_TOPIC_ID, for good, until
// the application is restarted.
func TestKgoProducerAcrossRestart(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	addr := peers.FreeAddr(t) // the same address before and after the restart
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	serve := func(b *embedded.Broker, ln net.Listener) func() {
		s := New(b, WithLogger(testLogger(t)))
		sctx, stop := context.WithCancel(context.Background())
		done := make(chan error, 1)
		go func() { done <- s.Serve(sctx, ln) }()
		return func() { stop(); <-done }
	}
	b, err := embedded.Open(dir, embedded.WithLogger(testLogger(t)))
	if err != nil {
		t.Fatal(err)
	}
	if err := b.CreateTopic(ctx, "t", broker.TopicConfig{Partitions: 1}); err != nil {
		t.Fatal(err)
	}
	stop := serve(b, ln)

	cl := newClient(t, addr, kgo.DefaultProduceTopic("t"),
		kgo.RetryBackoffFn(func(int) time.Duration { return 20 * time.Millisecond }),
		kgo.WithLogger(kgo.BasicLogger(testWriter{t}, kgo.LogLevelWarn, nil)))
	if err := cl.ProduceSync(ctx, &kgo.Record{Value: []byte("a")}).FirstErr(); err != nil {
		t.Fatal(err)
	}

	// Restart weir on the same address (a clean stop).
	stop()
	if err := b.Close(); err != nil {
		t.Fatal(err)
	}
	b, err = embedded.Open(dir, embedded.WithLogger(testLogger(t)))
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	ln, err = net.Listen("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer serve(b, ln)()

	// What the client does every metadata.max.age (5 min) or after an
	// error; forced here so the test does not wait.
	cl.ForceMetadataRefresh()
	time.Sleep(500 * time.Millisecond)
	if err := cl.ProduceSync(ctx, &kgo.Record{Value: []byte("b")}).FirstErr(); err != nil {
		t.Fatalf("produce after weir restarted: %v", err)
	}
}

// fullDiskLog is the fake log with a full disk.
type fullDiskLog struct{ *fakeLog }

func (fullDiskLog) AppendBatches(context.Context, string, int32, []byte) (int64, error) {
	return -1, fmt.Errorf("%w: t-0: write: no space left on device", broker.ErrStorage)
}

// TestProduceStorageErrorIsLogged: a Kafka client's produce that the log
// cannot write (a full disk) gets KAFKA_STORAGE_ERROR, and weir's log says
// why: `weir produce` tells its user to see the broker's log, which held
// nothing about it.
func TestProduceStorageErrorIsLogged(t *testing.T) {
	l := newFakeLog()
	newTopic(t, l, "t", 1)
	var logs syncbuf.Buffer
	_, addr := startServer(t, fullDiskLog{l},
		WithLogger(slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelInfo}))))
	r := dialRaw(t, addr)
	resp := r.do(produceReq(9, -1, "t", 0, batch("a"))).(*kmsg.ProduceResponse)
	if code := resp.Topics[0].Partitions[0].ErrorCode; code != kerr.KafkaStorageError.Code {
		t.Fatalf("error code %d, want KAFKA_STORAGE_ERROR", code)
	}
	if !strings.Contains(logs.String(), "no space left on device") {
		t.Errorf("the broker's log does not say why the produce failed:\n%s", logs.String())
	}
}

// TestProduceFailedHook counts the failed partition for
// weir_kafka_produce_errors_total.
func TestProduceFailedHook(t *testing.T) {
	l := newFakeLog()
	newTopic(t, l, "t", 1)
	var codes []int16
	var mu sync.Mutex
	_, addr := startServer(t, fullDiskLog{l}, WithMetrics(&Metrics{ProduceFailed: func(_ string, _ int32, code int16) {
		mu.Lock()
		codes = append(codes, code)
		mu.Unlock()
	}}))
	dialRaw(t, addr).do(produceReq(9, -1, "t", 0, batch("a")))
	mu.Lock()
	defer mu.Unlock()
	if len(codes) != 1 || codes[0] != kerr.KafkaStorageError.Code {
		t.Fatalf("ProduceFailed codes %v, want one KAFKA_STORAGE_ERROR", codes)
	}
}

// noProducerIDsLog is the fake log with a full disk where producer ids are
// stored (meta/producer-ids).
type noProducerIDsLog struct{ *fakeLog }

func (noProducerIDsLog) InitProducerID(context.Context) (int64, int16, error) {
	return -1, -1, fmt.Errorf("%w: write meta/producer-ids.tmp: no space left on device", broker.ErrStorage)
}

// TestInitProducerIDFailureLogThrottled: idempotent producers (librdkafka,
// franz-go, `weir produce`) retry InitProducerID while the disk is full, on
// every connection; weir's log says why once, with a count, not once per
// retry.
func TestInitProducerIDFailureLogThrottled(t *testing.T) {
	l := newFakeLog()
	var logs syncbuf.Buffer
	_, addr := startServer(t, noProducerIDsLog{l},
		WithLogger(slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelInfo}))))
	for range 2 {
		r := dialRaw(t, addr)
		for range 5 {
			resp := r.do(kmsg.NewPtrInitProducerIDRequest()).(*kmsg.InitProducerIDResponse)
			if resp.ErrorCode != kerr.KafkaStorageError.Code {
				t.Fatalf("error code %d, want KAFKA_STORAGE_ERROR", resp.ErrorCode)
			}
		}
	}
	if n := strings.Count(logs.String(), "allocating a producer id failed"); n != 1 {
		t.Errorf("%d log lines for 10 failed InitProducerID requests, want 1:\n%s", n, logs.String())
	}
	if !strings.Contains(logs.String(), "no space left on device") {
		t.Errorf("the log does not say why:\n%s", logs.String())
	}
}

// fullLog is the fake log past its partition bound.
type fullLog struct{ *fakeLog }

func (fullLog) CreateTopic(context.Context, string, broker.TopicConfig) error {
	return fmt.Errorf("%w: its 6 partitions would make 10006 in all", broker.ErrPartitionLimit)
}

// TestAutoCreateFailureLogThrottled: a client asks for a topic it may not
// create at every Metadata; the log says why once, with a count.
func TestAutoCreateFailureLogThrottled(t *testing.T) {
	l := newFakeLog()
	l.autoCreate = true
	var logs syncbuf.Buffer
	_, addr := startServer(t, fullLog{l},
		WithLogger(slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelInfo}))))
	r := dialRaw(t, addr)
	for i := range 10 {
		req := kmsg.NewPtrMetadataRequest()
		req.AllowAutoTopicCreation = true
		rt := kmsg.NewMetadataRequestTopic()
		rt.Topic = kmsg.StringPtr(fmt.Sprintf("new%d", i%3))
		req.Topics = append(req.Topics, rt)
		resp := r.do(req).(*kmsg.MetadataResponse)
		if code := resp.Topics[0].ErrorCode; code != kerr.PolicyViolation.Code {
			t.Fatalf("error code %d, want POLICY_VIOLATION", code)
		}
	}
	if n := strings.Count(logs.String(), "auto-creating topic failed"); n != 1 {
		t.Errorf("%d log lines for 10 refused auto-creations, want 1:\n%s", n, logs.String())
	}
	if !strings.Contains(logs.String(), "would make 10006") {
		t.Errorf("the log does not say why:\n%s", logs.String())
	}
}

// policyLog is the fake log refusing every batch by its policy (a batch
// of over a million records).
type policyLog struct{ *fakeLog }

func (policyLog) AppendBatches(context.Context, string, int32, []byte) (int64, error) {
	return -1, fmt.Errorf("%w: a batch of 2000000 records, more than 1048576", broker.ErrInvalidRecord)
}

// TestPolicyRefusalByProduceVersion: a batch the log's policy refuses is
// INVALID_RECORD from Produce v8, which introduced it, with the reason;
// older clients get CORRUPT_MESSAGE, as for the listener's own checks.
func TestPolicyRefusalByProduceVersion(t *testing.T) {
	l := newFakeLog()
	newTopic(t, l, "t", 1)
	_, addr := startServer(t, policyLog{l})
	rc := dialRaw(t, addr)
	for v, want := range map[int16]int16{9: kerr.InvalidRecord.Code, 8: kerr.InvalidRecord.Code, 7: kerr.CorruptMessage.Code, 3: kerr.CorruptMessage.Code} {
		p := rc.do(produceReq(v, -1, "t", 0, batch("x"))).(*kmsg.ProduceResponse).Topics[0].Partitions[0]
		if p.ErrorCode != want {
			t.Errorf("Produce v%d: error %d, want %d", v, p.ErrorCode, want)
		}
		if v >= 8 && (p.ErrorMessage == nil || !strings.Contains(*p.ErrorMessage, "more than 1048576")) {
			t.Errorf("Produce v%d: message %v, want the reason", v, p.ErrorMessage)
		}
	}
}
