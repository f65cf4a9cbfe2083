package kafka_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kfake"

	"github.com/weirnet/weir/broker"
	"github.com/weirnet/weir/configs"
	"github.com/weirnet/weir/sinks"
	"github.com/weirnet/weir/sinks/kafka"
)

// TestMissingMirrorTopicNamed: the sink does not create topics, so until
// the operator makes the mirror topic every batch fails with
// UNKNOWN_TOPIC_OR_PARTITION. The error must name the topic to create
// (with the prefix, which the operator may not have in mind): it said
// only "kafka sink: UNKNOWN_TOPIC_OR_PARTITION: This server does not host
// this topic-partition." Its retries are counted under the Kafka error
// too (weir_sink_retries_total{reason}), not as a bare "error".
func TestMissingMirrorTopicNamed(t *testing.T) {
	kf, err := kfake.NewCluster(kfake.NumBrokers(1))
	if err != nil {
		t.Fatal(err)
	}
	defer kf.Close()
	c := configs.Sink{Type: "kafka", Name: "mirror", Topics: []string{"events"}, Brokers: kf.ListenAddrs(),
		TopicPrefix: "netops.", Timeout: configs.Duration(20 * time.Second)}
	d, err := kafka.New(c, sinks.Env{})
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	items := []sinks.Item{{Record: broker.Record{Topic: "events", Key: []byte("r1"), Value: []byte(`{"v":1}`), Timestamp: time.Now()}}}
	err = d.Write(context.Background(), items)
	var re *sinks.RetryableError
	if !errors.As(err, &re) {
		t.Fatalf("write to a missing topic: %v (%T), want a retryable error", err, err)
	}
	if !strings.Contains(err.Error(), "UNKNOWN_TOPIC_OR_PARTITION") || !strings.Contains(err.Error(), "netops.events") {
		t.Fatalf("write to a missing topic: %q, want UNKNOWN_TOPIC_OR_PARTITION naming netops.events", err)
	}
	if r := sinks.RetryReason(err); r != "kafka_UNKNOWN_TOPIC_OR_PARTITION" {
		t.Fatalf("retry reason %q, want kafka_UNKNOWN_TOPIC_OR_PARTITION", r)
	}
}
