package gnmi

import (
	"context"
	"runtime"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	gpb "github.com/openconfig/gnmi/proto/gnmi"

	"github.com/weirnet/weir/broker"
	"github.com/weirnet/weir/configs"
)

// countBroker counts the records produced and keeps none of them.
type countBroker struct {
	broker.Broker
	n atomic.Int64
}

func (b *countBroker) Produce(_ context.Context, _ string, recs []broker.Record) error {
	b.n.Add(int64(len(recs)))
	return nil
}

// TestPublishedBatchNotPinned: once a target's batch is published, the
// publisher holds none of its records' values. It kept the batch's
// records slice for the next batch, emptied but not cleared, and so
// every buffer the batch's values were encoded into: after one large
// notification (a full table in a snapshot: 200,000 counters, 16 MB on
// the wire, kept 400 MB of weir's heap for good), all of it, outside
// queue_memory (which said 0), until a batch as large came again.
func TestPublishedBatchNotPinned(t *testing.T) {
	const updates, valueSize = 20_000, 2_000
	value := strings.Repeat("x", valueSize)
	_, addr := startScript(t, func(n int, req *gpb.SubscribeRequest, stream gpb.GNMI_SubscribeServer) error {
		nt := &gpb.Notification{Timestamp: time.Now().UnixNano()}
		for i := 0; i < updates; i++ {
			nt.Update = append(nt.Update, &gpb.Update{Path: mustPath(t, "/interfaces/interface[name=Ethernet"+strconv.Itoa(i)+"]/state/description"),
				Val: &gpb.TypedValue{Value: &gpb.TypedValue_StringVal{StringVal: value}}})
		}
		if err := sendUpd(stream, nt); err != nil {
			return err
		}
		<-stream.Context().Done()
		return nil
	})
	b := &countBroker{}
	cfg := configs.GNMI{RetryMin: configs.Duration(50 * time.Millisecond), RetryMax: configs.Duration(200 * time.Millisecond),
		Targets: []configs.GNMITarget{{Name: "big", Address: addr, Insecure: true, Encoding: "proto", Timeout: configs.Duration(5 * time.Second),
			Subscriptions: []configs.GNMISubscription{sub("/interfaces", "stream", "on_change", 0)}}}}
	c, err := New(cfg, b, WithLogger(testLogger(t)))
	if err != nil {
		t.Fatal(err)
	}
	var before runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- c.Run(ctx) }()
	defer func() { cancel(); <-done }()
	waitFor(t, 60*time.Second, "the notification's records published", func() bool { return b.n.Load() >= updates })
	// The values alone are 40 MB; the collector, its gRPC connection and
	// the target's own notification (still held by the script) are well
	// under what is allowed here. A pin holds for good; gRPC's buffers of
	// the message just read may be held a moment after its records were
	// counted (on a loaded machine, long enough to be measured once), so
	// the heap is given a few seconds to come under the bound.
	notification := int64(updates * valueSize)
	var held int64
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(100 * time.Millisecond) {
		var after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&after)
		held = int64(after.HeapAlloc) - int64(before.HeapAlloc)
		if held <= notification || time.Now().After(deadline) {
			break
		}
	}
	t.Logf("held after publishing: %d MB", held>>20)
	if held > notification {
		t.Errorf("after the batch was published the heap holds %d MB more than before, more than the %d MB of its values", held>>20, notification>>20)
	}
}
