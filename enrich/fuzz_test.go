package enrich

import (
	"encoding/json"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/weirnet/weir/broker"
	"github.com/weirnet/weir/collectors/syslog"
	"github.com/weirnet/weir/internal/syncbuf"
	"github.com/weirnet/weir/telemetry"
)

// The worker fuzz targets feed any bytes to a worker as the records of its
// raw topic, two in a row so the second meets the state the first left
// (rates, states, flap windows). Whatever the bytes, the worker must not
// panic, and everything it publishes must be JSON that decodes as the
// record type of its topic: a bad record is skipped and counted, never
// passed on half written.

// FuzzMetricsWorker: raw.snmp and raw.gnmi records.
func FuzzMetricsWorker(f *testing.F) {
	for _, shape := range benchRowShapes {
		recs, _ := benchMetricRecords(f, shape)
		per := len(recs) / benchPolls // a poll's records
		f.Add(recs[0].Value, recs[per].Value)
	}
	t0 := time.Date(2026, 11, 29, 14, 0, 0, 0, time.UTC)
	for _, ms := range [][2]telemetry.Metric{
		{{V: 1, Measurement: "snmp_status", Device: "edge1", Fields: map[string]any{"snmp_up": int64(1)}, Time: t0},
			{V: 1, Measurement: "snmp_status", Device: "edge1", Fields: map[string]any{"snmp_up": int64(0)}, Time: t0.Add(time.Minute)}},
		{{V: 1, Measurement: "interfaces_interface_state", Device: "leaf1", Tags: map[string]string{"name": "Ethernet1"},
			Fields: map[string]any{"oper-status": "UP"}, Time: t0, Source: "gnmi"},
			{V: 1, Measurement: "interfaces_interface_state", Device: "leaf1", Tags: map[string]string{"name": "Ethernet1"},
				Fields: map[string]any{"oper-status": "openconfig-interfaces:DOWN"}, Time: t0.Add(time.Second), Source: "gnmi"}},
		{{V: 1, Measurement: "interfaces_interface_state_counters", Device: "leaf1", Tags: map[string]string{"name": "Ethernet1"},
			Fields: map[string]any{"in-octets": uint64(1 << 40)}, Counters: []string{"in-octets"}, Time: t0, Source: "gnmi"},
			{V: 1, Measurement: "interfaces_interface_state_counters", Device: "leaf1", Tags: map[string]string{"name": "Ethernet1"},
				Fields: map[string]any{"in-octets": uint64(5)}, Counters: []string{"in-octets"}, Time: t0.Add(10 * time.Second), Source: "gnmi"}},
	} {
		a, _, _ := ms[0].AppendJSON(nil, nil)
		b, _, _ := ms[1].AppendJSON(nil, nil)
		f.Add(a, b)
	}
	f.Add([]byte(`{"v":1,"measurement":"snmp_interface","fields":{"ifInOctets":-1,"ifOperStatus":1e300},"counters":["ifInOctets"]}`), []byte(`{}`))
	f.Add([]byte(`not json`), []byte(`{"v":1,"measurement":"x","fields":{"a":NaN}}`))
	inv, _ := ParseInventory([]byte(testInventory))
	f.Fuzz(func(t *testing.T, a, b []byte) {
		w := NewMetricsWorker(nil, inv)
		w.out = newOutputs(nil, telemetry.TopicRawSNMP, w.logger, w.m, false)
		metrics, events := w.enrichBatch(twoRecords(telemetry.TopicRawSNMP, a, b), nil, nil)
		for _, o := range metrics {
			var m telemetry.Metric
			if err := json.Unmarshal(o.rec.Value, &m); err != nil {
				t.Fatalf("enriched metric %q: %v", o.rec.Value, err)
			}
			if string(o.rec.Key) != m.Device {
				t.Fatalf("key %q for device %q", o.rec.Key, m.Device)
			}
			if m.V != telemetry.Version {
				t.Fatalf("enriched metric of version %d: %q", m.V, o.rec.Value)
			}
		}
		checkEvents(t, events)
	})
}

// FuzzSyslogWorker: raw.syslog records.
func FuzzSyslogWorker(f *testing.F) {
	var p syslog.Parser
	lines := loadCorpus(f)
	for i, c := range lines {
		var l telemetry.Log
		p.ParseCopy([]byte(c.Raw), &l)
		l.SourceAddr = "192.0.2.9:514" // an SNMP target's, below
		var next telemetry.Log
		p.ParseCopy([]byte(lines[(i+1)%len(lines)].Raw), &next)
		f.Add(l.AppendJSON(nil), next.AppendJSON(nil))
	}
	f.Add([]byte(`{"v":1,"message":`), []byte(`{"v":1,"hostname":"\u0000","message":"%LINEPROTO-5-UPDOWN: Line protocol on Interface \ud800, changed state to down"}`))
	inv, _ := ParseInventory([]byte(testInventory))
	cls := NewClassifier()
	targets := NewSNMPTargets([]SNMPTarget{{Name: "core9", Host: "192.0.2.9"}}) // names hostless lines from it
	f.Fuzz(func(t *testing.T, a, b []byte) {
		w := NewWorker(nil, inv, cls, WithSNMPTargets(targets))
		w.out = newOutputs(nil, telemetry.TopicRawSyslog, w.logger, w.m, false)
		enriched, events := w.enrichSyslogBatch(twoRecords(telemetry.TopicRawSyslog, a, b), nil, nil)
		for _, o := range enriched {
			var e telemetry.EnrichedLog
			if err := json.Unmarshal(o.rec.Value, &e); err != nil {
				t.Fatalf("enriched log %q: %v", o.rec.Value, err)
			}
			if e.V != telemetry.Version {
				t.Fatalf("enriched log of version %d: %q", e.V, o.rec.Value)
			}
		}
		checkEvents(t, events)
	})
}

// twoRecords are a and b as the records at offsets 0 and 1 of topic.
func twoRecords(topic string, a, b []byte) []broker.Record {
	return []broker.Record{{Topic: topic, Value: a, Timestamp: time.Now()}, {Topic: topic, Value: b, Offset: 1, Timestamp: time.Now()}}
}

// checkEvents fails t unless every event record decodes as an Event with
// a type.
func checkEvents(t *testing.T, events []outRecord) {
	t.Helper()
	for _, o := range events {
		var ev telemetry.Event
		if err := json.Unmarshal(o.rec.Value, &ev); err != nil {
			t.Fatalf("event %q: %v", o.rec.Value, err)
		}
		if ev.Type == "" {
			t.Fatalf("event without a type: %q", o.rec.Value)
		}
	}
}

// TestWorkersSkipRecordsOfAnotherSchema: any Kafka client may write to a
// raw topic. A JSON object that is not a weir record ({"hello":"world"})
// or is of another schema version decodes to zero values; it is skipped
// and counted as undecodable, not enriched as a log of severity
// emergency from no device.
func TestWorkersSkipRecordsOfAnotherSchema(t *testing.T) {
	inv, _ := ParseInventory([]byte(testInventory))
	bad := [][]byte{[]byte(`{"hello":"world"}`), []byte(`{"v":2,"device":"edge1","message":"%LINK-3-UPDOWN: Interface Gi0/1, changed state to down"}`)}
	t.Run("syslog", func(t *testing.T) {
		w := NewWorker(nil, inv, NewClassifier())
		w.out = newOutputs(nil, telemetry.TopicRawSyslog, w.logger, w.m, false)
		enriched, events := w.enrichSyslogBatch(twoRecords(telemetry.TopicRawSyslog, bad[0], bad[1]), nil, nil)
		if len(enriched)+len(events) != 0 || decodeErrorsOf(w.m, telemetry.TopicRawSyslog) != 2 {
			t.Fatalf("%d enriched, %d events, %v undecodable; want none and 2", len(enriched), len(events), decodeErrorsOf(w.m, telemetry.TopicRawSyslog))
		}
	})
	t.Run("metrics", func(t *testing.T) {
		w := NewMetricsWorker(nil, inv)
		w.out = newOutputs(nil, telemetry.TopicRawSNMP, w.logger, w.m, false)
		row := []byte(`{"v":2,"measurement":"snmp_status","device":"edge1","fields":{"snmp_up":1}}`)
		metrics, events := w.enrichBatch(twoRecords(telemetry.TopicRawSNMP, bad[0], row), nil, nil)
		if len(metrics)+len(events) != 0 || decodeErrorsOf(w.m, telemetry.TopicRawSNMP) != 2 {
			t.Fatalf("%d metrics, %d events, %v undecodable; want none and 2", len(metrics), len(events), decodeErrorsOf(w.m, telemetry.TopicRawSNMP))
		}
	})
	t.Run("nested field", func(t *testing.T) {
		// JSON allows an object or an array as a field's value, the
		// metric schema does not: such a row could not be encoded, and
		// it vanished without a count or a log line.
		for _, v := range []string{`{"a":1}`, `[1,2]`} {
			w := NewMetricsWorker(nil, inv)
			var logs syncbuf.Buffer
			w.logger = slog.New(slog.NewTextHandler(&logs, nil))
			w.out = newOutputs(nil, telemetry.TopicRawSNMP, w.logger, w.m, false)
			row := []byte(`{"v":1,"measurement":"interface","device":"r1","tags":{"ifName":"Gi1"},"fields":{"ifHCInOctets":` + v +
				`,"ifOperStatus":1},"time":"2026-12-02T07:16:03Z","source":"snmp"}`)
			good := []byte(`{"v":1,"measurement":"interface","device":"r1","tags":{"ifName":"Gi1"},"fields":{"ifOperStatus":1},"time":"2026-12-02T07:16:04Z","source":"snmp"}`)
			metrics, _ := w.enrichBatch(twoRecords(telemetry.TopicRawSNMP, row, good), nil, nil)
			if len(metrics) != 1 || decodeErrorsOf(w.m, telemetry.TopicRawSNMP) != 1 {
				t.Fatalf("field %s: %d metrics, %v undecodable; want the good row and 1", v, len(metrics), decodeErrorsOf(w.m, telemetry.TopicRawSNMP))
			}
			if !strings.Contains(logs.String(), `field \"ifHCInOctets\": an`) || !strings.Contains(logs.String(), "is not a metric value") {
				t.Errorf("field %s: the log does not say which field and why: %s", v, logs.String())
			}
		}
	})
	t.Run("traps", func(t *testing.T) {
		trap := []byte(`{"v":2,"device":"192.0.2.1","trap_name":"coldStart","source_addr":"192.0.2.1:162"}`)
		for _, v := range [][]byte{bad[0], trap} {
			if _, _, err := decodeTrap(v, nil); err == nil {
				t.Errorf("%s decoded", v)
			}
		}
		if _, _, err := decodeTrap([]byte(`{"v":1,"device":"192.0.2.1","trap_name":"coldStart"}`), nil); err != nil {
			t.Errorf("a trap of version 1: %v", err)
		}
	})
}
