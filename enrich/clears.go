package enrich

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"strings"
	"time"

	"github.com/weirnet/weir/broker"
	"github.com/weirnet/weir/internal/logwindow"
	"github.com/weirnet/weir/telemetry"
)

// unpublishedClears returns, of the cleared events of objects whose
// flapping a warm-up rebuilt, those the events topic does not have yet.
// The warm-up reads the inputs up to their last record, which still shows
// the object flapping when it settled after it: the process before a
// restart (or a crash), or the partition's previous owner, may have
// published the cleared event since, and it would go out at every restart.
// An object whose last flapping or cleared event in the topic, since its
// flapping began, is a cleared one is left out. When the topic cannot be
// read, all go out: a repeat rather than a cleared event lost.
func (w *Worker) unpublishedClears(ctx context.Context, rebuilt []rebuiltClear) []telemetry.Event {
	type last struct {
		at      time.Time
		cleared bool
	}
	want := make(map[objectKey]*last, len(rebuilt))
	cutoff := rebuilt[0].since
	for _, r := range rebuilt {
		fam, _ := strings.CutSuffix(r.ev.Type, "_flapping_cleared")
		want[objectKey{r.ev.Device, r.ev.ObjectID, fam}] = &last{}
		cutoff = minTime(cutoff, r.since)
	}
	infos, err := w.b.DescribeTopics(ctx, w.topics.Events)
	if err == nil && len(infos) != 1 {
		err = fmt.Errorf("%d topics described", len(infos))
	}
	var ev telemetry.Event
	reader := logwindow.Reader{B: w.b}
	for i := 0; err == nil && i < len(infos[0].Partitions); i++ {
		p := infos[0].Partitions[i]
		_, err = reader.Read(ctx, w.topics.Events, p.Partition, p.HighWatermark, cutoff, func(r *broker.Record) {
			if !bytes.Contains(r.Value, flappingMark) {
				return
			}
			ev = telemetry.Event{}
			if json.Unmarshal(r.Value, &ev) != nil {
				return
			}
			fam, cleared := strings.CutSuffix(ev.Type, "_flapping_cleared")
			if !cleared {
				if fam, _ = strings.CutSuffix(ev.Type, "_flapping"); fam == ev.Type {
					return
				}
			}
			// By when the record was written, not the event's time: a
			// flapping event has the device's clock, which may be hours
			// off, its cleared event weir's.
			if l := want[objectKey{ev.Device, ev.ObjectID, fam}]; l != nil && !r.Timestamp.Before(l.at) {
				l.at, l.cleared = r.Timestamp, cleared
			}
		}, nil)
	}
	out := make([]telemetry.Event, 0, len(rebuilt))
	if err != nil {
		if ctx.Err() == nil {
			w.logger.Warn("enrich: cannot read the events topic for cleared events published before; sending them (they may repeat)",
				slog.String("topic", w.topics.Events), slog.Any("error", err))
		}
		for _, r := range rebuilt {
			out = append(out, r.ev)
		}
		return out
	}
	for _, r := range rebuilt {
		fam, _ := strings.CutSuffix(r.ev.Type, "_flapping_cleared")
		if l := want[objectKey{r.ev.Device, r.ev.ObjectID, fam}]; l.cleared && !l.at.Before(r.since) {
			continue // cleared already, and not flapping again since
		}
		out = append(out, r.ev)
	}
	return out
}

// flappingMark is in every flapping and cleared event's JSON: other events
// are not decoded.
var flappingMark = []byte(`_flapping`)

func minTime(a, b time.Time) time.Time {
	if b.Before(a) {
		return b
	}
	return a
}
