package telemetry

import (
	"iter"
	"strings"
)

// LeafRow is a row a gNMI leaf's delete may name a field of (LeafRows).
type LeafRow struct {
	// Measurement and Path are the row's; Field is the leaf's field in
	// it, its path below the row (in-octets, state/counters/in-octets).
	Measurement, Path, Field string
}

// LeafRows yields the rows that may hold the leaf a gNMI delete names
// (measurement and path as the collector names a leaf's delete:
// interfaces_interface_state_counters_in_octets at /interfaces/
// interface[name=X]/state/counters/in-octets), nearest first: its
// container's row, where the collector publishes a leaf's samples
// (field in-octets of the row at .../state/counters), then each one above
// it up to the first list entry, where the collector names a leaf that came
// inside a JSON object (field state/counters/in-octets of the row at
// /interfaces/interface[name=X]). Module prefixes are dropped, as the
// collector drops them. Nothing for a path that ends at a list entry, or a
// measurement that does not name the path's leaves.
func LeafRows(measurement, path string) iter.Seq[LeafRow] {
	return func(yield func(LeafRow) bool) {
		field := ""
		for {
			i := strings.LastIndexByte(path, '/')
			if i <= 0 || strings.ContainsAny(path[i:], "[]") {
				return // not a leaf, or up to a list entry: its keys are the row's
			}
			name := path[i+1:]
			if j := strings.LastIndexByte(name, ':'); j >= 0 && j+1 < len(name) {
				name = name[j+1:] // a module prefix, as the collector strips it
			}
			m, ok := strings.CutSuffix(measurement, "_"+strings.ReplaceAll(name, "-", "_"))
			if !ok || m == "" || name == "" {
				return
			}
			if field == "" {
				field = name
			} else {
				field = name + "/" + field
			}
			path, measurement = path[:i], m
			if !yield(LeafRow{Measurement: measurement, Path: path, Field: field}) {
				return
			}
		}
	}
}
