package enrich

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/weirnet/weir/broker"
	"github.com/weirnet/weir/internal/logwindow"
	"github.com/weirnet/weir/telemetry"
)

// adoptPublished makes the state a warm-up of input partition partition
// rebuilt of each object the one the events topic last published of it,
// read from since on. The events of a record read before the live
// position were published when that record was enriched, so the last of
// an object's is the state the process before left it in. The warm-up
// cannot always tell: a row's first poll that found a link up after a
// syslog line said it went down published interface_up, which the
// warm-up, judging a first sample no change, did not rebuild; a new down
// line after the restart was then the state the object was in, and left
// out. The events of input partition P's records are in the events
// topic's partition P when both topics have as many partitions (keyed
// alike, see enrich/README.md, Keys), else in any: then every partition
// is read.
func (d *detector) adoptPublished(ctx context.Context, b broker.Broker, input, events string, partition int32, since time.Time) error {
	parts, err := eventsPartitionsOf(ctx, b, input, events, partition)
	if err != nil {
		return err
	}
	type published struct {
		ev telemetry.Event
		at time.Time // its record's append time
	}
	last := map[objectKey]published{}
	var dec telemetry.Decoder
	var ev telemetry.Event
	feed := func(r *broker.Record) {
		if !bytes.Contains(r.Value, []byte(`_up"`)) && !bytes.Contains(r.Value, []byte(`_down"`)) && !bytes.Contains(r.Value, []byte(`reachable"`)) {
			return // most events: no state
		}
		if dec.DecodeEvent(r.Value, &ev) != nil || objectless(ev) {
			return
		}
		opp := opposite(ev.Type)
		if opp == "" {
			return
		}
		last[objectKey{ev.Device, objectID(ev), min(ev.Type, opp)}] = published{ev, r.Timestamp}
	}
	reader := logwindow.Reader{B: b}
	for _, p := range parts {
		if _, err := reader.Read(ctx, events, p.Partition, p.HighWatermark, since, feed, nil); err != nil {
			return fmt.Errorf("read %s/%d: %w", events, p.Partition, err)
		}
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	if newNames := d.newNames(); len(newNames) > 0 {
		// Published under a name the inventory has given up since
		// (renamed while weir was stopped, or before this warm-up):
		// the renamed device's, whose states the warm-up rebuilt under
		// its new name. The later of two under both names counts.
		byNew := make(map[objectKey]published, len(last))
		for k, p := range last {
			if to, ok := newNames[k.device]; ok {
				k.device = to
			}
			if q, ok := byNew[k]; !ok || p.at.After(q.at) {
				byNew[k] = p
			}
		}
		last = byNew
	}
	// At the event's time (a poll's), not its record's: a record
	// appended after it, a live report to come, is newer. But not after
	// its record: a syslog event's time is the device's, which may be
	// hours ahead (the detector times states by the log, detectAt), and
	// its record was appended after the one that caused it.
	timeOf := func(p published) time.Time {
		if !p.at.IsZero() && p.ev.Time.After(p.at) {
			return p.at
		}
		return p.ev.Time
	}
	for k, p := range last {
		other, ok := d.ospfSpelt[k]
		if !ok {
			continue
		}
		// An OSPF neighbor a warm-up's trap named both ways (see
		// noteOSPFSpellings) takes the spelling published: a state
		// rebuilt under the other one, under which nothing was
		// published, is that trap spelt otherwise, and goes; the
		// published one is made if missing (a trap held back for its
		// names then takes it too: ospfTrapNeighbor keeps a down's
		// spelling). Else the trap up after the restart ended the
		// down rebuilt, never published, and not the one published.
		k2 := objectKey{k.device, other, k.family}
		if st := d.states[k2]; st != nil && st.rebuilt {
			if _, ok := last[k2]; !ok {
				d.forgetState(k2.device, k2.object, "ospf_neighbor_up", "ospf_neighbor_down", st.at)
			}
		}
		if d.states[k] == nil && d.tracked(k.device, k.object, p.ev.Type) {
			st := &objectState{rebuilt: true}
			d.begin(st, p.ev.Type, timeOf(p), causePartition(p.ev.Cause), false)
			d.states[k] = st
		}
	}
	for k, p := range last {
		pub := p.ev
		st := d.states[k]
		if st == nil || !st.rebuilt || st.typ == pub.Type {
			continue
		}
		eventAt := timeOf(p)
		at := st.at
		if eventAt.After(at) {
			at = eventAt
		}
		d.begin(st, pub.Type, at, causePartition(pub.Cause), false)
		st.rebuilt = false
	}
	return nil
}

// adopter is adoptPublished for a worker's warmer, logging a failure: the
// rebuilt states then stay as they are.
func (d *detector) adopter(b broker.Broker, events string, logger *slog.Logger) func(context.Context, string, int32, time.Time) {
	return func(ctx context.Context, input string, partition int32, since time.Time) {
		if err := d.adoptPublished(ctx, b, input, events, partition, since); err != nil && ctx.Err() == nil {
			logger.Warn("enrich: warm-up could not read back the states published before; a change the process before published from a first poll may be left out once",
				slog.String("topic", events), slog.Int("partition", int(partition)), slog.Any("error", err))
		}
	}
}

// adoptUncommitted remembers the events of the records of input partition
// partition from offset from up to past that the events topic's partition
// partition (aligned with the input) holds from offset at on: a process
// before enriched those records, published their events and stopped
// before its commit. What another path reports of those changes is their
// repeat, as it would have been in that process; judged without them, a
// line repeating a trap whose event is there would be published too. The
// records themselves are judged again as live records (outputs skips the
// outputs that are there, see outputs.exact): one whose change was left
// out as another partition's repeat may have lost it. since is the
// warm-up's window start (see remember). It returns how many events it
// remembered.
func (d *detector) adoptUncommitted(ctx context.Context, b broker.Broker, input, events string, partition int32, from, past, at int64, since time.Time) (int, error) {
	reader := logwindow.Reader{B: b}
	byCause := map[int64][]telemetry.Event{}
	named := []byte(input) // in its events' causes
	var dec telemetry.Decoder
	var ev telemetry.Event
	pi, err := logwindow.Partition(ctx, b, events, partition)
	if err != nil {
		return 0, err
	}
	if _, _, err := reader.ReadFrom(ctx, events, partition, at, pi.HighWatermark, time.Time{}, func(r *broker.Record) {
		if !bytes.Contains(r.Value, named) {
			return
		}
		if dec.DecodeEvent(r.Value, &ev) != nil || ev.Cause.Topic != input || ev.Cause.Partition != partition ||
			ev.Cause.Offset < from || ev.Cause.Offset >= past || !isChange(ev.Type) {
			return
		}
		byCause[ev.Cause.Offset] = append(byCause[ev.Cause.Offset], ev)
	}, nil); err != nil {
		return 0, fmt.Errorf("read %s/%d: %w", events, partition, err)
	}
	if len(byCause) == 0 {
		return 0, nil
	}
	// Each at its record's time, as detectAt times it.
	times := make(map[int64]time.Time, len(byCause))
	if _, _, err := reader.ReadFrom(ctx, input, partition, from, past, time.Time{}, func(r *broker.Record) {
		if _, ok := byCause[r.Offset]; ok {
			times[r.Offset] = r.Timestamp
		}
	}, nil); err != nil {
		return 0, fmt.Errorf("read %s/%d: %w", input, partition, err)
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	tp := broker.TopicPartition{Topic: input, Partition: partition}
	d.holdForWarmup(tp, since)
	// The records are judged again (see above), from the first: in the
	// instant of an object's state, the partition's reports follow one
	// another (see sameState), and each judged again would be taken for
	// a change after the ones remembered here. So where the partition
	// was in each instant before them is kept, and it is put back there.
	before := map[objectKey]instantRewind{}
	n := 0
	for _, off := range slices.Sorted(maps.Keys(byCause)) {
		for _, ev := range byCause[off] {
			r := broker.Record{Timestamp: times[off]}
			at := detectAt(&r, ev.Time)
			if opp := opposite(ev.Type); opp != "" && !objectless(ev) {
				k := objectKey{ev.Device, objectID(ev), min(ev.Type, opp)}
				if b, ok := before[k]; !ok || !b.at.Equal(at) {
					b = instantRewind{at: at}
					if st := d.states[k]; st != nil && st.at.Equal(at) {
						if p := st.pathOf(tp); p != nil {
							b.pos, b.had = p.pos, true
						}
					}
					before[k] = b
				}
			}
			d.rememberOne(ev, adjacency{}, at, since)
			n++
		}
	}
	for k, b := range before {
		// An instant the state has moved on from is of the past: its
		// reports judged again are no change.
		if st := d.states[k]; st != nil && st.at.Equal(b.at) {
			st.rewind(tp, b)
		}
	}
	return n, nil
}

// instantRewind is where an input partition was in the instant at of an
// object's state (see objectState): at pos if had, else not in it.
type instantRewind struct {
	at  time.Time
	pos int32
	had bool
}

// rewind puts partition from back where b says it was in st's instant.
func (st *objectState) rewind(from broker.TopicPartition, b instantRewind) {
	if b.had {
		if p := st.pathOf(from); p != nil {
			p.pos = b.pos
		}
		return
	}
	switch {
	case st.path.from == from && len(st.more) > 0:
		st.path, st.more = st.more[0], st.more[1:]
	case st.path.from == from:
		st.path = instantPath{}
	default:
		st.more = slices.DeleteFunc(st.more, func(p instantPath) bool { return p.from == from })
	}
}

// isChange reports whether an event of type typ is a change a record
// reported (not a flapping or rename the detector raised of changes).
func isChange(typ string) bool {
	return !strings.HasSuffix(typ, "_flapping") && typ != telemetry.TypeDeviceRenamed
}

// eventsPartitionsOf returns the partitions of events that hold the events
// of input partition partition: the same one when both topics have as many
// partitions (keyed alike, see enrich/README.md, Keys), else all.
func eventsPartitionsOf(ctx context.Context, b broker.Broker, input, events string, partition int32) ([]broker.PartitionInfo, error) {
	infos, err := b.DescribeTopics(ctx, input, events)
	if err != nil {
		return nil, fmt.Errorf("describe %s and %s: %w", input, events, err)
	}
	var inputParts, parts []broker.PartitionInfo
	for _, t := range infos {
		switch t.Name {
		case input:
			inputParts = t.Partitions
		case events:
			parts = t.Partitions
		}
	}
	if len(parts) == len(inputParts) && int(partition) < len(parts) && parts[partition].Partition == partition {
		parts = parts[partition : partition+1]
	}
	return parts, nil
}

// uncommittedAdopter is adoptUncommitted for a worker's warmer, of the
// range out finds published, logging a failure: the changes of those
// records then count only as they are judged again. It reports whether it
// remembered any event.
func (d *detector) uncommittedAdopter(b broker.Broker, out *outputs, events string, logger *slog.Logger) func(context.Context, string, int32, int64, time.Time) bool {
	return func(ctx context.Context, input string, partition int32, from int64, since time.Time) bool {
		past, at := out.publishedPast(ctx, events, partition, from)
		if past <= from {
			return false
		}
		n, err := d.adoptUncommitted(ctx, b, input, events, partition, from, past, at, since)
		if err != nil && ctx.Err() == nil {
			logger.Warn("enrich: warm-up could not read back the events published of records not committed; another path's report of their changes may be published again",
				slog.String("topic", input), slog.Int("partition", int(partition)), slog.Any("error", err))
		}
		return n > 0
	}
}
