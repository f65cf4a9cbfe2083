package enrich

import (
	"context"
	"log/slog"
	"runtime"
	"testing"

	"github.com/weirnet/weir/broker"
	"github.com/weirnet/weir/broker/recordbatch"
	"github.com/weirnet/weir/internal/heaptest"
	"github.com/weirnet/weir/telemetry"
)

// TestWarmupTimeOfKeepsNoBomb: the time of the record before a
// partition's first live one is read with a fetch of one batch. When that
// batch is a compressed one of a million small records (a Kafka client's,
// on the embedded listener), the fetch decodes a quarter of a million of
// them; the warmer kept the fetch's result for as long as the worker ran,
// as the next warm-up is the next read that resets it.
func TestWarmupTimeOfKeepsNoBomb(t *testing.T) {
	b := openBroker(t)
	ctx := context.Background()
	if err := b.CreateTopic(ctx, telemetry.TopicRawSNMP, broker.TopicConfig{Partitions: 1}); err != nil {
		t.Fatal(err)
	}
	var e recordbatch.Encoder
	e.Reset(-1, -1, -1)
	for range 1 << 20 {
		e.Append(nil, []byte("a"), nil, 1_700_000_000_000)
	}
	bomb, err := recordbatch.Compress(e.Finish(0), recordbatch.CodecGzip)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := b.AppendBatches(ctx, telemetry.TopicRawSNMP, 0, bomb); err != nil {
		t.Fatal(err)
	}
	bomb, e = nil, recordbatch.Encoder{}
	wm := newWarmer(b, DefaultWarmup, slog.New(slog.DiscardHandler))
	base := heaptest.Live()
	if ts, ok := wm.timeOf(ctx, telemetry.TopicRawSNMP, 0, 5); !ok || ts.UnixMilli() != 1_700_000_000_000 {
		t.Fatalf("timeOf = %v, %v", ts, ok)
	}
	held := heaptest.Live() - base
	runtime.KeepAlive(wm)
	if held > 8<<20 {
		t.Errorf("the warmer holds %d MB after reading one record's time", held>>20)
	}
}
