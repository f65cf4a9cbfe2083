package kafka_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
	"github.com/twmb/franz-go/pkg/sasl/plain"

	"github.com/weirnet/weir/broker"
	"github.com/weirnet/weir/configs"
	"github.com/weirnet/weir/sinks"
	"github.com/weirnet/weir/sinks/kafka"
)

// A user the cluster lets connect and describe the topic but not produce: the idempotent
// producer's first request, InitProducerID, is refused with
// CLUSTER_AUTHORIZATION_FAILED, which alone does not say which permission
// is missing (the user may well have WRITE on the mirror topic on an older
// Kafka). The error says what the producer needs.
func TestProducerNotAuthorizedSaysWhatIsNeeded(t *testing.T) {
	kf, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.EnableSASL(), kfake.EnableACLs(),
		kfake.Superuser("PLAIN", "admin", "admin"), kfake.User("PLAIN", "weir", "pw", kfake.ACL{Resource: kmsg.ACLResourceTypeTopic, Name: "*",
			Pattern: kmsg.ACLResourcePatternTypeLiteral, Operation: kmsg.ACLOperationDescribe, Allow: true}))
	if err != nil {
		t.Fatal(err)
	}
	defer kf.Close()
	adm, err := kgo.NewClient(kgo.SeedBrokers(kf.ListenAddrs()...), kgo.SASL(plain.Auth{User: "admin", Pass: "admin"}.AsMechanism()))
	if err != nil {
		t.Fatal(err)
	}
	defer adm.Close()
	if _, err := kadm.NewClient(adm).CreateTopic(context.Background(), 1, 1, nil, "netops.events"); err != nil {
		t.Fatal(err)
	}
	c := configs.Sink{Type: "kafka", Name: "mirror", Topics: []string{"events"}, Brokers: kf.ListenAddrs(),
		TopicPrefix: "netops.", Timeout: configs.Duration(20 * time.Second),
		SASL: configs.SASL{Mechanism: "PLAIN", Username: "weir", Password: "pw"}}
	d, err := kafka.New(c, sinks.Env{})
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	items := []sinks.Item{{Record: broker.Record{Topic: "events", Key: []byte("r1"), Value: []byte(`{"v":1}`), Timestamp: time.Now()}}}
	err = d.Write(context.Background(), items)
	var re *sinks.RetryableError
	if !errors.As(err, &re) {
		t.Fatalf("write refused by the cluster's ACLs: %v (%T), want a retryable error", err, err)
	}
	if !strings.Contains(err.Error(), "CLUSTER_AUTHORIZATION_FAILED") || !strings.Contains(err.Error(), "IDEMPOTENT_WRITE") {
		t.Fatalf("write refused by the cluster's ACLs: %q, want CLUSTER_AUTHORIZATION_FAILED saying the producer needs IDEMPOTENT_WRITE", err)
	}
}
