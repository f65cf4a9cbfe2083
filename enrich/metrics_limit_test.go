package enrich

import (
	"bytes"
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/weirnet/weir/broker"
	"github.com/weirnet/weir/telemetry"
)

// TestMetricsStateBounded: the metrics worker's rows of counters, states,
// uptimes and sysNames are forgotten an hour unseen, but nothing bounded
// how many: a gNMI path with a counter in its keys, or any Kafka client
// producing to raw.snmp, made new ones at the input's rate for an hour.
// Past maxObjects each, a new one is not kept (its record goes out
// without rates, its first state or uptime is not remembered) and is
// counted; the ones kept go on as before.
func TestMetricsStateBounded(t *testing.T) {
	w := loneMetricsWorker()
	w.maxObjects = 50
	t0 := casesT0
	var metrics, events []outRecord
	poll := func(dev string, i int) []outRecord {
		at := t0.Add(time.Duration(i) * time.Minute)
		w.rates.setNow(at.Add(time.Second))
		var recs []broker.Record
		for _, m := range []telemetry.Metric{
			{V: 1, Measurement: "snmp_system", Device: dev, Fields: map[string]any{"sysName": dev + ".example"},
				Time: at, Uptime: uint32(100000 + i*6000), Source: "snmp"},
			{V: 1, Measurement: "snmp_interface", Device: dev, Tags: map[string]string{"ifName": "Gi0/1", "ifIndex": "1"},
				Fields:   map[string]any{"ifHCInOctets": uint64(1000 + i*6_000_000), "ifOperStatus": int64(1), "ifHighSpeed": int64(100)},
				Counters: []string{"ifHCInOctets"}, Counters64: []string{"ifHCInOctets"},
				Time: at, Uptime: uint32(100000 + i*6000), Source: "snmp"},
		} {
			v, err := json.Marshal(&m)
			if err != nil {
				t.Fatal(err)
			}
			recs = append(recs, broker.Record{Topic: telemetry.TopicRawSNMP, Offset: int64(len(recs)), Value: v})
		}
		metrics, events = w.enrichBatch(recs, metrics[:0], events[:0])
		return metrics
	}
	for d := range 500 {
		poll(fmt.Sprintf("flood%d", d), 0)
	}
	if len(w.rates.rows) > 50 || len(w.state) > 50 || len(w.uptimes) > 50 || len(w.sysNames) > 50 {
		t.Fatalf("after 500 devices: %d rows, %d states, %d uptimes, %d sysNames; want at most 50 each",
			len(w.rates.rows), len(w.state), len(w.uptimes), len(w.sysNames))
	}
	for _, what := range []string{"rates", "states", "uptimes", "sysnames"} {
		if got := testutil.ToFloat64(w.m.untrackedKind.WithLabelValues(what)); got < 450 {
			t.Errorf("%v %s counted untracked, want at least 450", got, what)
		}
	}
	// A row kept before the bound has its rate at its next poll.
	out := poll("flood0", 1)
	rated := false
	for _, r := range out {
		rated = rated || bytes.Contains(r.rec.Value, []byte(`"in_octets_rate"`))
	}
	if !rated {
		t.Fatal("a row kept before the bound lost its rates")
	}
}
