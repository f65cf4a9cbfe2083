package embedded

import (
	"bytes"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
)

// diskMetrics scrapes b's free and total bytes of its file system.
func diskMetrics(t *testing.T, b *Broker) (free, size float64) {
	t.Helper()
	reg := prometheus.NewPedanticRegistry()
	reg.MustRegister(b.Collector())
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	free, size = -1, -1
	for _, mf := range mfs {
		switch mf.GetName() {
		case "weir_broker_disk_free_bytes":
			free = mf.GetMetric()[0].GetGauge().GetValue()
		case "weir_broker_disk_size_bytes":
			size = mf.GetMetric()[0].GetGauge().GetValue()
		}
	}
	return free, size
}

// TestDiskMetricsFollowAFillingDisk: the free space of data_dir's file
// system is exported, so an alert can fire before produce is refused: on
// a 1 MiB file system it falls as records are written, to near nothing
// when the log refuses them.
func TestDiskMetricsFollowAFillingDisk(t *testing.T) {
	_, b := fullDiskBroker(t, 1)
	free0, size := diskMetrics(t, b)
	if size != 1<<20 || free0 <= 0 || free0 > size {
		t.Fatalf("an empty 1 MiB file system: free %v, size %v", free0, size)
	}
	for i := 0; i < 10000; i++ {
		recs := makeRecords(50, i*50)
		for j := range recs {
			recs[j].Value = append(recs[j].Value, bytes.Repeat([]byte(" "), 200)...)
		}
		if err := b.Produce(ctx, "t", recs); err != nil {
			break
		}
	}
	if free, _ := diskMetrics(t, b); free >= 64<<10 {
		t.Errorf("a full disk: %v bytes free reported (%v at first)", free, free0)
	}
}

// TestDiskMetricsExported: without root (no tmpfs), the metrics are there
// for data_dir's file system all the same.
func TestDiskMetricsExported(t *testing.T) {
	b := openTest(t, t.TempDir())
	if free, size := diskMetrics(t, b); size <= 0 || free < 0 || free > size {
		t.Errorf("free %v, size %v", free, size)
	}
}
