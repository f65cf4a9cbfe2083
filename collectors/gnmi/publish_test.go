package gnmi

import (
	"context"
	"fmt"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/weirnet/weir/broker"
	"github.com/weirnet/weir/collectors/gnmi/sim"
	"github.com/weirnet/weir/configs"
	"github.com/weirnet/weir/internal/syncbuf"
)

// refusingBroker refuses a produce holding a record whose value contains
// refuse, as a broker refuses a batch with a record over its size limit.
type refusingBroker struct {
	memBroker
	refuse string
}

func (b *refusingBroker) Produce(ctx context.Context, topic string, recs []broker.Record) error {
	for _, r := range recs {
		if strings.Contains(string(r.Value), b.refuse) {
			return fmt.Errorf("produce %s: %w", topic, broker.ErrRecordTooLarge)
		}
	}
	return b.memBroker.Produce(ctx, topic, recs)
}

// TestRefusedRecordDroppedAlone: a record the broker refuses is dropped
// and counted as publish_error, one per record; the others of its batch
// are published and counted as such, and the target keeps publishing.
func TestRefusedRecordDroppedAlone(t *testing.T) {
	b, m, refused := refuseEthernet2(t, testLogger(t), 3)
	published := testutil.ToFloat64(m.Published.WithLabelValues("a"))
	ms := b.metrics(t)
	byName := map[string]int{}
	for _, x := range ms {
		byName[x.Tags["name"]]++
	}
	if byName["Ethernet2"] != 0 || byName["Ethernet1"] == 0 || byName["Ethernet3"] == 0 {
		t.Fatalf("records published by interface: %v; want Ethernet1 and 3, not 2", byName)
	}
	// Each sample is one record per interface: twice as many published
	// as refused, give or take the batch a stop cut short.
	if int(published) != len(ms) || published < 2*refused-2 {
		t.Errorf("published %v (%d in the broker), refused %v: want the two other interfaces' records published",
			published, len(ms), refused)
	}
}

// TestRefusedRecordsLogThrottled: a target whose every sample holds a
// record the broker refuses logs the drop once per throttle.Every, not
// once per record, while the counter counts each.
func TestRefusedRecordsLogThrottled(t *testing.T) {
	var logs syncbuf.Buffer
	_, _, refused := refuseEthernet2(t, slog.New(slog.NewTextHandler(&logs, nil)), 5)
	if n := strings.Count(logs.String(), "record refused by the broker"); n != 1 {
		t.Errorf("%v records refused, logged %d times, want once:\n%s", refused, n, logs.String())
	}
}

// refuseEthernet2 runs target a on a simulator of three interfaces, over
// a broker that refuses Ethernet2's records, until at least n were
// refused; it returns the broker, the metrics and the refused count.
func refuseEthernet2(t *testing.T, logger *slog.Logger, n float64) (*refusingBroker, *Metrics, float64) {
	t.Helper()
	_, addr, _ := startSim(t, "127.0.0.1:0", sim.Config{Interfaces: 3, ToggleEvery: -1})
	m, err := NewMetrics(nil)
	if err != nil {
		t.Fatal(err)
	}
	b := &refusingBroker{refuse: `"Ethernet2"`}
	c, err := New(configs.GNMI{RetryMin: configs.Duration(50 * time.Millisecond),
		Targets: []configs.GNMITarget{simTarget("a", addr, sub(countersPath, "stream", "sample", 20*time.Millisecond))}},
		b, WithMetrics(m), WithLogger(logger))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { c.Run(ctx); close(done) }()
	defer func() { cancel(); <-done }()
	refused := func() float64 { return testutil.ToFloat64(m.Dropped.WithLabelValues("a", DropPublishError)) }
	waitFor(t, 10*time.Second, "refused records", func() bool { return refused() >= n })
	cancel()
	<-done
	return b, m, refused()
}
