package enrich

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
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

// TestMetricsRowsBoundedByTheirIDs: a row's ID holds every tag of its
// row, and a gNMI target keying its paths with thousands of keys makes
// them as long as it likes: bounded by their number alone, a million
// rows of 20 KB IDs held 20 GB. Past maxIDBytes of IDs a new row is not
// kept, and counted, as past the count; the rows kept go on.
func TestMetricsRowsBoundedByTheirIDs(t *testing.T) {
	w := loneMetricsWorker()
	w.rates.maxIDBytes = 1 << 20
	t0 := casesT0
	var metrics, events []outRecord
	long := strings.Repeat("k", 20<<10)
	for i := range 200 {
		w.rates.setNow(t0.Add(time.Second))
		m := telemetry.Metric{V: 1, Measurement: "interfaces_interface_state_counters", Device: "gnmi1",
			Tags:   map[string]string{"name": fmt.Sprintf("Ethernet%d", i), "pad": long, "path": fmt.Sprintf("/interfaces/interface[name=Ethernet%d][pad=%s]/state/counters", i, long)},
			Fields: map[string]any{"in-octets": uint64(1000)}, Counters: []string{"in-octets"}, Counters64: []string{"in-octets"},
			Time: t0, Source: "gnmi"}
		v, err := json.Marshal(&m)
		if err != nil {
			t.Fatal(err)
		}
		metrics, events = w.enrichBatch([]broker.Record{{Topic: telemetry.TopicRawGNMI, Offset: int64(i), Value: v}}, metrics[:0], events[:0])
	}
	if w.rates.idBytes > 1<<20 || len(w.rates.rows) > 30 {
		t.Fatalf("%d rows of %d bytes of IDs kept; want at most 1 MiB of them", len(w.rates.rows), w.rates.idBytes)
	}
	if got := testutil.ToFloat64(w.m.untrackedKind.WithLabelValues("rates")); got < 150 {
		t.Errorf("%v rows counted untracked, want at least 150", got)
	}
	// Forgotten rows give their room back.
	w.rates.forget(t0.Add(time.Hour), nil)
	if len(w.rates.rows) != 0 || w.rates.idBytes != 0 {
		t.Errorf("after forgetting: %d rows, %d bytes", len(w.rates.rows), w.rates.idBytes)
	}
}

// TestMetricsStatesBoundedByTheirKeys: a state is keyed by its device and
// object (an interface's name), which a device makes as long as it likes:
// bounded by their number alone, a million interfaces named in 20 KB held
// gigabytes. Past maxStateBytes of keys a new state is not kept, and
// counted, as past the count; forgotten states give their room back.
func TestMetricsStatesBoundedByTheirKeys(t *testing.T) {
	w := loneMetricsWorker()
	w.maxStateBytes = 1 << 20
	t0 := casesT0
	var metrics, events []outRecord
	long := strings.Repeat("n", 20<<10)
	for i := range 200 {
		w.rates.setNow(t0.Add(time.Second))
		m := telemetry.Metric{V: 1, Measurement: "snmp_interface", Device: "sw1",
			Tags:   map[string]string{"ifName": fmt.Sprintf("%s%d", long, i), "ifIndex": fmt.Sprint(i)},
			Fields: map[string]any{"ifOperStatus": int64(1)}, Time: t0, Uptime: 100000, Source: "snmp"}
		v, err := json.Marshal(&m)
		if err != nil {
			t.Fatal(err)
		}
		metrics, events = w.enrichBatch([]broker.Record{{Topic: telemetry.TopicRawSNMP, Offset: int64(i), Value: v}}, metrics[:0], events[:0])
	}
	if w.stateBytes > 1<<20 || len(w.state) > 60 {
		t.Fatalf("%d states of %d bytes of keys kept; want at most 1 MiB of them", len(w.state), w.stateBytes)
	}
	if got := testutil.ToFloat64(w.m.untrackedKind.WithLabelValues("states")); got < 140 {
		t.Errorf("%v states counted untracked, want at least 140", got)
	}
	w.forgetStates(t0.Add(2 * time.Hour))
	if len(w.state) != 0 || w.stateBytes != 0 {
		t.Errorf("after forgetting: %d states, %d bytes", len(w.state), w.stateBytes)
	}
}

// TestMetricsTargetsBoundedByTheirNames: uptimes and sysNames are keyed by
// a target's name, which any producer to raw.snmp picks, and a sysName is
// what its agent says: bounded by their number alone, a million targets
// named in 20 KB held 20 GB. Past maxTargetBytes a new one is not kept,
// and counted; forgotten ones give their room back.
func TestMetricsTargetsBoundedByTheirNames(t *testing.T) {
	w := loneMetricsWorker()
	w.maxTargetBytes = 1 << 20
	t0 := casesT0
	var metrics, events []outRecord
	long := strings.Repeat("d", 10<<10)
	for i := range 200 {
		w.rates.setNow(t0.Add(time.Second))
		dev := fmt.Sprintf("%s%d", long, i)
		m := telemetry.Metric{V: 1, Measurement: "snmp_system", Device: dev, Fields: map[string]any{"sysName": dev + ".example"},
			Time: t0, Uptime: 100000, Source: "snmp"}
		v, err := json.Marshal(&m)
		if err != nil {
			t.Fatal(err)
		}
		metrics, events = w.enrichBatch([]broker.Record{{Topic: telemetry.TopicRawSNMP, Offset: int64(i), Value: v}}, metrics[:0], events[:0])
	}
	if w.targetBytes > 1<<20 || len(w.uptimes)+len(w.sysNames) > 110 {
		t.Fatalf("%d uptimes and %d sysNames of %d bytes kept; want at most 1 MiB of them", len(w.uptimes), len(w.sysNames), w.targetBytes)
	}
	for _, what := range []string{"uptimes", "sysnames"} {
		if got := testutil.ToFloat64(w.m.untrackedKind.WithLabelValues(what)); got < 100 {
			t.Errorf("%v %s counted untracked, want at least 100", got, what)
		}
	}
	w.forgetStates(t0.Add(2 * time.Hour))
	if len(w.uptimes) != 0 || len(w.sysNames) != 0 || w.targetBytes != 0 {
		t.Errorf("after forgetting: %d uptimes, %d sysNames, %d bytes", len(w.uptimes), len(w.sysNames), w.targetBytes)
	}
}
