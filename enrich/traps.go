package enrich

import (
	"cmp"
	"context"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/netip"
	"strconv"
	"strings"
	"time"

	"github.com/weirnet/weir/broker"
	"github.com/weirnet/weir/internal/throttle"
	"github.com/weirnet/weir/internal/trapnames"
	"github.com/weirnet/weir/telemetry"
)

// TrapWorker is a member of the "enrich" group over raw.traps: it raises
// events from the standard notifications (linkDown/linkUp, coldStart and
// warmStart, bgpEstablished and bgpBackwardTransition in both BGP4-MIB
// forms, OSPF and OSPFv3 neighbor changes) and the vendors' for the same
// changes and for configuration changes, through the same de-duplication as syslog, so a link-down seen
// as a syslog line and as a trap is one event. Exactly once, like the
// other workers.
type TrapWorker struct {
	gate     *gateTicket // its passage through the detector's warm gate, made at its first Run
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
	gnmi     *GNMITargets // naming traps from a gNMI target's address, as targets do an SNMP target's
	names    *trapnames.Names
	// held are traps a warm-up read from a polled address whose names
	// may still change: about an interface by ifIndex alone, before any
	// poll of this process named it, or from a target whose sysName (the
	// inventory may list the device by it) no poll has given yet. After a
	// restart the trap warm-up ends long before the metrics workers' (at
	// the next poll), and a flapping link remembered as "ifIndex 3" of
	// the target would never be cleared as the Gi0/3 of the device it
	// was raised as. They wait (holdFor at most) for the names, then go to
	// the detector, named again.
	held     []heldTrap
	nameWait time.Duration // 0: holdFor's default
	// What the names were when held traps were last looked at, and when
	// the first of them stops waiting: release looks again only when a
	// name came, one is due, or a second has passed.
	releaseSeen releaseState
	// decodeLog and uptimeLog throttle the warnings for undecodable
	// records and uptimes that are none: one per record from a wrong
	// producer would flood the log.
	decodeLog, uptimeLog throttle.Throttle
}

// releaseState is what release last saw: the versions of the process's
// interface names and sysNames, when it ran, and the first held trap's
// deadline then.
type releaseState struct {
	names, sysNames uint64
	at, due         time.Time
}

// heldTrap is a trap held back by the warm-up (see TrapWorker.held): the
// trap, where it was read (its record without the value), and what
// detector.remember would have used.
type heldTrap struct {
	tr           telemetry.Trap
	rec          broker.Record
	since, until time.Time // until: when it stops waiting for its names
}

// defaultNameWait is how long a warm-up waits at least for a poll to name
// what a trap names by ifIndex or by its target: longer for targets
// polled less often (holdFor).
const defaultNameWait = 3 * time.Minute

// maxHeld bounds the traps held back; more go to the detector as they
// are named at once.
const maxHeld = 1 << 16

// NewTrapWorker builds a trap worker.
func NewTrapWorker(b broker.Broker, inv *Inventory, opts ...WorkerOption) *TrapWorker {
	w := NewWorker(b, inv, nil, opts...)
	tw := &TrapWorker{b: b, inv: inv, input: cmp.Or(w.input, telemetry.TopicRawTraps), topics: w.topics,
		logger: w.logger, m: w.m, memberID: w.memberID, session: w.session, det: w.det, warmup: w.warmup, targets: w.targets,
		gnmi: w.gnmi, names: trapnames.New(nil)}
	// At 0 from the start, so an alert on its increase sees the first.
	tw.m.invalidUptimes.WithLabelValues(tw.input)
	tw.m.countDecodeErrorsFrom(tw.input)
	return tw
}

// Run consumes until ctx ends.
func (w *TrapWorker) Run(ctx context.Context) error {
	gate := w.det.gate.ticket(&w.gate, w.logger) // closed on any return: the others do not wait for this one
	defer gate.close()
	m, err := join(ctx, w.b, []string{w.input}, consumerOptions(w.memberID, w.session, eventPollBytes), w.logger)
	if err != nil || m == nil {
		return err
	}
	defer m.close()
	if !gate.awaitJoins(ctx) {
		return nil
	}
	gate.checkInput(ctx, w.b, w.input)
	gate.watch(func() broker.Consumer { return m.c })
	w.out = newOutputs(w.b, w.input, w.logger, w.m, m.txn != nil)
	w.out.useArenas(&w.evEnc.arena)
	w.out.origins, w.out.events = w.det, w.topics.Events
	if !w.out.alignRetrying(ctx, w.topics.Events) {
		return nil // ctx ended
	}
	warmer := newWarmer(w.b, eventWarmup(w.warmup, w.det), w.logger)
	warmer.ended = w.det.warmupEnder(w)
	warmer.adopt = w.det.adopter(w.b, w.topics.Events, w.logger)
	warmer.uncommitted = w.det.uncommittedAdopter(w.b, w.out, w.topics.Events, w.logger)
	var events []outRecord
	var polls pollHealth // failing polls, across polls
	for {
		// At most a second at a time, so partitions that stay quiet are
		// warmed up too (warmer.idle).
		recs, ok := poll(ctx, m.c, gate.pollWait(time.Second), w.logger, &polls)
		if !ok {
			return nil
		}
		w.det.reportClock(w, recs, time.Now())
		assigned := m.c.Assigned()
		w.out.track(ctx, assigned, recs)
		warmer.retain(assigned)
		warmer.before(ctx, recs, w.warm)
		warmer.idleRound(ctx, m.c, assigned, len(recs) > 0, !gate.through, w.warm)
		if ctx.Err() != nil {
			return nil // see warmer.before: a warm-up may have been cut short
		}
		// The traps the warm-up held for their names go to the detector
		// once the metrics workers' warm-ups have named what they can,
		// before any worker judges a live record.
		if !gate.pass(ctx, len(assigned) > 0 || len(recs) > 0, w.releaseWarm) {
			if ctx.Err() != nil {
				return nil
			}
			continue
		}
		w.release(time.Now(), false)
		// Events taken over from another worker (detector.takeOver)
		// whose transaction aborted go out without waiting for a
		// record: the partition may have gone, or be quiet.
		if len(recs) == 0 && len(w.out.carry) == 0 {
			continue
		}
		events = events[:0]
		for i := range recs {
			r := &recs[i]
			var replayed bool
			if _, events, replayed = w.out.replay.get(r, nil, events); replayed {
				continue
			}
			tr, ok := w.decode(r)
			if !ok {
				continue
			}
			e0 := len(events)
			if ev, ok := w.eventOf(&tr, r); ok {
				for _, out := range w.det.observe(ev, detectAt(r, ev.Time)) {
					events = w.evEnc.append(w.m, events, w.topics.Events, out, r.Partition, r.Offset)
				}
			}
			w.out.replay.put(r, nil, events[e0:])
		}
		w.m.in.WithLabelValues(w.input).Add(float64(len(recs)))
		// A rename said with the batch's events is kept as said before
		// their commit (see saveRenames).
		w.det.saveRenames()
		if !w.out.deliver(ctx, m, outBatch{w.topics.Events, events}) {
			return nil
		}
		w.out.recycle(&w.evEnc.arena)
	}
}

// decode decodes a live raw.traps record, counting and logging (throttled)
// one that does not decode and one whose uptime is none.
func (w *TrapWorker) decode(r *broker.Record) (telemetry.Trap, bool) {
	tr, badUptime, err := w.decodeRecord(r)
	if err != nil {
		w.m.decodeFailed(r.Topic, err)
		if n, due := w.decodeLog.Due(time.Now()); due {
			w.logger.Warn("enrich: skipping undecodable trap", slog.String("topic", r.Topic),
				slog.Int("partition", int(r.Partition)), slog.Int64("offset", r.Offset), slog.Any("error", err), slog.Int("times", n))
		}
		return tr, false
	}
	if badUptime {
		w.m.invalidUptime(&w.uptimeLog, w.logger, r, "trap",
			slog.String("device", tr.Device), slog.String("trap", cmp.Or(tr.TrapName, tr.TrapOID)))
	}
	return tr, true
}

// trapValue is a raw.traps value with its uptime read apart: one that is
// no sysUpTime (-1, "x": a Kafka client's) is a trap without one, as a
// metric's is, not an undecodable record.
type trapValue struct {
	telemetry.Trap
	Uptime json.RawMessage `json:"uptime"` // shadows Trap's
}

// decodeRecord is decodeTrap of r, a trap with no received_at (a Kafka
// client's) taken at r's time, which the log sets when the producer does
// not: its events were at year 1.
func (w *TrapWorker) decodeRecord(r *broker.Record) (telemetry.Trap, bool, error) {
	tr, badUptime, err := decodeTrap(r.Value, w.names)
	if err == nil && tr.ReceivedAt.IsZero() {
		tr.ReceivedAt = r.Timestamp
	}
	return tr, badUptime, err
}

// decodeTrap reads a raw.traps record: a trap of this schema version;
// badUptime when its uptime was no sysUpTime, which it has as 0.
func decodeTrap(value []byte, names *trapnames.Names) (tr telemetry.Trap, badUptime bool, err error) {
	var v trapValue
	if err := json.Unmarshal(value, &v); err != nil {
		return v.Trap, false, err
	}
	tr = v.Trap
	tr.Uptime, badUptime = telemetry.ParseUptime(v.Uptime)
	if err := checkVersion(tr.V); err != nil {
		return tr, false, err
	}
	if tr.Device == "" && tr.SourceAddr == "" {
		// weir's receiver names every trap by its sender; a Kafka
		// client's record naming none would give events of device "".
		return tr, false, incomplete("no device or source_addr")
	}
	if tr.TrapOID == "" && tr.TrapName == "" {
		// weir's receiver drops a notification without snmpTrapOID.0;
		// a Kafka client's record with neither would raise no event and
		// be counted nowhere.
		return tr, false, incomplete("no trap_oid or trap_name")
	}
	nameTrap(&tr, names)
	return tr, badUptime, nil
}

// nameTrap names, as weir's receiver does, a trap and its varbinds that a
// Kafka client's record gives by OID alone: events are chosen by the
// trap's name and read varbinds by theirs, so a linkDown written as
// 1.3.6.1.6.3.1.1.5.3 raised nothing, counted nowhere. names may be nil.
func nameTrap(tr *telemetry.Trap, names *trapnames.Names) {
	if names == nil {
		return
	}
	if tr.TrapName == "" {
		tr.TrapName = names.Notification(strings.TrimPrefix(tr.TrapOID, "."))
	}
	for i := range tr.Varbinds {
		if vb := &tr.Varbinds[i]; vb.Name == "" && vb.OID != "" {
			vb.Name = names.Object(strings.TrimPrefix(vb.OID, "."))
		}
	}
}

// warm takes a trap a warm-up read again into the event detector's state
// (see detector.remember); nothing is published.
func (w *TrapWorker) warm(r *broker.Record, end time.Time) {
	tr, _, err := w.decodeRecord(r)
	if err != nil {
		return // counted when it was first read
	}
	w.warming = true
	ev, index, ok := w.event(&tr, r)
	w.warming = false
	if !ok {
		return
	}
	since := end.Add(-w.det.window)
	if len(w.held) < maxHeld && w.provisional(&tr, index, false) {
		// Read now (a partition warmed up again is not held twice); its
		// change waits for its names.
		if w.det.remember(r, nil, since) {
			rec := *r
			rec.Key, rec.Value, rec.Headers = nil, nil, nil
			w.held = append(w.held, heldTrap{tr: tr, rec: rec, since: since, until: time.Now().Add(w.holdFor())})
		}
		return
	}
	w.det.remember(r, []telemetry.Event{ev}, since)
}

// provisional says whether the names of a trap's event may still change
// in this process: it comes from (or, relayed, names as its agent) an
// address an SNMP target polls, or a
// gNMI target is dialed at, and names an interface by an ifIndex no poll
// or gNMI row has named (index), or (from an SNMP target's address) its
// device by the target's name while the target's sysName, which the
// inventory may list the device by, is not known yet and may still come
// (sysNamesDone: every warm-up has read what could give it).
func (w *TrapWorker) provisional(tr *telemetry.Trap, index string, sysNamesDone bool) bool {
	// The address the trap is named by (trapDevice): its agent's where it
	// gives one (a relayed trap, a v1 agent-addr), else its sender's.
	at := senderAddr(tr.SourceAddr)
	if agent, ok := trapAgentAddress(tr); ok {
		at, _ = netip.ParseAddr(agent)
	}
	target, polled := w.targets.device(at)
	if !polled {
		// A gNMI target's address: its interface rows name ifIndexes
		// too, where they carry the ifindex (gNMI gives no sysName).
		_, streamed := w.gnmi.device(at)
		return streamed && index != ""
	}
	if index != "" {
		return true
	}
	if w.inv.Lookup(target, tr.SourceAddr).named() {
		return false // the inventory names it by its target's name or its address
	}
	_, known := w.targets.sysName(target)
	return !known && !sysNamesDone
}

// releaseWarm hands the detector the held traps once every worker of the
// process has warmed up, before any judges a live record: the metrics
// workers' warm-ups have named the interfaces and the targets' sysNames
// they could. A trap that waited for its target's sysName goes as named
// now (a poll of the target would have given it); one that names an
// interface by an ifIndex no poll named goes on waiting (holdFor).
func (w *TrapWorker) releaseWarm() {
	w.releaseSeen = releaseState{} // look again, whatever changed
	w.release(time.Now(), true)
}

// holdFor is how long a warm-up trap waits for its names: a few poll
// intervals of the slowest target.
func (w *TrapWorker) holdFor() time.Duration {
	if w.nameWait > 0 {
		return w.nameWait
	}
	return max(defaultNameWait, 3*w.targets.maxInterval())
}

// release hands the detector the held warm-up traps (see held) whose
// names are known now, named again, and those that waited long enough,
// as they are named then. A partition taken away meanwhile changes
// nothing: the detector is the process's, and a worker of it that takes
// the partition does not read those traps again. sysNamesDone: as for
// provisional (only at the warm gate; a partition taken later waits as
// before).
func (w *TrapWorker) release(now time.Time, sysNamesDone bool) {
	if len(w.held) == 0 {
		return
	}
	seen := releaseState{names: w.det.names.version.Load(), sysNames: w.targets.sysNamesVersion(), at: now}
	last := w.releaseSeen
	if seen.names == last.names && seen.sysNames == last.sysNames && now.Before(last.due) && now.Sub(last.at) < time.Second {
		return // nothing new: naming them again would give what it gave
	}
	seen.due = now.Add(24 * time.Hour)
	kept := w.held[:0]
	for _, h := range w.held {
		w.warming = true
		ev, index, ok := w.event(&h.tr, &h.rec)
		w.warming = false
		if !ok {
			continue
		}
		if now.Before(h.until) && w.provisional(&h.tr, index, sysNamesDone) {
			kept = append(kept, h)
			if h.until.Before(seen.due) {
				seen.due = h.until
			}
			continue
		}
		w.det.rememberLate(ev, detectAt(&h.rec, ev.Time), h.since)
	}
	clear(w.held[len(kept):])
	w.held = kept
	w.releaseSeen = seen
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
	case "linkDown", "cieLinkDown":
		// cieLinkDown/Up: NX-OS's, with the varbinds of IF-MIB's.
		ev.Type = "interface_down"
		ev.Object, index = linkObject(tr)
	case "linkUp", "cieLinkUp":
		ev.Type = "interface_up"
		ev.Object, index = linkObject(tr)
	case "coldStart", "warmStart":
		ev.Type = "device_rebooted"
		ev.Time = bootTime(tr.ReceivedAt, tr.Uptime)
	case "bgpEstablished", "bgpEstablishedNotification":
		ev.Type, ev.Object = "bgp_peer_up", bgpPeer(tr)
	case "bgpBackwardTransition", "bgpBackwardTransNotification":
		ev.Type, ev.Object = "bgp_peer_down", bgpPeer(tr)
	case "cbgpBackwardTransition", "cbgpPeer2BackwardTransition", "cbgpPeer2BackwardTransNotification":
		// Sent for any move to a lower state: a session that was not
		// established (active to idle) did not go down.
		if prev := varbindValue(tr, "cbgpPeer2PrevState", "cbgpPeerPrevState"); prev == "" || prev == bgpEstablished {
			ev.Type = "bgp_peer_down"
		}
		ev.Object = bgpPeer(tr)
	case "cbgpPeer2EstablishedNotification", "jnxBgpM2Established", "aristaBgp4V2EstablishedNotification", "bgp4V2EstablishedNotification":
		ev.Type, ev.Object = "bgp_peer_up", bgpPeer(tr)
	case "jnxBgpM2BackwardTransition", "aristaBgp4V2BackwardTransitionNotification", "bgp4V2BackwardTransitionNotification":
		// As BGP4-MIB's: sent for any move to a lower state, with no
		// state before it to tell more.
		ev.Type, ev.Object = "bgp_peer_down", bgpPeer(tr)
	case "cbgpFsmStateChange", "cbgpPeer2FsmStateChange":
		// Every state change: into established is up, out of it down.
		switch {
		case varbindValue(tr, "cbgpPeer2State", "bgpPeerState") == bgpEstablished:
			ev.Type = "bgp_peer_up"
		case varbindValue(tr, "cbgpPeer2PrevState", "cbgpPeerPrevState") == bgpEstablished:
			ev.Type = "bgp_peer_down"
		}
		ev.Object = bgpPeer(tr)
	case "ospfNbrStateChange":
		ev.Type, ev.Object = ospfNbrEvent(varbindValue(tr, "ospfNbrState")), ospfNeighbor(tr)
	case "ospfv3NbrStateChange", "jnxOspfv3NbrStateChange":
		// OSPFV3-MIB's (RFC 5643) states are OSPF-MIB's.
		ev.Type, ev.Object = ospfNbrEvent(varbindValue(tr, "ospfv3NbrState", "jnxOspfv3NbrState")), ospfv3Neighbor(tr)
	case "ciscoConfigManEvent":
		// Also sent for a save (running to startup), a copy elsewhere and
		// "show running-config" (running to commandSource): only a
		// running configuration written to is changed, as %SYS-5-CONFIG_I
		// reports. The user is there when the device adds it.
		if varbindValue(tr, "ccmHistoryEventConfigDestination") == ccmRunning {
			ev.Type, ev.Object = "config_changed", varbindValue(tr, "ccmHistoryEventTerminalUser")
		}
	case "ccmCLIRunningConfigChanged":
		ev.Type, ev.Object = "config_changed", varbindValue(tr, "ccmHistoryEventTerminalUser")
	case "jnxCmCfgChange":
		// A commit, by the user UI_COMMIT names: the same event.
		ev.Type, ev.Object = "config_changed", varbindValue(tr, "jnxCmCfgChgEventUser")
	}
	if ev.Type == "" {
		w.device(tr) // counted if unknown, as every trap is
		return ev, "", false
	}
	var d *Device
	ev.Device, d = w.device(tr)
	vendor := ""
	if d != nil {
		ev.Tags, vendor = d.TagsOf(), d.Vendor
	} else {
		ev.Tags = map[string]string{"unknown": "true"}
	}
	if tr.TrapName == "ospfNbrStateChange" {
		if vendor == "" {
			vendor = w.det.vendors.of(ev.Device)
		}
		if a := ospfNeighborAddr(tr); a != "" && a != ev.Object {
			if w.warming {
				w.det.noteOSPFSpellings(ev.Device, ev.Object, a)
			}
			ev.Object = w.det.ospfTrapNeighbor(ev.Device, ev.Object, a, neighborsByAddress(vendor))
		}
	}
	if index != "" {
		// Named as the device's SNMP rows name it, under the device's
		// name in events, so syslog, polls and the trap agree.
		if name, ok := w.det.names.name(ev.Device, index); ok {
			ev.Object = name
		} else if name, ok := w.renamedInterface(tr, ev.Device, index); ok {
			ev.Object = name
		} else {
			ev.Object, unnamed = "ifIndex "+index, index
		}
	}
	ev.Severity = typeSeverity(ev.Type)
	ev.Message = tr.TrapName + " trap"
	if ev.Type == "bgp_peer_down" {
		if why := bgpLastError(tr); why != "" {
			ev.Message += ": " + why
		}
	}
	if objectless(ev) {
		ev.Message += " naming no " + objectNoun(ev.Type)
	}
	return ev, unnamed, true
}

// renamedInterface names interface index of the device a trap was named
// device from, when the table holds it under the name the rows polled at
// the trap's address had before: a reload renamed the device (an
// inventory entry for it added, renamed or removed; its SNMP target
// renamed), and it has not been polled since (its next poll names the
// interfaces under the new name). The interfaces are the same. Only for an
// address exactly one SNMP target polls, or else exactly one gNMI target
// is dialed at (whose rows carrying the ifindex name them), as nameDevice
// names by.
func (w *TrapWorker) renamedInterface(tr *telemetry.Trap, device, index string) (string, bool) {
	host := trapHost(tr) // as trapDevice takes it
	if !maybeAddr(host) {
		return "", false // named by a name: no target's address
	}
	at, err := netip.ParseAddr(host)
	if err != nil {
		return "", false
	}
	at = at.Unmap()
	if _, ok := w.targets.device(at); !ok {
		if _, ok := w.gnmi.device(at); !ok {
			return "", false
		}
	}
	before, ok := w.det.names.deviceAt(at)
	if !ok || before == device {
		return "", false
	}
	return w.det.names.name(before, index)
}

// bgpLastError is why a BGP session went down, as a backward transition
// trap says: the text IOS gives (cbgpPeer2LastErrorTxt), else the
// NOTIFICATION code and subcode of bgpPeerLastError or cbgpPeer2LastError
// (two octets, in hex as the collector writes binary), worded; "" for
// none (0000: no NOTIFICATION).
func bgpLastError(tr *telemetry.Trap) string {
	if txt := varbindValue(tr, "cbgpPeer2LastErrorTxt", "cbgpPeerLastErrorTxt"); txt != "" {
		return txt
	}
	for _, vb := range tr.Varbinds {
		if !strings.HasPrefix(vb.Name, "bgpPeerLastError.") && !strings.HasPrefix(vb.Name, "cbgpPeer2LastError.") {
			continue
		}
		h, ok := vb.Value.(string)
		if !ok || len(h) != 4 {
			continue
		}
		b, err := hex.DecodeString(h)
		if err != nil || b[0] == 0 {
			continue
		}
		code, subcode := int(b[0]), int(b[1])
		name, ok := bgpErrorCodes[code]
		if !ok {
			name = fmt.Sprintf("NOTIFICATION code %d", code)
		}
		if subcode == 0 {
			return name
		}
		if sub, ok := bgpErrorSubcodes[[2]int{code, subcode}]; ok {
			return name + " (" + sub + ")"
		}
		return fmt.Sprintf("%s (subcode %d)", name, subcode)
	}
	return ""
}

// bgpErrorCodes are the BGP NOTIFICATION error codes (RFC 4271 section
// 4.5; 7, ROUTE-REFRESH, RFC 7313), bgpErrorSubcodes their subcodes (RFC
// 4271 section 6, RFC 5492 for the OPEN's unsupported capability, RFC
// 4486 for Cease with RFC 8538's hard reset and RFC 9384's BFD down, RFC
// 6608 for the state machine's).
var (
	bgpErrorCodes = map[int]string{1: "message header error", 2: "OPEN message error", 3: "UPDATE message error",
		4: "hold timer expired", 5: "finite state machine error", 6: "Cease", 7: "ROUTE-REFRESH message error"}
	bgpErrorSubcodes = map[[2]int]string{
		{1, 1}: "connection not synchronized", {1, 2}: "bad message length", {1, 3}: "bad message type",
		{2, 1}: "unsupported version number", {2, 2}: "bad peer AS", {2, 3}: "bad BGP identifier",
		{2, 4}: "unsupported optional parameter", {2, 6}: "unacceptable hold time", {2, 7}: "unsupported capability",
		{3, 1}: "malformed attribute list", {3, 2}: "unrecognized well-known attribute", {3, 3}: "missing well-known attribute",
		{3, 4}: "attribute flags error", {3, 5}: "attribute length error", {3, 6}: "invalid ORIGIN attribute",
		{3, 8}: "invalid NEXT_HOP attribute", {3, 9}: "optional attribute error", {3, 10}: "invalid network field",
		{3, 11}: "malformed AS_PATH",
		{5, 1}:  "unexpected message in OpenSent", {5, 2}: "unexpected message in OpenConfirm", {5, 3}: "unexpected message in Established",
		{6, 1}: "maximum number of prefixes reached", {6, 2}: "administrative shutdown", {6, 3}: "peer de-configured",
		{6, 4}: "administrative reset", {6, 5}: "connection rejected", {6, 6}: "other configuration change",
		{6, 7}: "connection collision resolution", {6, 8}: "out of resources", {6, 9}: "hard reset", {6, 10}: "BFD down",
	}
)

// objectNoun is what an event of type typ is about, for a message.
func objectNoun(typ string) string {
	switch {
	case strings.HasPrefix(typ, "interface_"):
		return "interface"
	case strings.HasPrefix(typ, "bgp_peer_"):
		return "peer"
	case strings.HasPrefix(typ, "ospf_neighbor_"):
		return "neighbor"
	}
	return "object"
}

// device names the device a trap came from (see nameDevice), with its
// inventory entry; nil for a device the inventory does not know, which is
// counted. The trap collector names it by its source address; a trap
// that names its agent in snmpTrapAddress.0 (a v1 trap's agent-addr, a
// trap a relay or proxy forwarded) is the agent's, looked up as a
// syslog line relayed with the device's address as hostname is: the
// agent's entry, then the sender's, then their ranges.
func (w *TrapWorker) device(tr *telemetry.Trap) (string, *Device) {
	name, d := trapDevice(w.inv, w.targets, w.gnmi, tr)
	if d == nil && !w.warming {
		w.m.unknown.Inc()
	}
	return name, d
}

// trapDevice names the device of tr as TrapWorker.device does, and as the
// trap collector keys it (DeviceNamer.TrapDevice).
func trapDevice(inv *Inventory, targets *SNMPTargets, gnmi *GNMITargets, tr *telemetry.Trap) (string, *Device) {
	host := trapHost(tr)
	return nameDevice(inv, targets, gnmi, host, host, tr.SourceAddr)
}

// trapHost is what a trap names its device by before the inventory and
// the SNMP targets do: the agent address it gives, else the device the
// receiver named, else its sender's address (a Kafka client's record).
func trapHost(tr *telemetry.Trap) string {
	if agent, ok := trapAgentAddress(tr); ok {
		return agent
	}
	if tr.Device != "" {
		return tr.Device
	}
	return recordDevice("", tr.SourceAddr)
}

// oidSnmpTrapAddress0 is SNMP-COMMUNITY-MIB's snmpTrapAddress.0.
const oidSnmpTrapAddress0 = "1.3.6.1.6.3.18.1.3.0"

// trapAgentAddress is the agent address a trap names in snmpTrapAddress.0,
// if it is one (0.0.0.0, sent by agents that leave it to the receiver, is
// none).
func trapAgentAddress(tr *telemetry.Trap) (string, bool) {
	for _, vb := range tr.Varbinds {
		if strings.TrimPrefix(vb.OID, ".") != oidSnmpTrapAddress0 {
			continue
		}
		s, _ := vb.Value.(string)
		a, err := netip.ParseAddr(s)
		if err != nil || a.IsUnspecified() {
			return "", false
		}
		return a.Unmap().String(), true
	}
	return "", false
}

// varbindValue returns the value of the first varbind with one of names,
// bare ("ifDescr") or with its instance, as the trap collector names the
// columns of a table ("ifDescr.3").
func varbindValue(tr *telemetry.Trap, names ...string) string {
	for _, n := range names {
		for _, vb := range tr.Varbinds {
			// A value in hex is binary (an ifName of NUL bytes): no name.
			if vb.Value != nil && !strings.HasSuffix(vb.Type, "_hex") && (vb.Name == n || strings.HasPrefix(vb.Name, n+".")) {
				if x, ok := vb.Value.(float64); ok {
					// A JSON number: 436207616, not 4.36207616e+08.
					return strconv.FormatFloat(x, 'f', -1, 64)
				}
				if s := fmt.Sprint(vb.Value); s != "" {
					return s // an empty ifName: the ifDescr, or the ifIndex
				}
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

// linkObject names the interface of a linkDown or linkUp: its ifName or
// ifDescr, else (no name) its ifIndex, to be named as the polls name it.
func linkObject(tr *telemetry.Trap) (name, index string) {
	if name = varbindValue(tr, "ifName", "ifDescr"); name != "" {
		return name, ""
	}
	if index = varbindValue(tr, "ifIndex"); index == "" {
		index = ifTableInstance(tr) // ifOperStatus.3 alone
	}
	return "", index
}

// ospfNbrEvent is the event of an OSPF neighbor state change notification
// in state (OSPF-MIB's and OSPFV3-MIB's numbering): sent when a neighbor
// goes back (to down, attempt or init: the adjacency is lost) or reaches
// full (or 2-way, which is no adjacency: no event), RFC 4750 and 5643.
func ospfNbrEvent(state string) string {
	switch state {
	case "8":
		return "ospf_neighbor_up"
	case "1", "2", "3":
		return "ospf_neighbor_down"
	}
	return ""
}

// ccmRunning is CISCO-CONFIG-MAN-MIB's HistoryEventMedium running(3).
const ccmRunning = "3"

// ospfv3Neighbor names an OSPFv3 neighbor by its router ID, as
// %OSPFV3-5-ADJCHG names it: the last index of OSPFV3-MIB's ospfv3NbrTable
// (1.3.6.1.2.1.191.1.9.1.N.IFINDEX.INSTANCE.ROUTERID) or Junos's copy of
// it, an Unsigned32 written as a dotted quad.
func ospfv3Neighbor(tr *telemetry.Trap) string {
	for _, vb := range tr.Varbinds {
		oid := strings.TrimPrefix(vb.OID, ".")
		for _, entry := range [...]string{"1.3.6.1.2.1.191.1.9.1.", "1.3.6.1.4.1.2636.5.4.1.1.9.1."} {
			rest, ok := strings.CutPrefix(oid, entry)
			if !ok {
				continue
			}
			parts := strings.Split(rest, ".") // column, ifIndex, instance, router ID
			if len(parts) != 4 {
				continue
			}
			id, err := strconv.ParseUint(parts[3], 10, 32)
			if err != nil {
				continue
			}
			return netip.AddrFrom4([4]byte{byte(id >> 24), byte(id >> 16), byte(id >> 8), byte(id)}).String()
		}
	}
	return ""
}

// bgpEstablished is BGP4-MIB's (and CISCO-BGP4-MIB's) established(6).
const bgpEstablished = "6"

// neighborsByAddress reports whether a device of inventory vendor names an
// OSPF neighbor by its interface address in its lines, not by its router
// ID: Junos's RPD_OSPF_NBR* ("OSPF neighbor 10.0.0.6 (realm ...)") and
// Huawei's NBR_CHANGE (NeighborAddress=). Their ospfNbrStateChange traps
// then name it so too, or a line and its trap would be two events.
func neighborsByAddress(vendor string) bool {
	switch strings.ToLower(vendor) {
	case VendorJunos, "juniper", VendorHuawei, "huawei":
		return true
	}
	return false
}

// ospfTrapNeighbor is how an ospfNbrStateChange of device names its
// neighbor, router ID rid or interface address addr: by addr where byAddr
// (the device's inventory entry or lines say Junos or VRP, whose lines name
// it so), else by rid; but a neighbor the detector holds down under one of
// the two keeps that spelling until it is back. The spelling byAddr gives
// may change while the neighbor is down (the device's first line comes
// after the trap down; the vendor its lines showed is lost to a rename or
// the table's clearing when full), and the trap up must end the down its
// trap raised: else that alert stays open for good. The router ID first:
// a down under it only a trap ends, where a Junos or VRP line of the
// neighbor back ends one under its address.
func (d *detector) ospfTrapNeighbor(device, rid, addr string, byAddr bool) string {
	for _, o := range [2]string{rid, addr} {
		if typ, _, ok := d.reportedState(device, "ospf_neighbor_down", o); ok && typ == "ospf_neighbor_down" {
			return o
		}
	}
	if byAddr {
		return addr
	}
	return rid
}

// noteOSPFSpellings notes that device's OSPF neighbor of router ID rid has
// address addr, as a warm-up's ospfNbrStateChange gives both. The warm-up
// spells the trap as the lines read back by then say (ospfTrapNeighbor),
// the syslog warm-up running beside it, which may not be how the process
// before published it: adoptPublished then takes the published spelling.
func (d *detector) noteOSPFSpellings(device, rid, addr string) {
	k := objectKey{device, rid, "ospf_neighbor_down"} // the pair's key in states
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.ospfSpelt[k] == addr {
		return
	}
	if d.ospfSpelt == nil || len(d.ospfSpelt) >= 2*d.maxObjects {
		d.ospfSpelt = map[objectKey]string{} // full: starts again, as lineVendors
	}
	k.device, rid, addr = strings.Clone(device), strings.Clone(rid), strings.Clone(addr)
	k.object = rid
	d.ospfSpelt[k] = addr
	k.object = addr
	d.ospfSpelt[k] = rid
}

// ospfNeighborAddr is the address of the OSPF neighbor of an
// ospfNbrStateChange (ospfNbrIpAddr, or the one that indexes
// ospfNbrTable), "" when it gives none or an unnumbered link's 0.0.0.0.
func ospfNeighborAddr(tr *telemetry.Trap) string {
	a := varbindValue(tr, "ospfNbrIpAddr")
	if a == "" {
		a = ospfNbrIndexAddr(tr)
	}
	if a == "0.0.0.0" {
		return ""
	}
	return a
}

// ospfNbrIndexAddr is the address that indexes ospfNbrTable in a trap's
// varbinds (1.3.6.1.2.1.14.10.1.N.A.B.C.D.L, L the address-less index),
// "" when none does.
func ospfNbrIndexAddr(tr *telemetry.Trap) string {
	for _, vb := range tr.Varbinds {
		if rest, ok := strings.CutPrefix(strings.TrimPrefix(vb.OID, "."), "1.3.6.1.2.1.14.10.1."); ok {
			if parts := strings.Split(rest, "."); len(parts) == 6 {
				if a, err := netip.ParseAddr(strings.Join(parts[1:5], ".")); err == nil {
					return a.String()
				}
			}
		}
	}
	return ""
}

// ospfNeighbor names an OSPF neighbor: its router ID (ospfNbrRtrId) where
// the trap has it, as the Cisco family's and Arista's syslog lines name
// it, so the trap and the line are one event; else its address
// (ospfNbrIpAddr, or the one that indexes ospfNbrTable,
// 1.3.6.1.2.1.14.10.1.N.A.B.C.D.L, L the address-less index).
func ospfNeighbor(tr *telemetry.Trap) string {
	if v := varbindValue(tr, "ospfNbrRtrId", "ospfNbrIpAddr"); v != "" {
		return v
	}
	return ospfNbrIndexAddr(tr)
}

// cbgpPeer2Addr reads the peer address that indexes CISCO-BGP4-MIB's
// cbgpPeer2Table (1.3.6.1.4.1.9.9.187.1.2.5.1.N.TYPE.LEN.OCTETS..., an
// InetAddressType and InetAddress).
func cbgpPeer2Addr(oid string) string {
	rest, ok := strings.CutPrefix(strings.TrimPrefix(oid, "."), "1.3.6.1.4.1.9.9.187.1.2.5.1.")
	if !ok {
		return ""
	}
	parts := strings.Split(rest, ".")
	if len(parts) < 3 {
		return ""
	}
	octets := parts[3:]
	// Some agents leave the length out: the type's octets alone (whose
	// first may equal the count of the rest, 3 of 3.3.3.3).
	if n, err := strconv.Atoi(parts[2]); err != nil || n != len(octets) || len(parts)-2 == inetAddrLen(parts[1]) {
		octets = parts[2:]
	}
	return octetsAddr(octets)
}

// vendorBGPPeerAddr reads the peer address that indexes Junos's
// jnxBgpM2PeerTable (1.3.6.1.4.1.2636.5.1.1.2.1.1.1.N.INSTANCE.LTYPE.LOCAL.
// RTYPE.REMOTE, the addresses without a length), EOS's
// aristaBgp4V2PeerTable and the tables indexed alike
// (1.3.6.1.4.1.30065.4.1.1.T.1.N.INSTANCE.TYPE.LEN.OCTETS...), or FRR's
// (1.3.6.1.4.1.7336.4.2.1.1.T.1.N.INSTANCE.TYPE.OCTETS...).
func vendorBGPPeerAddr(oid string) string {
	oid = strings.TrimPrefix(oid, ".")
	if rest, ok := strings.CutPrefix(oid, "1.3.6.1.4.1.2636.5.1.1.2.1.1.1."); ok {
		parts := strings.Split(rest, ".")[1:] // after the column
		if len(parts) < 2 {
			return ""
		}
		local := inetAddrLen(parts[1])
		if local == 0 || len(parts) < 3+local {
			return ""
		}
		return inetAddr(parts[2+local], parts[3+local:])
	}
	if rest, ok := strings.CutPrefix(oid, "1.3.6.1.4.1.30065.4.1.1."); ok {
		parts := strings.Split(rest, ".") // table, entry, column, index
		if len(parts) < 6 || parts[1] != "1" || parts[5] != strconv.Itoa(len(parts)-6) {
			return ""
		}
		return inetAddr(parts[4], parts[6:])
	}
	if rest, ok := strings.CutPrefix(oid, "1.3.6.1.4.1.7336.4.2.1.1."); ok {
		// FRR's: table, entry, column, instance, type, the address
		// without its length (bgpd/bgp_snmp_bgp4v2.c).
		parts := strings.Split(rest, ".")
		if len(parts) < 5 || parts[1] != "1" {
			return ""
		}
		return inetAddr(parts[4], parts[5:])
	}
	return ""
}

// inetAddrLen is the length of an InetAddress of InetAddressType typ:
// ipv4(1), ipv6(2), and ipv4z(3) and ipv6z(4), an address and a 4-octet
// zone index (a link-local peer); 0 for the others.
func inetAddrLen(typ string) int {
	switch typ {
	case "1":
		return 4
	case "2":
		return 16
	case "3":
		return 8
	case "4":
		return 20
	}
	return 0
}

// inetAddr reads an InetAddress of InetAddressType typ from the
// sub-identifiers of an index; "" unless they are the type's length. A
// zone index is left out: the number is the agent's own.
func inetAddr(typ string, octets []string) string {
	n := inetAddrLen(typ)
	if n == 0 || len(octets) != n {
		return ""
	}
	if n == 8 || n == 20 {
		octets = octets[:n-4]
	}
	return octetsAddr(octets)
}

// octetsAddr is the IPv4 or IPv6 address of 4 or 16 sub-identifiers, one
// octet each; "" for others.
func octetsAddr(octets []string) string {
	b := make([]byte, 0, 16)
	for _, p := range octets {
		v, err := strconv.ParseUint(p, 10, 8)
		if err != nil {
			return ""
		}
		b = append(b, byte(v))
	}
	if a, ok := netip.AddrFromSlice(b); ok {
		return a.Unmap().String()
	}
	return ""
}

// bgpPeer finds the peer address: bgpPeerRemoteAddr's value, or the
// address that indexes the BGP4-MIB peer table (the OID's last four
// components, 1.3.6.1.2.1.15.3.1.N.A.B.C.D), CISCO-BGP4-MIB's
// cbgpPeer2Table, or Junos's and EOS's BGP4-V2 peer tables.
func bgpPeer(tr *telemetry.Trap) string {
	if v := varbindValue(tr, "bgpPeerRemoteAddr"); v != "" {
		return v
	}
	for _, vb := range tr.Varbinds {
		if a := cbgpPeer2Addr(vb.OID); a != "" {
			return a
		}
		if a := vendorBGPPeerAddr(vb.OID); a != "" {
			return a
		}
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
