package enrich

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/netip"
	"strconv"
	"strings"
	"time"

	"github.com/weirnet/weir/broker"
	"github.com/weirnet/weir/telemetry"
)

// TrapWorker is a member of the "enrich" group over raw.traps: it raises
// events from the standard notifications (linkDown/linkUp, coldStart and
// warmStart, bgpEstablished and bgpBackwardTransition in both BGP4-MIB
// forms), through the same de-duplication as syslog, so a link-down seen
// as a syslog line and as a trap is one event. Exactly once, like the
// other workers.
type TrapWorker struct {
	b        broker.Broker
	inv      *Inventory
	input    string
	topics   Topics
	logger   *slog.Logger
	m        *workerMetrics
	memberID string
	session  time.Duration
	det      *detector
	evEnc    eventRecords
	out      *outputs
	warmup   time.Duration
	warming  bool // reading a trap again for the detector: nothing is counted
	targets  *SNMPTargets
	// unnamed are traps a warm-up read about an interface of a polled
	// device by ifIndex alone, before any poll of this process named it:
	// after a restart the trap warm-up ends long before the metrics
	// workers' (at the next poll), and a flapping link remembered as
	// "ifIndex 3" would never be cleared as the Gi0/3 it was raised as.
	// They wait (nameWait at most) for the name, then go to the detector.
	unnamed  []unnamedTrap
	nameWait time.Duration
}

// unnamedTrap is a trap's event held back by the warm-up (see
// TrapWorker.unnamed), with what detector.remember would have used.
type unnamedTrap struct {
	ev        telemetry.Event
	index     string
	at, since time.Time
	until     time.Time // when it stops waiting for its name
}

// defaultNameWait is how long a warm-up waits for a poll to name an
// interface a trap gives by ifIndex: a few poll intervals.
const defaultNameWait = 3 * time.Minute

// maxUnnamed bounds the traps held back; more go to the detector as
// "ifIndex N".
const maxUnnamed = 1 << 16

// NewTrapWorker builds a trap worker.
func NewTrapWorker(b broker.Broker, inv *Inventory, opts ...WorkerOption) *TrapWorker {
	w := NewWorker(b, inv, nil, opts...)
	return &TrapWorker{b: b, inv: inv, input: telemetry.TopicRawTraps, topics: w.topics,
		logger: w.logger, m: w.m, memberID: w.memberID, session: w.session, det: w.det, warmup: w.warmup, targets: w.targets,
		nameWait: defaultNameWait}
}

// Run consumes until ctx ends.
func (w *TrapWorker) Run(ctx context.Context) error {
	m, err := join(ctx, w.b, []string{w.input}, consumerOptions(w.memberID, w.session, eventPollBytes), w.logger)
	if err != nil || m == nil {
		return err
	}
	defer m.close()
	w.out = newOutputs(w.b, w.input, w.logger, w.m, m.txn != nil)
	w.out.useArenas(&w.evEnc.arena)
	if err := w.out.align(ctx, w.topics.Events); err != nil {
		return err
	}
	warmer := newWarmer(w.b, eventWarmup(w.warmup, w.det), w.logger)
	var events []outRecord
	for {
		// At most a second at a time, so partitions that stay quiet are
		// warmed up too (warmer.idle).
		recs, ok := poll(ctx, m.c, time.Second, w.logger)
		if !ok {
			return nil
		}
		assigned := m.c.Assigned()
		w.out.track(assigned)
		warmer.retain(assigned)
		warmer.before(ctx, recs, w.warm)
		warmer.idle(ctx, m.c, assigned, w.warm)
		w.rememberNamed(time.Now())
		if len(recs) == 0 {
			continue
		}
		events = events[:0]
		for i := range recs {
			r := &recs[i]
			var replayed bool
			if _, events, replayed = w.out.replay.get(r, nil, events); replayed {
				continue
			}
			var tr telemetry.Trap
			err := json.Unmarshal(r.Value, &tr)
			if err == nil {
				err = checkVersion(tr.V)
			}
			if err != nil {
				w.m.decodeErrors.Inc()
				w.logger.Warn("enrich: skipping undecodable trap", slog.String("topic", r.Topic),
					slog.Int("partition", int(r.Partition)), slog.Int64("offset", r.Offset), slog.Any("error", err))
				continue
			}
			e0 := len(events)
			if ev, ok := w.eventOf(&tr, r); ok {
				for _, out := range w.det.observe(ev, detectAt(r, ev.Time)) {
					events = w.evEnc.append(w.m, events, out, r.Partition, r.Offset)
				}
			}
			w.out.replay.put(r, nil, events[e0:])
		}
		w.m.in.WithLabelValues(w.input).Add(float64(len(recs)))
		if !w.out.deliver(ctx, m, outBatch{w.topics.Events, events}) {
			return nil
		}
		w.out.recycle(&w.evEnc.arena)
	}
}

// warm takes a trap a warm-up read again into the event detector's state
// (see detector.remember); nothing is published.
func (w *TrapWorker) warm(r *broker.Record, end time.Time) {
	var tr telemetry.Trap
	if err := json.Unmarshal(r.Value, &tr); err != nil || checkVersion(tr.V) != nil {
		return // counted when it was first read
	}
	w.warming = true
	ev, index, ok := w.event(&tr, r)
	w.warming = false
	if !ok {
		return
	}
	since := end.Add(-w.det.window)
	if index != "" && len(w.unnamed) < maxUnnamed {
		if _, polled := w.targets.device(senderAddr(tr.SourceAddr)); polled {
			w.det.remember(r, nil, since) // read; its change waits for the name
			w.unnamed = append(w.unnamed, unnamedTrap{ev: ev, index: index,
				at: detectAt(r, ev.Time), since: since, until: time.Now().Add(w.nameWait)})
			return
		}
	}
	w.det.remember(r, []telemetry.Event{ev}, since)
}

// rememberNamed hands the detector the held-back warm-up traps (see
// unnamed) whose interface a poll has named since, under that name, and
// those that waited long enough, as "ifIndex N". A partition taken away
// meanwhile changes nothing: the detector is the process's, and a worker
// of it that takes the partition does not read those traps again.
func (w *TrapWorker) rememberNamed(now time.Time) {
	if len(w.unnamed) == 0 {
		return
	}
	kept := w.unnamed[:0]
	for _, u := range w.unnamed {
		if name, ok := w.det.names.name(u.ev.Device, u.index); ok {
			u.ev.Object = name
		} else if now.Before(u.until) {
			kept = append(kept, u)
			continue
		}
		w.det.rememberLate(u.ev, u.at, u.since)
	}
	clear(w.unnamed[len(kept):])
	w.unnamed = kept
}

// eventOf maps a notification to an event.
func (w *TrapWorker) eventOf(tr *telemetry.Trap, r *broker.Record) (telemetry.Event, bool) {
	ev, _, ok := w.event(tr, r)
	return ev, ok
}

// event is eventOf, also returning the ifIndex of an interface it could
// name by nothing else ("ifIndex N"; no poll named it yet).
func (w *TrapWorker) event(tr *telemetry.Trap, r *broker.Record) (ev telemetry.Event, unnamed string, ok bool) {
	ev = telemetry.Event{V: telemetry.Version, Device: tr.Device, Time: tr.ReceivedAt,
		Cause: telemetry.Cause{Topic: r.Topic, Partition: r.Partition, Offset: r.Offset}}
	var index string // the interface's ifIndex, when the trap names it by nothing else
	switch tr.TrapName {
	case "linkDown", "linkUp":
		ev.Type = map[string]string{"linkDown": "interface_down", "linkUp": "interface_up"}[tr.TrapName]
		if ev.Object = varbindValue(tr, "ifName", "ifDescr"); ev.Object == "" {
			if index = varbindValue(tr, "ifIndex"); index == "" {
				index = ifTableInstance(tr) // ifOperStatus.3 alone
			}
		}
	case "coldStart", "warmStart":
		ev.Type = "device_rebooted"
	case "bgpEstablished", "bgpEstablishedNotification":
		ev.Type, ev.Object = "bgp_peer_up", bgpPeer(tr)
	case "bgpBackwardTransition", "bgpBackwardTransNotification":
		ev.Type, ev.Object = "bgp_peer_down", bgpPeer(tr)
	default:
		w.device(tr) // counted if unknown, as every trap is
		return ev, "", false
	}
	var d *Device
	ev.Device, d = w.device(tr)
	if d != nil {
		ev.Tags = d.TagsOf()
	} else {
		ev.Tags = map[string]string{"unknown": "true"}
	}
	if index != "" {
		// Named as the device's SNMP rows name it, under the device's
		// name in events, so syslog, polls and the trap agree.
		if name, ok := w.det.names.name(ev.Device, index); ok {
			ev.Object = name
		} else {
			ev.Object, unnamed = "ifIndex "+index, index
		}
	}
	ev.Message = tr.TrapName + " trap"
	return ev, unnamed, true
}

// device names the device a trap came from (see nameDevice: the trap
// collector names it by its source address), with its inventory entry;
// nil for a device the inventory does not know, which is counted.
func (w *TrapWorker) device(tr *telemetry.Trap) (string, *Device) {
	name, d := nameDevice(w.inv, w.targets, tr.Device, tr.Device, tr.SourceAddr)
	if d == nil && !w.warming {
		w.m.unknown.Inc()
	}
	return name, d
}

// varbindValue returns the value of the first varbind with one of names,
// bare ("ifDescr") or with its instance, as the trap collector names the
// columns of a table ("ifDescr.3").
func varbindValue(tr *telemetry.Trap, names ...string) string {
	for _, n := range names {
		for _, vb := range tr.Varbinds {
			if vb.Value != nil && (vb.Name == n || strings.HasPrefix(vb.Name, n+".")) {
				if x, ok := vb.Value.(float64); ok {
					// A JSON number: 436207616, not 4.36207616e+08.
					return strconv.FormatFloat(x, 'f', -1, 64)
				}
				return fmt.Sprint(vb.Value)
			}
		}
	}
	return ""
}

// ifTableInstance returns the ifIndex a trap's ifTable or ifXTable
// column varbinds are of (ifOperStatus.3: 3), for a linkDown or linkUp
// that carries no ifIndex varbind (agents that send only the status
// columns), or "".
func ifTableInstance(tr *telemetry.Trap) string {
	for _, vb := range tr.Varbinds {
		oid := strings.TrimPrefix(vb.OID, ".")
		for _, entry := range [...]string{"1.3.6.1.2.1.2.2.1.", "1.3.6.1.2.1.31.1.1.1."} {
			rest, ok := strings.CutPrefix(oid, entry)
			if !ok {
				continue
			}
			if _, index, ok := strings.Cut(rest, "."); ok && index != "" && !strings.Contains(index, ".") {
				if _, err := strconv.ParseUint(index, 10, 32); err == nil {
					return index
				}
			}
		}
	}
	return ""
}

// bgpPeer finds the peer address: bgpPeerRemoteAddr's value, or the
// address that indexes the BGP4-MIB peer table (the OID's last four
// components, 1.3.6.1.2.1.15.3.1.N.A.B.C.D).
func bgpPeer(tr *telemetry.Trap) string {
	if v := varbindValue(tr, "bgpPeerRemoteAddr"); v != "" {
		return v
	}
	for _, vb := range tr.Varbinds {
		if rest, ok := strings.CutPrefix(strings.TrimPrefix(vb.OID, "."), "1.3.6.1.2.1.15.3.1."); ok {
			parts := strings.Split(rest, ".")
			if len(parts) == 5 {
				if a, err := netip.ParseAddr(strings.Join(parts[1:], ".")); err == nil {
					return a.String()
				}
			}
		}
	}
	return ""
}
