package enrich

import (
	"context"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/weirnet/weir/broker"
	"github.com/weirnet/weir/internal/syncbuf"
	"github.com/weirnet/weir/telemetry"
)

// TestStartWarmsEachPartitionOnce: the workers of a process start one
// after the other; the first one to join the group was given every
// partition, warmed them all up and read on, and then gave half of them to
// the next one to join, which warmed those up again and enriched again
// what the first had not committed. Every worker now waits for the others
// to join before its first poll: each partition is warmed up once, by the
// worker that keeps it.
func TestStartWarmsEachPartitionOnce(t *testing.T) {
	b, inv := openLog(t)
	if err := b.CreateTopic(context.Background(), telemetry.TopicRawSyslog, broker.TopicConfig{Partitions: 2}); err != nil {
		t.Fatal(err)
	}
	produce := func() {
		for p := range int32(2) {
			l := telemetry.Log{V: 1, Device: "192.0.2.9", SourceAddr: "192.0.2.9:514", Facility: 23, Severity: 3,
				Message: "%LINK-3-UPDOWN: Interface GigabitEthernet0/1, changed state to down", ReceivedAt: time.Now()}
			if err := b.ProducePartition(context.Background(), telemetry.TopicRawSyslog, p, []broker.Record{{Key: []byte(l.Device), Value: l.AppendJSON(nil)}}); err != nil {
				t.Fatal(err)
			}
		}
	}
	produce()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- NewWorker(b, inv, NewClassifier()).Run(ctx) }()
	waitCommitted(t, b, telemetry.TopicRawSyslog, 2)
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	produce()

	var logs syncbuf.Buffer
	logger := slog.New(slog.NewTextHandler(&logs, nil))
	rules := NewEventRules(DefaultDedupWindow, DefaultFlapThreshold, DefaultFlapWindow)
	rules.HoldUntilWarm(2)
	ctx, cancel = context.WithCancel(context.Background())
	defer cancel()
	start := func(id string) chan error {
		done := make(chan error, 1)
		w := NewWorker(b, inv, NewClassifier(), WithSharedEventRules(rules), WithMemberID(id), WithWorkerLogger(logger))
		go func() { done <- w.Run(ctx) }()
		return done
	}
	first := start("enrich-0")
	waitUntil(t, "the first worker in the group", func() bool {
		for _, g := range b.Groups() {
			if g.Name == Group && len(g.Members) == 1 {
				return true
			}
		}
		return false
	})
	second := start("enrich-1")
	waitCommitted(t, b, telemetry.TopicRawSyslog, 4)
	cancel()
	for _, d := range []chan error{first, second} {
		if err := <-d; err != nil {
			t.Fatal(err)
		}
	}
	warmed := map[string]int{}
	for _, line := range strings.Split(logs.String(), "\n") {
		if strings.Contains(line, "enrich: warmed up") {
			i := strings.Index(line, "partition=")
			warmed[strings.Fields(line[i:])[0]]++
		}
	}
	if warmed["partition=0"] != 1 || warmed["partition=1"] != 1 {
		t.Errorf("warm-ups per partition: %v, want one each\n%s", warmed, logs.String())
	}
}
