package enrich

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/weirnet/weir/broker"
	"github.com/weirnet/weir/broker/embedded"
)

// describeFailsFirst fails its first DescribeTopics, as a Kafka cluster
// not reachable yet when weir starts.
type describeFailsFirst struct {
	broker.Broker
	calls atomic.Int32
}

func (d *describeFailsFirst) DescribeTopics(ctx context.Context, names ...string) ([]broker.TopicInfo, error) {
	if d.calls.Add(1) == 1 {
		return nil, errors.New("kafka: list topics: unable to dial: connection refused")
	}
	return d.Broker.DescribeTopics(ctx, names...)
}

// TestAlignRetryingLogsStart: a worker that logged `enrich: cannot start;
// retrying` says when it has started after all, so the last line about it
// is not an error that no longer holds.
func TestAlignRetryingLogsStart(t *testing.T) {
	eb, err := embedded.Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer eb.Close()
	if err := eb.CreateTopic(context.Background(), "raw.syslog", broker.TopicConfig{Partitions: 2}); err != nil {
		t.Fatal(err)
	}
	var logs bytes.Buffer
	o := newOutputs(&describeFailsFirst{Broker: eb}, "raw.syslog", slog.New(slog.NewTextHandler(&logs, nil)), NewWorkerMetrics(nil).m, false)
	if !o.alignRetrying(context.Background(), "enriched.syslog", "events") {
		t.Fatal("alignRetrying gave up")
	}
	out := logs.String()
	retry := strings.Index(out, "enrich: cannot start; retrying")
	started := strings.Index(out, `msg="enrich: started"`)
	if retry < 0 || started < retry {
		t.Fatalf("want the retry logged, then the start:\n%s", out)
	}
	if !strings.Contains(out[started:], "input=raw.syslog") || !strings.Contains(out[started:], "attempts=2") {
		t.Errorf("the start line does not name the input and the attempts:\n%s", out)
	}
}
