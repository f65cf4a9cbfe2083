package kafkacluster

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/weirnet/weir/broker"
)

// TestLagOfJoinedGroups: the backend exports the lag of the groups its
// members joined under the embedded log's names: from the log start for
// partitions a member consumes but the group never committed (a sink
// stuck on its first batch), from the commit once there is one.
func TestLagOfJoinedGroups(t *testing.T) {
	b := newCluster(t)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	if err := b.CreateTopic(ctx, "lag", broker.TopicConfig{Partitions: 2}); err != nil {
		t.Fatal(err)
	}
	if err := b.ProducePartition(ctx, "lag", 0, []broker.Record{{Value: []byte("a")}, {Value: []byte("b")}}); err != nil {
		t.Fatal(err)
	}
	if err := b.ProducePartition(ctx, "lag", 1, []broker.Record{{Value: []byte("c")}}); err != nil {
		t.Fatal(err)
	}
	c, err := b.Consume(ctx, "stuck", []string{"lag"})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	var polled []broker.Record
	for len(polled) < 3 {
		recs, err := c.Poll(ctx)
		if err != nil {
			t.Fatal(err)
		}
		polled = append(polled, recs...)
	}
	reg := prometheus.NewPedanticRegistry()
	reg.MustRegister(&lagCollector{b: b}) // asks the cluster at every scrape
	want := func(what, exp string) {
		t.Helper()
		var err error
		for deadline := time.Now().Add(20 * time.Second); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
			if err = testutil.GatherAndCompare(reg, strings.NewReader(exp), "weir_consumer_lag", "weir_consumer_committed_offset"); err == nil {
				return
			}
		}
		t.Fatalf("%s: %v", what, err)
	}
	lag := func(l0, l1 int) string {
		return fmt.Sprintf(`# HELP weir_consumer_lag Records between a group's committed offset (or, for a partition it consumes without one, the log start) and the log end.
# TYPE weir_consumer_lag gauge
weir_consumer_lag{group="stuck",partition="0",topic="lag"} %d
weir_consumer_lag{group="stuck",partition="1",topic="lag"} %d
`, l0, l1)
	}
	want("no commit", lag(2, 1))
	if err := c.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	want("committed", `# HELP weir_consumer_committed_offset A group's committed offset.
# TYPE weir_consumer_committed_offset gauge
weir_consumer_committed_offset{group="stuck",partition="0",topic="lag"} 2
weir_consumer_committed_offset{group="stuck",partition="1",topic="lag"} 1
`+lag(0, 0))
}
