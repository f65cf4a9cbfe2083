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
	infos, err := b.DescribeTopics(ctx, input, events)
	if err != nil {
		return fmt.Errorf("describe %s and %s: %w", input, events, err)
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
	type published struct {
		ev telemetry.Event
		at time.Time // its record's append time
	}
	last := map[objectKey]published{}
	feed := func(r *broker.Record) {
		if !bytes.Contains(r.Value, []byte(`_up"`)) && !bytes.Contains(r.Value, []byte(`_down"`)) && !bytes.Contains(r.Value, []byte(`reachable"`)) {
			return // most events: no state
		}
		var ev telemetry.Event
		if json.Unmarshal(r.Value, &ev) != nil || objectless(ev) {
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
	for k, p := range last {
		pub := p.ev
		st := d.states[k]
		if st == nil || !st.rebuilt || st.typ == pub.Type {
			continue
		}
		// At the event's time (a poll's), not its record's: a record
		// appended after it, a live report to come, is newer. But not
		// after its record: a syslog event's time is the device's, which
		// may be hours ahead (the detector times states by the log,
		// detectAt), and its record was appended after the one that
		// caused it.
		eventAt := pub.Time
		if !p.at.IsZero() && eventAt.After(p.at) {
			eventAt = p.at
		}
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
