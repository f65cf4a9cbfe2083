package sinks

import (
	"fmt"
	"path"
	"strconv"

	"github.com/weirnet/weir/configs"
	"github.com/weirnet/weir/telemetry"
)

// syslogSeverities names syslog severities by number (RFC 5424).
var syslogSeverities = [...]string{"emerg", "alert", "crit", "err", "warning", "notice", "info", "debug"}

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
		if len(f.severities) > 0 {
			name := it.Log.SeverityName
			if name == "" && it.Log.Severity >= 0 && it.Log.Severity < len(syslogSeverities) {
				name = syslogSeverities[it.Log.Severity]
			}
			if !anyMatch(f.severities, name) && !anyMatch(f.severities, strconv.Itoa(it.Log.Severity)) {
				return false
			}
		}
		tags, device = it.Log.Tags, it.Log.Device
	case it.Event != nil:
		if len(f.severities) > 0 && !anyMatch(f.severities, it.Event.Severity) {
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
