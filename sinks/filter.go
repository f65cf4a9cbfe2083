package sinks

import (
	"fmt"
	"path"
	"strconv"
	"strings"

	"github.com/weirnet/weir/configs"
	"github.com/weirnet/weir/telemetry"
)

// severityNames are the names of each syslog severity, by number: the
// long forms enrichment writes in a log's severity_name and an event's
// severity (telemetry.SeverityNames: "emergency", "error",
// "informational"), the keywords of syslog.conf and RFC 5424's (emerg ...
// debug), and "panic" and "warn". A filter names a severity in any of
// them, or by number, and selects the same records.
var severityNames = func() [8][]string {
	aliases := [8][]string{{"emerg", "panic"}, nil, {"crit"}, {"err"}, {"warn"}, nil, {"info"}, nil}
	var names [8][]string
	for i, long := range telemetry.SeverityNames {
		names[i] = append([]string{long}, aliases[i]...)
	}
	return names
}()

// severityNumber is the number of a severity name, -1 if it names none.
func severityNumber(name string) int {
	for i, names := range severityNames {
		for _, n := range names {
			if strings.EqualFold(n, name) {
				return i
			}
		}
	}
	return -1
}

// severityMatch reports whether a record of severity name (or, when name
// is empty or names no syslog severity, of number sev) matches patterns:
// its name as written, any other name of its severity, or its number.
func severityMatch(patterns []string, name string, sev int) bool {
	if name != "" && anyMatch(patterns, name) {
		return true
	}
	if n := severityNumber(name); n >= 0 {
		sev = n
	}
	if sev < 0 || sev >= len(severityNames) {
		return false
	}
	for _, n := range severityNames[sev] {
		if anyMatch(patterns, n) {
			return true
		}
	}
	return anyMatch(patterns, strconv.Itoa(sev))
}

type filter struct {
	measurements, severities, eventTypes []string
	tags                                 map[string]string
}

func newFilter(f configs.SinkFilter) (*filter, error) {
	all := append(append(append([]string{}, f.Measurements...), f.Severities...), f.EventTypes...)
	for _, v := range f.Tags {
		all = append(all, v)
	}
	for _, p := range all {
		// Reject a bad glob now rather than never matching later.
		if _, err := path.Match(p, ""); err != nil {
			return nil, fmt.Errorf("filter pattern %q: %w", p, err)
		}
	}
	return &filter{measurements: f.Measurements, severities: f.Severities, eventTypes: f.EventTypes, tags: f.Tags}, nil
}

func anyMatch(patterns []string, s string) bool {
	for _, p := range patterns {
		if ok, _ := path.Match(p, s); ok {
			return true
		}
	}
	return false
}

// matchEnding reports whether ev, which ends an event of type ended (an
// up its down), matches as such an event of ev's device and tags would,
// whatever its severity (see Resolver).
func (f *filter) matchEnding(ev *telemetry.Event, ended string) bool {
	e := *ev
	e.Type, e.Severity = ended, ""
	g := *f
	g.severities = nil
	return g.match(&Item{Event: &e})
}

// matchPoint is match for a metric decoded as a telemetry.Point.
func (f *filter) matchPoint(p *telemetry.Point) bool {
	if f.empty() {
		return true
	}
	if len(f.measurements) > 0 && !anyMatch(f.measurements, p.Measurement) {
		return false
	}
	for k, pat := range f.tags {
		v, ok := p.Tag(k)
		if k == "device" && !ok {
			v = p.Device
		}
		if ok, _ := path.Match(pat, v); !ok {
			return false
		}
	}
	return true
}

func (f *filter) match(it *Item) bool {
	if f.empty() {
		return true
	}
	if it.Point != nil {
		return f.matchPoint(it.Point)
	}
	var tags map[string]string
	device := ""
	switch {
	case it.Metric != nil:
		if len(f.measurements) > 0 && !anyMatch(f.measurements, it.Metric.Measurement) {
			return false
		}
		tags, device = it.Metric.Tags, it.Metric.Device
	case it.Log != nil:
		if len(f.severities) > 0 && !severityMatch(f.severities, it.Log.SeverityName, it.Log.Severity) {
			return false
		}
		tags, device = it.Log.Tags, it.Log.Device
	case it.Event != nil:
		if len(f.severities) > 0 && !severityMatch(f.severities, it.Event.Severity, -1) {
			return false
		}
		if len(f.eventTypes) > 0 && !anyMatch(f.eventTypes, it.Event.Type) {
			return false
		}
		tags, device = it.Event.Tags, it.Event.Device
	default:
		return len(f.tags) == 0
	}
	for k, p := range f.tags {
		v, ok := tags[k]
		if k == "device" && !ok {
			v, ok = device, true
		}
		if ok, _ := path.Match(p, v); !ok {
			return false
		}
	}
	return true
}

func (f *filter) empty() bool {
	return len(f.measurements) == 0 && len(f.severities) == 0 && len(f.eventTypes) == 0 && len(f.tags) == 0
}
