package enrich

import (
	"context"
	"encoding/json"
	"math"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/weirnet/weir/broker"
	"github.com/weirnet/weir/broker/embedded"
	"github.com/weirnet/weir/collectors/syslog"
	"github.com/weirnet/weir/telemetry"
)

// oneConsumerBroker is the embedded log whose group consumer, for every
// Consume, is c: a scripted one (a TxnConsumer that aborts, rewinds or
// loses its partition as a test needs).
type oneConsumerBroker struct {
	*embedded.Broker
	c broker.Consumer
}

func (b *oneConsumerBroker) Consume(context.Context, string, []string, ...broker.ConsumerOption) (broker.Consumer, error) {
	return b.c, nil
}

// fakeTxnConsumer is a scripted TxnConsumer: it hands out one batch,
// aborts the first transactions (rewinding, so the batch is polled again)
// and records what each one produced.
type fakeTxnConsumer struct {
	mu        sync.Mutex
	batch     []broker.Record
	polled    bool
	aborts    int // transactions still to abort
	aborted   []map[string][]string
	committed []map[string][]string
	done      chan struct{} // closed once a transaction with the batch committed
}

func (c *fakeTxnConsumer) Poll(ctx context.Context) ([]broker.Record, error) {
	c.mu.Lock()
	if !c.polled {
		c.polled = true
		c.mu.Unlock()
		return slices.Clone(c.batch), nil
	}
	c.mu.Unlock()
	<-ctx.Done()
	return nil, ctx.Err()
}

type recordingTxn map[string][]string

func (t recordingTxn) Produce(_ context.Context, topic string, recs []broker.Record) error {
	for _, r := range recs {
		t[topic] = append(t[topic], string(r.Value))
	}
	return nil
}

func (t recordingTxn) ProducePartition(ctx context.Context, topic string, _ int32, recs []broker.Record) error {
	return t.Produce(ctx, topic, recs)
}

func (c *fakeTxnConsumer) Transact(ctx context.Context, fn func(broker.Txn) error) (bool, error) {
	tx := recordingTxn{}
	err := fn(tx)
	c.mu.Lock()
	defer c.mu.Unlock()
	if err == nil && c.aborts > 0 {
		c.aborts--
		c.aborted = append(c.aborted, tx)
		c.polled = false // rewound
		return false, nil
	}
	if err != nil {
		c.polled = false
		return false, err
	}
	c.committed = append(c.committed, tx)
	if c.polled {
		select {
		case <-c.done:
		default:
			close(c.done)
		}
	}
	return true, nil
}

func (c *fakeTxnConsumer) Commit(ctx context.Context) error { return nil }
func (c *fakeTxnConsumer) Assigned() []broker.TopicPartition {
	return []broker.TopicPartition{{Topic: telemetry.TopicRawSyslog}}
}
func (c *fakeTxnConsumer) Close() error { return nil }

// runScripted produces recs to topic on an embedded log, then runs the
// worker run builds over the scripted consumer, which aborts the first
// aborts transactions; it returns the consumer once a transaction holding
// the batch committed.
func runScripted(t *testing.T, topic string, recs []broker.Record, aborts int, run func(broker.Broker) func(context.Context) error) *fakeTxnConsumer {
	t.Helper()
	eb, err := embedded.Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer eb.Close()
	if err := eb.Produce(context.Background(), topic, recs); err != nil {
		t.Fatal(err)
	}
	c := &fakeTxnConsumer{batch: recs, aborts: aborts, done: make(chan struct{})}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { run(&oneConsumerBroker{eb, c})(ctx); close(done) }()
	select {
	case <-c.done:
	case <-time.After(10 * time.Second):
		t.Fatal("no transaction committed the batch")
	}
	cancel()
	<-done
	return c
}

// TestTransactionReplaySyslog: a syslog worker whose transactions abort
// twice publishes, in the transaction that commits, the very records and
// events of the first attempt: with de-duplication on, enriching the
// records again would have dropped every event as a repeat.
func TestTransactionReplaySyslog(t *testing.T) {
	var p syslog.Parser
	var recs []broker.Record
	for _, c := range loadCorpus(t) {
		var l telemetry.Log
		p.ParseCopy([]byte(c.Raw), &l)
		l.SourceAddr, l.ReceivedAt, l.Device = "10.1.2.3:514", time.Now(), "dev1"
		recs = append(recs, broker.Record{Key: []byte(l.Device), Value: l.AppendJSON(nil)})
	}
	inv, _ := ParseInventory([]byte(testInventory))
	c := runScripted(t, telemetry.TopicRawSyslog, recs, 2, func(b broker.Broker) func(context.Context) error {
		return NewWorker(b, inv, NewClassifier(), WithEventRules(30*time.Second, 5, time.Minute)).Run
	})
	if len(c.aborted) != 2 || len(c.committed) == 0 {
		t.Fatalf("%d aborted, %d committed transactions", len(c.aborted), len(c.committed))
	}
	first, last := c.aborted[0], c.committed[len(c.committed)-1]
	if n := len(last[telemetry.TopicEnrichedSyslog]); n != len(recs) {
		t.Fatalf("committed %d enriched records for %d inputs", n, len(recs))
	}
	if len(first[telemetry.TopicEvents]) == 0 {
		t.Fatal("the corpus raised no events")
	}
	for _, topic := range []string{telemetry.TopicEnrichedSyslog, telemetry.TopicEvents} {
		if !slices.Equal(first[topic], last[topic]) {
			t.Errorf("%s: the committed transaction has %d records, the first attempt %d; want the same",
				topic, len(last[topic]), len(first[topic]))
		}
	}
}

// TestTransactionReplayMetrics: the same for counter rates and state
// changes: a replayed sample keeps its rate and its interface_down event.
func TestTransactionReplayMetrics(t *testing.T) {
	// Recent samples: the worker forgets series older than an hour.
	t0 := time.Now().Add(-2 * time.Minute).Truncate(time.Second)
	row := func(sec int, in uint64, oper int64) broker.Record {
		m := telemetry.Metric{V: 1, Measurement: "snmp_interface", Device: "edge1",
			Tags:     map[string]string{"ifName": "Gi0/1", "agent": "192.0.2.1"},
			Fields:   map[string]any{"ifHCInOctets": in, "ifHighSpeed": int64(1000), "ifOperStatus": oper},
			Counters: []string{"ifHCInOctets"}, Time: t0.Add(time.Duration(sec) * time.Second), Source: "snmp"}
		v, _ := json.Marshal(&m)
		return broker.Record{Key: []byte("edge1"), Value: v}
	}
	recs := []broker.Record{row(0, 0, 1), row(60, 750_000_000, 2)}
	inv, _ := ParseInventory([]byte(testInventory))
	c := runScripted(t, telemetry.TopicRawSNMP, recs, 1, func(b broker.Broker) func(context.Context) error {
		return NewMetricsWorker(b, inv).Run
	})
	last := c.committed[len(c.committed)-1]
	rate := math.NaN()
	for _, v := range last[telemetry.TopicEnrichedMetrics] {
		var m telemetry.Metric
		json.Unmarshal([]byte(v), &m)
		if r, ok := m.Fields["ifHCInOctets_rate"].(float64); ok && m.Measurement == "snmp_interface" {
			rate = r
		}
	}
	if rate != 750_000_000.0/60 {
		t.Errorf("committed rate %v, want %v", rate, 750_000_000.0/60)
	}
	if evs := last[telemetry.TopicEvents]; len(evs) != 1 || !strings.Contains(evs[0], `"interface_down"`) {
		t.Errorf("committed events %v, want one interface_down", evs)
	}
}
