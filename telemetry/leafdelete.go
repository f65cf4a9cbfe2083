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

// FieldPathBelow is path below the row path at, as the gNMI collector
// names a field that came inside a JSON object at at: its elements joined
// by "/", module prefixes dropped (state/counters for a delete of
// /interfaces/interface[name=X]/openconfig-interfaces:state/counters below
// the row at /interfaces/interface[name=X]); false unless path is below at.
// A delete of a container names the fields of a row above it so.
func FieldPathBelow(path, at string) (string, bool) {
	if at == "" {
		return "", false
	}
	rest, ok := strings.CutPrefix(path, at)
	if !ok {
		return "", false
	}
	if !strings.HasSuffix(at, "/") {
		if rest, ok = strings.CutPrefix(rest, "/"); !ok {
			return "", false
		}
	}
	if rest == "" {
		return "", false
	}
	// Module prefixes, as the collector drops them from a JSON object's
	// names; only in element names, not in key values (after "[").
	var b strings.Builder
	for len(rest) > 0 {
		end := elemEnd(rest)
		elem := rest[:end]
		rest = strings.TrimPrefix(rest[end:], "/")
		name, keys := elem, ""
		if i := strings.IndexByte(elem, '['); i >= 0 {
			name, keys = elem[:i], elem[i:]
		}
		if i := strings.LastIndexByte(name, ':'); i >= 0 {
			name = name[i+1:]
		}
		if b.Len() > 0 {
			b.WriteByte('/')
		}
		b.WriteString(name)
		b.WriteString(keys)
	}
	return b.String(), true
}

// elemEnd is where the first element of a path ends: its first "/" outside
// a key's brackets (a key value may hold one: name=Ethernet1/1), else its
// length.
func elemEnd(s string) int {
	in := false
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '\\':
			i++
		case '[':
			in = true
		case ']':
			in = false
		case '/':
			if !in {
				return i
			}
		}
	}
	return len(s)
}

// PathUnder reports whether gNMI path p is path or below it: a child
// element ("/a/b" under "/a"), a list entry ("/a/b[k=v]" under "/a/b"), or
// anything under the root "/".
func PathUnder(p, path string) bool {
	rest, ok := strings.CutPrefix(p, path)
	return ok && (rest == "" || rest[0] == '/' || rest[0] == '[' || strings.HasSuffix(path, "/"))
}
