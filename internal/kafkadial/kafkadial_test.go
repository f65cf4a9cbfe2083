package kafkadial

import (
	"errors"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
)

// TestWaitCauseForgetsOldFailures: a seed that never answered (a broker
// since decommissioned, still in the list) kept its failure for ever, as
// no connection to it followed: a produce waiting days later, on a leader
// election say, was logged with "last connection attempt: ... connection
// refused" from the start. A failure is a cause only while it is recent:
// franz-go dials again and again while a produce waits on a broker.
func TestWaitCauseForgetsOldFailures(t *testing.T) {
	now := time.Now()
	w := Watch{now: func() time.Time { return now }}
	w.OnBrokerConnect(kgo.BrokerMetadata{Host: "kafka-old", Port: 9092}, 0, nil, errors.New("dial tcp: connection refused"))
	if err := w.Err(); err == nil {
		t.Fatal("a failure just now is no cause")
	}
	now = now.Add(10 * time.Minute)
	if err := w.Err(); err != nil {
		t.Errorf("a failure ten minutes old, with no connection attempt since, is still the cause: %v", err)
	}
}
