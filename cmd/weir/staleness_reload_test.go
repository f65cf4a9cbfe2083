package main

import (
	"slices"
	"strings"
	"testing"
)

// TestReloadIntervalLeavesDefaultStaleness: only the SNMP interval
// changes (applied by the reload through the targets), the prometheus sink
// is untouched in the file. The derived default staleness changes with it
// and is applied with the targets (the sinks' reload part), so nothing
// needs a restart.
func TestReloadIntervalLeavesDefaultStaleness(t *testing.T) {
	const sink = "sinks:\n  - {type: prometheus, name: prom, listen: \"127.0.0.1:9273\", topics: [enriched.metrics]}\n"
	snmp := func(iv string) string {
		return "snmp:\n  defaults: {community: public, interval: " + iv + "}\n  targets:\n    - {name: r1, address: 127.0.0.1:161}\n"
	}
	started, next := mustParse(t, snmp("60s")+sink), mustParse(t, snmp("10m")+sink)
	if got := restartNeeded(started, next); len(got) != 0 {
		t.Errorf("only snmp.defaults.interval changed: restart_needed=%v; the running sink keeps staleness %v while targets now poll every 10m (next config says %v)",
			got, started.Sinks[0].Staleness.Std(), next.Sinks[0].Staleness.Std())
	}
}

// TestReloadExplicitStalenessApplied: a prometheus sink's staleness set in
// the file and changed before a SIGHUP is applied by the reload (the sinks'
// part hands it to the running sink, as the derived default), so the log
// must not say that the sinks section needs a restart: it said so, while
// the new staleness already held.
func TestReloadExplicitStalenessApplied(t *testing.T) {
	sink := func(staleness string) string {
		return "sinks:\n  - {type: prometheus, name: prom, listen: \"127.0.0.1:9273\", topics: [enriched.metrics], staleness: " + staleness + "}\n"
	}
	started, next := mustParse(t, sink("10m")), mustParse(t, sink("6m"))
	if got := restartNeeded(started, next); len(got) != 0 {
		t.Errorf("only the sink's staleness changed, which the reload applies: restart_needed=%v", got)
	}
	// Anything else of a sink still needs a restart.
	other := mustParse(t, strings.Replace(sink("6m"), "9273", "9274", 1))
	if got := restartNeeded(started, other); !slices.Equal(got, []string{"sinks"}) {
		t.Errorf("a sink's listen changed: restart_needed=%v, want [sinks]", got)
	}
}

// TestReloadMaxSeriesApplied: a prometheus sink's max_series changed
// before a SIGHUP is applied to the running sink, so it needs no restart.
func TestReloadMaxSeriesApplied(t *testing.T) {
	sink := func(max string) string {
		return "sinks:\n  - {type: prometheus, name: prom, listen: \"127.0.0.1:9273\", topics: [enriched.metrics], max_series: " + max + "}\n"
	}
	if got := restartNeeded(mustParse(t, sink("1000")), mustParse(t, sink("50000"))); len(got) != 0 {
		t.Errorf("only the sink's max_series changed, which the reload applies: restart_needed=%v", got)
	}
}
