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
	// (the delete's path less its leaf); counter is its field.
	measurement, parent, counter string
	// norm is the index of the normalised rate it gave (normalisedRateNames),
	// -1 for none; object the interface of its "interface" record, "" for
	// none.
	norm   int
	object string
}

// deletedCounter reads a gNMI delete of a leaf (the single field
// deleted=true, its path tag the leaf's: collectors/gnmi) as the delete
// of a counter of the row at its parent path, as the collector publishes
// the leaf's samples (/interfaces/interface[name=X]/state/counters/
// in-octets: field in-octets of the row at .../state/counters). When that
// row has a sample of it, the sample is forgotten, so a counter made
// again (the port back in the config) gives no rate over the gap from the
// old one, and the delete is kept in w.counterDel for enrichBatch. p's
// tags and device are still as the collector published them (the row's
// ID is made from those). Anything else is no such delete.
func (w *MetricsWorker) deletedCounter(p *telemetry.Point) {
	w.counterDel = counterDelete{}
	path, _ := p.Tag("path")
	i := strings.LastIndexByte(path, '/')
	if i <= 0 || strings.ContainsAny(path[i:], "[]") {
		return // not a leaf: a list entry, the root
	}
	leaf := path[i+1:]
	if j := strings.LastIndexByte(leaf, ':'); j >= 0 && j+1 < len(leaf) {
		leaf = leaf[j+1:] // a module prefix, as the collector strips it
	}
	measurement, ok := strings.CutSuffix(p.Measurement, "_"+strings.ReplaceAll(leaf, "-", "_"))
	if !ok || measurement == "" || leaf == "" {
		return
	}
	parent := path[:i]
	tags := slices.Clone(p.Tags) // rare: a delete
	for k := range tags {
		if tags[k].Key == "path" {
			tags[k].Value = parent
		}
	}
	rc := w.rates.rows[string(appendRowID(nil, p.Device, measurement, tags))]
	if rc == nil {
		return
	}
	n := len(rc.counters)
	rc.counters = slices.DeleteFunc(rc.counters, func(s counterSample) bool { return s.field == leaf })
	if len(rc.counters) == n {
		return // no sample of it: no rate to take back
	}
	w.counterDel = counterDelete{ok: true, measurement: measurement, parent: parent, counter: leaf, norm: -1}
	if c, ok := interfaceCounterNames(measurement)[leaf]; ok {
		w.counterDel.norm = c.rate
		probe := telemetry.Point{Measurement: measurement, Tags: p.Tags}
		w.counterDel.object, _ = viewObject(&probe)
	}
}

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
		*d = telemetry.Point{V: telemetry.Version, Measurement: del.measurement + "_" + strings.ReplaceAll(field, "-", "_"),
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
