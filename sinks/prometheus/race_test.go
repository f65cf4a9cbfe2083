package prometheus

import (
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/weirnet/weir/broker"
	"github.com/weirnet/weir/sinks"
	"github.com/weirnet/weir/telemetry"
)

func TestScrapeDuringWritesRace(t *testing.T) {
	var mu sync.Mutex
	now := time.Unix(1000, 0)
	clk := func() time.Time { mu.Lock(); defer mu.Unlock(); return now }
	c := NewCollector("", time.Second, clk)
	var wg sync.WaitGroup
	stop := make(chan struct{})
	for w := range 2 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; ; i++ {
				select {
				case <-stop:
					return
				default:
				}
				items := make([]sinks.Item, 50)
				for j := range items {
					p := telemetry.PointOf(&telemetry.Metric{Measurement: fmt.Sprintf("m%d", j%3), Device: fmt.Sprintf("d%d", (i+j)%40),
						Tags: map[string]string{"if": fmt.Sprint(j)}, Fields: map[string]any{"x": 1.0, "c": uint64(i)}, Counters: []string{"c"}})
					items[j] = sinks.Item{Record: broker.Record{Topic: "t", Partition: int32(w + j%2)}, Point: p}
				}
				c.UpdateItems(items)
			}
		}()
	}
	deadline := time.Now().Add(2 * time.Second)
	for time.Now().Before(deadline) {
		seen := map[string]bool{}
		for _, l := range strings.Split(string(c.render()), "\n") {
			if l == "" || l[0] == '#' {
				continue
			}
			k := l[:strings.LastIndexByte(l, ' ')]
			if seen[k] {
				t.Fatalf("duplicate series %s", k)
			}
			seen[k] = true
		}
		c.Sweep()
		c.Release([]broker.TopicPartition{{Topic: "t", Partition: 1}})
		mu.Lock()
		now = now.Add(300 * time.Millisecond)
		mu.Unlock()
	}
	close(stop)
	wg.Wait()
}
