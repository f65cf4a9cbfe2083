package enrich

import (
	"context"
	"fmt"
	"log/slog"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/weirnet/weir/broker"
	"github.com/weirnet/weir/broker/embedded"
	"github.com/weirnet/weir/internal/heaptest"
	"github.com/weirnet/weir/telemetry"
)

// TestWarmupKeepsNoFetchBuffer: after a warm-up, a worker whose partition
// stays quiet holds nothing of the warm-up's fetch buffer (8 MiB). Its
// scratch keeps the last record decoded, whose strings share the record's
// bytes: the last record of the window held the whole buffer until the
// next record came, for good on a quiet partition (a soak found 16 MB in
// the heap of an idle weir after a restart, two workers' worth).
func TestWarmupKeepsNoFetchBuffer(t *testing.T) {
	b, err := embedded.Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	ctx := context.Background()
	filler := strings.Repeat("x", 900)
	now := time.Now()
	for range 30 { // 30,000 lines of 1 KB: a few 8 MiB fetches
		recs := make([]broker.Record, 1000)
		for i := range recs {
			l := telemetry.Log{V: 1, Device: "edge1", Hostname: "edge1", Facility: 23, Severity: 6, Format: "rfc3164",
				Message: "%SYS-6-LOGGINGHOST_STARTSTOP: " + filler, SourceAddr: "192.0.2.1:514", ReceivedAt: now}
			recs[i] = broker.Record{Key: []byte("edge1"), Value: l.AppendJSON(nil), Timestamp: now}
		}
		if err := b.ProducePartition(ctx, telemetry.TopicRawSyslog, 0, recs); err != nil {
			t.Fatal(err)
		}
	}
	inv, _ := ParseInventory([]byte(testInventory))
	w := NewWorker(b, inv, NewClassifier())
	before := heaptest.Live()
	wm := newWarmer(b, time.Hour, slog.New(slog.DiscardHandler))
	wm.warmPartition(ctx, telemetry.TopicRawSyslog, 0, 30_000, time.Now(), w.warmSyslog)
	held := heaptest.Live() - before
	t.Logf("%d bytes held after the warm-up", held)
	if held > 4<<20 {
		t.Errorf("the worker holds %d bytes after a warm-up of a quiet partition, want less than 4 MiB", held)
	}
	runtime.KeepAlive(w)
}

// TestWarmupFetchedKeepsNoFetchBuffer is TestWarmupKeepsNoFetchBuffer for
// the worker's warm-up a fetch at a time (queueWarm, warmFetched). The
// slots a fetch's records were decoded ahead into kept their strings,
// which share the fetch buffer's bytes (9 MB held); and a fetch of a
// single unit's bytes, decoded by the worker into its scratch, kept the
// buffer there when the fetches after it were all decoded ahead (the
// first fetch of a window whose start is in a fetch's last records).
func TestWarmupFetchedKeepsNoFetchBuffer(t *testing.T) {
	for _, old := range []int{0, 6990} {
		t.Run(fmt.Sprintf("old=%d", old), func(t *testing.T) {
			b, err := embedded.Open(t.TempDir())
			if err != nil {
				t.Fatal(err)
			}
			defer b.Close()
			ctx := context.Background()
			filler := strings.Repeat("x", 900)
			now := time.Now()
			// 30,000 lines of 1 KB, 7,000 a fetch; the first old ones
			// before the window (an hour).
			for k := range 30 {
				recs := make([]broker.Record, 1000)
				for i := range recs {
					at := now
					if k*1000+i < old {
						at = now.Add(-2 * time.Hour)
					}
					l := telemetry.Log{V: 1, Device: "edge1", Hostname: "edge1", Facility: 23, Severity: 6, Format: "rfc3164",
						Message: "%SYS-6-LOGGINGHOST_STARTSTOP: " + filler, SourceAddr: "192.0.2.1:514", ReceivedAt: at}
					recs[i] = broker.Record{Key: []byte("edge1"), Value: l.AppendJSON(nil), Timestamp: at}
				}
				if err := b.ProducePartition(ctx, telemetry.TopicRawSyslog, 0, recs); err != nil {
					t.Fatal(err)
				}
			}
			inv, _ := ParseInventory([]byte(testInventory))
			w := NewWorker(b, inv, NewClassifier())
			before := heaptest.Live()
			wm := newWarmer(b, time.Hour, slog.New(slog.DiscardHandler))
			wm.fetched = w.warmFetched
			fed := 0
			wm.warmPartition(ctx, telemetry.TopicRawSyslog, 0, 30_000, time.Now(), func(r *broker.Record, end time.Time) {
				fed++
				w.queueWarm(r, end)
			})
			if fed != 30_000-old {
				t.Fatalf("%d records fed, want %d", fed, 30_000-old)
			}
			held := heaptest.Live() - before
			t.Logf("%d bytes held after the warm-up", held)
			// The slots decoded ahead into (about 1 MiB, kept for the
			// next warm-up) and no more.
			if held > 4<<20 {
				t.Errorf("the worker holds %d bytes after a warm-up of a quiet partition, want less than 4 MiB", held)
			}
			runtime.KeepAlive(w)
		})
	}
}
