package enrich

import (
	"testing"

	"github.com/prometheus/client_golang/prometheus/testutil"

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
	if len(enriched) != 1 || len(events) != 1 || testutil.ToFloat64(w.m.decodeErrors) != 1 {
		t.Fatalf("%d enriched, %d events, %v undecodable; want the good record's 1 and 1, and 1", len(enriched), len(events), testutil.ToFloat64(w.m.decodeErrors))
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
