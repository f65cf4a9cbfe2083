package enrich

import (
	"context"
	"fmt"
	"log/slog"
	"runtime"
	"testing"
	"time"

	"github.com/weirnet/weir/broker"
	"github.com/weirnet/weir/internal/heaptest"
	"github.com/weirnet/weir/telemetry"
)

// TestWarmupKeepsNoMapOfItsPolls: the targets a warm-up's records noted
// (warmPolls, for the reach back: every target of the partition, not only
// those in an outage) are not kept once it is over. The map was cleared,
// which keeps its table: 6 MB for as long as the worker ran, after the
// warm-up of a partition of 100,000 targets. 50,000 here: a table kept
// would be some 3 MB, three times the bound.
func TestWarmupKeepsNoMapOfItsPolls(t *testing.T) {
	b, inv := openLog(t)
	ctx := context.Background()
	end := time.Now().Add(-time.Minute).Truncate(time.Millisecond)
	const n = 50_000
	recs := make([]broker.Record, 0, n)
	for i := range n {
		name := fmt.Sprintf("target%06d", i)
		v := fmt.Sprintf(`{"v":1,"measurement":"snmp_status","device":%q,"source":"snmp","tags":{"agent":"192.0.2.9"},"fields":{"snmp_up":1},"time":%q,"uptime":100}`,
			name, end.Format(time.RFC3339Nano))
		recs = append(recs, broker.Record{Key: []byte(name), Value: []byte(v), Timestamp: end})
	}
	if err := b.ProducePartition(ctx, telemetry.TopicRawSNMP, 0, recs); err != nil {
		t.Fatal(err)
	}
	w := NewMetricsWorker(b, inv)
	wm := newWarmer(b, DefaultWarmup, slog.New(slog.DiscardHandler))
	wm.lost = w.lostPolls
	wm.warmPartition(ctx, telemetry.TopicRawSNMP, 0, n, time.Now(), w.warm)
	if len(w.state) != n {
		t.Fatalf("%d states after the warm-up, want %d", len(w.state), n)
	}
	withMap := heaptest.Live()
	w.warmPolls = nil
	if held := withMap - heaptest.Live(); held > 1<<20 {
		t.Errorf("the worker holds %d bytes of the warm-up's polls after it", held)
	}
	runtime.KeepAlive(w)
}
