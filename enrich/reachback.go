package enrich

import (
	"bytes"
	"context"
	"log/slog"
	"slices"
	"time"

	"github.com/weirnet/weir/broker"
	"github.com/weirnet/weir/internal/logwindow"
	"github.com/weirnet/weir/telemetry"
)

// maxReachBack bounds how far before its window a warm-up looks for the
// last answered poll of a target in an outage (see warmer.reachBack):
// past a week, a reboot or a link's change is old news to anyone.
const maxReachBack = 7 * 24 * time.Hour

// lostPolls are the targets a partition's warm-up window left without
// their last answered poll: every poll of the window failed, so their
// last sysUpTime and their interfaces' and sessions' states are older.
type lostPolls struct {
	// targets are their names, keys the keys of their records.
	targets, keys map[string]bool
	// answered returns the target whose answered poll r is one of the
	// records of (a row, or a status that says snmp_up 1), if r is one.
	answered func(r *broker.Record) (target string, ok bool)
	// feed, if set, is what the polls found are fed to, in the place of
	// the window's feed: they are older than the window's records.
	feed func(r *broker.Record, end time.Time)
	// quiet, if set, picks the records that carry a state a target may
	// send only when it changes (gNMI on_change without heartbeats), or
	// its delete: warmer.quietBack feeds those before the window.
	quiet func(r *broker.Record) bool
}

// lastPoll is where a target's latest answered poll found so far is: a
// poll's records share its start as their time.
type lastPoll struct {
	at      time.Time
	offsets []int64
}

// reachBack feeds, after a partition's window (from windowStart, ending
// at end) was fed, the last answered poll of each target wm.lost names,
// found before the window. A worker that ran all along kept a target's
// last uptime and states through an outage however long (see
// MetricsWorker.inOutage); without them, once the device answered, a
// reboot or a link that went down during the outage was a first sample,
// no event. It reads back four times the window, then four times that,
// and so on to maxReachBack, the log's start or logwindow.MaxRecords (the
// window's own bound), until each target is found; each read is from its
// cutoff on, so it takes a poll (its records share the poll's start as
// their time, and are published together) whole or not at all, and the
// reads together cost at most about 4/3 of the last. A poll found is fed
// in log order. The states it sets are older than the window's, which
// stay (the worker's newer checks): it fills in what the window lacks and
// changes nothing the window gave. Only partitions with a target in such
// an outage pay for it.
func (wm *warmer) reachBack(ctx context.Context, topic string, partition int32, upTo int64, windowStart, end time.Time, feed func(*broker.Record, time.Time)) {
	if wm.lost == nil {
		return
	}
	lost := wm.lost()
	if lost.feed != nil {
		feed = lost.feed
	}
	if lost.quiet != nil {
		wm.quietBack(ctx, topic, partition, upTo, windowStart, end, lost.quiet, feed)
	}
	if len(lost.targets) == 0 {
		return
	}
	began, missing := time.Now(), len(lost.targets)
	r := logwindow.Reader{B: wm.b}
	prevFrom, older := int64(-1), false
	found := map[string]*lastPoll{}
	var offsets []int64
	// bound is as far back as a read can start: the log's start, or
	// logwindow.MaxRecords before upTo. A read from there, with the
	// widest cutoff, takes all that a read with any other could: it is
	// the last, not read again with each wider one.
	var bound int64
	err := retried(ctx, func() error {
		pi, err := logwindow.Partition(ctx, wm.b, topic, partition)
		bound = max(pi.LogStartOffset, upTo-logwindow.MaxRecords)
		return err
	})
	for back := max(4*wm.window, time.Minute); err == nil && len(lost.targets) > 0; back *= 4 {
		last := back >= maxReachBack
		cutoff := windowStart.Add(-min(back, maxReachBack))
		var from int64
		if err = retried(ctx, func() (err error) {
			from, err = r.WindowStart(ctx, topic, partition, upTo, cutoff)
			return err
		}); err != nil {
			break
		}
		if from <= bound {
			cutoff, last = windowStart.Add(-maxReachBack), true
		}
		if from == prevFrom && !older {
			// The last read was from here too (WindowStart's steps are
			// coarser than the cutoff's, or retention moved the log's
			// start past bound) and left nothing out.
			break
		}
		prevFrom, older = from, false
		clear(found)
		err = wm.readFrom(ctx, &r, topic, partition, from, upTo, func(rec *broker.Record) {
			if rec.Timestamp.Before(cutoff) {
				older = true
				return
			}
			if !rec.Timestamp.Before(windowStart) || !lost.keys[string(rec.Key)] {
				return
			}
			target, ok := lost.answered(rec)
			if !ok || !lost.targets[target] {
				return
			}
			switch lp := found[target]; {
			case lp == nil:
				found[target] = &lastPoll{at: rec.Timestamp, offsets: []int64{rec.Offset}}
			case rec.Timestamp.After(lp.at):
				lp.at, lp.offsets = rec.Timestamp, append(lp.offsets[:0], rec.Offset)
			case rec.Timestamp.Equal(lp.at):
				lp.offsets = append(lp.offsets, rec.Offset)
			}
		})
		if err != nil {
			break
		}
		for target, lp := range found {
			offsets = append(offsets, lp.offsets...)
			delete(lost.targets, target)
		}
		if last {
			break
		}
	}
	if ctx.Err() != nil {
		return
	}
	if ferr := wm.feedOffsets(ctx, &r, topic, partition, offsets, end, feed); ferr != nil && err == nil {
		err = ferr
	}
	if ctx.Err() != nil {
		return
	}
	attrs := []any{slog.String("topic", topic), slog.Int("partition", int(partition)),
		slog.Int("found", missing-len(lost.targets)), slog.Int("not_found", len(lost.targets)), slog.Duration("took", time.Since(began))}
	if err != nil {
		wm.logger.Warn("enrich: warm-up could not read back past its window for the last answered poll of targets in an outage",
			append(attrs, slog.Any("error", err))...)
		return
	}
	wm.logger.Info("enrich: warm-up read back past its window for the last answered poll of targets in an outage", attrs...)
}

// quietBack feeds, after a partition's window was fed, each record before
// the window that quiet picks, in log order, from as far back as reachBack
// reads: maxReachBack before the window, the log's start or
// logwindow.MaxRecords before upTo. A gNMI on_change subscription without
// heartbeats sends an interface's or BGP session's state only when it
// changes, so a state older than the window was not in it, and the first
// change after a restart or a rebalance was a first state, no event. The
// records do not tell where a session's snapshot (every path, up to its
// sync_response) was, which would bound the reading: without it, nothing
// says an object's last state is not further back, so the partition is
// read once, from that bound; its other records cost a look for two
// strings (quietState). As reachBack's, the states it sets are older than
// the window's, which stay.
func (wm *warmer) quietBack(ctx context.Context, topic string, partition int32, upTo int64, windowStart, end time.Time, quiet func(*broker.Record) bool, feed func(*broker.Record, time.Time)) {
	began := time.Now()
	r := logwindow.Reader{B: wm.b}
	cutoff := windowStart.Add(-maxReachBack)
	var from int64
	err := retried(ctx, func() (err error) {
		from, err = r.WindowStart(ctx, topic, partition, upTo, cutoff)
		return err
	})
	fed := 0
	if err == nil {
		err = wm.readFrom(ctx, &r, topic, partition, from, upTo, func(rec *broker.Record) {
			if rec.Timestamp.Before(cutoff) || !rec.Timestamp.Before(windowStart) || !quiet(rec) {
				return
			}
			// A copy: the worker's scratch would keep the fetch buffer.
			c := copyRecord(rec)
			feed(&c, end)
			fed++
		})
	}
	if ctx.Err() != nil {
		return
	}
	attrs := []any{slog.String("topic", topic), slog.Int("partition", int(partition)), slog.Int("records", fed),
		slog.Int64("from", from), slog.Duration("took", time.Since(began))}
	if err != nil {
		wm.logger.Warn("enrich: warm-up could not read back past its window for states sent only when they change",
			append(attrs, slog.Any("error", err))...)
		return
	}
	if fed > 0 {
		wm.logger.Info("enrich: warm-up read back past its window for states sent only when they change", attrs...)
	}
}

// feedOffsets feeds the records of topic/partition at offsets, in log
// order, each as a copy: a worker's scratch keeps the last record it
// decoded, whose strings would keep r's fetch buffer (see warmer.read).
func (wm *warmer) feedOffsets(ctx context.Context, r *logwindow.Reader, topic string, partition int32, offsets []int64, end time.Time, feed func(*broker.Record, time.Time)) error {
	if len(offsets) == 0 {
		return nil
	}
	slices.Sort(offsets)
	i := 0
	return wm.readFrom(ctx, r, topic, partition, offsets[0], offsets[len(offsets)-1]+1, func(rec *broker.Record) {
		for i < len(offsets) && offsets[i] < rec.Offset {
			i++
		}
		if i < len(offsets) && offsets[i] == rec.Offset {
			c := copyRecord(rec)
			feed(&c, end)
		}
	})
}

// readFrom feeds the records of topic/partition from offset from up to
// upTo, whatever their time; a fetch that fails is tried again, going on
// from where the reading got to, as warmer.read's are: a reach back runs
// right after the window's reading, in the same rolling restart of
// Kafka's brokers, and one given up leaves its targets without their
// last answered poll for as long as the worker runs.
func (wm *warmer) readFrom(ctx context.Context, r *logwindow.Reader, topic string, partition int32, from, upTo int64, feed func(*broker.Record)) error {
	return retried(ctx, func() error {
		next, _, err := r.ReadFrom(ctx, topic, partition, from, upTo, time.Time{}, feed, nil)
		from = next
		return err
	})
}

// retried runs attempt until it succeeds or ctx ends, trying again after
// each of warmRetries.
func retried(ctx context.Context, attempt func() error) error {
	for try := 0; ; try++ {
		err := attempt()
		if err == nil || ctx.Err() != nil || try == len(warmRetries) {
			return err
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(warmRetries[try]):
		}
	}
}

// warmPoll is what a partition's warm-up read of a target's polls: the
// key of its records, and whether any of its polls answered.
type warmPoll struct {
	key      string
	answered bool
}

// noteWarmPoll notes a status record a warm-up read: target's poll,
// under key, answered or not.
func (w *MetricsWorker) noteWarmPoll(target string, key []byte, answered bool) {
	if w.warmPolls == nil {
		w.warmPolls = map[string]warmPoll{}
	}
	wp, ok := w.warmPolls[target]
	if !ok {
		wp.key = string(key)
	}
	wp.answered = wp.answered || answered
	w.warmPolls[target] = wp
}

// lostPolls are the targets the partition's warm-up window (read since
// the last call) gave failed polls alone, and that are still in the
// outage: for warmer.reachBack.
func (w *MetricsWorker) lostPolls() lostPolls {
	// A decoder and scratch of the reach back's own, gone with it: the
	// worker's would keep the bytes of the last record looked at, and
	// with them the reach back's fetch buffer.
	var dec telemetry.Decoder
	var p telemetry.Point
	lost := lostPolls{targets: map[string]bool{}, keys: map[string]bool{},
		answered: func(r *broker.Record) (string, bool) { return answeredPoll(&dec, &p, r) }, feed: w.warmOlder}
	if w.gnmiInput {
		lost.quiet = func(r *broker.Record) bool { return quietState(&dec, &p, r) }
	}
	for target, wp := range w.warmPolls {
		if !wp.answered && w.inOutage(target, 0) {
			lost.targets[target] = true
			lost.keys[wp.key] = true
		}
	}
	w.warmPolls = nil // not cleared: a cleared map keeps its table, for as long as the worker runs
	return lost
}

// answeredPoll returns the target r is a record of an answered poll of:
// a row, or a status that says snmp_up 1. It decodes r into p with dec.
func answeredPoll(dec *telemetry.Decoder, p *telemetry.Point, r *broker.Record) (string, bool) {
	if dec.DecodePoint(r.Value, p) != nil || p.Device == "" {
		return "", false
	}
	if p.Measurement == telemetry.MeasurementSNMPStatus {
		if up, ok := intField(p, "snmp_up"); !ok || up != 1 {
			return "", false
		}
	}
	return p.Device, true
}

// quietState reports whether r is a record of a state a gNMI target may
// send only when it changes (an interface's oper-status, a BGP session's
// state: openConfigState), or of a delete of one (openConfigDelete). It
// decodes r into p with dec only when r's bytes name such a leaf or a
// delete: most records are counters.
func quietState(dec *telemetry.Decoder, p *telemetry.Point, r *broker.Record) bool {
	v := r.Value
	// "-stat" is in oper-status and session-state, deleted" in a
	// delete's one field (however another producer spaces its JSON), and
	// a backslash in any key written escaped, which decodes as these:
	// searches whose first byte is rarer in JSON than a quote.
	if !bytes.Contains(v, []byte("-stat")) && !bytes.Contains(v, []byte(`deleted"`)) && bytes.IndexByte(v, '\\') < 0 {
		return false
	}
	if dec.DecodePoint(v, p) != nil || p.Device == "" {
		return false
	}
	if ch, ok := openConfigState(p); ok {
		return ch.object != ""
	}
	_, ok := openConfigDelete(p)
	return ok
}

// warmOlder is warm for a record older than the window's, fed after them
// (a reach back's): a state the window gave stays, though it is stamped
// ahead of weir's clock (a poller's clock ahead of this host's), which
// newer lets an older sample take the place of. Else the answered poll
// of before the outage took that of the window's failed polls, and the
// next failed poll raised device_unreachable a second time. A row of
// counters it makes is as seen at the record's time (trackedRow): else
// the first poll after an outage of over an hour had rates over all of
// it, where a worker that ran all along has forgotten the row.
func (w *MetricsWorker) warmOlder(r *broker.Record, end time.Time) {
	w.olderWarm, w.olderSeen = true, w.rates.now
	if !r.Timestamp.IsZero() {
		w.olderSeen = min(w.olderSeen, r.Timestamp.Unix())
	}
	w.warm(r, end)
	w.olderWarm = false
}
