package main

import (
	"regexp"
	"testing"
	"time"
)

// TestEnrichLogLinesNameTheWorker: weir runs eight enrichment workers by
// default, two a raw topic, and their lines were alike (eight identical
// "cannot start; retrying" a round when a cluster refused weir): each
// names the worker that logged it.
func TestEnrichLogLinesNameTheWorker(t *testing.T) {
	p := startWeir(t, t.TempDir())
	if _, e, err := p.cli(t, "not json\n", "produce", "raw.snmp"); err != nil {
		t.Fatal(err, e)
	}
	line := regexp.MustCompile(`msg="enrich: skipping undecodable metric" component=enrich worker=enrich-metrics-[0-9]+ `)
	deadline := time.Now().Add(time.Minute)
	for !line.MatchString(p.Logs()) {
		if time.Now().After(deadline) {
			t.Fatalf("no undecodable-metric line naming its worker:\n%s", p.Logs())
		}
		time.Sleep(50 * time.Millisecond)
	}
}
