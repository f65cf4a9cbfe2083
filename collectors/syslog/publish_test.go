package syslog

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/netip"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/twmb/franz-go/pkg/kfake"

	"github.com/weirnet/weir/broker"
	"github.com/weirnet/weir/broker/embedded"
	"github.com/weirnet/weir/broker/kafkacluster"
	"github.com/weirnet/weir/configs"
	"github.com/weirnet/weir/internal/syncbuf"
	"github.com/weirnet/weir/telemetry"
)

// slowBroker adds latency to every Produce, like a cluster under load.
type slowBroker struct {
	broker.Broker
	calls atomic.Int32
}

func (s *slowBroker) Produce(ctx context.Context, topic string, recs []broker.Record) error {
	s.calls.Add(1)
	time.Sleep(300 * time.Millisecond)
	return s.Broker.Produce(ctx, topic, recs)
}

// TestShutdownPublishesBatchInFlightOnKafka: a batch being produced when
// weir shuts down still reaches Kafka. The Kafka client fails records
// whose context is cancelled, so producing with the reader's context
// dropped the batch (as "shutdown") at once though the cluster was up.
func TestShutdownPublishesBatchInFlightOnKafka(t *testing.T) {
	kc, err := kfake.NewCluster(kfake.NumBrokers(1))
	if err != nil {
		t.Fatal(err)
	}
	defer kc.Close()
	kb, err := kafkacluster.New(kc.ListenAddrs())
	if err != nil {
		t.Fatal(err)
	}
	defer kb.Close()
	if err := kb.CreateTopic(context.Background(), telemetry.TopicRawSyslog, broker.TopicConfig{Partitions: 1}); err != nil {
		t.Fatal(err)
	}
	sb := &slowBroker{Broker: kb}
	c, err := New(configs.Syslog{Listeners: []configs.SyslogListener{listener("tcp")}}, sb)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { c.Run(ctx); close(done) }()
	actx, acancel := context.WithTimeout(ctx, 5*time.Second)
	defer acancel()
	addrs, err := c.Addrs(actx)
	if err != nil {
		t.Fatal(err)
	}
	_, addr, _ := strings.Cut(addrs[0], "://")
	conn, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	fmt.Fprintf(conn, "<13>Nov 29 14:08:10 h app: in flight\n")
	for sb.calls.Load() == 0 {
		time.Sleep(5 * time.Millisecond)
	}
	cancel() // SIGTERM while the batch is being produced
	<-done

	fctx, fcancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer fcancel()
	infos, err := kb.DescribeTopics(fctx, telemetry.TopicRawSyslog)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	var res broker.FetchResult
	for _, ti := range infos {
		for _, p := range ti.Partitions {
			if p.HighWatermark > 0 {
				if err := kb.Fetch(fctx, telemetry.TopicRawSyslog, p.Partition, 0, broker.FetchOptions{MaxWait: time.Second}, &res); err != nil {
					t.Fatal(err)
				}
				n += len(res.Records)
			}
		}
	}
	shutdown := testutil.ToFloat64(c.metrics.dropped.WithLabelValues("tcp://"+addr, "shutdown"))
	if n != 1 || shutdown != 0 {
		t.Fatalf("message accepted before shutdown: %d in Kafka, dropped{shutdown} %v", n, shutdown)
	}
}

// discardBroker takes every batch at once and keeps nothing.
type discardBroker struct{ broker.Broker }

func (discardBroker) Produce(context.Context, string, []broker.Record) error { return nil }

// BenchmarkPublish is a reader's hot path past the socket: each message
// parsed, encoded and added to the batch, and full batches produced (to a
// broker that takes them at once, so only the publisher is measured). It
// allocates nothing per message.
func BenchmarkPublish(b *testing.B) {
	lines := loadCorpus(b)
	raws := make([][]byte, len(lines))
	for i, c := range lines {
		raws[i] = []byte(c.Raw)
	}
	c, err := New(configs.Syslog{}, discardBroker{})
	if err != nil {
		b.Fatal(err)
	}
	c.now = fixedNow
	p := c.newPublisher("bench", c.metrics.forListener("bench"))
	p.parser.Now = fixedNow
	from := netip.MustParseAddrPort("192.0.2.1:514")
	ctx := context.Background()
	now := fixedNow()
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		p.add(ctx, raws[i%len(raws)], from, now, false)
	}
	p.finalFlush(ctx)
}

// stuckOnBroker fails, as a full disk does, a produce of the one record
// whose value contains stuck, and calls at first; it passes every other
// produce on.
type stuckOnBroker struct {
	broker.Broker
	stuck string
	at    func()
}

func (s *stuckOnBroker) Produce(ctx context.Context, topic string, recs []broker.Record) error {
	if len(recs) == 1 && strings.Contains(string(recs[0].Value), s.stuck) {
		s.at()
		return errors.New("injected: no space left on device")
	}
	return s.Broker.Produce(ctx, topic, recs)
}

// TestShutdownInARefusedBatchCountsOnlyTheUnsent: when the shutdown
// deadline passes while a batch the broker refused is sent message by
// message, the messages already published count as received, the
// refused one as rejected, and only those left as shutdown drops.
func TestShutdownInARefusedBatchCountsOnlyTheUnsent(t *testing.T) {
	b, err := embedded.Open(t.TempDir(), embedded.WithMaxMessageBytes(4096))
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	grace, deadline := context.WithCancel(context.Background())
	defer deadline()
	c, err := New(configs.Syslog{}, &stuckOnBroker{Broker: b, stuck: "stuck", at: deadline})
	if err != nil {
		t.Fatal(err)
	}
	p := c.newPublisher("l", c.metrics.forListener("l"))
	p.grace, p.endGrace = grace, deadline
	from := netip.MustParseAddrPort("192.0.2.1:514")
	for _, m := range []string{"first", strings.Repeat("x", 8000), "stuck", "last"} {
		p.add(context.Background(), []byte("<13>Nov 29 14:08:10 h app: "+m), from, time.Now(), false)
	}
	if p.flush(context.Background()) {
		t.Fatal("flush reported the batch published")
	}
	dropped := func(reason string) float64 { return testutil.ToFloat64(c.metrics.dropped.WithLabelValues("l", reason)) }
	received := testutil.ToFloat64(c.metrics.messages.WithLabelValues("l", FormatRFC3164))
	if dropped("rejected") != 1 || dropped("shutdown") != 2 || received != 2 {
		t.Errorf("rejected %v, shutdown %v, received %v; want 1, 2 (the stuck message and the one after) and 2",
			dropped("rejected"), dropped("shutdown"), received)
	}
	if n := testutil.ToFloat64(c.metrics.publishErrors.WithLabelValues("l")); n != 0 {
		t.Errorf("%v publish errors counted for an attempt the deadline ended, want 0", n)
	}
}

// halfTaker appends the records whose value contains take through the
// log it wraps and fails the call, as the embedded log does when the disk
// fills between partitions; the first time, it ends the grace too.
type halfTaker struct {
	broker.Broker
	take string
	at   func()
}

func (h *halfTaker) Produce(ctx context.Context, topic string, recs []broker.Record) error {
	for i := range recs {
		recs[i].Offset = -1
		if strings.Contains(string(recs[i].Value), h.take) {
			if err := h.Broker.Produce(ctx, topic, recs[i:i+1]); err != nil {
				return err
			}
		}
	}
	h.at()
	return errors.New("injected: no space left on device")
}

// TestShutdownAfterPartialCountsWhatWasTaken: when the grace ends after
// the broker took some of a batch, not the batch's first, what it took
// counts as received, by its own format, and the rest as shutdown drops.
func TestShutdownAfterPartialCountsWhatWasTaken(t *testing.T) {
	b, err := embedded.Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	grace, deadline := context.WithCancel(context.Background())
	defer deadline()
	c, err := New(configs.Syslog{}, &halfTaker{Broker: b, take: "taken", at: deadline})
	if err != nil {
		t.Fatal(err)
	}
	p := c.newPublisher("l", c.metrics.forListener("l"))
	p.grace, p.endGrace = grace, deadline
	from := netip.MustParseAddrPort("192.0.2.1:514")
	for _, m := range []string{
		"<13>Nov 29 14:08:10 h app: left",
		"<13>1 2026-11-29T14:08:10Z h app - - - taken",
		"<13>Nov 29 14:08:10 h app: left",
		"<13>1 2026-11-29T14:08:10Z h app - - - taken",
	} {
		p.add(context.Background(), []byte(m), from, time.Now(), false)
	}
	if p.flush(context.Background()) {
		t.Fatal("flush reported the batch published")
	}
	received := func(format string) float64 {
		return testutil.ToFloat64(c.metrics.messages.WithLabelValues("l", format))
	}
	shutdown := testutil.ToFloat64(c.metrics.dropped.WithLabelValues("l", "shutdown"))
	if received(FormatRFC5424) != 2 || received(FormatRFC3164) != 0 || shutdown != 2 {
		t.Errorf("received rfc5424 %v, rfc3164 %v, shutdown %v; want 2, 0 and 2",
			received(FormatRFC5424), received(FormatRFC3164), shutdown)
	}
}

// TestShutdownDropIsLogged: messages a reader had read (acknowledged to a
// TCP sender) and could not publish before the shutdown grace ran out (a
// full disk) are not only counted, in a metric nobody scrapes once weir
// has exited, but logged, as the trap and gNMI collectors log theirs:
// weir's log is all an operator has of a stop.
func TestShutdownDropIsLogged(t *testing.T) {
	b, err := embedded.Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	grace, deadline := context.WithCancel(context.Background())
	defer deadline()
	var logBuf syncbuf.Buffer
	logger := slog.New(slog.NewTextHandler(&logBuf, nil))
	c, err := New(configs.Syslog{}, &halfTaker{Broker: b, take: "taken", at: deadline}, WithLogger(logger))
	if err != nil {
		t.Fatal(err)
	}
	p := c.newPublisher("tcp://127.0.0.1:514", c.metrics.forListener("tcp://127.0.0.1:514"))
	p.grace, p.endGrace = grace, deadline
	from := netip.MustParseAddrPort("192.0.2.1:514")
	for _, m := range []string{"left", "taken", "left", "left"} {
		p.add(context.Background(), []byte("<13>Nov 29 14:08:10 h app: "+m), from, time.Now(), false)
	}
	if p.flush(context.Background()) {
		t.Fatal("flush reported the batch published")
	}
	out := logBuf.String()
	if !strings.Contains(out, "dropped") || !strings.Contains(out, "records=3") || !strings.Contains(out, "listener=tcp://127.0.0.1:514") {
		t.Fatalf("3 messages dropped at the stop, logged as:\n%s", out)
	}
}
