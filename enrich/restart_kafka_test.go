package enrich

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/weirnet/weir/broker"
	"github.com/weirnet/weir/telemetry"
)

// TestRestartOnKafka is TestRestartThenSyslogRepeatOfPolledDown on a Kafka
// cluster (kfake), where the warm gate meets what the embedded log does
// not have: a worker's partitions come only after the group's first
// rebalance, and the restarted process's workers join a group its
// stopped ones have just left. A poll saw Gi0/3 go down; after the
// restart, the device's syslog line for that same down is a repeat: one
// interface_down in all.
func TestRestartOnKafka(t *testing.T) {
	if testing.Short() {
		t.Skip("group rebalances on kfake in -short mode")
	}
	seeds, b := kafkaCluster(t, 1)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	for _, topic := range []string{telemetry.TopicRawSNMP, telemetry.TopicRawSyslog} {
		if err := b.CreateTopic(ctx, topic, broker.TopicConfig{Partitions: 3}); err != nil {
			t.Fatal(err)
		}
	}
	admin := kadm.NewClient(mustClient(t, kgo.SeedBrokers(seeds...)))
	waitGroupCommitted := func(topic string, n int) {
		t.Helper()
		for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(50 * time.Millisecond) {
			got := 0
			if offs, err := admin.FetchOffsets(ctx, Group); err == nil {
				offs.Each(func(o kadm.OffsetResponse) {
					if o.Topic == topic && o.Err == nil && o.At > 0 {
						got += int(o.At)
					}
				})
			}
			if got == n {
				return
			}
			if time.Now().After(deadline) {
				t.Fatalf("%d of %d records of %s committed by the group", got, n, topic)
			}
		}
	}

	inv, _ := ParseInventory([]byte(testInventory))
	targets := []SNMPTarget{{Name: "core9", Host: "192.0.2.9"}}
	rows := interfaceDownRows("core9", "192.0.2.9", time.Now().Add(-time.Minute))
	produceMetrics(t, b, rows)
	session := WithSessionTimeout(kafkaSession)

	// The first process: the polls raise interface_down.
	stop := startRunner(NewMetricsWorker(b, inv, session,
		WithSharedEventRules(NewEventRules(time.Minute, DefaultFlapThreshold, DefaultFlapWindow)),
		WithSNMPTargets(NewSNMPTargets(targets))))
	waitGroupCommitted(telemetry.TopicRawSNMP, len(rows))
	stop()

	// The restart: the metrics and syslog workers, held until both are
	// warm; the syslog line comes before the next poll.
	opts := []WorkerOption{session, WithSharedEventRules(restartRules(2, time.Minute, DefaultFlapThreshold, DefaultFlapWindow)),
		WithSNMPTargets(NewSNMPTargets(targets))}
	defer startRunner(NewMetricsWorker(b, inv, opts...))()
	defer startRunner(NewWorker(b, inv, NewClassifier(), opts...))()
	produceLine(t, b, "%LINK-3-UPDOWN: Interface GigabitEthernet0/3, changed state to down")
	waitGroupCommitted(telemetry.TopicRawSyslog, 1)

	var downs []string
	for _, v := range readCommitted(t, ctx, b, seeds, telemetry.TopicEvents, eventPartitions(t, ctx, admin)) {
		var ev telemetry.Event
		if err := json.Unmarshal(v, &ev); err != nil {
			t.Fatal(err)
		}
		if ev.Type == "interface_down" {
			downs = append(downs, ev.Device+" "+ev.Object+" from "+ev.Cause.Topic)
		}
	}
	if len(downs) != 1 {
		t.Errorf("one link down, %d interface_down events:\n%s", len(downs), strings.Join(downs, "\n"))
	}
}

// eventPartitions is how many partitions the events topic was made with.
func eventPartitions(t *testing.T, ctx context.Context, admin *kadm.Client) int32 {
	t.Helper()
	d, err := admin.ListTopics(ctx, telemetry.TopicEvents)
	if err != nil || d[telemetry.TopicEvents].Err != nil {
		t.Fatalf("events topic: %v %v", err, d[telemetry.TopicEvents].Err)
	}
	return int32(len(d[telemetry.TopicEvents].Partitions))
}
