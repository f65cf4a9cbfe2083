package sinks_test

import (
	"testing"

	"github.com/weirnet/weir/sinks/internal/sinktest"
)

// TestCountersExportedFromStart: a running sink exports its records and
// each error kind at 0 before anything happens, so an alert on
// increase(weir_sink_errors_total{kind="dead_letter_dropped"}[5m]) or on
// a sink's records rate has a series to rise from: Prometheus sees no
// increase in a series that appears at 1 (the first drop went unseen).
func TestCountersExportedFromStart(t *testing.T) {
	b := sinktest.Broker(t)
	r := sinktest.Start(t, b, cfg("quiet"), &fakeDest{})
	want := map[string][]string{
		"weir_sink_records_total": {""},
		"weir_sink_errors_total":  {"retryable", "rejected", "decode", "dead_letter", "dead_letter_dropped", "poll"},
	}
	sinktest.Eventually(t, "the sink's counters exported", func() bool {
		mfs, err := r.Reg.Gather()
		if err != nil {
			return false
		}
		have := map[string]bool{}
		for _, mf := range mfs {
			for _, m := range mf.GetMetric() {
				kind, sink := "", ""
				for _, l := range m.GetLabel() {
					switch l.GetName() {
					case "kind":
						kind = l.GetValue()
					case "sink":
						sink = l.GetValue()
					}
				}
				if sink == "quiet" {
					have[mf.GetName()+"/"+kind] = true
				}
			}
		}
		for name, kinds := range want {
			for _, k := range kinds {
				if !have[name+"/"+k] {
					t.Logf("missing %s kind %q", name, k)
					return false
				}
			}
		}
		return true
	})
}
