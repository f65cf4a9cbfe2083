package prometheus

import (
	"fmt"
	"io"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/weirnet/weir/broker"
	"github.com/weirnet/weir/sinks"
	"github.com/weirnet/weir/telemetry"
)

// TestLiveCountFollowsEveryDropPath: live, what max_series is checked
// against, is the number of series held after any mix of updates, gNMI
// deletes (of a path and of a leaf), releases, scrapes and sweeps.
func TestLiveCountFollowsEveryDropPath(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	now := time.Unix(10000, 0)
	c := NewCollector("", time.Minute, func() time.Time { return now })
	c.maxSeries = 40
	held := func() int {
		n := 0
		for _, f := range c.families {
			n += len(f.series)
		}
		return n
	}
	dropsBy := map[int]int{}
	for i := range 20000 {
		before := c.live
		op := rng.IntN(10)
		switch {
		case op < 5:
			dev := fmt.Sprintf("d%d", rng.IntN(4))
			path := fmt.Sprintf("/if/i[n=%d]", rng.IntN(4))
			fields := []telemetry.Field{telemetry.FloatField("a", 1)}
			if rng.IntN(2) == 0 {
				fields = append(fields, telemetry.FloatField("b", 2))
			}
			if rng.IntN(3) == 0 {
				fields = append(fields, telemetry.StringField("s", "x"))
			}
			p := &telemetry.Point{Measurement: fmt.Sprintf("m%d", rng.IntN(3)), Device: dev, Time: now,
				Tags: []telemetry.Tag{{Key: "path", Value: path}}, Fields: fields}
			c.updateItems([]sinks.Item{{Record: broker.Record{Topic: "t", Partition: int32(rng.IntN(3))}, Schema: telemetry.SchemaMetric, Point: p}}, true)
		case op == 5:
			path := fmt.Sprintf("/if/i[n=%d]", rng.IntN(4))
			if rng.IntN(2) == 0 {
				path += "/a"
			}
			c.UpdatePoint(&telemetry.Point{Measurement: fmt.Sprintf("m%d", rng.IntN(3)) + "_a", Device: fmt.Sprintf("d%d", rng.IntN(4)), Time: now,
				Tags: []telemetry.Tag{{Key: "path", Value: path}}, Fields: []telemetry.Field{telemetry.BoolField("deleted", true)}})
		case op == 6:
			c.Release([]broker.TopicPartition{{Topic: "t", Partition: int32(rng.IntN(3))}})
		case op == 7:
			c.WriteText(io.Discard)
		case op == 8:
			ch := make(chan prometheus.Metric, 1000)
			c.Collect(ch)
		default:
			c.Sweep()
		}
		if c.live < before {
			dropsBy[max(op, 4)]++
		}
		now = now.Add(time.Duration(rng.IntN(3000)) * time.Millisecond)
		if got := held(); c.live != got || got > c.maxSeries {
			t.Fatalf("step %d: live %d, held %d (max %d)", i, c.live, got, c.maxSeries)
		}
	}
	// Every path dropped some series (updates: none).
	for op := 5; op < 10; op++ {
		if dropsBy[op] == 0 {
			t.Errorf("operation %d never dropped a series: %v", op, dropsBy)
		}
	}
}
