package sinks_test

import (
	"testing"
	"time"

	"github.com/weirnet/weir/configs"
	"github.com/weirnet/weir/sinks/internal/sinktest"
	"github.com/weirnet/weir/telemetry"
)

// TestBatchSecondsOncePerBatch: weir_sink_batch_seconds is the time to
// deliver one batch; a batch halved to find the record the destination
// refuses is still one batch. Seen live: a remote write sink finding
// records Prometheus refused (out of bounds) counted 40,006 "batches"
// whose seconds summed to 130 s twenty seconds after it started, as
// every half was observed besides the batch it was part of.
func TestBatchSecondsOncePerBatch(t *testing.T) {
	b := sinktest.Broker(t)
	sinktest.Produce(t, b, "enriched.metrics", telemetry.SchemaMetric, devKey, metrics(64, func(i int) string {
		if i == 37 {
			return "bad"
		}
		return "ifTable"
	}))
	d := &fakeDest{}
	c := cfg("batchsec")
	c.BatchSize = 64
	c.FlushInterval = configs.Duration(2 * time.Second) // the 64 records in one batch
	r := sinktest.Start(t, b, c, d)
	sinktest.Eventually(t, "63 good records and the dead letter", func() bool {
		n, _ := d.seen()
		return n == 63 && r.Counter("weir_sink_dead_letters_total", map[string]string{"sink": "batchsec"}) == 1
	})
	if err := r.Stop(); err != nil {
		t.Fatal(err)
	}
	d.mu.Lock()
	writes := d.writes
	d.mu.Unlock()
	mfs, err := r.Reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	var count uint64
	for _, mf := range mfs {
		if mf.GetName() == "weir_sink_batch_seconds" {
			for _, m := range mf.GetMetric() {
				count += m.GetHistogram().GetSampleCount()
			}
		}
	}
	if count != 1 {
		t.Errorf("weir_sink_batch_seconds counted %d batches for one batch of 64 delivered in %d writes, want 1", count, writes)
	}
}
