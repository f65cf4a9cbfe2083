package enrich

import (
	"encoding/json"
	"testing"

	"github.com/weirnet/weir/broker"
	"github.com/weirnet/weir/telemetry"
)

// TestSyslogWorkerSkipsRecordsWithNoDevice: a raw.syslog record of this
// schema version with no device, hostname or source_addr (a Kafka
// client's {"v":1,"message":...}; weir's receiver names every line by its
// hostname, else its sender)
// was enriched and its event published as checkVersion meant none to be:
// device "", key "", severity emergency (no "severity": 0), time
// 0001-01-01. It is skipped and counted as undecodable, as a metric with
// no device is, and the record after it is enriched. weir classify's
// Try still takes a line without a hostname or --from.
func TestSyslogWorkerSkipsRecordsWithNoDevice(t *testing.T) {
	inv, _ := ParseInventory([]byte(testInventory))
	noDevice := []byte(`{"v":1,"message":"%LINK-3-UPDOWN: Interface Gi0/1, changed state to down"}`)
	good := []byte(`{"v":1,"device":"edge1","severity":3,"facility":23,"message":"%LINK-3-UPDOWN: Interface Gi0/2, changed state to down"}`)
	w := NewWorker(nil, inv, NewClassifier())
	w.out = newOutputs(nil, telemetry.TopicRawSyslog, w.logger, w.m, false)
	enriched, events := w.enrichSyslogBatch(twoRecords(telemetry.TopicRawSyslog, noDevice, good), nil, nil)
	if len(enriched) != 1 || len(events) != 1 || decodeErrorsOf(w.m, telemetry.TopicRawSyslog) != 1 {
		t.Fatalf("%d enriched, %d events, %v undecodable; want the good record's 1 and 1, and 1", len(enriched), len(events), decodeErrorsOf(w.m, telemetry.TopicRawSyslog))
	}
	if k := string(events[0].rec.Key); k != "edge1" {
		t.Errorf("the event published is keyed %q, want edge1's", k)
	}
	tried, err := NewWorker(nil, inv, NewClassifier()).Try(noDevice)
	if err != nil || tried.Event.Type != "interface_down" {
		t.Errorf("Try of a line with no device: %+v, %v; want its interface_down", tried.Event, err)
	}
}

// TestSyslogRecordWithoutSeverity: a raw.syslog record with no
// "severity" key (a Kafka client's) gives its event the severity of a
// line without a PRI (its mnemonic's, else its type's), not emergency,
// which the decoder's 0 for the missing key had given it.
func TestSyslogRecordWithoutSeverity(t *testing.T) {
	inv, _ := ParseInventory([]byte(testInventory))
	for _, tc := range []struct{ value, event, severity string }{
		{`{"v":1,"device":"edge1","app_name":"sshd","message":"Accepted password for bob from 10.0.0.1 port 22 ssh2"}`, "login_succeeded", "informational"},
		{`{"v":1,"device":"edge1","message":"%LINK-3-UPDOWN: Interface Gi0/1, changed state to down"}`, "interface_down", "error"},
		{`{"v":1,"device":"edge1","severity":2,"message":"%LINK-3-UPDOWN: Interface Gi0/1, changed state to down"}`, "interface_down", "critical"},
	} {
		tried, err := NewWorker(nil, inv, NewClassifier()).Try([]byte(tc.value))
		if err != nil || tried.Event.Type != tc.event || tried.Event.Severity != tc.severity {
			t.Errorf("%s: %s %q, %v; want %s %q", tc.value, tried.Event.Type, tried.Event.Severity, err, tc.event, tc.severity)
		}
	}
}

// TestSyslogRecordWithoutDeviceKey: a raw.syslog record with a hostname
// or a sender but no "device" (a Kafka client's) is named as weir's
// receiver names a line, by its hostname, else its sender's address,
// when the inventory does not name it: its enriched record and event
// were of device "", keyed "".
func TestSyslogRecordWithoutDeviceKey(t *testing.T) {
	inv, _ := ParseInventory([]byte(testInventory))
	for _, tc := range []struct{ value, device string }{
		{`{"v":1,"hostname":"sw9","severity":3,"message":"%LINK-3-UPDOWN: Interface Gi0/1, changed state to down"}`, "sw9"},
		{`{"v":1,"source_addr":"198.51.100.7:51514","severity":3,"message":"%LINK-3-UPDOWN: Interface Gi0/1, changed state to down"}`, "198.51.100.7"},
		{`{"v":1,"source_addr":"[2001:db8::7]:51514","severity":3,"message":"%LINK-3-UPDOWN: Interface Gi0/1, changed state to down"}`, "2001:db8::7"},
		{`{"v":1,"source_addr":"192.0.2.1:51514","severity":3,"message":"%LINK-3-UPDOWN: Interface Gi0/1, changed state to down"}`, "edge1"}, // the inventory's
	} {
		w := NewWorker(nil, inv, NewClassifier())
		w.out = newOutputs(nil, telemetry.TopicRawSyslog, w.logger, w.m, false)
		enriched, events := w.enrichSyslogBatch(twoRecords(telemetry.TopicRawSyslog, []byte(tc.value), []byte(tc.value))[:1], nil, nil)
		if len(enriched) != 1 || len(events) != 1 {
			t.Fatalf("%s: %d enriched, %d events; want 1 and 1", tc.value, len(enriched), len(events))
		}
		var e telemetry.EnrichedLog
		var ev telemetry.Event
		if err := json.Unmarshal(enriched[0].rec.Value, &e); err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal(events[0].rec.Value, &ev); err != nil {
			t.Fatal(err)
		}
		if e.Device != tc.device || string(enriched[0].rec.Key) != tc.device || ev.Device != tc.device || string(events[0].rec.Key) != tc.device {
			t.Errorf("%s: enriched device %q key %q, event device %q key %q; want %q", tc.value,
				e.Device, enriched[0].rec.Key, ev.Device, events[0].rec.Key, tc.device)
		}
	}
}

// TestTrapRecordWithoutDeviceKey: a raw.traps record without "device" (a
// Kafka client's) is named by its sender's address, as the trap
// collector names one; with no sender either it is undecodable, not an
// event of device "".
func TestTrapRecordWithoutDeviceKey(t *testing.T) {
	inv, _ := ParseInventory([]byte(testInventory))
	w := NewTrapWorker(nil, inv)
	for _, tc := range []struct{ value, device string }{
		{`{"v":1,"trap_name":"coldStart","source_addr":"198.51.100.7:50000"}`, "198.51.100.7"},
		{`{"v":1,"trap_name":"coldStart","source_addr":"192.0.2.1:50000"}`, "edge1"}, // the inventory's
	} {
		tr, _, err := decodeTrap([]byte(tc.value), nil)
		if err != nil {
			t.Fatalf("%s: %v", tc.value, err)
		}
		ev, ok := w.eventOf(&tr, &broker.Record{Topic: telemetry.TopicRawTraps, Value: []byte(tc.value)})
		if !ok || ev.Device != tc.device {
			t.Errorf("%s: event of %q (%v), want %q", tc.value, ev.Device, ok, tc.device)
		}
	}
	if _, _, err := decodeTrap([]byte(`{"v":1,"trap_name":"coldStart"}`), nil); err == nil {
		t.Error("a trap record with no device and no source_addr decodes")
	}
}
