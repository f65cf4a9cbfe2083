package enrich

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"time"

	"github.com/weirnet/weir/broker"
	"github.com/weirnet/weir/internal/logwindow"
	"github.com/weirnet/weir/telemetry"
)

// dropPublished takes out of firstSeen the changes answering a report a
// warm-up rebuilt that the events topic shows published already (see
// publishedAnswer), and remembers those as a warm-up remembers what was
// published: the object's state is then theirs. When the topic cannot be
// read, the change goes out: a repeat rather than a change lost.
func (w *MetricsWorker) dropPublished(ctx context.Context) {
	kept := w.firstSeen[:0]
	for _, ev := range w.firstSeen {
		if since, ok := w.det.rebuiltReport(ev); ok {
			pub, published, err := publishedAnswer(ctx, w.b, w.topics.Events, ev, since)
			if err != nil && ctx.Err() == nil {
				w.logger.Warn("enrich: cannot read the events topic for a change published before; sending it (it may repeat)",
					slog.String("topic", w.topics.Events), slog.String("device", ev.Device), slog.String("object", ev.Object),
					slog.String("type", ev.Type), slog.Any("error", err))
			}
			if published {
				w.det.rememberLate(pub, pub.Time, time.Time{})
				continue
			}
		}
		kept = append(kept, ev)
	}
	w.firstSeen = kept
}

// publishedAnswer looks in topic, the events topic, for ev, a poll's
// change answering the other state's report of its object at since, which
// a warm-up rebuilt. The warm-up cannot tell whether its first sample of
// a row was the row's first poll, which would have published ev (see
// detector.firstMayChange), and judges no contradiction: the log's inputs
// do not say, what was published does. It returns the published event
// if the object's last state event written since the report is of ev's
// type.
func publishedAnswer(ctx context.Context, b broker.Broker, topic string, ev telemetry.Event, since time.Time) (telemetry.Event, bool, error) {
	infos, err := b.DescribeTopics(ctx, topic)
	if err != nil {
		return telemetry.Event{}, false, fmt.Errorf("describe %s: %w", topic, err)
	}
	if len(infos) != 1 {
		return telemetry.Event{}, false, fmt.Errorf("describe %s: %d topics described", topic, len(infos))
	}
	id, opp := objectID(ev), opposite(ev.Type)
	typMark, oppMark := []byte(`"`+ev.Type+`"`), []byte(`"`+opp+`"`)
	var last telemetry.Event
	var lastAt time.Time
	found := false
	feed := func(r *broker.Record) {
		if !bytes.Contains(r.Value, typMark) && !bytes.Contains(r.Value, oppMark) {
			return
		}
		var pub telemetry.Event
		if json.Unmarshal(r.Value, &pub) != nil || pub.Device != ev.Device || (pub.Type != ev.Type && pub.Type != opp) {
			return
		}
		if pub.ObjectID != id && objectID(pub) != id {
			return
		}
		// By when the record was written: the paths' events carry
		// their devices' clocks.
		if !found || !r.Timestamp.Before(lastAt) {
			last, lastAt, found = pub, r.Timestamp, true
		}
	}
	reader := logwindow.Reader{B: b}
	for _, p := range infos[0].Partitions {
		if _, err := reader.Read(ctx, topic, p.Partition, p.HighWatermark, since, feed, nil); err != nil {
			return telemetry.Event{}, false, fmt.Errorf("read %s/%d: %w", topic, p.Partition, err)
		}
	}
	return last, found && last.Type == ev.Type, nil
}
