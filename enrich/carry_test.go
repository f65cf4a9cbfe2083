package enrich

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/weirnet/weir/broker"
	"github.com/weirnet/weir/broker/embedded"
	"github.com/weirnet/weir/telemetry"
)

// abortClearedConsumer is the scripted consumer whose first transaction
// holding a cleared event aborts (a rebalance as it settled) with no input
// record to poll again.
type abortClearedConsumer struct {
	*fakeTxnConsumer
	abortedCleared bool
	cleared        chan struct{} // closed once a cleared event committed
}

func (c *abortClearedConsumer) Transact(ctx context.Context, fn func(broker.Txn) error) (bool, error) {
	tx := recordingTxn{}
	if err := fn(tx); err != nil {
		return false, err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, v := range tx[telemetry.TopicEvents] {
		if !strings.Contains(v, `"interface_flapping_cleared"`) {
			continue
		}
		if !c.abortedCleared {
			c.abortedCleared = true
			c.aborted = append(c.aborted, tx)
			return false, nil
		}
		select {
		case <-c.cleared:
		default:
			close(c.cleared)
		}
	}
	c.committed = append(c.committed, tx)
	return true, nil
}

// TestClearedAfterAbortOnQuietPartition: a cleared event whose transaction
// aborted is carried to the next one; on a partition that receives nothing
// more there was no next one, and the object stayed flapping for good.
func TestClearedAfterAbortOnQuietPartition(t *testing.T) {
	eb, err := embedded.Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer eb.Close()
	var flaps []broker.Record
	for i := range 4 {
		l := telemetry.Log{V: 1, Device: "edge1", Hostname: "edge1", Facility: 23, Severity: 3, Format: "rfc3164",
			Message:    "%LINK-3-UPDOWN: Interface Gi0/1, changed state to " + [...]string{"down", "up"}[i%2],
			SourceAddr: "192.0.2.1:514", ReceivedAt: time.Now()}
		flaps = append(flaps, broker.Record{Key: []byte("edge1"), Value: l.AppendJSON(nil),
			Topic: telemetry.TopicRawSyslog, Offset: int64(i), Timestamp: time.Now()})
	}
	c := &abortClearedConsumer{
		fakeTxnConsumer: &fakeTxnConsumer{batch: flaps, done: make(chan struct{})},
		cleared:         make(chan struct{}),
	}
	inv, _ := ParseInventory([]byte(testInventory))
	w := NewWorker(&oneConsumerBroker{eb, c}, inv, NewClassifier(), WithEventRules(0, 3, time.Second))
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { w.Run(ctx); close(done) }()
	defer func() { cancel(); <-done }()
	select {
	case <-c.cleared:
	case <-time.After(20 * time.Second):
		c.mu.Lock()
		defer c.mu.Unlock()
		t.Fatalf("no cleared event committed (aborted one: %v)", c.abortedCleared)
	}
}
