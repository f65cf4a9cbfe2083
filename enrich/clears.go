package enrich

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/weirnet/weir/broker"
	"github.com/weirnet/weir/internal/logwindow"
	"github.com/weirnet/weir/internal/throttle"
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
	cutoff := rebuilt[0].since
	for _, r := range rebuilt {
		cutoff = minTime(cutoff, r.since)
	}
	if w.clears == nil || cutoff.Before(w.clears.from) {
		w.clears = newClearsScan(w.b, cutoff)
		w.clears.max, w.clears.logger = w.maxClears, w.logger
		w.clears.untracked = w.m.untrackedKind.WithLabelValues("clears")
		if w.clears.max <= 0 {
			w.clears.max = maxDetectorObjects
		}
	}
	out := make([]telemetry.Event, 0, len(rebuilt))
	if err := w.clears.update(ctx, w.topics.Events); err != nil {
		w.clears = nil
		if ctx.Err() == nil {
			w.logger.Warn("enrich: cannot read the events topic for cleared events published before; sending them (they may repeat)",
				slog.String("topic", w.topics.Events), slog.Any("error", err))
		}
		for _, r := range rebuilt {
			out = append(out, r.ev)
		}
		return out
	}
	// A device renamed since (while weir was stopped, or before this
	// warm-up) was cleared under its old name: the warm-up rebuilt its
	// flapping under the new one.
	w.det.mu.Lock()
	oldNames := map[string][]string{}
	for from, to := range w.det.newNames() {
		oldNames[to] = append(oldNames[to], from)
	}
	w.det.mu.Unlock()
	for _, r := range rebuilt {
		fam, _ := strings.CutSuffix(r.ev.Type, "_flapping_cleared")
		if l, ok := w.clears.lastOf(r.ev.Device, r.ev.ObjectID, fam, oldNames[r.ev.Device]); ok && l.cleared && !l.at.Before(r.since) {
			continue // cleared already, and not flapping again since
		}
		out = append(out, r.ev)
	}
	return out
}

// lastOf is the last flapping or cleared event of device's object id of
// family fam, under device's name or one of its old names: the later of
// those.
func (s *clearsScan) lastOf(device, id, fam string, old []string) (flapMark, bool) {
	l, ok := s.last[objectKey{device, id, fam}]
	for _, from := range old {
		if o, found := s.last[objectKey{from, id, fam}]; found && (!ok || o.at.After(l.at)) {
			l, ok = o, true
		}
	}
	return l, ok
}

// clearsScan is what the events topic says of flapping objects: each
// one's last flapping or cleared event. It is read once, and then only
// from where it got to: a restart's rebuilt flapping objects settle over
// many seconds, and reading the topic again at each from when the first
// began flapping took a second a settle per two million events.
type clearsScan struct {
	b    broker.Broker
	from time.Time       // records before it are not read
	id   [16]byte        // the topic's, at the last read
	next map[int32]int64 // each partition's offset read up to
	last map[objectKey]flapMark
	read int // records read, for the tests
	// max bounds last: the events topic is any Kafka client's to write
	// to, and a flood of flapping events of invented objects would grow
	// it without bound. Past it, a new object's records are counted in
	// untracked (logged at most every untrackedLog's period) and not kept;
	// its cleared event, if rebuilt, goes out again.
	max          int
	untracked    prometheus.Counter // nil: not counted
	logger       *slog.Logger       // nil: not logged
	untrackedLog throttle.Throttle
}

// flapMark is an object's last flapping or cleared event: when its record
// was written, and which of the two it is.
type flapMark struct {
	at      time.Time
	cleared bool
}

func newClearsScan(b broker.Broker, from time.Time) *clearsScan {
	return &clearsScan{b: b, from: from, next: map[int32]int64{}, last: map[objectKey]flapMark{}}
}

// update reads what topic has that s has not read yet. Its reader is its
// own: the first read's fetch buffer (8 MiB) is not kept for the later
// ones, which read little.
func (s *clearsScan) update(ctx context.Context, topic string) error {
	reader := logwindow.Reader{B: s.b}
	infos, err := s.b.DescribeTopics(ctx, topic)
	if err != nil {
		return fmt.Errorf("describe %s: %w", topic, err)
	}
	if len(infos) != 1 {
		return fmt.Errorf("describe %s: %d topics described", topic, len(infos))
	}
	if infos[0].ID != s.id {
		// The topic was made again (or this is the first read): its
		// offsets below where the old one was read are new records.
		clear(s.next)
		s.id = infos[0].ID
	}
	var dec telemetry.Decoder
	var ev telemetry.Event
	feed := func(r *broker.Record) {
		s.read++
		if !bytes.Contains(r.Value, flappingMark) {
			return
		}
		if dec.DecodeEvent(r.Value, &ev) != nil {
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
		k := objectKey{ev.Device, ev.ObjectID, fam}
		l, ok := s.last[k]
		switch {
		case !ok && s.max > 0 && len(s.last) >= s.max:
			s.untrack(k)
		case !ok || !r.Timestamp.Before(l.at):
			s.last[k] = flapMark{r.Timestamp, cleared}
		}
	}
	for _, p := range infos[0].Partitions {
		from, ok := s.next[p.Partition]
		if !ok || from > p.HighWatermark {
			// First read of the partition (or its log is shorter than
			// where the last read got: truncated).
			if from, err = reader.WindowStart(ctx, topic, p.Partition, p.HighWatermark, s.from); err != nil {
				return err
			}
		}
		next, _, err := reader.ReadFrom(ctx, topic, p.Partition, from, p.HighWatermark, s.from, feed, nil)
		if err != nil {
			return err
		}
		s.next[p.Partition] = next
	}
	return nil
}

// untrack counts a flapping or cleared event of an object past max, not
// kept, and logs it at most once per throttle.Every.
func (s *clearsScan) untrack(k objectKey) {
	if s.untracked != nil {
		s.untracked.Inc()
	}
	if n, ok := s.untrackedLog.Due(time.Now()); ok && s.logger != nil {
		s.logger.Warn("enrich: too many flapping objects in the events topic to check for cleared events published before; theirs may repeat",
			slog.String("device", k.device), slog.Int("max", s.max), slog.Int("times", n))
	}
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
