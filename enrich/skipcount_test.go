package enrich

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"

	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/weirnet/weir/broker"
	"github.com/weirnet/weir/broker/embedded"
)

// describeFailing fails its next fail DescribeTopics calls, as a broker
// briefly away does.
type describeFailing struct {
	broker.Broker
	fail atomic.Int32
}

func (b *describeFailing) DescribeTopics(ctx context.Context, names ...string) ([]broker.TopicInfo, error) {
	if b.fail.Add(-1) >= 0 {
		return nil, errors.New("broker away")
	}
	return b.Broker.DescribeTopics(ctx, names...)
}

// TestAlreadyPublishedCounted: a worker that takes a partition over (a
// restart, a crash, a rebalance) leaves out the outputs an earlier owner
// published before its commit, and counts them
// (weir_enrich_dropped_total{reason="already_published"}), so that
// records in and out add up; what it publishes itself is counted out.
// Also when its first attempt fails before it publishes anything (reading
// an output partition's tail): counted once, on the attempt that
// succeeds.
func TestAlreadyPublishedCounted(t *testing.T) {
	for _, fails := range []int32{0, 1} {
		b := &describeFailing{Broker: tailLog(t, "raw.syslog", "enriched.syslog")}
		ctx := context.Background()
		newOut := func() *outputs {
			o := alignedOutputs(t, b, "raw.syslog", "enriched.syslog")
			o.track(ctx, []broker.TopicPartition{{Topic: "raw.syslog", Partition: 0}}, nil)
			return o
		}
		var first, again []outRecord
		for i := range 8 {
			if i < 5 {
				first = append(first, outFrom(int64(i)))
			}
			again = append(again, outFrom(int64(i)))
		}
		if !newOut().publishRetrying(ctx, outBatch{"enriched.syslog", first}) {
			t.Fatal("first owner did not publish")
		}
		o := newOut()
		b.fail.Store(fails)
		if !o.publishRetrying(ctx, outBatch{"enriched.syslog", again}) {
			t.Fatal("second owner did not publish")
		}
		if b.fail.Load() >= 0 {
			t.Fatalf("%d failing: the failures were not all met", fails)
		}
		if n := testutil.ToFloat64(o.m.dropped.WithLabelValues("enriched.syslog", "already_published")); n != 5 {
			t.Errorf("%d failing: already published counted %v, want 5", fails, n)
		}
		if n := testutil.ToFloat64(o.m.out.WithLabelValues("enriched.syslog")); n != 3 {
			t.Errorf("%d failing: out %v, want 3", fails, n)
		}
	}
}

// TestPublishAfterAFailedAlign: publishRetrying aligns again when an
// output topic went away, and the input's describe may fail then (a
// broker briefly away); the tails were reset and the worker still aligned,
// so the next attempt wrote a tail to a map no longer there: a panic that
// stopped weir.
func TestPublishAfterAFailedAlign(t *testing.T) {
	b := &describeFailing{Broker: tailLog(t, "raw.syslog", "enriched.syslog")}
	ctx := context.Background()
	o := alignedOutputs(t, b, "raw.syslog", "enriched.syslog")
	o.track(ctx, []broker.TopicPartition{{Topic: "raw.syslog", Partition: 0}}, nil)
	b.fail.Store(1)
	if err := o.align(ctx, o.topics...); err == nil {
		t.Fatal("align succeeded with the broker away")
	}
	if !o.publishRetrying(ctx, outBatch{"enriched.syslog", []outRecord{outFrom(0), outFrom(1)}}) {
		t.Fatal("not published")
	}
	if n := len(readTopic(t, b.Broker.(*embedded.Broker), "enriched.syslog")); n != 2 {
		t.Errorf("%d outputs, want 2", n)
	}
}
