package sinks

import (
	"context"
	"fmt"
	"reflect"
	"testing"
	"time"

	"github.com/weirnet/weir/broker"
	"github.com/weirnet/weir/broker/embedded"
	"github.com/weirnet/weir/configs"
	"github.com/weirnet/weir/internal/logwindow"
	"github.com/weirnet/weir/telemetry"
)

// warmDest is a Warmer taking Points that counts what it was warmed with.
type warmDest struct{ warmed int }

func (d *warmDest) Write(context.Context, []Item) error { return nil }
func (d *warmDest) Close() error                        { return nil }
func (d *warmDest) Points() bool                        { return true }
func (d *warmDest) WarmWindow() time.Duration           { return time.Hour }
func (d *warmDest) Warm(items []Item)                   { d.warmed += len(items) }

// TestWarmupReleasesBuffers: once a partition is warmed, the warm-up keeps
// none of what it decoded (a fetch's Points, the fetch buffer, the
// decoder's caches). A sink warms once per partition it takes, and a
// prometheus sink after a restart held ~20 MB of them for the life of the
// process.
func TestWarmupReleasesBuffers(t *testing.T) {
	b, err := embedded.Open(t.TempDir(), embedded.WithTopicDefaults(broker.TopicConfig{Partitions: 1}))
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	const n = 2000
	recs := make([]broker.Record, n)
	for i := range recs {
		recs[i] = broker.Record{Key: []byte("d"), Value: fmt.Appendf(nil,
			`{"v":1,"measurement":"interface","device":"d%d","tags":{"ifName":"et%d"},"fields":{"in_octets":%d},"counters":["in_octets"],"time":"2026-11-29T12:00:00Z"}`, i, i, i),
			Headers: []broker.Header{{Key: telemetry.HeaderSchema, Value: []byte(telemetry.SchemaMetric)}}}
	}
	if err := b.Produce(context.Background(), "enriched.metrics", recs); err != nil {
		t.Fatal(err)
	}
	d := &warmDest{}
	s, err := New(b, configs.Sink{Type: "test", Name: "w", Topics: []string{"enriched.metrics"}}, d)
	if err != nil {
		t.Fatal(err)
	}
	w := newWarmup(s, d)
	w.partition(context.Background(), broker.TopicPartition{Topic: "enriched.metrics", Partition: 0}, n, time.Now().Add(-time.Hour))
	if d.warmed != n {
		t.Fatalf("warmed with %d records, want %d", d.warmed, n)
	}
	if cap(w.pts) != 0 || cap(w.its) != 0 {
		t.Errorf("after warming, the warm-up still holds %d Points and %d items", cap(w.pts), cap(w.its))
	}
	if !reflect.DeepEqual(w.log, logwindow.Reader{B: b}) {
		t.Error("after warming, the warm-up still holds its fetch buffer")
	}
	if !reflect.DeepEqual(w.dec, decoder{}) {
		t.Error("after warming, the warm-up still holds its decoder's caches")
	}
}
