package enrich

import (
	"slices"
	"strings"

	"github.com/weirnet/weir/broker"
	"github.com/weirnet/weir/telemetry"
)

// counterDelete is a gNMI delete of one counter that enrich gave rates for
// (deletedCounter): what enrichBatch publishes deletes of besides the
// delete itself.
type counterDelete struct {
	ok bool
	// measurement and parent are the counter's row's measurement and path
	// (the delete's path less its leaf, or less more for a counter that
	// came in a JSON object); counter is its field.
	measurement, parent, counter string
	// norm is the index of the normalised rate it gave (normalisedRateNames),
	// -1 for none; object the interface of its "interface" record, "" for
	// none.
	norm   int
	object string
}

// deletedCounter reads a gNMI delete of a leaf (the single field
// deleted=true, its path tag the leaf's: collectors/gnmi) as the delete
// of a counter of the row that has its samples: the row at its parent
// path, as the collector publishes a leaf's samples (/interfaces/
// interface[name=X]/state/counters/in-octets: field in-octets of the row
// at .../state/counters), else one above it up to the first list entry,
// as the collector names a leaf that came inside a JSON object (field
// state/counters/in-octets of the row at /interfaces/interface[name=X]).
// When such a row has a sample of it, the sample is forgotten, so a
// counter made again (the port back in the config) gives no rate over the
// gap from the old one, and the delete is kept in w.counterDel for
// enrichBatch. p's tags and device are still as the collector published
// them (the row's ID is made from those). Anything else is no such
// delete.
func (w *MetricsWorker) deletedCounter(p *telemetry.Point) {
	w.counterDel = counterDelete{}
	leafPath, _ := p.Tag("path")
	var tags []telemetry.Tag
	for row := range telemetry.LeafRows(p.Measurement, leafPath) {
		if tags == nil {
			tags = slices.Clone(p.Tags) // rare: a delete
		}
		for k := range tags {
			if tags[k].Key == "path" {
				tags[k].Value = row.Path
			}
		}
		rc := w.rates.rows[string(appendRowID(nil, p.Device, row.Measurement, tags))]
		if rc == nil {
			continue
		}
		n := len(rc.counters)
		rc.counters = slices.DeleteFunc(rc.counters, func(s counterSample) bool { return s.field == row.Field })
		if len(rc.counters) == n {
			continue // no sample of it here: no rate to take back
		}
		w.counterDel = counterDelete{ok: true, measurement: row.Measurement, parent: row.Path, counter: row.Field, norm: -1}
		if c, ok := interfaceCounterNames(row.Measurement)[row.Field]; ok {
			w.counterDel.norm = c.rate
			probe := telemetry.Point{Measurement: row.Measurement, Tags: p.Tags}
			w.counterDel.object, _ = viewObject(&probe)
		}
		return
	}
}

// leafMeasurement turns a field's path below its row (state/counters/
// in-octets_rate) into what the collector adds to the row's measurement
// for a leaf's delete (state_counters_in_octets_rate).
var leafMeasurement = strings.NewReplacer("-", "_", "/", "_")

// appendCounterDeletes appends, after the delete of a counter p (enriched:
// its device and tags are the published ones) that deletedCounter kept,
// the deletes of what enrich derived from it, in the forms the sinks know
// a gNMI delete by: its rate and its normalised rate in its row, each as a
// leaf of the row's path (measurement and path as the collector names a
// leaf's delete), and the normalised rate of the interface's "interface"
// record, as enrich's delete of that record (no path) whose measurement
// names the field too, as a leaf's does: interface_in_octets_rate.
func (w *MetricsWorker) appendCounterDeletes(recs []outRecord, p *telemetry.Point, r *broker.Record) []outRecord {
	del := w.counterDel
	if !del.ok {
		return recs
	}
	d := &w.view // scratch: the view is made after
	leaf := func(field string) {
		tags := slices.Clone(p.Tags)
		for k := range tags {
			if tags[k].Key == "path" {
				tags[k].Value = del.parent + "/" + field
			}
		}
		*d = telemetry.Point{V: telemetry.Version, Measurement: del.measurement + "_" + leafMeasurement.Replace(field),
			Device: p.Device, Tags: tags, Fields: []telemetry.Field{telemetry.BoolField("deleted", true)},
			Time: p.Time, ReceivedAt: p.ReceivedAt, Source: "enrich"}
		recs = w.appendMetricRecord(recs, d, r)
	}
	leaf(w.rateName(del.counter))
	if del.norm < 0 {
		return recs
	}
	leaf(normalisedRateNames[del.norm])
	if del.object == "" {
		return recs
	}
	deleteView(p, d, del.object)
	d.Measurement = "interface_" + normalisedRateNames[del.norm]
	return w.appendMetricRecord(recs, d, r)
}
