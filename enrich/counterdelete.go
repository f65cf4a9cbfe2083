package enrich

import (
	"slices"
	"strings"

	"github.com/weirnet/weir/broker"
	"github.com/weirnet/weir/telemetry"
)

// counterDelete is a gNMI delete of counters that enrich gave rates for
// (deletedCounter): what enrichBatch publishes deletes of besides the
// delete itself.
type counterDelete struct {
	ok bool
	// leaves are fields of rows to delete, each as a leaf of its row's
	// path (measurement and path as the collector names a leaf's delete).
	leaves []derivedLeaf
	// views are the normalised rates of "interface" records to delete.
	views []derivedView
}

// derivedLeaf is field of the row at path, of measurement.
type derivedLeaf struct{ measurement, path, field string }

// derivedView is field (a normalised rate, oper_up) of the "interface"
// record of object.
type derivedView struct {
	object string
	field  string
}

// addCounter adds what a forgotten counter of the row (measurement, path)
// gave: its rate, unless the delete's own path covers the row (rowGone),
// and its normalised rate, in the row and in its "interface" record
// (object, "" for none), and for an octet counter the utilisation made of
// that rate and the speed_mbps beside it (an interface with a speed row
// has them: gnmiSpeed), so a port removed leaf by leaf leaves no speed
// served until stale; a port still there gives its speed again with its
// next counters. A delete of a series a sink does not have (no speed
// known) changes nothing.
func (d *counterDelete) addCounter(w *MetricsWorker, measurement, path, counter, object string, rowGone bool) {
	d.ok = true
	if !rowGone {
		d.leaves = append(d.leaves, derivedLeaf{measurement, path, w.rateName(counter)})
	}
	c, ok := interfaceCounterNames(measurement)[counter]
	if !ok {
		return
	}
	fields := []string{normalisedRateNames[c.rate]}
	switch c.rate {
	case inOctets:
		fields = append(fields, "in_utilization_pct", "speed_mbps")
	case outOctets:
		fields = append(fields, "out_utilization_pct", "speed_mbps")
	}
	for _, field := range fields {
		if !rowGone && !slices.Contains(d.leaves, derivedLeaf{measurement, path, field}) {
			d.leaves = append(d.leaves, derivedLeaf{measurement, path, field})
		}
		if object != "" && !slices.Contains(d.views, derivedView{object, field}) {
			d.views = append(d.views, derivedView{object, field})
		}
	}
}

// deletedOperStatus reads a gNMI delete of an interface's oper-status leaf
// (a resubscription's snapshot without the port deletes it leaf by leaf)
// as the delete of the oper_up enrich derived from it: in the row that had
// it, the state container's (field oper-status) or, when the state came in
// a JSON object, the interface's (field state/oper-status), and in the
// interface's "interface" record. Which of the two rows had it is not
// kept, so both are deleted: a delete of a series a sink does not have
// changes nothing. A delete of the state container takes the state row
// whole, and the record (viewDeleted), but not the oper_up of the
// interface's row above it, which had the state in a JSON object: that
// one is deleted here too.
func (w *MetricsWorker) deletedOperStatus(p *telemetry.Point) {
	var operFields []string // the fields, of a row the delete names, oper_up came from
	switch p.Measurement {
	case "interfaces_interface_state_oper_status":
		operFields = []string{"oper-status", "state/oper-status"}
	case "interfaces_interface_state":
		operFields = []string{"state"}
	default:
		return
	}
	name, _ := p.Tag("name")
	object := w.longNames.of(name) // as its view names it
	leafPath, _ := p.Tag("path")
	d := &w.counterDel
	found := false
	for row := range telemetry.LeafRows(p.Measurement, leafPath) {
		if slices.Contains(operFields, row.Field) {
			found = true
			d.leaves = append(d.leaves, derivedLeaf{row.Measurement, row.Path, "oper_up"})
		}
	}
	if !found {
		return
	}
	d.ok = true
	if p.Measurement == "interfaces_interface_state_oper_status" && object != "" {
		d.views = append(d.views, derivedView{object, "oper_up"})
	}
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
		rc.byField = nil // places moved
		if len(rc.counters) == n {
			continue // no sample of it here: no rate to take back
		}
		object := ""
		if _, ok := interfaceCounterNames(row.Measurement)[row.Field]; ok {
			probe := telemetry.Point{Measurement: row.Measurement, Tags: p.Tags}
			object, _ = viewObject(&probe)
		}
		w.counterDel.addCounter(w, row.Measurement, row.Path, row.Field, object, false)
		return
	}
	if leafPath != "" {
		w.deletedContainer(p, leafPath)
	}
}

// deletedContainer reads a gNMI delete of a container or a list entry at
// path (an interface's state/counters, the interface, /interfaces) as the
// delete of every counter under it: of each row of the device at or below
// path, and of the fields under path of a row above it, which got them
// inside a JSON object (state/counters/in-octets of the row at /interfaces/
// interface[name=X], for a delete of its state/counters). Their samples
// are forgotten, as a leaf's are, and what enrich derived from them is
// kept in w.counterDel: the rates of a row above path (the delete's own
// path covers those of the rows below it) and the normalised rates of the
// "interface" records, unless the delete removes those whole (viewDeleted).
// It looks at the paths of the device's rows (rates.byPath): every gNMI
// delete that is no counter's comes here, and route churn sends many.
func (w *MetricsWorker) deletedContainer(p *telemetry.Point, path string) {
	_, wholeView := viewDeleted(p)
	for at, ids := range w.rates.byPath[p.Device] {
		prefix, above := "", false
		if !telemetry.PathUnder(at, path) {
			rel, ok := telemetry.FieldPathBelow(path, at)
			if !ok {
				continue
			}
			prefix, above = rel+"/", true
		}
		for _, id := range ids {
			rc := w.rates.rows[id]
			if rc == nil || len(rc.counters) == 0 {
				continue
			}
			_, measurement, tags, ok := parseRowID(id)
			if !ok {
				continue
			}
			object := ""
			if !wholeView {
				probe := telemetry.Point{Measurement: measurement, Tags: tags}
				object, _ = viewObject(&probe)
			}
			rc.counters = slices.DeleteFunc(rc.counters, func(s counterSample) bool {
				if above && !strings.HasPrefix(s.field, prefix) {
					return false
				}
				w.counterDel.addCounter(w, measurement, at, s.field, object, !above)
				return true
			})
			rc.byField = nil // places moved
		}
	}
}

// parseRowID reads back a row's ID (appendRowID): its device, measurement
// and tags.
func parseRowID(id string) (device, measurement string, tags []telemetry.Tag, ok bool) {
	r := rowIDReader(id)
	if device, ok = r.next(); !ok {
		return
	}
	if measurement, ok = r.next(); !ok {
		return
	}
	for r != "" {
		k, ok1 := r.next()
		v, ok2 := r.next()
		if !ok1 || !ok2 {
			return device, measurement, tags, false
		}
		tags = append(tags, telemetry.Tag{Key: k, Value: v})
	}
	return device, measurement, tags, true
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
	del := &w.counterDel
	if !del.ok {
		return recs
	}
	d := &w.view // scratch: the view is made after
	for _, l := range del.leaves {
		tags := slices.Clone(p.Tags)
		for k := range tags {
			if tags[k].Key == "path" {
				tags[k].Value = l.path + "/" + l.field
			}
		}
		*d = telemetry.Point{V: telemetry.Version, Measurement: l.measurement + "_" + leafMeasurement.Replace(l.field),
			Device: p.Device, Tags: tags, Fields: []telemetry.Field{telemetry.BoolField("deleted", true)},
			Time: p.Time, ReceivedAt: p.ReceivedAt, Source: "enrich"}
		recs = w.appendMetricRecord(recs, d, r)
	}
	for _, v := range del.views {
		deleteView(p, d, v.object)
		d.Measurement = "interface_" + v.field
		recs = w.appendMetricRecord(recs, d, r)
	}
	return recs
}
