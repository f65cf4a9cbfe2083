package main

import "testing"

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
