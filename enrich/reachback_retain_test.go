package enrich

import (
	"context"
	"encoding/json"
	"log/slog"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/weirnet/weir/broker"
	"github.com/weirnet/weir/internal/heaptest"
	"github.com/weirnet/weir/telemetry"
)

// TestReachBackKeepsNoFetchBuffer: after a warm-up that read back past its
// window for a target's last answered poll, a worker whose partition stays
// quiet holds nothing of the reach back's fetch buffer (8 MiB), as after
// any warm-up (TestWarmupKeepsNoFetchBuffer). Its scratch and decoder keep
// the last record they decoded, whose strings share the record's bytes:
// the reach back decoded the records it looked at and those of the poll
// it found straight from its fetch buffers, and the last kept a whole
// buffer (8.5 MB held, against 0.1 MB now).
func TestReachBackKeepsNoFetchBuffer(t *testing.T) {
	b, inv := openLog(t)
	ctx := context.Background()
	end := time.Now().Add(-time.Minute).Truncate(time.Millisecond)
	windowStart := end.Add(-DefaultWarmup)
	metric := func(m telemetry.Metric, key string) broker.Record {
		v, err := json.Marshal(&m)
		if err != nil {
			t.Fatal(err)
		}
		return broker.Record{Key: []byte(key), Value: v, Timestamp: m.Time}
	}
	row := func(at time.Time) broker.Record {
		return metric(telemetry.Metric{V: 1, Measurement: "snmp_interface", Device: "core9", Source: "snmp",
			Tags:   map[string]string{"ifIndex": "3", "ifName": "Gi0/3", "agent": "192.0.2.9"},
			Fields: map[string]any{"ifOperStatus": 1}, Time: at, Uptime: 1000}, "core9")
	}
	status := func(at time.Time, up int64) broker.Record {
		return metric(telemetry.Metric{V: 1, Measurement: "snmp_status", Device: "core9", Source: "snmp",
			Tags: map[string]string{"agent": "192.0.2.9"}, Fields: map[string]any{"snmp_up": up}, Time: at, Uptime: uint32(1000 * up)}, "core9")
	}
	produce := func(recs ...broker.Record) {
		if err := b.ProducePartition(ctx, telemetry.TopicRawSNMP, 0, recs); err != nil {
			t.Fatal(err)
		}
	}
	answeredAt := windowStart.Add(-30 * time.Minute)
	produce(row(answeredAt), status(answeredAt, 1))
	// 30,000 rows of 1 KB of another device after it: a few 8 MiB
	// fetches.
	filler := strings.Repeat("x", 900)
	for i := range 30 {
		recs := make([]broker.Record, 1000)
		for j := range recs {
			recs[j] = metric(telemetry.Metric{V: 1, Measurement: "snmp_interface", Device: "edge1", Source: "snmp",
				Tags:   map[string]string{"ifIndex": "1", "ifAlias": filler, "agent": "192.0.2.1"},
				Fields: map[string]any{"ifOperStatus": 1}, Time: answeredAt.Add(time.Duration(i*1000+j) * 50 * time.Millisecond)}, "edge1")
		}
		produce(recs...)
	}
	n := int64(2 + 30*1000)
	for min := range 11 { // the window: failed polls alone
		produce(status(windowStart.Add(time.Duration(min)*time.Minute), 0))
		n++
	}
	w := NewMetricsWorker(b, inv)
	var logged strings.Builder
	wm := newWarmer(b, DefaultWarmup, slog.New(slog.NewTextHandler(&logged, nil)))
	wm.lost = w.lostPolls
	before := heaptest.Live()
	wm.warmPartition(ctx, telemetry.TopicRawSNMP, 0, n, time.Now(), w.warm)
	if wm.lost != nil && !strings.Contains(logged.String(), "found=1 not_found=0") {
		t.Fatalf("the reach back did not find core9's poll: %s", logged.String())
	}
	held := heaptest.Live() - before
	t.Logf("%d bytes held after the warm-up", held)
	if held > 4<<20 {
		t.Errorf("the worker holds %d bytes after a warm-up that read back, want less than 4 MiB", held)
	}
	runtime.KeepAlive(w)
}
