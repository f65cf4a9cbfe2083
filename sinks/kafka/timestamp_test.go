package kafka_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/weirnet/weir/broker"
	"github.com/weirnet/weir/configs"
	"github.com/weirnet/weir/sinks"
	"github.com/weirnet/weir/sinks/kafka"
)

// TestInvalidTimestampDeadLettered: a cluster bounding record times
// (message.timestamp.difference.max.ms, log.message.timestamp.before.max.ms;
// Kafka 4's after.max.ms defaults to an hour) refuses a record with
// INVALID_TIMESTAMP. The record keeps its time however often it is sent
// (a backlog's only gets older), so it is refused for good and must be
// dead-lettered: retried, it stopped the sink there for ever.
func TestInvalidTimestampDeadLettered(t *testing.T) {
	kf, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.SeedTopics(1, "weir.events"))
	if err != nil {
		t.Fatal(err)
	}
	defer kf.Close()
	kf.ControlKey(int16(kmsg.Produce), func(kreq kmsg.Request) (kmsg.Response, error, bool) {
		kf.KeepControl()
		req := kreq.(*kmsg.ProduceRequest)
		resp := req.ResponseKind().(*kmsg.ProduceResponse)
		for _, rt := range req.Topics {
			st := kmsg.NewProduceResponseTopic()
			st.Topic, st.TopicID = rt.Topic, rt.TopicID
			for _, rp := range rt.Partitions {
				sp := kmsg.NewProduceResponseTopicPartition()
				sp.Partition = rp.Partition
				sp.ErrorCode = kerr.InvalidTimestamp.Code
				st.Partitions = append(st.Partitions, sp)
			}
			resp.Topics = append(resp.Topics, st)
		}
		return resp, nil, true
	})
	c := configs.Sink{Type: "kafka", Name: "mirror", Topics: []string{"events"}, Brokers: kf.ListenAddrs(),
		TopicPrefix: "weir.", Timeout: configs.Duration(5 * time.Second)}
	d, err := kafka.New(c, sinks.Env{})
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	old := time.Now().Add(-30 * 24 * time.Hour)
	err = d.Write(context.Background(), []sinks.Item{{Record: broker.Record{Topic: "events", Key: []byte("r1"), Value: []byte(`{"v":1}`), Timestamp: old}}})
	var rej *sinks.RejectedError
	if !errors.As(err, &rej) {
		t.Fatalf("a record the cluster refuses for its timestamp: %v (%T), want it rejected (dead-lettered)", err, err)
	}
	t.Logf("rejected: %v", err)
}
