package enrich

import (
	"errors"

	"github.com/weirnet/weir/broker"
	"github.com/weirnet/weir/telemetry"
)

// Tried is what Try makes of a line.
type Tried struct {
	// Enriched is the enriched record's value.
	Enriched []byte
	// Event is the event the line reports (Type "": none), as the
	// detector passes it on (with its ObjectID), before de-duplication
	// and flap detection; its cause is partition -1, offset -1: no record.
	Event telemetry.Event
	// Rule is the rule that matched ("": none).
	Rule string
}

// Try enriches the value of one raw.syslog record as the worker does,
// without publishing, counting or remembering anything: `weir classify`
// shows what weir makes of a line. Not for a worker that runs.
func (w *Worker) Try(value []byte) (Tried, error) {
	warming := w.warming
	w.warming = true // nothing counted, nothing logged
	w.trying = true  // a line without a hostname, classified without --from
	defer func() { w.warming, w.trying = warming, false }()
	r := broker.Record{Topic: w.topics.RawSyslog, Partition: -1, Offset: -1, Value: value}
	d, ok := w.decodeSyslog(&r)
	if !ok {
		return Tried{}, errors.New("not a weir syslog record")
	}
	out, ev := w.encodeSyslog(&r, d)
	if ev.Object != "" {
		ev.ObjectID = objectID(ev) // as the detector gives every event it passes on
	}
	return Tried{Enriched: out.Value, Event: ev, Rule: d.info.Rule}, nil
}
