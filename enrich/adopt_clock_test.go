package enrich

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/weirnet/weir/broker"
	"github.com/weirnet/weir/telemetry"
)

// TestAdoptedStateNotTimedByADeviceClock: the warm-up rebuilt Gi0/3 of
// core9 up from a poll; the events topic's last event of it is the
// interface_down a syslog line raised after, whose time is the device's,
// two hours ahead (local time east of UTC, read as UTC). The rebuilt
// state takes the down, at the time its record was appended at the
// latest, not the device's: the detector's clock is the log's (detectAt).
// A poll 40 s after the line that finds the link up is then a change.
// (Before, the adopted state was timed two hours ahead, and every report
// of the link until then was taken for one of the past and left out.)
func TestAdoptedStateNotTimedByADeviceClock(t *testing.T) {
	b, _ := openLog(t)
	ctx := context.Background()
	for _, topic := range []string{telemetry.TopicRawSyslog, telemetry.TopicEvents} {
		if err := b.CreateTopic(ctx, topic, broker.TopicConfig{Partitions: 1}); err != nil {
			t.Fatal(err)
		}
	}
	t0 := time.Now().Add(-2 * time.Minute).Truncate(time.Millisecond)
	d := newDetector(linkRestartDedup, DefaultFlapThreshold, DefaultFlapWindow)
	up := telemetry.Event{V: telemetry.Version, Type: "interface_up", Device: "core9", Object: "Gi0/3", Time: t0}
	d.remember(&broker.Record{Topic: telemetry.TopicRawSNMP, Offset: 0, Timestamp: t0}, []telemetry.Event{up}, t0.Add(-time.Minute))

	line := t0.Add(5 * time.Second)
	down := telemetry.Event{V: telemetry.Version, Type: "interface_down", Device: "core9", Object: "GigabitEthernet0/3",
		Time: line.Add(2 * time.Hour), Cause: telemetry.Cause{Topic: telemetry.TopicRawSyslog, Offset: 0}}
	v, err := json.Marshal(&down)
	if err != nil {
		t.Fatal(err)
	}
	if err := b.Produce(ctx, telemetry.TopicEvents, []broker.Record{{Key: []byte("core9"), Value: v, Timestamp: line}}); err != nil {
		t.Fatal(err)
	}
	if err := d.adoptPublished(ctx, b, telemetry.TopicRawSyslog, telemetry.TopicEvents, 0, t0.Add(-time.Minute)); err != nil {
		t.Fatal(err)
	}

	at := line.Add(40 * time.Second)
	poll := telemetry.Event{Type: "interface_up", Device: "core9", Object: "Gi0/3", Time: at,
		Cause: telemetry.Cause{Topic: telemetry.TopicRawSNMP, Offset: 1}}
	if evs := d.observe(poll, at); len(evs) != 1 || evs[0].Type != "interface_up" {
		t.Fatalf("the poll that finds the link up 40 s after the line: %+v, want its interface_up", evs)
	}
}
