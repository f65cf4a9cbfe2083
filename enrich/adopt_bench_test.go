package enrich

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/weirnet/weir/broker"
	"github.com/weirnet/weir/telemetry"
)

// BenchmarkAdoptPublished is a warm-up's read-back of the states the
// events topic last published (adoptPublished), per event read: every
// partition taken reads a week of its events again.
func BenchmarkAdoptPublished(b *testing.B) {
	const n = 100_000
	br := openBroker(b)
	ctx := context.Background()
	for _, topic := range []string{telemetry.TopicRawSyslog, telemetry.TopicEvents} {
		if err := br.CreateTopic(ctx, topic, broker.TopicConfig{Partitions: 1}); err != nil {
			b.Fatal(err)
		}
	}
	t0 := time.Now().Add(-time.Hour).Truncate(time.Millisecond)
	tags := map[string]string{"site": "ams1", "region": "eu", "role": "core", "vendor": "cisco", "platform": "ios-xe"}
	types := []string{"interface_down", "interface_up", "config_changed", "login_succeeded"}
	var batch []broker.Record
	for i := range n {
		at := t0.Add(time.Duration(i) * time.Millisecond)
		typ := types[i%len(types)]
		ev := telemetry.Event{V: telemetry.Version, Type: typ, Device: fmt.Sprint("core", i%50),
			Object: fmt.Sprintf("GigabitEthernet0/%d", i/len(types)%48), Severity: "error",
			Message: "Interface GigabitEthernet0/1, changed state to " + typ, Tags: tags, Time: at,
			Cause: telemetry.Cause{Topic: telemetry.TopicRawSyslog, Offset: int64(i)}}
		v, _, err := ev.AppendJSON(nil, nil)
		if err != nil {
			b.Fatal(err)
		}
		batch = append(batch, broker.Record{Key: []byte(ev.Device), Value: v, Timestamp: at})
		if len(batch) == 1000 || i == n-1 {
			if err := br.Produce(ctx, telemetry.TopicEvents, batch); err != nil {
				b.Fatal(err)
			}
			batch = batch[:0]
		}
	}
	b.ResetTimer()
	for range b.N {
		d := newDetector(linkRestartDedup, DefaultFlapThreshold, DefaultFlapWindow)
		if err := d.adoptPublished(ctx, br, telemetry.TopicRawSyslog, telemetry.TopicEvents, 0, t0.Add(-time.Minute)); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/n, "ns/event")
}
